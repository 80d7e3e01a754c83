/* design_fork.c: the child of a fork() after OpenMP regions uses OpenMP (doc/gomp.md, "fork()"),
 * as a gcc -fopenmp program that tests/gomp/check-design.sh runs against this tree's
 * libgomp.so.1 (a case of its own, beside design.c's). Exits 0 if the child's regions, tasks
 * and loops run with the teams they ask for, member 1 of its regions on an engine, and the
 * parent's still do after the fork: first forks between regions, then forks by another thread
 * while the main thread is in a region (its team holds the slots and is kept). */
#include "design.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>

/* Regions of 4 (more members than the 2 engines: residents and slot threads), a parallel loop,
 * and tasks; `who` names the process in a failure. */
static void use_openmp(const char *who) {
  for (int r = 0; r < 5; r++) {
    int members = 0, size = 0;
#pragma omp parallel num_threads(4) reduction(+ : members)
    {
      members += 1;
#pragma omp single
      size = omp_get_num_threads();
    }
    if (members != 4 || size != 4)
      FAIL("%s: a region of 4 had %d members (size %d)", who, members, size);
  }
  long sum = 0;
#pragma omp parallel for num_threads(2) reduction(+ : sum) schedule(dynamic, 7)
  for (int i = 0; i < 1000; i++) sum += i;
  if (sum != 999L * 1000 / 2) FAIL("%s: the loop summed %ld", who, sum);
  int tasks = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  for (int i = 0; i < 100; i++) {
#pragma omp task shared(tasks)
    __atomic_add_fetch(&tasks, 1, __ATOMIC_RELAXED);
  }
  if (tasks != 100) FAIL("%s: %d of 100 tasks ran", who, tasks);
}

static int (*num_engines)(void), (*engine_id)(void), (*shutdown_mr)(void);

/* The child: no runtime until its first region, then its own (member 1 of a top-level region on
 * the resident of engine 1, as a region with the slots has), which it shuts down. */
static void child_main(void) {
  alarm(30); /* a child that hangs in a region ends */
  if (num_engines() != 0) FAIL("child: mrengine runs before its first region");
  /* First a region of the shape the parent's main thread keeps a team of (its members may have
   * been mid-region at the fork: that team is not the child's to reuse). */
  int where = -2;
#pragma omp parallel num_threads(2)
  if (omp_get_thread_num() == 1) where = engine_id();
  if (where != 1) FAIL("child: member 1 ran on engine %d, not on engine 1", where);
  if (num_engines() < 1) FAIL("child: its regions did not start mrengine");
  use_openmp("child");
  /* The members parked between regions are the child's, and do not keep MR_shutdown waiting
   * (design.c's "shutdown"). */
  usleep(5000);
  int rc = shutdown_mr();
  if (rc != 0) FAIL("child: MR_shutdown: %d", rc);
  /* _exit: the parent's records the child leaks on purpose (doc/api.md "fork()") would be
   * reported by LeakSanitizer at exit() in an ASan build. */
  _exit(0);
}

static void fork_and_check(const char *when, int round) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) FAIL("fork failed");
  if (pid == 0) child_main();
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) FAIL("waitpid failed");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    FAIL("%s, round %d: the child failed (status %#x)", when, round, status);
}

static int regions_done;

/* Another thread forks while the main thread runs regions of 2. */
static void *fork_beside_regions(void *arg) {
  (void)arg;
  for (int round = 0; round < 10; round++) {
    usleep(2000);
    fork_and_check("beside a region", round);
  }
  __atomic_store_n(&regions_done, 1, __ATOMIC_RELEASE);
  return NULL;
}

int main(void) {
#ifdef __SANITIZE_THREAD__
  /* ThreadSanitizer stops a child that starts threads after a fork of a process with threads
   * (tests/check_fork.c says more): nothing to check in that build. */
  fprintf(stderr, "design_fork: skipped under ThreadSanitizer\n");
  return 0;
#endif
  num_engines = (int (*)(void))dlsym(RTLD_DEFAULT, "MR_num_engines");
  engine_id = (int (*)(void))dlsym(RTLD_DEFAULT, "MR_engine_id");
  shutdown_mr = (int (*)(void))dlsym(RTLD_DEFAULT, "MR_shutdown");
  if (!num_engines || !engine_id || !shutdown_mr) FAIL("the program did not load mrengine");
  use_openmp("parent");
  for (int round = 0; round < 3; round++) {
    fork_and_check("between regions", round);
    use_openmp("parent after the fork");
  }
  pthread_t other;
  if (pthread_create(&other, NULL, fork_beside_regions, NULL) != 0) FAIL("pthread_create");
  while (!__atomic_load_n(&regions_done, __ATOMIC_ACQUIRE)) {
    int members = 0;
#pragma omp parallel num_threads(2) reduction(+ : members)
    {
      members += 1;
      usleep(200);
    }
    if (members != 2) FAIL("parent: a region of 2 had %d members", members);
  }
  pthread_join(other, NULL);
  use_openmp("parent after the forks");
  return 0;
}
