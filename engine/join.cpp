// join.cpp: forks, joins, spawns, and the context body (join.hpp).
#include "config.h"

#include "join.hpp"

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
// context of its level or above waits (contexts come first at a level). Called only by context
// self on engine e. A stolen spark is counted as it is stolen (steal.hpp); one of the engine's
// own is counted by take_task when it runs, since the caller may put it back instead.
enum class Next { NONE, OWN, STOLEN };
Next next_spark(Engine *e, Context *self, Task &t) {
  if (e->bound.maybe_nonempty() ||
      (g_rt->channels.work() & g_rt->channels.at_or_above(g_rt->channels.level(self->channel))))
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
    // relaxed closing: a parent that misses it is dropped at its next suspension.
    if (p->kind != ContextKind::FOREIGN && (p->bound < 0 || p->bound == e->id) && !stopping &&
        from != Next::STOLEN && !g_rt->closing.load(std::memory_order_relaxed) &&
        !dropped_by_close(p) && !queued_above(g_rt->channels.level(queue_channel(p)))) {
      // The parent may run here: switch straight to it; self goes to the free cache, and the
      // spark in hand (this engine's own, not counted yet) back where it was. A stolen spark
      // is not moved here: self runs it, and the parent is scheduled.
      if (have) push_spark(e, t);
      enter_context(e, p);
      leave_context(self, std::move(p->fiber), p->san, [e, self] { release_context(e, self); });
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

void fork(Join *j, MR_TaskFn fn, void *env) {
  Engine *e = this_engine();
  if (!e) {
    if (!running()) fatal("MR_fork_new_child called while the runtime is not running");
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
    Task t;
    if (!pop_spark(e, t)) break;
    if (t.join != j) {  // an older spark of something else: leave it where it was
      push_spark(e, t);
      break;
    }
    note(e, Event::sparks_run_local);
    t.fn(t.env);
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
    suspend_on_join(nullptr, j);
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
  std::uint32_t c = spawned.count.load(std::memory_order_relaxed);
  do {
    if (c == 0) {
      if (root) root_done(channel);
      return MR_ESHUTDOWN;
    }
    // CAS relaxed: only the total order of RMWs on this counter matters here (J1 for the end).
  } while (!spawned.count.compare_exchange_weak(c, c + 1, std::memory_order_relaxed));
  Context *ctx = get_context(e, ContextKind::REGULAR);
  if (!ctx) {
    // Undo our units; the primordial cannot be waiting on it alone (we were counted, it is >= 2
    // unless the waiter already left, and it only leaves at 0).
    if (root) root_done(channel);
    if (arrive_at_join(&spawned, 1) == 1) schedule(spawned.parent);  // J1, as a branch's end
    return MR_ENOMEM;
  }
  if (root) {
    ctx->spawned = {fn, arg, root->on_drop};
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
