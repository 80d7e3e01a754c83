/* mpitest.h: what the MPI test programs share: this process's rank and the size of
 * MPI_COMM_WORLD, and the failure report (the program, the rank, what it was doing, the check
 * and where), which ends every rank with MPI_Abort; and the start every program makes. Each
 * program sets mpitest_program, and may name the step it is at in mpitest_step. */
#ifndef MR_TESTS_MPITEST_H
#define MR_TESTS_MPITEST_H

#include <stdio.h>

#include "mrmpi.h"

static int rank, size;
static const char *mpitest_program = "mpi test";
static const char *mpitest_step = "";

#define FAIL(...)                                                                           \
  do {                                                                                      \
    fprintf(stderr, "%s rank %d%s%s: ", mpitest_program, rank, mpitest_step[0] ? ", " : "", \
            mpitest_step);                                                                  \
    fprintf(stderr, __VA_ARGS__);                                                           \
    fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                                      \
    MPI_Abort(MPI_COMM_WORLD, 2);                                                           \
  } while (0)
#define CHECK(c)                            \
  do {                                      \
    if (!(c)) FAIL("check failed: %s", #c); \
  } while (0)

/* Start MPI at thread level `want` (the program fails unless it gets it), and note the rank
 * and the size. */
static inline void mpitest_init_mpi(int *argc, char ***argv, int want) {
  int provided;
  MPI_Init_thread(argc, argv, want, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(provided >= want);
}

/* mrengine with one engine: a call that blocked its thread instead of suspending its context
 * would keep every other context of the rank from running. */
static inline void mpitest_start_engine(void) {
  MR_Config c;
  MR_config_default(&c);
  c.engines = 1;
  CHECK(MR_init(&c) == 0);
}

static inline void spawn(MR_TaskFn fn, void *arg) { CHECK(MR_spawn(fn, arg, NULL) == 0); }

#endif
