// poll_wait.cpp: waits on polled event sources (poll_wait.hpp).
#include "config.h"

#include "poll_wait.hpp"

#include <algorithm>
#include <new>

#include "clock.hpp"
#include "fatal.hpp"
#include "switch.hpp"
#include "wake.hpp"

namespace mr::engine {

namespace {

constexpr std::uint64_t kDefaultPeriodNs = 50000;  // 50 us

std::uint64_t period_of(const MR_PollSource *src) {
  return src->period_ns ? src->period_ns : kDefaultPeriodNs;
}

// The smallest period of the groups of p that have items (0 when none has).
std::uint64_t least_period(const PollEngine &p) {
  std::uint64_t least = 0;
  for (const PollGroup &g : p.groups)
    if (!g.items.empty() && (least == 0 || period_of(g.src) < least)) least = period_of(g.src);
  return least;
}

// Record c's wait for item in engine e's group of src. Throws std::bad_alloc (nothing recorded).
void add_wait(PollEngine &p, const MR_PollSource *src, void *item, Context *c) {
  auto it = std::find_if(p.groups.begin(), p.groups.end(),
                         [src](const PollGroup &g) { return g.src == src; });
  if (it == p.groups.end()) {
    p.groups.emplace_back();
    it = p.groups.end() - 1;
    it->src = src;
  }
  it->items.push_back(item);
  try {
    it->waiters.push_back(c);
  } catch (const std::bad_alloc &) {
    it->items.pop_back();
    throw;
  }
  p.waiting++;
}

// Poll group g of engine e once; resume the waiters of the items done. Returns how many were.
int poll_group(Engine *e, PollGroup &g) {
  const int n = static_cast<int>(g.items.size());
  g.done.assign(g.items.size(), 0);  // never shrinks: no allocation once it has grown
  if (int rc = g.src->poll(g.src->ctx, g.items.data(), n, g.done.data()); rc != 0)
    fatal("a polled wait's poll function returned %d (%s) on engine %d", rc, MR_strerror(rc),
          e->id);
  int resumed = 0;
  // From the end, so that moving the last item into a finished one's place keeps the answers
  // of the items not yet looked at where they were.
  for (int i = n - 1; i >= 0; i--) {
    if (!g.done[static_cast<std::size_t>(i)]) continue;
    Context *c = g.waiters[static_cast<std::size_t>(i)];
    g.items[static_cast<std::size_t>(i)] = g.items.back();
    g.waiters[static_cast<std::size_t>(i)] = g.waiters.back();
    g.items.pop_back();
    g.waiters.pop_back();
    resumed++;
    schedule(c);  // bound to e: its queue (the idle loop takes it next)
  }
  return resumed;
}

}  // namespace

int poll_start(Runtime *rt) {
  rt->polls = new (std::nothrow) PollEngine[static_cast<std::size_t>(rt->n)];
  return rt->polls ? 0 : MR_ENOMEM;
}

void poll_stop(Runtime *rt) {
  delete[] rt->polls;
  rt->polls = nullptr;
}

void poll_now(Engine *e) {
  PollEngine &p = g_rt->polls[e->id];
  int resumed = 0;
  for (PollGroup &g : p.groups)
    if (!g.items.empty()) resumed += poll_group(e, g);
  p.waiting -= resumed;
}

std::uint64_t poll_wait_deadline(Engine *e) {
  const PollEngine &p = g_rt->polls[e->id];
  if (p.waiting == 0) return kNever;
  return now_ns() + least_period(p);
}

int poll_wait(const MR_PollSource *src, void *item) {
  if (!src || !src->poll || !item) return MR_EINVAL;
  Engine *e = this_engine();
  if (!e || !e->current) return MR_ENOTENGINE;
  PollEngine &p = g_rt->polls[e->id];
  Context *self = e->current;
  const int was_bound = self->bound;
  self->bound = e->id;  // resume here: only this engine polls its waits
  int err = 0;
  suspend_self(e, "MR_poll_wait outside a context", trace::Why::POLL,
               [&p, src, item, &err](Context *c) {
                 try {
                   add_wait(p, src, item, c);
                 } catch (const std::bad_alloc &) {
                   err = MR_ENOMEM;
                   return true;  // run again at once: nothing waits
                 }
                 return false;
               });
  self->bound = was_bound;
  return err;
}

}  // namespace mr::engine
