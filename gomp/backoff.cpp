// backoff.cpp: the waits of locks, ordered and doacross loops and a team's start and end. The
// thread waited for is a running task on another thread (tasks do not suspend holding a lock
// unless they wait inside it, doc/gomp.md), so sleeping in the kernel at once would only add
// latency.
#include <sched.h>
#include <time.h>

#include "backoff.hpp"
#include "engine/cpu_relax.hpp"

namespace mrg {

using mr::engine::cpu_relax;

void backoff(unsigned *round) {
  unsigned r = (*round)++;
  if (r < 64) {
    cpu_relax();
  } else if (r < 256) {
    sched_yield();
  } else {
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, nullptr);
  }
}

}  // namespace mrg
