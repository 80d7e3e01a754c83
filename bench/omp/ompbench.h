/* ompbench.h: what the OpenMP task kernels of bench/omp share: the clock, the size arguments,
 * the warm-up of the team, and the one result line that run.sh reads.
 *
 * The kernels are plain C built with `gcc -O2 -fopenmp` and linked against nothing but the
 * libgomp.so.1 found at run time, so one binary runs on gcc's libgomp, on LLVM's libomp (through
 * a libgomp.so.1 symlink) and on libmrgomp; nothing here may depend on which one it is. */
#ifndef OMPBENCH_H
#define OMPBENCH_H

/* RTLD_DEFAULT is a GNU extension in older C libraries; every kernel includes this header
 * first, so the definition comes before any system header. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Wall-clock seconds from the runtime itself, so every runtime is timed by the same call. */
static inline double ob_now(void) { return omp_get_wtime(); }

/* argv[i] as an integer in [lo, hi], or def when the argument is absent; a bad value stops the
 * program (exit 2) so a typo in run.sh cannot look like a measurement. */
static inline long ob_arg(int argc, char **argv, int i, long def, long lo, long hi) {
  if (i >= argc) return def;
  char *end = NULL;
  long v = strtol(argv[i], &end, 10);
  if (*argv[i] == '\0' || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "%s: bad argument '%s' (expected %ld..%ld)\n", argv[0], argv[i], lo, hi);
    exit(2);
  }
  return v;
}

/* Start the team once before the clock starts: the first parallel region creates the
 * runtime's threads (or, on libmrgomp, its engines), which is start-up cost, not the kernel's.
 * Returns the size of the team a parallel region gets, which run.sh compares with the
 * OMP_NUM_THREADS it asked for. */
static inline int ob_warm_up(void) {
  int team = 0;
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  return team;
}

/* The result line: space-separated key=value pairs, one line per run. `metric` is the figure
 * the table shows (seconds for most kernels, ns per task for the fan-out), `unit` names it. */
static inline void ob_report(const char *kernel, const char *size, int team, double seconds,
                             double metric, const char *unit, int ok, const char *detail) {
  printf("ompbench kernel=%s size=%s threads=%d seconds=%.6f metric=%.6g unit=%s check=%s%s%s\n",
         kernel, size, team, seconds, metric, unit, ok ? "ok" : "FAIL", detail[0] ? " " : "",
         detail);
  fflush(stdout);
  /* OMPBENCH_STATS=1: on libmrgomp, mrengine's per-engine counters (sparks pushed, stolen,
   * sleeps, wake-ups...) on stderr, to see why a figure is what it is. libmrgomp never shuts
   * mrengine down, so MRENGINE_OPTIONS=--stats prints nothing; the symbol is looked up at run
   * time because the kernels link nothing of mrengine. On another runtime it is absent. */
  const char *want = getenv("OMPBENCH_STATS");
  if (want != NULL && strcmp(want, "1") == 0) {
    int (*print)(FILE *) = (int (*)(FILE *))dlsym(RTLD_DEFAULT, "MR_stats_print");
    if (print != NULL)
      print(stderr);
    else
      fprintf(stderr, "%s: not on mrengine (no MR_stats_print)\n", kernel);
  }
}

#endif
