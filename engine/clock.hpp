// clock.hpp: the one clock of mrengine and libmrgomp, CLOCK_MONOTONIC in nanoseconds (MR_now,
// timers, deadlines, trace time stamps and omp_get_wtime all read it). Header-only, so that a
// trace stamp or a policy check costs no call.
#ifndef MR_ENGINE_CLOCK_HPP
#define MR_ENGINE_CLOCK_HPP

#include <time.h>

#include <cstdint>

namespace mr::engine {

// CLOCK_MONOTONIC in nanoseconds. Any thread; async-signal-safe (clock_gettime is).
inline std::uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace mr::engine

#endif
