/* design_spawned.c: OpenMP from a context that a program which started mrengine itself spawned
 * (doc/gomp.md, "Which thread runs what"): member 0 keeps its OS thread, as every member does,
 * and MR_shutdown waits for the regions in flight. design.c runs them by name. */
#include "design.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

/* mrengine's C ABI, found in the process (libmrgomp brings it): MR_Future is four words, zero
 * when unsignalled. */
typedef struct {
  uintptr_t words[4];
} future_t;

static struct {
  int (*init)(const void *);
  int (*shutdown)(void);
  int (*spawn)(void (*)(void *), void *, const void *);
  void (*signal)(future_t *, uintptr_t);
  uintptr_t (*wait)(future_t *);
} mr;

static void find_mrengine(void) {
  mr.init = (int (*)(const void *))dlsym(RTLD_DEFAULT, "MR_init");
  mr.shutdown = (int (*)(void))dlsym(RTLD_DEFAULT, "MR_shutdown");
  mr.spawn = (int (*)(void (*)(void *), void *, const void *))dlsym(RTLD_DEFAULT, "MR_spawn");
  mr.signal = (void (*)(future_t *, uintptr_t))dlsym(RTLD_DEFAULT, "MR_future_signal");
  mr.wait = (uintptr_t(*)(future_t *))dlsym(RTLD_DEFAULT, "MR_future_wait");
  if (!mr.init || !mr.shutdown || !mr.spawn || !mr.signal || !mr.wait)
    FAIL("mrengine's C ABI is not in the process");
  int rc = mr.init(NULL);
  if (rc != 0) FAIL("MR_init: %d", rc);
}

enum { REGIONS = 200, BARRIERS = 8, ORDERED = 16 };

struct run {
  int moved, tp_wrong, order_wrong, regions;
  future_t done;
};

/* Regions of 2 from a spawned context: each member checks its OS thread and threadprivate
 * value after each barrier, then the members run an ordered loop (which a member 0 resumed on
 * the other engine's thread spins in, keeping member 1 from that thread). */
static void regions(void *arg) {
  struct run *r = arg;
  for (int k = 0; k < REGIONS; k++) {
    int next = 0;
#pragma omp parallel num_threads(2) shared(next)
    {
      int me = omp_get_thread_num();
      long tid = os_tid();
      tp_value = me;
      for (int b = 0; b < BARRIERS; b++) {
#pragma omp barrier
        /* relaxed: counts, read after the context ends. */
        if (os_tid() != tid) __atomic_add_fetch(&r->moved, 1, __ATOMIC_RELAXED);
        if (tp_value != me) __atomic_add_fetch(&r->tp_wrong, 1, __ATOMIC_RELAXED);
        tp_value = me;
      }
#pragma omp for ordered schedule(dynamic, 1)
      for (int i = 0; i < ORDERED; i++) {
#pragma omp ordered
        {
          if (next != i) __atomic_add_fetch(&r->order_wrong, 1, __ATOMIC_RELAXED);
          next = i + 1;
        }
      }
    }
    r->regions++;
  }
  mr.signal(&r->done, 1);
}

/* Member 0 started from a spawned (unbound) context stays on its OS thread through the
 * region's barriers, as members 1..n-1 do. */
int test_spawned_member0(void) {
  find_mrengine();
  static struct run r;
  alarm(50); /* a member 0 that spins on the other member's thread hangs the ordered loop */
  int rc = mr.spawn(regions, &r, NULL);
  if (rc != 0) FAIL("MR_spawn: %d", rc);
  mr.wait(&r.done);
  if (r.moved) FAIL("%d times a member resumed on another OS thread after a barrier", r.moved);
  if (r.tp_wrong) FAIL("%d times a member saw another's threadprivate value", r.tp_wrong);
  if (r.order_wrong) FAIL("%d ordered regions out of order", r.order_wrong);
  rc = mr.shutdown();
  if (rc != 0) FAIL("MR_shutdown: %d", rc);
  return 0;
}

