// park.hpp: how an engine sleeps and is woken (doc/design.md, "The park hook"). By default the
// engine waits on its own semaphore; an embedder may give MR_Config a park/unpark pair instead
// (an event loop's wait, an epoll_wait). The sleep protocol (sleep.hpp) only needs: an unpark
// before or during a park makes that park return; a park may also return early for no reason
// (spuriously, or at its deadline), which the engine handles like a polling time-out.
#ifndef MR_ENGINE_PARK_HPP
#define MR_ENGINE_PARK_HPP

#include <semaphore.h>

#include <cstdint>

#include "mrengine.h"

namespace mr::engine {

// The embedder's hooks, from MR_Config; both null for the semaphore.
struct Park {
  MR_ParkFn park = nullptr;
  MR_UnparkFn unpark = nullptr;
  void *ctx = nullptr;
  bool hooked() const { return park != nullptr; }
};

// What a park returned.
enum class Parked { UNPARKED, EARLY };  // a post was consumed / a time-out or unknown reason

// Park engine `id` until it is unparked or CLOCK_MONOTONIC reaches deadline_ns (UINT64_MAX: no
// deadline): the hook, or a wait on `sem`. A hook's error stops the process with a message.
// Called only by engine id.
Parked park_engine(const Park &p, sem_t *sem, int id, std::uint64_t deadline_ns);

// Unpark engine `id`: the hook, or a post of `sem`. Any thread.
void unpark_engine(const Park &p, sem_t *sem, int id);

// Wait until s is posted (true) or CLOCK_MONOTONIC reaches `deadline_ns` (false); UINT64_MAX
// waits for the post. Retries when a signal interrupts the wait. Any thread.
bool sem_wait_until(sem_t *s, std::uint64_t deadline_ns);

}  // namespace mr::engine

#endif
