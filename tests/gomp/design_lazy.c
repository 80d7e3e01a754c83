/* design_lazy.c: OpenMP on a runtime with an engine left out for good (--lazy-engines, its
 * thread could not be created; doc/options.md): that engine's team member runs on a slot thread
 * of libmrgomp's own, as a member beyond the engine count does. check-design.sh runs it with
 * MRENGINE_OPTIONS="-P 3 --lazy-engines". design.c runs it by name. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "design.h"

/* While set, a thread that libmrengine creates cannot be made (as under a thread limit); the
 * threads of libmrgomp and of the program can. */
static int fail_engine_threads;

int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg) {
  static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
  if (!real)
    real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
        RTLD_NEXT, "pthread_create");
  Dl_info where;
  if (__atomic_load_n(&fail_engine_threads, __ATOMIC_RELAXED) &&
      dladdr(__builtin_return_address(0), &where) && where.dli_fname &&
      strstr(where.dli_fname, "libmrengine"))
    return EAGAIN;
  return real(t, a, fn, arg);
}

enum { REGIONS = 300 };

/* Regions of 3 whose first would give member 1 and 2 to the resident contexts of engines that
 * cannot start: each region has its 3 members on 3 threads (it stopped the program with
 * "cannot start team member 1"). */
int test_lazy_absent(void) {
#pragma omp parallel num_threads(1)
  { /* starts the runtime with engines 1 and 2 not started */
  }
  __atomic_store_n(&fail_engine_threads, 1, __ATOMIC_RELAXED);
  for (int r = 0; r < REGIONS; r++) {
    int seen = 0;
    long tids[3] = {0, 0, 0};
#pragma omp parallel num_threads(3) shared(seen, tids)
    {
      int me = omp_get_thread_num();
      tids[me] = os_tid();
      __atomic_fetch_or(&seen, 1 << me, __ATOMIC_RELAXED);
    }
    if (seen != 7) FAIL("region %d: members seen %#x, not all 3", r, seen);
    if (tids[0] == tids[1] || tids[0] == tids[2] || tids[1] == tids[2])
      FAIL("region %d: two members on one thread", r);
  }
  return 0;
}
