// backoff.cpp: the waits of locks, ordered and doacross loops and a team's start and end. The
// thread waited for is a running task on another thread (tasks do not suspend holding a lock
// unless they wait inside it, doc/gomp.md), so sleeping at once would only add latency.
#include <sched.h>
#include <time.h>

#include "backoff.hpp"
#include "engine/cpu_relax.hpp"
#include "mrengine.h"

namespace mrg {

using mr::engine::cpu_relax;

namespace {

constexpr unsigned kSpins = 64, kYields = 256;  // rounds of each kind, counted from the start
constexpr long kSleepNs = 50 * 1000;            // one sleep, after those

void sleep_a_spell() {
  struct timespec ts = {0, kSleepNs};
  nanosleep(&ts, nullptr);
}

}  // namespace

void backoff(unsigned *round) {
  unsigned r = (*round)++;
  if (r < kSpins) {
    cpu_relax();
  } else if (r < kYields) {
    sched_yield();
  } else {
    sleep_a_spell();
  }
}

void backoff_suspending(unsigned *round) {
  // A member on an engine whose wait spun on, holding its engine, left a member on a slot thread
  // waiting for ever for a task of its own that only an engine can take (a taskgroup's, in an
  // ordered loop of more members than engines). On a thread that is not an engine MR_sleep_for
  // sleeps in the kernel, as backoff does.
  if (*round >= kYields && MR_sleep_for(kSleepNs) == 0) {
    ++*round;
    return;
  }
  backoff(round);
}

}  // namespace mrg
