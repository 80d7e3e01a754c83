// future.hpp: futures, the single-assignment values of dependent parallel conjunctions
// (doc/design.md, "Futures").
#ifndef MR_ENGINE_FUTURE_HPP
#define MR_ENGINE_FUTURE_HPP

#include <atomic>
#include <cstdint>

#include "mrengine.h"

namespace mr::engine {

// The inside of an MR_Future. A zeroed Future is unsignalled with no waiters.
//   state:   0 or the head of the waiter list (each node on its waiter's stack), or kSignalled.
//            Waiters push themselves by CAS (release, so their node is visible to the
//            signaller); the one signaller exchanges it for kSignalled (acq_rel) and so takes
//            the whole list at once. Readers that see kSignalled (acquire) see the value.
//   value:   written by the first signaller before its exchange (relaxed store, published by it).
//   signals: how many signal calls started (acq_rel RMW): only the first writes the value.
struct Future {
  static constexpr std::uintptr_t kSignalled = 1;
  std::atomic<std::uintptr_t> state;
  std::atomic<std::uintptr_t> value;
  std::atomic<std::uint32_t> signals;
};
static_assert(sizeof(Future) <= sizeof(MR_Future), "MR_Future too small");
static_assert(alignof(Future) <= alignof(MR_Future), "MR_Future alignment too small");

// Make f signalled with `value` and resume every waiter. Any thread while running. A second
// signal with the same value returns; with a different value it stops the process.
void future_signal(Future *f, std::uintptr_t value);

// Is f signalled (future_wait would not wait)? Any thread.
bool future_is_signalled(const Future *f);

// The value of f, suspending the calling context (or blocking the calling thread, if it is not
// an engine) until f is signalled.
std::uintptr_t future_wait(Future *f);

}  // namespace mr::engine

#endif
