/* doacross.c: doacross loops (ordered(n) with depend(sink) and depend(source)) under every
 * schedule, as a gcc -fopenmp program that tests/gomp/check-doacross.sh runs against this
 * tree's libgomp.so.1 and against the system's libgomp. `doacross NAME` runs one test and exits
 * 0 if it holds; each failure says what was wrong. */
#include <omp.h>

#define MR_GOMP_PROG "doacross"
#include "by_name.h"

static const struct {
  const char *name;
  omp_sched_t kind;
  int chunk;
} scheds[] = {
    {"static", omp_sched_static, 0},
    {"static,7", omp_sched_static, 7},
    {"dynamic,3", omp_sched_dynamic, 3},
    {"guided", omp_sched_guided, 1},
};

/* A wavefront: cell (i, j) is its upper and left neighbours' sum, each read after its
 * iteration posted; 3 teams' sizes, every schedule, against the sequential answer. */
enum { R = 301, C = 57 };
static unsigned long grid[R][C], want[R][C];
static int test_wavefront(void) {
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++)
      want[i][j] = i == 0 || j == 0 ? 1u : want[i - 1][j] + want[i][j - 1] + (unsigned)(i ^ j);
  for (size_t s = 0; s < sizeof scheds / sizeof scheds[0]; s++)
    for (int threads = 2; threads <= 4; threads++) {
      memset(grid, 0, sizeof grid);
      omp_set_schedule(scheds[s].kind, scheds[s].chunk);
#pragma omp parallel for ordered(2) schedule(runtime) num_threads(threads)
      for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
          /* relaxed: depend(sink) is what orders these (the test checks that it does). */
          grid[i][j] = i == 0 || j == 0 ? 1u
                                        : __atomic_load_n(&grid[i - 1][j], __ATOMIC_RELAXED) +
                                              __atomic_load_n(&grid[i][j - 1], __ATOMIC_RELAXED) +
                                              (unsigned)(i ^ j);
#pragma omp ordered depend(source)
        }
      for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
          if (grid[i][j] != want[i][j])
            FAIL("%s, %d threads: cell (%d, %d) is %lu, not %lu", scheds[s].name, threads, i, j,
                 grid[i][j], want[i][j]);
    }
  return 0;
}

/* A nest of 3 x 150,000,000 iterations (more than 2^28) under static and guided schedules:
 * every millionth iteration of a row waits for the row above and posts; the others run nothing,
 * so the test takes seconds. libgomp runs it; it must not be refused. */
static int test_large(void) {
  enum { N1 = 3, STEP = 1000000 };
  long n2 = 150000000;
  for (int s = 0; s < 2; s++) {
    long last[N1] = {0};
    long bad = 0, posts = 0;
    omp_set_schedule(s == 0 ? omp_sched_static : omp_sched_guided, 0);
#pragma omp parallel for ordered(2) schedule(runtime) num_threads(2) reduction(+ : bad, posts)
    for (long i = 0; i < N1; i++)
      for (long j = 0; j < n2; j++) {
        if (j % STEP == 0) {
#pragma omp ordered depend(sink : i - 1, j)
          /* relaxed: depend(sink) orders them (checked). */
          if (i > 0 && __atomic_load_n(&last[i - 1], __ATOMIC_RELAXED) < j + 1) bad++;
          __atomic_store_n(&last[i], j + 1, __ATOMIC_RELAXED);
          posts++;
#pragma omp ordered depend(source)
        }
      }
    if (bad)
      FAIL("%s: %ld iterations ran before the one they wait for", s ? "guided" : "static", bad);
    if (posts != N1 * (n2 / STEP))
      FAIL("%ld of %ld iterations posted", posts, (long)N1 * (n2 / STEP));
  }
  return 0;
}

int main(int argc, char **argv) {
  static const NamedTest tests[] = {{"wavefront", test_wavefront}, {"large", test_large}};
  return run_by_name(argc, argv, tests, sizeof tests / sizeof tests[0]);
}
