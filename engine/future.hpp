// future.hpp: futures, the single-assignment values of dependent parallel conjunctions
// (doc/design.md, "Futures").
#ifndef MR_ENGINE_FUTURE_HPP
#define MR_ENGINE_FUTURE_HPP

#include <atomic>
#include <cstdint>

#include "mrengine.h"

namespace mr::engine {

// The inside of an MR_Future. A zeroed Future is unsignalled with no waiters.
//   state:   0 or the head of the waiter list (each node on its waiter's stack, so aligned and
//            never 1 or 2), then kSignalling, then kSignalled. Waiters push themselves by CAS
//            (release, so their node is visible to the signaller); the first signaller CASes
//            the list to kSignalling (acquire), so it alone takes the whole list and writes the
//            value, then stores kSignalled (release). Readers that see kSignalled (acquire) see
//            the value; one that sees kSignalling waits the two stores out.
//   value:   written by the first signaller between its CAS and its store (relaxed, published by
//            the store).
struct Future {
  static constexpr std::uintptr_t kSignalled = 1;
  static constexpr std::uintptr_t kSignalling = 2;
  std::atomic<std::uintptr_t> state;
  std::atomic<std::uintptr_t> value;
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
