// deadline.cpp: sleeps, timers and tickers (deadline.hpp).
#include "config.h"

#include "deadline.hpp"

#include <errno.h>
#include <time.h>

#include <new>

#include "fatal.hpp"
#include "join.hpp"
#include "switch.hpp"
#include "timer_duty.hpp"
#include "wake.hpp"

namespace mr::engine {

namespace {

// Timers armed from threads that are not engines go to the engines in turn. relaxed: only
// spreads them.
std::atomic<unsigned> foreign_turn{0};

Shared *home_for_arm(Shared *e) {
  if (e) return e;
  for (;;) {
    Shared *x = g_rt->engines[foreign_turn.fetch_add(1, std::memory_order_relaxed) %
                              static_cast<unsigned>(g_rt->n)];
    // relaxed: a hint. Not a lazy engine left out for good (section 15), which never fires its
    // own timers (cover() finds another if it is left out after this look). Engine 0 never is.
    if (x->start.load(std::memory_order_relaxed) != StartState::ABSENT) return x;
  }
}

// The fire functions (TimerFire), run by whichever engine fires the timer.
void fire_resume(void *ctx, void *) { schedule(static_cast<Context *>(ctx)); }

void fire_spawn(void *fn, void *env) {
  int rc = spawn(reinterpret_cast<MR_TaskFn>(fn), env, -1, MR_CHANNEL_DEFAULT, 0);
  if (rc != 0 && rc != MR_ESHUTDOWN)
    warning(g_rt->p.quiet, "a timer's function could not start (%s): it does not run",
            MR_strerror(rc));
}

void fire_signal(void *f, void *value) {
  future_signal(static_cast<Future *>(f), reinterpret_cast<std::uintptr_t>(value));
}

bool is_pending(const Timer *t) {
  // acquire: pairs with the release stores of the heap, which finish with the record.
  return timer_look(t->state) == TimerState::PENDING;
}

// Arm t on the calling engine (or one in turn for a thread that is not an engine), or fire it at
// once if `when` has passed. The caller does not suspend right after: timer_armed (TM1).
int arm_or_fire(Timer *t, std::uint64_t when, TimerFire fire, void *a, void *b) {
  if (is_pending(t)) return MR_EINVAL;
  t->when = when;
  t->fire = fire;
  t->a = a;
  t->b = b;
  if (when <= now_ns()) {
    // release: as the heap's, the record is the caller's again.
    timer_mark_fired(t->state);
    fire(a, b);
    return 0;
  }
  Shared *x = home_for_arm(this_engine());
  try {
    if (x->timers.arm(t)) timer_armed(x, when);
  } catch (const std::bad_alloc &) {
    return MR_ENOMEM;
  }
  return 0;
}

}  // namespace

int sleep_until(std::uint64_t when) {
  Engine *e = this_engine();
  // An engine's thread outside any context (an on_drop, a polled source's poll function) goes on
  // to suspend_self, which stops the process with a message, as a join's wait does: a sleep of
  // the thread would stop the engine.
  if (!e) {
    struct timespec ts;
    ts.tv_sec = static_cast<time_t>(when / 1000000000u);
    ts.tv_nsec = static_cast<long>(when % 1000000000u);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {}
    return 0;
  }
  if (when <= now_ns()) return 0;
  Timer t{};
  t.when = when;
  t.fire = fire_resume;
  bool no_memory = false;
  // Arm only once the context is saved: the timer may fire at once on another engine (J1). This
  // engine is about to pass its idle loop, which answers for its own timers: no timer_armed.
  suspend_self(e, "MR_sleep_until outside a context", trace::Why::SLEEP,
               [e, &t, &no_memory](Context *self) {
                 t.a = self;
                 try {
                   (void)e->timers.arm(&t);
                   return false;
                 } catch (const std::bad_alloc &) {
                   no_memory = true;
                   return true;  // run again at once
                 }
               });
  return no_memory ? MR_ENOMEM : 0;
}

int timer_start(Timer *t, std::uint64_t when, MR_TaskFn fn, void *env) {
  if (g_rt->shutdown.load(std::memory_order_relaxed)) return MR_ESHUTDOWN;
  return arm_or_fire(t, when, fire_spawn, reinterpret_cast<void *>(fn), env);
}

int future_signal_at(Future *f, std::uintptr_t value, std::uint64_t when, Timer *t) {
  return arm_or_fire(t, when, fire_signal, f, reinterpret_cast<void *>(value));
}

int timer_cancel(Timer *t) {
  // acquire: pairs with the release store that ended the record's last use.
  TimerState s = timer_look(t->state);
  if (s == TimerState::PENDING) {
    if (!running() || t->heap_id < 0 || t->heap_id >= g_rt->n) return MR_ESHUTDOWN;
    if (g_rt->engines[t->heap_id]->timers.cancel(t, &s)) return 0;
  }
  switch (s) {
    case TimerState::FIRED:
      return MR_EFIRED;
    case TimerState::CANCELLED:
      return MR_ECANCELLED;
    case TimerState::DROPPED:
      return MR_ESHUTDOWN;
    default:
      return MR_EINVAL;
  }
}

void ticker_start(Ticker *tk, std::uint64_t period) {
  tk->start = now_ns();
  tk->period = period;
  tk->consumed = 0;
}

int ticker_wait(Ticker *tk, std::uint64_t *ticks) {
  for (;;) {
    std::uint64_t elapsed = (now_ns() - tk->start) / tk->period;
    if (elapsed > tk->consumed) {
      *ticks = elapsed - tk->consumed;
      tk->consumed = elapsed;
      return 0;
    }
    std::uint64_t k = tk->consumed + 1;
    std::uint64_t next =
        k > kNever / tk->period ? kNever : add_saturating(tk->start, k * tk->period);
    if (int rc = sleep_until(next); rc != 0) return rc;
  }
}

}  // namespace mr::engine
