// join.cpp: forks, joins, spawns, and the context body (join.hpp).
#include "config.h"

#include "join.hpp"

#include <new>

#include "cache.hpp"
#include "fatal.hpp"
#include "switch.hpp"
#include "wake.hpp"

namespace mr::engine {

namespace {

// A child's arrival at its join, then its next task. Called only by context self, which has just
// run self->task. Returns when self has a new task.
void finish_task(Context *self, Join *j) {
  Engine *e = this_engine();
  trace::on_stop(e, self, trace::Why::FINISHED);
  self->bound = -1;
  // MR_shutdown_now: reach the scheduler, which leaves; run nothing more here.
  bool stopping = g_rt->shutdown.load(std::memory_order_relaxed);
  // acq_rel: release publishes the child's results to the parent; acquire (for the last
  // arrival) pairs with the parent's release in its suspend, so j->parent and its saved
  // continuation are visible (J1).
  if (j->count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    Context *p = j->parent;
    // The last arrival is a child only after the parent's own (which set parent first).
    if (p == nullptr)
      fatal("a conjunction's last branch finished before its parent joined: more branches "
            "forked than MR_sync_term_init counted");
    if (p->kind != ContextKind::FOREIGN && (p->bound < 0 || p->bound == e->id) && !stopping) {
      // The parent may run here: switch straight to it; self goes to the free cache.
      p->suspended = false;
      bump(e->stats.contexts_resumed);
      e->current = p;
      trace::on_run(e, p);
      leave_context(self, std::move(p->fiber), p->san, [e, self] { release_context(e, self); });
      return;
    }
    schedule(p);
  }
  // Prefer waiting contexts to sparks; else run a local spark in this same context.
  if (!stopping && !e->bound.maybe_nonempty() && !g_rt->shared.maybe_nonempty()) {
    Task t;
    if (e->deque.pop(t)) {
      bump(e->stats.sparks_run_local);
      trace::on_spark_run(e);
      trace::on_run(e, self);  // a new task: a new thread for the trace
      self->task = t;
      return;
    }
  }
  switch_to_scheduler(e, self, [e, self] { release_context(e, self); });
}

// A spark from a thread that is not an engine: into the injector, then the post-work check
// (P1, the injector's push fence).
void inject(const Task &t) {
  auto *n = new (std::nothrow) Injected{t, nullptr};
  if (!n) fatal("out of memory while submitting a spark from a thread that is not an engine");
  g_rt->injector.push(n);
  work_posted(-1);
}

}  // namespace

void context_body(Context *self) {
  for (;;) {
    Task t = self->task;
    t.fn(t.env);
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
  e->deque.push(Task{fn, env, j});
  bump(e->stats.sparks_pushed);
  trace::on_spark_create(e);
  work_posted(e->id);
}

void suspend_on_join(Engine *e, Join *j) {
  wait_here(e, "join outside a context", trace::Why::JOIN, [j](Context *self) {
    j->parent = self;
    // acq_rel: release publishes self->fiber and j->parent to the last child; acquire pairs
    // with the children that arrived meanwhile (J1). Zero: every child had arrived.
    return j->count.fetch_sub(1, std::memory_order_acq_rel) == 1;
  });
}

void join_wait(Join *j) {
  Engine *e = this_engine();
  if (!e) {
    if (!running()) fatal("MR_join_and_continue called while the runtime is not running");
    suspend_on_join(nullptr, j);
    return;
  }
  for (;;) {
    // acquire: pairs with the children's release arrivals (their results become visible).
    if (j->count.load(std::memory_order_acquire) == 1) return;
    if (g_rt->shutdown.load(std::memory_order_relaxed)) break;  // MR_shutdown_now: suspend here
    Task t;
    if (!e->deque.pop(t)) break;
    if (t.join != j) {  // an older spark of another conjunction: leave it where it was
      e->deque.push(t);
      break;
    }
    bump(e->stats.sparks_run_local);
    trace::on_spark_run(e);
    t.fn(t.env);
    // The inline child's arrival. With count 2 only this child and the parent were expected,
    // so no other thread can write the counter: a relaxed store does. Otherwise release RMW.
    if (j->count.load(std::memory_order_relaxed) == 2)
      j->count.store(1, std::memory_order_relaxed);
    else
      j->count.fetch_sub(1, std::memory_order_release);
    e = this_engine();  // t.fn may have suspended and resumed this context on another engine
  }
  suspend_on_join(e, j);
}

int bind_here() {
  Engine *e = this_engine();
  if (!e || !e->current) return MR_ENOTENGINE;
  // Read by whoever resumes the context, after it suspends: the suspension publishes it (J1).
  e->current->bound = e->id;
  return e->id;
}

int spawn(MR_TaskFn fn, void *arg, int engine) {
  Engine *e = this_engine();
  // MR_shutdown_now has begun (MR_shutdown closes the counter below instead). relaxed: a
  // context that misses the flag only adds a context that is then dropped and counted.
  if (g_rt->shutdown.load(std::memory_order_relaxed)) return MR_ESHUTDOWN;
  Join &spawned = g_rt->spawned;
  // Count the context in before it exists; refuse once the shutdown wait has ended (count 0).
  std::uint32_t c = spawned.count.load(std::memory_order_relaxed);
  do {
    if (c == 0) return MR_ESHUTDOWN;
    // CAS relaxed: only the total order of RMWs on this counter matters here (J1 for the end).
  } while (!spawned.count.compare_exchange_weak(c, c + 1, std::memory_order_relaxed));
  Context *ctx = get_context(e, ContextKind::REGULAR);
  if (!ctx) {
    // Undo our unit; the primordial cannot be waiting on it alone (we were counted, it is >= 2
    // unless the waiter already left, and it only leaves at 0).
    if (spawned.count.fetch_sub(1, std::memory_order_acq_rel) == 1) schedule(spawned.parent);
    return MR_ENOMEM;
  }
  ctx->task = Task{fn, arg, &spawned};
  ctx->bound = engine;
  schedule(ctx);
  return 0;
}

}  // namespace mr::engine
