// close.cpp: dropping the work of drop channels at MR_shutdown, and refusing what would come
// too late (close.hpp).
#include "config.h"

#include "close.hpp"

#include <cstddef>

#include "channel_roots.hpp"
#include "future.hpp"
#include "join.hpp"

namespace mr::engine {

namespace {

// c, spawned and not done, is dropped: its on_drop, once (fn and on_drop are cleared first;
// arg and on_free stay for call_on_free).
void call_on_drop(Context *c) {
  Context::Spawned s = c->spawned;
  c->spawned = {nullptr, s.arg, nullptr, s.on_free};
  if (s.on_drop) s.on_drop(s.arg);
}

// c was dropped and the runtime is about to free it: its on_free, once.
void call_on_free(Context *c) {
  Context::Spawned s = c->spawned;
  c->spawned = {};
  if (s.on_free) s.on_free(s.arg);
}

}  // namespace

void drop_context(Context *c) {
  // A wait it was resumed from ends first, so that what it held (a descriptor's claim) is given
  // back before the channel's waiters resume.
  if (Context::Unwait u = c->unwait; u.end) {
    c->unwait = {};
    u.end(u.arg);
  }
  // relaxed: a count read after the engines stopped, or by MR_channel_stats.
  g_rt->channels[c->channel].contexts_dropped.fetch_add(1, std::memory_order_relaxed);
  c->dropped = true;  // freed with the runtime (Context::dropped says why not now)
  if (c->spawned.fn) {
    call_on_drop(c);
    root_done(c->channel);
  }
}

int count_root(int ch) {
  if (ch == MR_CHANNEL_DEFAULT) return 0;
  // relaxed (roots_add): only the order of RMWs on the word matters.
  return roots_add(g_rt->channels[ch].roots) ? 0 : MR_ECLOSED;
}

void root_done(int ch) {
  if (ch == MR_CHANNEL_DEFAULT) return;
  Channel &c = g_rt->channels[ch];
  // acq_rel (roots_leave): release publishes what this context did to the waiters; acquire (for
  // the last) takes the other contexts' releases, so that the signal below carries them all.
  if (roots_leave(c.roots)) future_signal(&c.done, 1);
}

int close_channel(int ch) {
  // relaxed: a close that races MR_shutdown's beginning is one more closed channel it stops.
  if (g_rt->closing.load(std::memory_order_relaxed)) return MR_ESHUTDOWN;
  Channel &c = g_rt->channels[ch];
  // relaxed: engines read the bit relaxed; a context that misses it runs once more, to its next
  // suspension or its end (either way it leaves the count). Set before the closed bit, so that
  // a second close finds it set.
  if (c.close == Close::DROP)
    g_rt->closed_drops.fetch_or(std::uint64_t{1} << ch, std::memory_order_relaxed);
  // acq_rel (roots_close): the one RMW that closes (later spawns read the bit in their CAS and
  // are refused); acquire, if no context is left, takes their releases for the signal, as
  // root_done does.
  std::uint64_t old = roots_close(c.roots);
  if (old & kRootsClosed) return MR_ECLOSED;
  if (old == 0) future_signal(&c.done, 1);
  return 0;
}

int wait_channel(int ch) {
  Channel &c = g_rt->channels[ch];
  // relaxed: the caller closed ch itself, or knows it closed; a stale open is MR_EINVAL.
  if ((c.roots.load(std::memory_order_relaxed) & kRootsClosed) == 0) return MR_EINVAL;
  if (current_channel() == ch) return MR_EDEADLK;
  (void)future_wait(&c.done);
  return 0;
}

void call_on_drops_at_stop() {
  // The primordial context never switches again, and its engine's scheduler fiber is forgotten:
  // with no current context, an on_drop that waits stops the process with a message
  // (suspend_self's check) rather than switch to it, and a context it makes runnable is queued.
  this_engine()->current = nullptr;
  context_each(
      [](Context *c, void *) {
        if (c->spawned.fn) call_on_drop(c);
      },
      nullptr);
  // Then every dropped context's on_free, those dropped above and those dropped while the
  // engines ran: nothing runs now that could still use what it frees.
  context_each([](Context *c, void *) { call_on_free(c); }, nullptr);
}

bool keep_spark(const Task &t) {
  if (!dropping(t.join)) return true;
  // relaxed: as above.
  g_rt->channels[static_cast<int>(t.join->channel)].sparks_dropped.fetch_add(
      1, std::memory_order_relaxed);
  return false;
}

int create_channel(int level, ChannelKind kind, Close close, int followup) {
  // relaxed: a channel made while MR_shutdown begins is one more channel it closes.
  if (g_rt->closing.load(std::memory_order_relaxed)) return MR_ESHUTDOWN;
  return g_rt->channels.create(level, kind, close, followup);
}

void begin_closing() {
  // seq_cst: one more flag that engines read relaxed at their next pick; a context of a drop
  // channel that misses it runs once more, to its next suspension, and is dropped then.
  g_rt->closing.store(true, std::memory_order_seq_cst);
}

void report_drops(MR_ShutdownReport *r, const std::uint64_t *contexts,
                  const std::uint64_t *sparks) {
  bool per_channel = r->size >= sizeof *r;
  r->contexts_dropped = r->sparks_dropped = 0;
  for (int ch = 0; ch < kMaxChannels; ch++) {
    const Channel &c = g_rt->channels[ch];
    // relaxed: every engine has stopped.
    std::uint64_t nc = contexts[ch] + c.contexts_dropped.load(std::memory_order_relaxed);
    std::uint64_t ns = sparks[ch] + c.sparks_dropped.load(std::memory_order_relaxed);
    r->contexts_dropped += nc;
    r->sparks_dropped += ns;
    if (per_channel) {
      r->channel_contexts_dropped[ch] = nc;
      r->channel_sparks_dropped[ch] = ns;
    }
  }
}

}  // namespace mr::engine
