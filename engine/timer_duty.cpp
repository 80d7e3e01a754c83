// timer_duty.cpp: the engines' side of timers (timer_duty.hpp; doc/design.md, TM1).
#include "config.h"

#include "timer_duty.hpp"

#include <atomic>

#include "events.hpp"
#include "wake.hpp"

namespace mr::engine {

namespace {

// Wake engine v (SLEEPING) so that it computes its wait again. CONTEXT_ADVICE: a sleeper takes
// it under its wake lock and goes back to the top of its idle loop. Any thread.
bool rewake(Shared *v) {
  return notify_engine(v, Action::CONTEXT_ADVICE, nullptr) == Sent::DELIVERED;
}

// Engine x's earliest deadline d must be answered for: x itself if it is not WORKING, else a
// sleeper whose wait ends by d + grace (or any engine that is awake and not working, which passes
// the top of its idle loop).
void cover(Shared *x, std::uint64_t d) {
  // seq_cst fence: proof TM1 (the deadline is published, or x is WORKING; then the sleepers'
  // states and wait deadlines are read).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // relaxed: ordered by the fence above (TM1).
  State st = x->sleep.state.load(std::memory_order_relaxed);
  if (st == State::SLEEPING) {
    if (x->wait_deadline.load(std::memory_order_relaxed) <= d || rewake(x)) return;
    // Not delivered: x left SLEEPING meanwhile (it passes its idle loop), or x is a lazy engine
    // whose thread could not be created, retired WORKING for good (section 15): as for an
    // engine that works, another must answer for the deadline.
    st = x->sleep.state.load(std::memory_order_relaxed);
  }
  if (st != State::WORKING) return;  // it passes the top of its idle loop (timers_idle) soon
  const std::uint64_t by = add_saturating(d, kTakeoverGraceNs);
  for (int i = 0; i < g_rt->n; i++) {
    Shared *v = g_rt->engines[i];
    if (v == x) continue;
    State vs = v->sleep.state.load(std::memory_order_relaxed);
    if (vs != State::SLEEPING) {
      if (vs != State::WORKING) return;  // awake and looking: it passes timers_idle
      continue;
    }
    if (v->wait_deadline.load(std::memory_order_relaxed) <= by) return;
  }
  for (int i = 0; i < g_rt->n; i++) {
    Shared *v = g_rt->engines[i];
    if (v != x && v->sleep.state.load(std::memory_order_relaxed) == State::SLEEPING && rewake(v))
      return;
  }
  // Every other engine works: the timer waits for one of them to pass its idle loop (design.md).
}

}  // namespace

void timers_idle(Engine *e) {
  std::uint64_t soonest = e->timers.earliest();
  for (int i = 0; i < g_rt->n; i++) {
    Shared *v = g_rt->engines[i];
    if (v != e) {
      std::uint64_t w = v->timers.earliest();
      if (w != kNever) w = add_saturating(w, kTakeoverGraceNs);
      if (w < soonest) soonest = w;
    }
  }
  if (soonest == kNever) return;  // the common case: no clock read
  const std::uint64_t now = now_ns();
  if (now < soonest) return;
  if (e->timers.earliest() <= now)
    for (int k = e->timers.fire_due(now); k > 0; k--) note(e, Event::timers_fired);
  for (int i = 0; i < g_rt->n; i++) {
    Shared *v = g_rt->engines[i];
    if (v != e && add_saturating(v->timers.earliest(), kTakeoverGraceNs) <= now)
      for (int k = v->timers.fire_due(now); k > 0; k--) note(e, Event::timers_taken);
  }
}

void timers_working(Engine *e) {
  e->covered = e->timers.lowered();
  std::uint64_t d = e->timers.earliest();
  if (d != kNever) cover(e, d);
}

void timers_handed_off(Engine *e) {
  // With no arm that made a new earliest since the last cover, the earliest is answered for: an
  // earliest that only rose (a timer fired or cancelled) is later than the one covered, whose
  // sleeper wakes by then and computes its wait again (TM1). The common case: one load.
  std::uint64_t lowered = e->timers.lowered();
  if (lowered == e->covered) return;
  e->covered = lowered;
  std::uint64_t d = e->timers.earliest();
  if (d != kNever) cover(e, d);
}

void timer_armed(Shared *x, std::uint64_t when) { cover(x, when); }

std::uint64_t timers_wait_deadline(Engine *e) {
  std::uint64_t w = e->timers.earliest();
  for (int i = 0; i < g_rt->n; i++) {
    Shared *v = g_rt->engines[i];
    // relaxed: after the sleep fence (TM1).
    if (v != e && v->sleep.state.load(std::memory_order_relaxed) == State::WORKING) {
      std::uint64_t d = v->timers.earliest();
      if (d != kNever && add_saturating(d, kTakeoverGraceNs) < w)
        w = add_saturating(d, kTakeoverGraceNs);
    }
  }
  // relaxed: a notifier that reads a stale kNever only wakes us once more (TM1).
  e->wait_deadline.store(w, std::memory_order_relaxed);
  return w;
}

void timers_woken(Engine *e) {
  // relaxed: stored before the next sleep fence, which orders it (TM1).
  e->wait_deadline.store(kNever, std::memory_order_relaxed);
}

}  // namespace mr::engine
