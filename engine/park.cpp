// park.cpp: parking an engine on its semaphore or through the embedder's hook (park.hpp).
#include "config.h"

#include "park.hpp"

#include <errno.h>
#include <time.h>

#include "fatal.hpp"

namespace mr::engine {

bool sem_wait_until(sem_t *s, std::uint64_t deadline_ns) {
  if (deadline_ns == UINT64_MAX) {
    while (sem_wait(s) != 0) MR_CHECK(errno == EINTR, "sem_wait failed");
    return true;
  }
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(deadline_ns / 1000000000u);
  ts.tv_nsec = static_cast<long>(deadline_ns % 1000000000u);
  for (;;) {
    if (sem_clockwait(s, CLOCK_MONOTONIC, &ts) == 0) return true;
    if (errno == EINTR) continue;
    MR_CHECK(errno == ETIMEDOUT, "sem_clockwait failed");
    return false;
  }
}

Parked park_engine(const Park &p, sem_t *sem, int id, std::uint64_t deadline_ns) {
  if (!p.hooked()) return sem_wait_until(sem, deadline_ns) ? Parked::UNPARKED : Parked::EARLY;
  int rc = p.park(p.ctx, id, deadline_ns);
  if (rc != 0)
    fatal("the park hook (MR_Config.park) returned %d (%s) for engine %d", rc, MR_strerror(rc), id);
  return Parked::EARLY;  // a hook does not say why it returned: the engine looks
}

void unpark_engine(const Park &p, sem_t *sem, int id) {
  if (p.hooked())
    p.unpark(p.ctx, id);
  else
    sem_post(sem);
}

}  // namespace mr::engine
