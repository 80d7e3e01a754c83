/* design_fork.c: the child of a fork() after OpenMP regions uses OpenMP (doc/gomp.md, "fork()"),
 * as a gcc -fopenmp program that tests/gomp/check-design.sh runs against this tree's
 * libgomp.so.1 (a case of its own, beside design.c's). Exits 0 if the child's regions, tasks
 * and loops run with the teams they ask for and the parent's still do after the fork. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAIL(...)                                   \
  do {                                              \
    fprintf(stderr, "design_fork: %s: ", __func__); \
    fprintf(stderr, __VA_ARGS__);                   \
    fputc('\n', stderr);                            \
    exit(1);                                        \
  } while (0)

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

int main(void) {
#ifdef __SANITIZE_THREAD__
  /* ThreadSanitizer stops a child that starts threads after a fork of a process with threads
   * (tests/check_fork.c says more): nothing to check in that build. */
  fprintf(stderr, "design_fork: skipped under ThreadSanitizer\n");
  return 0;
#endif
  int (*num_engines)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "MR_num_engines");
  int (*shutdown)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "MR_shutdown");
  if (!num_engines || !shutdown) FAIL("the program did not load mrengine");
  use_openmp("parent");
  for (int round = 0; round < 3; round++) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) FAIL("fork failed");
    if (pid == 0) {
      alarm(30); /* a child that hangs in a region ends */
      if (num_engines() != 0) FAIL("child: mrengine runs before its first region");
      use_openmp("child");
      if (num_engines() < 1) FAIL("child: its regions did not start mrengine");
      /* Its runtime is its own: the members parked between regions are the child's, and do
       * not keep MR_shutdown waiting (design.c's "shutdown"). */
      usleep(5000);
      int rc = shutdown();
      if (rc != 0) FAIL("child: MR_shutdown: %d", rc);
      exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) FAIL("waitpid failed");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      FAIL("round %d: the child failed (status %#x)", round, status);
    use_openmp("parent after the fork");
  }
  return 0;
}
