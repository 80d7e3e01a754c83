// idle.cpp: the scheduler loop and the idle loop (idle.hpp). Everything here runs on one
// engine's own thread and is handed that Engine, whose search state (Engine::search) it keeps.
//
// The idle loop (find_work), in order: the engine's own sources in the policy's order (its bound
// queue, the channels, its hand-off slot, its own deque, the injector: take_local), then (CAS
// IDLE->STEALING) bounded steal rounds (each a steal_round of steal.hpp), then (CAS
// STEALING->SLEEPING) a last look at all work after announcing itself as a sleeper, then the
// semaphore. An engine woken with work-steal advice first looks where the notifier saw the work
// (take_advised), then goes round the loop.
#include "config.h"

#include "idle.hpp"

#include <pthread.h>
#include <semaphore.h>

#include <algorithm>

#include "cache.hpp"
#include "close.hpp"
#include "cpu_relax.hpp"
#include "events.hpp"
#include "fatal.hpp"
#include "io_wait.hpp"
#include "policy.hpp"
#include "poll_wait.hpp"
#include "steal.hpp"
#include "switch.hpp"
#include "timer_duty.hpp"
#include "wake.hpp"

namespace mr::engine {

namespace {

// What the idle loop does after handling a notification or a sleep.
enum class Next { RUN, LOOK, LOOK_FROM_WORKING, EXIT };

// The engine's own state store and CAS (sleep.hpp), traced.
template <State from, State to>
void engine_store(SleepSync &s) {
  store_own_state<from, to>(s);
  trace::on_state(t_engine, to);
}

template <State from, State to>
bool engine_cas(SleepSync &s, State *seen) {
  bool ok = cas_own_state<from, to>(s, seen);
  if (ok) trace::on_state(t_engine, to);
  return ok;
}

// Called only by engine e: give back its searching unit if it holds one.
void stop_searching(Engine *e) {
  if (!e->search.holds_unit) return;
  e->search.holds_unit = false;
  give_back_unit(e->id);
}

// Called only by engine e: a notifier holds BUSY with e's wake lock; wait for it to finish by
// taking the lock (a blocking wait, not a spin on BUSY).
void wait_out_busy(Engine *e) {
  pthread_mutex_lock(&e->sleep.wake_lock);
  pthread_mutex_unlock(&e->sleep.wake_lock);
}

// Called only by engine e, in IDLE or STEALING, with work in hand: move to WORKING by CAS.
// A notification that arrived meanwhile can only be advice or SHUTDOWN (CONTEXT and work-steal
// advice go to sleepers only): it is absorbed, since a WORKING engine re-checks its queues and
// the shutdown flag at its next working->idle.
void leave_idle(Engine *e) {
  SleepSync &s = e->sleep;
  // acquire: pairs with a notifier's release store of NOTIFIED.
  State cur = s.state.load(std::memory_order_acquire);
  for (;;) {
    if (cur == State::IDLE) {
      if (engine_cas<State::IDLE, State::WORKING>(s, &cur)) return;
    } else if (cur == State::STEALING) {
      if (engine_cas<State::STEALING, State::WORKING>(s, &cur)) return;
    } else if (cur == State::BUSY) {
      wait_out_busy(e);
      cur = s.state.load(std::memory_order_acquire);
    } else {
      MR_CHECK(cur == State::NOTIFIED, "engine left idle from an impossible state");
      MR_CHECK(s.action == Action::CONTEXT_ADVICE || s.action == Action::SHUTDOWN,
               "a sleeper's notification reached an engine that was not asleep");
      note(e, Event::wakeups, static_cast<int>(s.action));
      engine_store<State::NOTIFIED, State::WORKING>(s);
      return;
    }
  }
}

// Called only by engine e, now WORKING: it found work, so it stops counting as a searcher.
void after_found_work(Engine *e, const Shared *victim) {
  e->search.woken_for_work = false;
  e->search.advised = false;  // the advice is used up, however the work was found
  if (!e->search.holds_unit) return;
  e->search.holds_unit = false;
  // The chain: found work while more waits at the victim, and engines sleep: pass the unit on.
  if (victim && victim->deque.published_estimate() > 0 &&
      Census::sleeping(g_rt->census.load()) != 0 && wake_one_with_unit(victim->id))
    return;
  give_back_unit(e->id);
}

// Called only by engine e, in IDLE or STEALING, with work in hand.
void become_working(Engine *e, const Shared *victim) {
  leave_idle(e);
  after_found_work(e, victim);
}

// Called only by engine e: take a spark from the injector into *t.
bool pop_injected(Engine *e, Task *t) {
  for (;;) {
    if (!g_rt->injector.pop(t)) return false;
    if (!keep_spark(*t)) continue;
    note(e, Event::sparks_injected);
    return true;
  }
}

// Called only by engine e: the newest spark of its own deque into *t, unless MR_shutdown drops
// it.
bool pop_own(Engine *e, Task *t) {
  while (pop_spark(e, *t))
    if (keep_spark(*t)) return true;
  return false;
}

// Called only by engine e: a spark popped from its own deque becomes its next work.
Context *run_own(Engine *e, const Task &t) {
  note(e, Event::sparks_run_local);
  return context_for_spark(e, t);
}

// Called only by engine e: put back a context it took from its hand-off slot but does not run
// now, where schedule() would have queued it.
void requeue(Engine *e, Context *c) {
  if (c->bound >= 0) {
    e->bound.push(c);
  } else {
    g_rt->channels.push(queue_channel(c), c);
    work_posted(e->id);
  }
}

// Called only by engine e: its next work from its own sources (queues, hand-off slot, deque,
// injector), or nullptr. Contexts bound to it come first. Otherwise the policy picks a level
// among those that have work here: queued contexts (each at its queue channel's level), the
// context in the hand-off slot, the newest spark of the deque (at its channel's level), the
// injector's sparks (at the default channel's level). At the chosen level: the hand-off slot,
// then the level's channels in turn, then the spark, then the injector.
Context *take_local(Engine *e) {
  if (Context *c = e->bound.pop()) return c;
  Channels &chs = g_rt->channels;
  Context *rn = take_runnext(e->runnext);
  Task t;
  // The common case, one level of work and no context waiting: the newest spark.
  if (!rn && chs.work() == 0) {
    if (pop_own(e, &t)) return run_own(e, t);
    if (pop_injected(e, &t)) return context_for_spark(e, t);
    return nullptr;
  }
  int rn_level = rn ? chs.level(queue_channel(rn)) : -1;
  for (;;) {
    unsigned busy = queued_levels();
    if (rn) busy |= 1u << rn_level;
    bool spark = pop_own(e, &t);
    int spark_level = spark ? chs.level(static_cast<int>(t.join->channel)) : -1;
    if (spark) busy |= 1u << spark_level;
    if (g_rt->injector.maybe_nonempty()) busy |= 1u << chs.level(MR_CHANNEL_DEFAULT);
    int L = next_level(e, busy);
    if (L < 0) return nullptr;
    Context *c = nullptr;
    if (rn && rn_level == L) {
      c = rn;
      rn = nullptr;
    } else {
      c = take_level(e, L);
    }
    if (!c && spark && spark_level == L) {
      if (rn) requeue(e, rn);
      return run_own(e, t);
    }
    if (spark) push_spark(e, t);  // back on the deque: the switch to c publishes it (H1)
    if (c) {
      if (rn) requeue(e, rn);
      return c;
    }
    if (L == chs.level(MR_CHANNEL_DEFAULT) && pop_injected(e, &t)) {
      if (rn) requeue(e, rn);
      return context_for_spark(e, t);
    }
    // The level's work was taken meanwhile: look again.
  }
}

// Called only by engine e in STEALING: what a steal got becomes its work (the engine WORKING),
// or nullptr if it got none.
Context *claim(Engine *e, const Stolen &s) {
  if (s.got == Loot::CONTEXT) {
    become_working(e, s.victim);
    return s.context;
  }
  if (s.got != Loot::SPARK) return nullptr;
  become_working(e, s.victim);
  Context *c = context_for_spark(e, s.spark);
  c->victim = s.victim->id;
  return c;
}

// Pause instructions between two steal rounds. With the default 32 rounds an engine that finds
// nothing searches for about 9 us before it sleeps (a pause takes 29 ns on the AMD EPYC of
// doc/performance.md): about what a sleep and a wake-up cost, which is all that spinning can
// save. With 64 pauses (60 us) a job every millisecond cost 1.8x the CPU of a plain worker
// thread (doc/performance.md, trickle load).
constexpr int kRoundPauses = 8;

// Called only by engine e in STEALING with a searching unit: up to `rounds` steal rounds (the
// advised victim first, then tier by tier), then the queues and the injector, then kRoundPauses
// pauses. Work (the engine WORKING), or nullptr when the rounds are spent, or when a
// notification or the shutdown flag cut them short (*interrupted set).
Context *steal_rounds_of(Engine *e, int rounds, bool *interrupted) {
  for (int r = 0; r < rounds; r++) {
    if (Context *c = claim(e, steal_round(e))) return c;
    if (queued_work_maybe(e)) {
      if (Context *c = take_local(e)) {
        become_working(e, nullptr);
        return c;
      }
    }
    // acquire: pairs with a notifier's release store of NOTIFIED.
    if (e->sleep.state.load(std::memory_order_acquire) == State::NOTIFIED ||
        g_rt->shutdown.load(std::memory_order_relaxed)) {
      *interrupted = true;
      return nullptr;
    }
    for (int i = 0; i < kRoundPauses; i++) cpu_relax();
  }
  return nullptr;
}

// Adaptive spinning. A search the engine starts on its own after running out of work is a bet
// that work will appear: if it finds nothing in all its rounds, the engine's next such search
// gets half as many (down to 1); if it finds work, the full --spin-rounds again. A search after
// WORKSTEAL_ADVICE (search.advised) has been told that work is there: it always gets the full
// rounds and does not count. (A polling build's time-out is no such news: its search is the
// engine's own.) An engine fed one job at a time (a trickle) thus stops paying for a spin that
// never pays off, while one whose spins find work keeps them. Called only by engine e.
Context *steal_rounds(Engine *e) {
  const int full = full_spin_rounds();
  bool interrupted = false;
  if (e->search.advised) {
    e->search.advised = false;
    return steal_rounds_of(e, full, &interrupted);
  }
  Context *c = steal_rounds_of(e, e->search.spin_budget, &interrupted);
  if (c)
    e->search.spin_budget = full;
  else if (!interrupted)
    e->search.spin_budget = e->search.spin_budget > 1 ? e->search.spin_budget / 2 : 1;
  return c;
}

// Called only by engine e, just woken in STEALING with work-steal advice: one look where the
// notifier saw the work (the advised victim's deque and hand-off slot, or the injector when no
// engine was named), before the own sources and the steal rounds. After a long sleep every
// cache line is cold, and the general search read a dozen before reaching the work
// (doc/performance.md, "Wake latency"). Work (the engine WORKING), or nullptr: the general
// search follows, with the advice's full rounds.
Context *take_advised(Engine *e) {
  if (Shared *v = take_advised_victim(e)) return claim(e, steal_work(e, v));
  Task t;
  if (!pop_injected(e, &t)) return nullptr;
  become_working(e, nullptr);
  return context_for_spark(e, t);
}

// Called only by engine e, having seen NOTIFIED (acquire).
Next handle_notification(Engine *e, Context **run) {
  SleepSync &s = e->sleep;
  Action a = s.action;
  void *d = s.data;
  note(e, Event::wakeups, static_cast<int>(a));
  switch (a) {
    case Action::CONTEXT:
      *run = static_cast<Context *>(d);
      engine_store<State::NOTIFIED, State::WORKING>(s);
      after_found_work(e, nullptr);
      return Next::RUN;
    case Action::CONTEXT_ADVICE:
      engine_store<State::NOTIFIED, State::IDLE>(s);
      advice_fence();  // proof P3, as after working->idle
      stop_searching(e);
      return Next::LOOK;
    case Action::WORKSTEAL_ADVICE:
      // Only ever delivered to a sleeper, together with a searching unit (Census).
      MR_CHECK(!e->search.holds_unit, "work-steal advice to an engine that was searching");
      engine_store<State::NOTIFIED, State::STEALING>(s);
      e->search.holds_unit = true;
      e->search.woken_for_work = true;
      e->search.advised = true;
      e->search.advised_victim = static_cast<int>(reinterpret_cast<std::intptr_t>(d));
      if (e->search.advised_victim == e->id) e->search.advised_victim = -1;
      return Next::LOOK;
    case Action::SHUTDOWN:
      return Next::EXIT;
  }
  return Next::LOOK;
}

// Called only by engine e, SLEEPING or NOTIFIED: under its own wake lock, if it is still
// SLEEPING, give back its sleeping unit and go WORKING (true); otherwise a notifier won and its
// post is on its way (false).
bool leave_sleeping(Engine *e) {
  SleepSync &s = e->sleep;
  pthread_mutex_lock(&s.wake_lock);
  // relaxed: under the wake lock nobody else moves the engine out of SLEEPING.
  bool still = s.state.load(std::memory_order_relaxed) == State::SLEEPING;
  if (still) {
    g_rt->census.remove_sleeper();
    engine_store<State::SLEEPING, State::WORKING>(s);
  }
  pthread_mutex_unlock(&s.wake_lock);
  return still;
}

// Park engine e (SLEEPING, or already NOTIFIED with an unpark on its way) no longer than the
// deadlines it answers for (timer_duty.hpp) and, in the polling build, --poll-interval-us: one
// timed-wait path for both. Returns LOOK when NOTIFIED, LOOK_FROM_WORKING when the park returned
// without a notification (a time-out, or a hook's early return) and e left SLEEPING itself.
Next wait_for_wake(Engine *e) {
  SleepSync &s = e->sleep;
  note(e, Event::sleeps);
  // Polled waits outstanding: no longer than their period (doc/design.md, "Polled waits").
  std::uint64_t until = std::min(timers_wait_deadline(e), poll_wait_deadline(e));
#ifdef MR_WORKSTEAL_POLLING
  until = std::min(until, now_ns() + static_cast<std::uint64_t>(g_rt->p.poll_interval_us) * 1000u);
#endif
  Parked how = Parked::EARLY;
  // acquire: pairs with a notifier's release store of NOTIFIED. A notifier that comes after this
  // load unparks after it too, so the park returns (the park contract).
  if (s.state.load(std::memory_order_acquire) == State::SLEEPING)
    how = park_engine(s.park, &s.sem, e->id, until);
  timers_woken(e);
  // Not woken by a post we consumed: leave SLEEPING ourselves, as on a polling time-out, unless
  // a notifier got there first.
  if (how == Parked::EARLY && leave_sleeping(e)) {
    e->search.woken_for_work = true;
    return Next::LOOK_FROM_WORKING;
  }
  // NOTIFIED. The semaphore counts: take the notifier's post now (it may still be on its way),
  // so that it does not end a later sleep. A hook's unpark may end one later park early, which
  // that park's caller handles as above.
  if (how == Parked::EARLY && !s.park.hooked()) sem_wait_posted(&s.sem);
  return Next::LOOK;
}

// Called only by engine e in STEALING, having found nothing.
Next fall_asleep(Engine *e) {
  SleepSync &s = e->sleep;
  // Under our own wake lock, so that no waker sees SLEEPING before the census counts us as a
  // sleeper (a waker removes that unit under the same lock). The CAS fails only on NOTIFIED (a
  // CAS notifier, which does not take the lock), which must not be overwritten.
  pthread_mutex_lock(&s.wake_lock);
  State seen;
  if (!engine_cas<State::STEALING, State::SLEEPING>(s, &seen)) {
    pthread_mutex_unlock(&s.wake_lock);
    return Next::LOOK;
  }
  g_rt->census.searcher_to_sleeper();
  e->sleep_stamp.store(g_rt->sleep_clock.fetch_add(1, std::memory_order_relaxed) + 1,
                       std::memory_order_relaxed);
  pthread_mutex_unlock(&s.wake_lock);
  e->search.holds_unit = false;
  if (e->search.woken_for_work) {
    note(e, Event::spurious_wakeups);
    e->search.woken_for_work = false;
  }
  sleep_fence();  // proofs P1, P2, P3, P4 (announce sleep, then the last look)
  if ((g_rt->shutdown.load(std::memory_order_relaxed) || work_visible(e)) && leave_sleeping(e))
    return Next::LOOK_FROM_WORKING;
  return wait_for_wake(e);  // asleep, or a notifier won: consume its post
}

// Called only by engine e's scheduler, in WORKING. Returns the next context to run (the engine
// WORKING) or nullptr when the runtime shuts down.
Context *find_work(Engine *e) {
  SleepSync &s = e->sleep;
  // A lazy engine's thread starts SLEEPING, with its first notification delivered (a waker
  // created it) or none yet (a spawn bound here did): it waits as any sleeper does.
  bool asleep = e->start_asleep && wait_for_wake(e) == Next::LOOK;
  e->start_asleep = false;
  for (;;) {
    if (!asleep) {
      engine_store<State::WORKING, State::IDLE>(s);
      idle_fence();  // proofs P3 (a bound context queued while we were WORKING) and P4
    }
    asleep = false;
    bool leaving = false;  // SHUTDOWN received or the shutdown flag seen
    for (;;) {
      // acquire: pairs with a notifier's release store of NOTIFIED.
      State now = s.state.load(std::memory_order_acquire);
      if (now == State::BUSY) {
        wait_out_busy(e);
        continue;
      }
      if (now == State::NOTIFIED) {
        Context *c = nullptr;
        Next n = handle_notification(e, &c);
        if (n == Next::RUN) return c;
        if (n == Next::EXIT) {
          leaving = true;
          break;
        }
        if (e->search.advised)  // just woken with work-steal advice
          if (Context *w = take_advised(e)) return w;
      }
      if (g_rt->shutdown.load(std::memory_order_acquire)) {
        leaving = true;
        break;
      }
      io_idle(e);  // before the timers: a descriptor ready at its wait's time-out counts as ready
      poll_idle(e);
      timers_idle(e);
      if (Context *c = take_local(e)) {
        become_working(e, nullptr);
        return c;
      }
      State cur = s.state.load(std::memory_order_acquire);
      if (cur != State::IDLE && !e->search.holds_unit) continue;  // notified meanwhile
      if (cur == State::IDLE) {
        // Fails only on BUSY or NOTIFIED: the loop top waits it out or handles it.
        if (!engine_cas<State::IDLE, State::STEALING>(s, &cur)) continue;
        g_rt->census.add_searcher();
        e->search.holds_unit = true;
      }
      MR_CHECK(e->search.holds_unit, "an engine is stealing without a searching unit");
      if (g_rt->n > 1) {
        if (Context *c = steal_rounds(e)) return c;
      } else if (queued_work_maybe(e)) {
        continue;
      }
      poll_idle(e);  // before sleeping: a wait done now resumes its context (advice to e)
      if (s.state.load(std::memory_order_acquire) == State::NOTIFIED) continue;
      Next n = fall_asleep(e);
      if (n == Next::LOOK_FROM_WORKING) break;  // back to the outer loop: idle again
    }
    if (leaving) {
      stop_searching(e);
      return nullptr;
    }
    // else LOOK_FROM_WORKING: start again from working->idle
  }
}

}  // namespace

int full_spin_rounds() { return g_rt->p.spin_rounds < 1 ? 1 : g_rt->p.spin_rounds; }

void scheduler(Engine *e) {
  for (;;) {
    Context *c = e->next_ctx;
    if (c) {
      e->next_ctx = nullptr;
      timers_handed_off(e);  // the context that left may have armed a timer (TM1)
    } else {
      c = find_work(e);
      if (!c) return;
      timers_working(e);
    }
    // Every context that the scheduler runs comes through here (the hand-offs stop once
    // MR_shutdown closes), so this is where those of drop channels are dropped.
    if (dropping(c)) {
      drop_context(c);
      continue;
    }
    run_context(e, c);
  }
}

}  // namespace mr::engine
