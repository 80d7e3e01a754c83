// join.cpp: forks, joins, spawns, and the context body (join.hpp).
#include "config.h"

#include "join.hpp"

#include <algorithm>
#include <iterator>
#include <new>
#include <utility>
#include <vector>

#include "blocking.hpp"
#include "cache.hpp"
#include "close.hpp"
#include "events.hpp"
#include "fatal.hpp"
#include "join_count.hpp"
#include "policy.hpp"
#include "steal.hpp"
#include "switch.hpp"
#include "wake.hpp"

namespace mr::engine {

namespace {

constexpr const char *kTooManyBranches =
    "a conjunction's branches arrived before its parent joined: more branches forked than "
    "MR_sync_term_init counted";

// The next spark for a context that has just run one, taken without the scheduler: one of this
// engine's own, else (for a context whose spark was stolen) another from the same victim, so that
// a thief drains a fan-out without a round trip through its scheduler per spark. Only while no
// context of its level or above waits (contexts come first at a level), and, under round-robin,
// while its level's turn lasts (policy.hpp, turn_over). Called only by context
// self on engine e. A stolen spark is counted as it is stolen (steal.hpp); one of the engine's
// own is counted by take_task when it runs, since the caller may put it back instead.
enum class Next { NONE, OWN, STOLEN };
Next next_spark(Engine *e, Context *self, Task &t) {
  const int level = g_rt->channels.level(self->channel);
  if (e->bound.maybe_nonempty() || (g_rt->channels.work() & g_rt->channels.at_or_above(level)) ||
      turn_over(e, level))
    return Next::NONE;
  while (pop_spark(e, t))
    if (keep_spark(t)) return Next::OWN;
  while (self->victim >= 0) {
    Loot got = steal_from(e, g_rt->engines[self->victim], t, nullptr);
    if (got == Loot::SPARK) return Next::STOLEN;
    if (got != Loot::DROPPED) {  // the victim has none left: stop draining it
      self->victim = -1;
      return Next::NONE;
    }
  }
  return Next::NONE;
}

// Context self on engine e goes on with spark t: it takes t's channel (the forking context's).
void take_task(Engine *e, Context *self, const Task &t, Next from) {
  if (from == Next::OWN) note(e, Event::sparks_run_local);
  trace::on_run(e, self);  // a new task: a new thread for the trace
  self->task = t;
  self->channel = static_cast<int>(t.join->channel);
  e->view.channel = static_cast<AO_t>(self->channel);
}

// A child's arrival at its join, then its next task. Called only by context self, which has just
// run self->task. Returns when self has a new task.
void finish_task(Context *self, Join *j) {
  Engine *e = this_engine();
  trace::on_stop(e, self, trace::Why::FINISHED);
  self->bound = -1;
  // MR_shutdown_now: reach the scheduler, which leaves; run nothing more here.
  bool stopping = g_rt->shutdown.load(std::memory_order_relaxed);
  std::uint32_t arrivals = 1 + self->held;
  self->held = 0;
  Task t;
  Next from = stopping ? Next::NONE : next_spark(e, self, t);
  bool have = from != Next::NONE;
  if (have && t.join == j) {
    // Not the last arrival (t's is still to come): hold this one back, and arrive once for all
    // of them, so a fan-out costs one RMW on the join's line per run of sparks, not per spark.
    self->held = arrivals;
    take_task(e, self, t, from);
    return;
  }
  std::uint32_t old = arrive_at_join(j, arrivals);  // J1 (join_count.hpp)
  if (old < arrivals) fatal(kTooManyBranches);
  if (old == arrivals) {
    Context *p = j->parent;
    // The last arrival is a child only after the parent's own (which set parent first).
    if (p == nullptr) fatal(kTooManyBranches);
    // relaxed closing: a parent that misses it is dropped at its next suspension. A parent
    // queued by deadline is queued, as schedule() would: earlier deadlines may wait.
    if (p->kind != ContextKind::FOREIGN && (p->bound < 0 || p->bound == e->id) &&
        (p->bound >= 0 || !channel_by_deadline(queue_channel(p))) && !stopping &&
        from != Next::STOLEN && !g_rt->closing.load(std::memory_order_relaxed) &&
        !dropped_by_close(p) && !queued_above(g_rt->channels.level(queue_channel(p)))) {
      // The parent may run here: switch straight to it; self goes to the free cache, and the
      // spark in hand (this engine's own, not counted yet) back where it was. A stolen spark
      // is not moved here: self runs it, and the parent is scheduled.
      if (have) push_spark(e, t);
      enter_context(e, p);
      leave_context(self, std::move(p->fiber), p->san, p->gc,
                    [e, self] { release_context(e, self); });
      return;
    }
    schedule(p);
  }
  if (have) {
    take_task(e, self, t, from);
    return;
  }
  switch_to_scheduler(e, self, [e, self] { release_context(e, self); });
}

// The task of a spawned context: its function, then it leaves its channel's count (a function
// that returned is never dropped: spawned is cleared first).
void run_spawned(void *self_) {
  auto *self = static_cast<Context *>(self_);
  Context::Spawned s = self->spawned;
  s.fn(s.arg);
  self->spawned = {};  // self: the same record on whatever engine the function ended
  root_done(self->channel);
}

// A spark from a thread that is not an engine: into the injector, then the post-work check
// (P1, the injector's push fence).
void inject(const Task &t) {
  g_rt->injector.push(t);
  work_posted(-1);
}

// Count one more unit in a spawn counter (Runtime::spawned), unless MR_shutdown's wait on it has
// ended (count 0): then false.
bool take_spawn_unit(Join &spawned) {
  std::uint32_t c = spawned.count.load(std::memory_order_relaxed);
  do {
    if (c == 0) return false;
    // CAS relaxed: only the total order of RMWs on this counter matters here (J1 for the end).
  } while (!spawned.count.compare_exchange_weak(c, c + 1, std::memory_order_relaxed));
  return true;
}

// Give back n units of a spawn counter: the last wakes MR_shutdown's wait (J1, as a branch's
// end).
void give_spawn_units(Join &spawned, std::uint32_t n) {
  if (arrive_at_join(&spawned, n) == n) schedule(spawned.parent);
}

// The branches a thread that is not an engine has forked and not yet joined, per sync term:
// each holds a unit of Runtime::spawned, so that MR_shutdown waits for them and the thread's
// join returns (dropped, the thread would wait forever). Nested terms are joined innermost
// first, so the term joined is found at the back. Only the thread's own. A term recorded here
// also holds one extra arrival of its own (the hold, taken at its first fork): the inline join
// of mrengine_view.h returns without calling the library when every branch has arrived, and the
// hold keeps that from happening, so the library's join always comes to give the units back.
thread_local std::vector<std::pair<Join *, std::uint32_t>> t_outside_forks;

// A thread that is not an engine forks fn(env) into j: counted in Runtime::spawned and injected;
// once MR_shutdown's wait has ended no engine would run it, so the thread runs it itself. A
// context in a blocking region (on a backup thread) may join on an engine after the region: its
// branches are not counted, MR_shutdown waits for them through that context's own join.
void fork_outside(Join *j, MR_TaskFn fn, void *env) {
  if (context_on_this_thread()) {
    inject(Task{fn, env, j});
    return;
  }
  if (!take_spawn_unit(g_rt->spawned)) {
    fn(env);
    // The parent's own arrival is still to come: never the last.
    if (arrive_at_join(j, 1) <= 1) fatal(kTooManyBranches);
    return;
  }
  try {
    auto it = std::find_if(t_outside_forks.rbegin(), t_outside_forks.rend(),
                           [j](const auto &f) { return f.first == j; });
    if (it != t_outside_forks.rend()) {
      it->second++;
    } else {
      t_outside_forks.emplace_back(j, 1);
      // The hold (above). Relaxed: the inject below publishes it with the branch (its release),
      // and every arrival is an RMW on the same counter, after it in its modification order.
      j->count.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (const std::bad_alloc &) {
    fatal("out of memory recording a fork from a thread that is not an engine");
  }
  inject(Task{fn, env, j});
}

// A thread that is not an engine joins j: drops j's hold, waits for its branches, then gives
// back their units of the spawn join (MR_shutdown may end once the last is back).
void join_outside(Join *j) {
  auto it = std::find_if(t_outside_forks.rbegin(), t_outside_forks.rend(),
                         [j](const auto &f) { return f.first == j; });
  if (it == t_outside_forks.rend()) {  // nothing forked into j from this thread
    suspend_on_join(nullptr, j);
    return;
  }
  std::uint32_t n = it->second;
  t_outside_forks.erase(std::next(it).base());
  // The parent's own arrival is still to come: dropping the hold is never the last (J1).
  if (arrive_at_join(j, 1) <= 1) fatal(kTooManyBranches);
  suspend_on_join(nullptr, j);
  give_spawn_units(g_rt->spawned, n);
}

}  // namespace

void context_body(Context *self) {
  for (;;) {
    Task t = self->task;
    t.fn(t.env);
    if (self->local.release) {  // a library's data for this task (context_local.hpp)
      ContextLocal l = self->local;
      self->local = {};
      l.release(l.owned);
    }
    finish_task(self, t.join);
  }
}

void fork(Join *j, MR_TaskFn fn, void *env, bool term) {
  Engine *e = this_engine();
  if (!e) {
    if (!running()) fatal("MR_fork_new_child called while the runtime is not running");
    if (term)
      fork_outside(j, fn, env);
    else
      inject(Task{fn, env, j});
    return;
  }
  note(e, Event::sparks_pushed);
  push_spark(e, Task{fn, env, j});
}

std::uint32_t run_own_sparks(Engine *&e, Join *j) {
  std::uint32_t ran = 0;
  for (;;) {
    if (g_rt->shutdown.load(std::memory_order_relaxed)) break;  // MR_shutdown_now: suspend here
    // An older spark of something else stays where it is (H1: a spark put back would be held).
    if (e->deque.newest_join() != j) break;
    Task t;
    if (!pop_spark(e, t)) break;  // a thief took it
    MR_DASSERT(t.join == j, "the owner's pop took another spark than the one it looked at");
    note(e, Event::sparks_run_local);
    Context *self = e->current;  // the same record wherever t.fn resumes it
    self->inline_branches++;
    t.fn(t.env);
    self->inline_branches--;
    ran++;
    e = this_engine();  // t.fn may have suspended and resumed this context on another engine
  }
  return ran;
}

void suspend_on_join(Engine *e, Join *j) {
  // Run once self->fiber is saved: its release publishes it (J1, join_count.hpp).
  wait_here(e, "join outside a context", trace::Why::JOIN,
            [j](Context *self) { return parent_arrives(j, self); });
}

void join_wait(Join *j, std::uint32_t ran) {
  Engine *e = this_engine();
  if (!e) {
    if (!running()) fatal("MR_join_and_continue called while the runtime is not running");
    MR_CHECK(ran == 0, "branches run inline by a thread that is not an engine");
    join_outside(j);
    return;
  }
  // The branches run inline here (and the `ran` the caller ran) arrive together at the end:
  // one write of the counter.
  ran += run_own_sparks(e, j);
  // If only the inline branches' and the parent's own arrivals are left, nobody else writes the
  // counter: a plain store.
  std::uint32_t c = join_pending(j);
  if (c == ran + 1) {
    if (ran > 0) j->count.store(1, std::memory_order_relaxed);
    return;
  }
  if (c < ran + 1) fatal(kTooManyBranches);
  if (ran > 0) {
    std::uint32_t old = arrive_inline(j, ran);
    if (old == ran + 1) return;
    if (old < ran + 1) fatal(kTooManyBranches);
  }
  suspend_on_join(e, j);
}

int current_channel() {
  Engine *e = this_engine();
  return e && e->current ? e->current->channel : MR_CHANNEL_DEFAULT;
}

int bind_here() {
  Engine *e = this_engine();
  if (!e || !e->current) return MR_ENOTENGINE;
  // Read by whoever resumes the context, after it suspends: the suspension publishes it (J1).
  e->current->bound = e->id;
  return e->id;
}

int spawn(MR_TaskFn fn, void *arg, int engine, int channel, std::uint64_t deadline,
          const Root *root) {
  Engine *e = this_engine();
  // MR_shutdown_now has begun, or MR_shutdown has and the channel drops its contexts (for the
  // rest, MR_shutdown closes the counter below).
  if (!accepts_spawns(channel)) return MR_ESHUTDOWN;
  // MR_channel_close refuses a root, or it is counted in its channel until it ends (close.hpp).
  if (root) {
    if (int rc = count_root(channel); rc != 0) return rc;
  }
  bool drops = g_rt->channels[channel].close == Close::DROP;
  // A drop channel's context is not waited for: its join keeps a unit of its own (Runtime).
  Join &spawned = drops ? g_rt->spawned_drop : g_rt->spawned;
  // Count the context in before it exists; refuse once the shutdown wait has ended (count 0).
  if (!take_spawn_unit(spawned)) {
    if (root) root_done(channel);
    return MR_ESHUTDOWN;
  }
  // Bound to a lazy engine: it gets its thread now, or the spawn fails (nothing else could run
  // the context): its thread could not be created, or MR_shutdown retired it (a drop channel's
  // unit does not hold the shutdown back), which set the shutdown flag first (the acquire in
  // has_thread that saw ABSENT orders it).
  if (engine >= 0 && !has_thread(g_rt->engines[engine])) {
    if (root) root_done(channel);
    give_spawn_units(spawned, 1);
    return g_rt->shutdown.load(std::memory_order_relaxed) ? MR_ESHUTDOWN : MR_EAGAIN;
  }
  Context *ctx = get_context(e, ContextKind::REGULAR);
  if (!ctx) {
    // Undo our units; the primordial cannot be waiting on it alone (we were counted, it is >= 2
    // unless the waiter already left, and it only leaves at 0).
    if (root) root_done(channel);
    give_spawn_units(spawned, 1);
    return MR_ENOMEM;
  }
  if (root) {
    ctx->spawned = {fn, arg, root->on_drop, root->on_free};
    ctx->task = Task{run_spawned, ctx, &spawned};
  } else {
    ctx->task = Task{fn, arg, &spawned};
  }
  ctx->bound = engine;
  ctx->channel = channel;
  ctx->deadline = deadline;
  schedule(ctx);
  return 0;
}

}  // namespace mr::engine
