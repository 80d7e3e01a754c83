// timer_state.hpp: a timer record's state word and its steps (doc/design.md section 21): the
// heap marks the record under its lock as it takes it in and lets it go (armed, fired,
// cancelled, dropped); the record's owner reads the state without the lock. Dependency-free, so
// that tests/weak/timer.cpp checks these very steps under GenMC (engine/mutant.hpp).
#ifndef MR_ENGINE_TIMER_STATE_HPP
#define MR_ENGINE_TIMER_STATE_HPP

#include <atomic>
#include <cstdint>

#include "mutant.hpp"

namespace mr::engine {

// A timer's life: FREE (never armed) -> PENDING (in a heap) -> FIRED, CANCELLED or DROPPED (the
// runtime stopped first). Every change out of PENDING is made under the heap's lock.
enum class TimerState : std::uint32_t { FREE, PENDING, FIRED, CANCELLED, DROPPED };

// The record is in a heap. release: whoever sees PENDING sees its fields, set before arming,
// and the heap it is in (a cancel from another thread goes to that heap).
inline void timer_mark_pending(std::atomic<TimerState> &s) {
  s.store(TimerState::PENDING, MR_WEAK_MUTANT(TIMER_ARM, std::memory_order_release));
}

// The record left its heap to fire (its fields copied first), or fired at once. release: after
// this store the record is its owner's again, who may reuse it once it sees FIRED.
inline void timer_mark_fired(std::atomic<TimerState> &s) {
  s.store(TimerState::FIRED, MR_WEAK_MUTANT(TIMER_FIRED, std::memory_order_release));
}

// The record left its heap by a cancel. release: as timer_mark_fired.
inline void timer_mark_cancelled(std::atomic<TimerState> &s) {
  s.store(TimerState::CANCELLED, MR_WEAK_MUTANT(TIMER_CANCELLED, std::memory_order_release));
}

// The record was forgotten by a heap at shutdown. release: as timer_mark_fired.
inline void timer_mark_dropped(std::atomic<TimerState> &s) {
  s.store(TimerState::DROPPED, MR_WEAK_MUTANT(TIMER_DROPPED, std::memory_order_release));
}

// The owner's look at the state, without the lock. acquire: pairs with the release stores
// above (the heap it is in, or the end of the heap's last use of the record).
inline TimerState timer_look(const std::atomic<TimerState> &s) {
  return s.load(MR_WEAK_MUTANT(TIMER_LOOK, std::memory_order_acquire));
}

// The state under the heap's lock. relaxed: every change out of PENDING is made under the lock.
inline TimerState timer_look_locked(const std::atomic<TimerState> &s) {
  return s.load(std::memory_order_relaxed);
}

}  // namespace mr::engine

#endif