/* MR_shutdown, called while a spawned context runs regions, waits for that context, whose
 * regions all end (none loses a member to the shutdown). */
int test_spawned_shutdown(void) {
  find_mrengine();
  static struct run r;
  alarm(50); /* a region that lost a member never ends, nor does the shutdown */
  int rc = mr.spawn(regions, &r, NULL);
  if (rc != 0) FAIL("MR_spawn: %d", rc);
  rc = mr.shutdown();
  if (rc != 0) FAIL("MR_shutdown: %d", rc);
  if (r.regions != REGIONS)
    FAIL("%d regions of %d ran before MR_shutdown returned", r.regions, REGIONS);
  if (r.order_wrong) FAIL("%d ordered regions out of order", r.order_wrong);
  return 0;
}

/* The current task belongs to the context, not the thread: on one engine with tasks as sparks
 * (MRGOMP_DEFER_ALONE=true, check-design.sh), a task that suspends in MR_future_wait resumes
 * after the other task started and suspended there, and still sees its own record (T2 is final,
 * T1 is not). */
static future_t first_wait, second_wait;
static int started, wrong_final;

static void suspending_task(int final_) {
  /* relaxed: both tasks run on the one engine's thread. */
  if (__atomic_fetch_add(&started, 1, __ATOMIC_RELAXED) == 0) {
    mr.wait(&first_wait); /* resumed once the other task has suspended */
    if (omp_in_final() != final_) wrong_final++;
    mr.signal(&second_wait, 1);
  } else {
    mr.signal(&first_wait, 1);
    mr.wait(&second_wait);
    if (omp_in_final() != final_) wrong_final++;
  }
}

int test_current_suspend(void) {
  find_mrengine();
  for (int k = 0; k < 200; k++) {
    memset(&first_wait, 0, sizeof first_wait);
    memset(&second_wait, 0, sizeof second_wait);
    started = 0;
#pragma omp task
    suspending_task(0);
#pragma omp task final(1)
    suspending_task(1);
#pragma omp taskwait
    if (wrong_final) FAIL("round %d: %d tasks saw the other task's omp_in_final()", k, wrong_final);
  }
  mr.shutdown();
  return 0;
}

/* A program context that runs on an engine while a team member of another team waits at a
 * barrier there is in no parallel region, and gets a team of its own. */
struct program {
  int in_parallel, thread, level, team;
  int seen; /* set once the first three are recorded */
  future_t done;
};

static void program_context(void *arg) {
  struct program *p = arg;
  p->in_parallel = omp_in_parallel();
  p->thread = omp_get_thread_num();
  p->level = omp_get_level();
  __atomic_store_n(&p->seen, 1, __ATOMIC_RELEASE); /* release: the three above, for member 0 */
#pragma omp parallel num_threads(2)
#pragma omp single
  p->team = omp_get_num_threads();
  mr.signal(&p->done, 1);
}

int test_current_program(void) {
  find_mrengine();
  for (int k = 0; k < 50; k++) {
    static struct program p;
    memset(&p, 0, sizeof p);
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 1) {
        int rc = mr.spawn(program_context, &p, NULL);
        if (rc != 0) FAIL("MR_spawn: %d", rc);
      } else {
        /* acquire: pairs with the context's release store. Member 0 keeps its engine busy, so
         * the context runs where member 1 waits at the barrier. */
        while (!__atomic_load_n(&p.seen, __ATOMIC_ACQUIRE)) usleep(1000);
      }
    }
    mr.wait(&p.done);
    if (p.in_parallel != 0 || p.thread != 0 || p.level != 0 || p.team != 2)
      FAIL(
          "round %d: a program context saw omp_in_parallel() %d, thread %d, level %d, a team of %d"
          " (not 0, 0, 0, 2)",
          k, p.in_parallel, p.thread, p.level, p.team);
  }
  mr.shutdown();
  return 0;
}
