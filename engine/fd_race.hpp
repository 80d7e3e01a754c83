// fd_race.hpp: the steps of the race for a context waiting on a file descriptor (doc/design.md
// section 23): the engine that sees the descriptor ready and the time-out's timer (any engine)
// decide by CAS on the waiter's state which of them makes the context runnable, and the
// time-out's fire function marks its last access to the record with a flag. Dependency-free, so
// that tests/weak/fd.cpp checks these very steps under GenMC (engine/mutant.hpp).
#ifndef MR_ENGINE_FD_RACE_HPP
#define MR_ENGINE_FD_RACE_HPP

#include <atomic>

#include "mutant.hpp"

namespace mr::engine {

// A waiter's state: WAITING until readiness or the time-out wins it.
enum FdWait : int { kFdWaiting, kFdReady, kFdTimedOut };

// Readiness claims the waiter: true if it won (it then makes the context runnable). acq_rel:
// release publishes the ready bits, written before, to the context; acquire orders nothing we
// need. relaxed on failure: the loser reads nothing of the record.
inline bool fd_ready_wins(std::atomic<int> &state) {
  int expected = kFdWaiting;
  return state.compare_exchange_strong(expected, kFdReady,
                                       MR_WEAK_MUTANT(FD_READY_CAS, std::memory_order_acq_rel),
                                       std::memory_order_relaxed);
}

// The time-out claims the waiter: true if it won. acq_rel, as fd_ready_wins.
inline bool fd_timeout_wins(std::atomic<int> &state) {
  int expected = kFdWaiting;
  return state.compare_exchange_strong(expected, kFdTimedOut,
                                       MR_WEAK_MUTANT(FD_TIMEOUT_CAS, std::memory_order_acq_rel),
                                       std::memory_order_relaxed);
}

// The time-out's fire function is done with the record. release: its reads and its CAS come
// before the context, which waits for this once its cancel said the timer fired, lets the
// record (on its stack) go.
inline void fd_timer_finish(std::atomic<bool> &done) {
  done.store(true, MR_WEAK_MUTANT(FD_TIMER_DONE, std::memory_order_release));
}

// The context's look at the flag. acquire: pairs with fd_timer_finish's release.
inline bool fd_timer_finished(const std::atomic<bool> &done) {
  return done.load(MR_WEAK_MUTANT(FD_DONE_LOAD, std::memory_order_acquire));
}

// The context, resumed, reads who won: true for readiness. acquire: pairs with the winner's CAS,
// so the ready bits are visible.
inline bool fd_was_ready(const std::atomic<int> &state) {
  return state.load(MR_WEAK_MUTANT(FD_STATE_LOAD, std::memory_order_acquire)) == kFdReady;
}

}  // namespace mr::engine

#endif
