// switch.hpp: every switch between contexts, schedulers and backup threads, and the two ways to
// wait until someone resumes the caller (suspend a context, or block a thread that is not an
// engine).
//
// Every switch is a resume_with whose ontop function, running on the destination's stack, saves
// the source's continuation and only then publishes the source (to a free cache, a join counter,
// a queue): so nobody can resume a context that has not finished switching away (J1). Both
// primitives name their destination to the sanitizers (sanitizer.hpp) and, through
// gc::switch_stacks, to a collector's hooks (gc.hpp).
#ifndef MR_ENGINE_SWITCH_HPP
#define MR_ENGINE_SWITCH_HPP

#include <semaphore.h>

#include <boost/context/fiber.hpp>

#include "engine.hpp"
#include "events.hpp"
#include "exception_state.hpp"
#include "fatal.hpp"
#include "gc.hpp"
#include "policy.hpp"
#include "timer_duty.hpp"
#include "wake.hpp"
#include "watchdog.hpp"

namespace mr::engine {

// Run context c from a stack that is not a context's (a scheduler, a backup thread's loop):
// that stack's continuation goes into `slot` until c switches back to it.
inline void resume_context(Context *c, san::Fiber &from, gc::Stack &from_gc,
                           boost::context::fiber &slot) {
  boost::context::fiber f = std::move(c->fiber);
  gc::switch_stacks(
      std::move(f), from_gc, c->gc, [&from, c] { san::leave(from, c->san); },
      [c, &slot](boost::context::fiber &&back, auto arrive) {
        san::arrive(c->san);
        arrive(back);
        slot = std::move(back);
        return boost::context::fiber{};
      });
}

// Leave context self for the continuation `to` (whose stacks are `to_san` and `to_gc`): self is
// saved in self->fiber, and only then does `publish` run, on the destination's stack (J1). Self's
// C++ exception state goes with it, kept in this frame, and is put back on whatever thread
// resumes it; the destination finds the thread's state empty (exception_state.hpp).
template <class F>
void leave_context(Context *self, boost::context::fiber &&to, san::Fiber &to_san, gc::Stack &to_gc,
                   F publish) {
  const ExceptionState exceptions = exceptions_take();
  gc::switch_stacks(
      std::move(to), self->gc, to_gc, [self, &to_san] { san::leave(self->san, to_san); },
      [self, &to_san, publish](boost::context::fiber &&back, auto arrive) {
        san::arrive(to_san);
        arrive(back);
        self->fiber = std::move(back);
        publish();
        return boost::context::fiber{};
      });
  exceptions_put(exceptions);
}

// Called only by engine e: from now on e's time is channel ch's (-1: its scheduler's), when
// per-channel time is measured (Runtime::timing).
inline void account_channel(Engine *e, int ch) {
  if (!g_rt->timing) return;
  std::uint64_t now = now_ns();
  if (int r = e->run_channel; r >= 0) {
    // relaxed load + store: owner-written, as the counters (counters.hpp).
    e->channel_ns[r].store(e->channel_ns[r].load(std::memory_order_relaxed) + (now - e->run_since),
                           std::memory_order_relaxed);
  }
  e->run_channel = ch;
  e->run_since = now;
}

// Called only by engine e, about to switch to c: c becomes e's running context (its channel
// the one the inline MR_sync_term_init reads), and a suspension of c ends (counted once, for
// the statistics and the trace). Every switch to a context comes through here (the scheduler's,
// a hand-off, a join's switch to its parent), so this is where e publishes the sparks it holds:
// c runs something else than the context that forked them, and would keep them from the other
// engines for as long as it runs (H1).
inline void enter_context(Engine *e, Context *c) {
  publish_held(e);
  watchdog_note_switch(e);
  e->current = c;
  // c may have suspended inside a region in place, or the context before it.
  if ((c->blocking_depth != 0) != (e->deque.publish_below() == WsDeque::kAlwaysPublish))
      [[unlikely]]
    set_in_region(e, c->blocking_depth != 0);
  e->view.channel = static_cast<AO_t>(c->channel);
  bump(e->channel_runs[c->channel]);
  account_channel(e, c->channel);
  if (c->suspended) {
    c->suspended = false;
    note(e, Event::contexts_resumed);
  }
  trace::on_run(e, c);
}

// Called only by engine e's scheduler: run c until something switches back to the scheduler.
inline void run_context(Engine *e, Context *c) {
  enter_context(e, c);
  resume_context(c, e->sched_san, e->sched_gc, e->sched);
}

// Called only by a context on engine e: switch to e's scheduler; `publish` runs on the
// scheduler's stack after this context's continuation is saved in self->fiber.
template <class F>
void switch_to_scheduler(Engine *e, Context *self, F publish) {
  e->current = nullptr;
  account_channel(e, -1);
  leave_context(self, std::move(e->sched), e->sched_san, e->sched_gc, publish);
}

// How many hand-offs in a row an engine makes before it goes through its scheduler (suspend_self).
constexpr unsigned kMaxHandoffs = 64;

// Called only by the context running on engine e, about to suspend (suspend_self): the context
// to switch straight to, from e->next_ctx or the hand-off slot, or nullptr for the scheduler.
[[gnu::always_inline]] inline Context *handoff_target(Engine *e, int queued_at) {
  const Runtime *rt = g_rt;
  // relaxed flags: the scheduler, reached instead, reads them again.
  if (e->handoffs >= kMaxHandoffs || e->bound.maybe_nonempty() ||
      rt->closing.load(std::memory_order_relaxed) || rt->shutdown.load(std::memory_order_relaxed))
    return nullptr;
  Context *next = e->next_ctx;
  if (next)
    e->next_ctx = nullptr;
  else if (!(next = take_runnext(e->runnext, rt->n == 1)))
    return nullptr;
  // A context that a closed channel drops goes to its queue too: the scheduler drops it. Levels
  // are compared only when a channel holds a context or self is queued (a yield): otherwise
  // nothing waits above next's level, nor at self's.
  bool waits = dropped_by_close(next);
  if (!waits && (queued_at < kLevels || rt->channels.work() != 0)) {
    const int level = rt->channels.level(queue_channel(next));
    waits = queued_above(level) || queued_at < level;
  }
  if (!waits) return next;
  enqueue(next);  // it waits its turn in its queue
  return nullptr;
}

// Called only by the context running on engine e: suspend it until someone resumes it.
// `publish(self)` runs on the scheduler's stack once self is saved, so it may make self findable
// by whoever will resume it (J1); if it returns true instead, self is run again at once. Joins,
// futures, loop control and blocking regions all suspend through here; `why` is which, for the
// trace.
//
// If the engine's hand-off slot holds a context (one that self made runnable, say by signalling
// a future it now waits on), self switches straight to it, without the scheduler: a ping-pong
// costs one switch per hand-off. Not while the engine has bound work queued, a context of a
// higher level than the slot's is queued, or the runtime closes or stops, and not more than
// kMaxHandoffs times in a row, so that the scheduler still runs (its queues, its policy, its
// notifications) however two contexts keep handing the engine to each other. `queued_at` is the
// level `publish` queues self at (a yield), or kLevels when self waits for something: the slot's
// context does not go ahead of self's own level either.
template <class F>
void suspend_self(Engine *e, const char *what, trace::Why why, F publish, int queued_at = kLevels) {
  Context *self = e->current;
  MR_CHECK(self != nullptr, what);
  self->suspended = true;
  note(e, Event::contexts_suspended);
  Context *next = handoff_target(e, queued_at);
  trace::on_stop(e, self, why);
  if (next) {
    e->handoffs++;
    enter_context(e, next);
    leave_context(self, std::move(next->fiber), next->san, next->gc, [e, self, &publish] {
      // self may go on at once (what it waits for came meanwhile): it runs when next leaves
      // the engine, by this same path or through the scheduler, as below.
      if (publish(self)) e->next_ctx = self;
      // What publish armed (a sleep's timer) has no idle loop to answer for it now (TM1).
      timers_handed_off(e);
    });
    return;
  }
  e->handoffs = 0;
  switch_to_scheduler(e, self, [e, self, &publish] {
    if (publish(self)) e->next_ctx = self;  // run_context counts the resumption
  });
}

// The same for a thread that is not an engine: it waits as a FOREIGN record on its own stack,
// which `publish` makes findable; `schedule` of the record posts the thread's semaphore.
template <class F>
void block_foreign(F publish) {
  sem_t sem;
  sem_init(&sem, 0, 0);
  Context self;
  self.kind = ContextKind::FOREIGN;
  self.wake = &sem;
  if (!publish(&self)) sem_wait_posted(&sem);
  // The post came after whatever made the wait end, and sem_wait synchronises with it.
  sem_destroy(&sem);
}

// Wait until whoever `publish(self)` hands self to resumes it: the context running on engine e
// suspends, or, with e == nullptr, the calling thread blocks. Joins and futures wait here.
template <class F>
void wait_here(Engine *e, const char *what, trace::Why why, F publish) {
  if (e)
    suspend_self(e, what, why, publish);
  else
    block_foreign(publish);
}

}  // namespace mr::engine

#endif
