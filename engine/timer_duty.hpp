// timer_duty.hpp: what engines do for timers (doc/design.md, "Timers", proof TM1): the idle loop
// fires its engine's due timers and takes over the overdue timers of a busy engine; a sleeping
// engine waits no longer than the deadlines it answers for; an engine that goes to work with
// timers pending, or a timer armed on a working engine, makes sure a sleeper will wake for them.
#ifndef MR_ENGINE_TIMER_DUTY_HPP
#define MR_ENGINE_TIMER_DUTY_HPP

#include <cstdint>

#include "engine.hpp"

namespace mr::engine {

// How late a working engine's timer may be before an idle engine fires it for its owner, and so
// by when a sleeping engine wakes to do that (TM1).
inline constexpr std::uint64_t kTakeoverGraceNs = 1000000;

// a + b, or kNever if that overflows.
inline std::uint64_t add_saturating(std::uint64_t a, std::uint64_t b) {
  return a > kNever - b ? kNever : a + b;
}

// Called only by engine e's idle loop, at the top of each pass: fire its due timers, and the
// timers of other engines that are overdue by kTakeoverGraceNs.
void timers_idle(Engine *e);

// Called only by engine e's scheduler when it leaves its idle loop to run a context: if it has
// pending timers, make sure someone answers for them should it stay busy (TM1).
void timers_working(Engine *e);

// Called only by engine e, WORKING, when it runs another context without passing its idle loop
// (a hand-off, or the context waiting in next_ctx), once the suspension that led there is done:
// a timer that suspension armed on e's heap (a sleep, a ticker's wait, an fd wait's time-out)
// is answered for as at timers_working, should the next context stay busy (TM1). A cover runs
// only when an arm made a new earliest deadline since e's last one.
void timers_handed_off(Engine *e);

// After a timer with deadline `when` became the earliest of engine x's heap, armed by a thread
// that will not suspend at once: make sure x, or a sleeper if x works, answers for it (TM1). Any
// thread.
void timer_armed(Shared *x, std::uint64_t when);

// Called only by engine e, SLEEPING, right before its wait (after the sleep fence): the deadline
// of that wait (its own earliest timer; a WORKING engine's earliest plus the grace), also stored
// in e->wait_deadline; kNever for none. timers_woken stores kNever back when the wait ends.
std::uint64_t timers_wait_deadline(Engine *e);
void timers_woken(Engine *e);

}  // namespace mr::engine

#endif
