/* mpi_heat.c: a 2-D heat equation (Jacobi) with halo exchange on MPI ranks, three ways:
 *   forkjoin  MPI + OpenMP fork-join (run on libgomp): exchange the halo rows, then a parallel
 *             loop over the rows (bulk-synchronous);
 *   tasks     OpenMP tasks with depend, one per row block and one per halo exchange, the
 *             exchanges blocking MPI_Sendrecv calls in tasks (run on libmrgomp + libmrmpi,
 *             MRGOMP_DEFER_ALONE=true): interior blocks compute while the halo is in flight;
 *   mrc       the mrengine C API: the exchange started with MPI_Isend/MPI_Irecv, the interior
 *             blocks forked as sparks while the main context waits (MR_mpi_waitall), then the
 *             boundary blocks.
 *
 *   mpi_heat MODE [--nx N] [--rows R] [--iters I] [--blocks B] [--check]
 *
 * The grid is nx columns by R rows per rank, fixed boundaries (the top row of rank 0 is 1.0, the
 * rest 0.0). Rank 0 prints one line: mode, ranks, seconds per iteration, the overlap fraction
 * ((compute alone + exchange alone - iteration) / exchange alone, from timed phases of each
 * alone), and the CPU time per rank over the wall time (how busy ranks keep their cores while
 * they wait). --check compares the final grid's sum with the fork-join's, computed again. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "mrmpi.h"

static int rank, size, up, down;
static int nx = 1024, rows = 256, iters = 100, blocks = 8;
static double *u, *v;             /* (rows + 2) x nx each: row 0 and rows + 1 are the halo */
static char tok_u[66], tok_v[66]; /* dependence tokens: one per block, and the two halos */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
         (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static void init(void) {
  size_t n = (size_t)(rows + 2) * (size_t)nx;
  u = calloc(n, sizeof *u);
  v = calloc(n, sizeof *v);
  if (!u || !v) MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank == 0)
    for (int j = 0; j < nx; j++) u[j] = v[j] = 1.0;
}

/* Rows lo..hi-1 (1-based, inside the block) of dst from src. */
static void update(const double *src, double *dst, int lo, int hi) {
  for (int i = lo; i < hi; i++)
    for (int j = 1; j < nx - 1; j++)
      dst[i * nx + j] = 0.25 * (src[(i - 1) * nx + j] + src[(i + 1) * nx + j] +
                                src[i * nx + j - 1] + src[i * nx + j + 1]);
}

static int block_lo(int b) { return 1 + b * rows / blocks; }

/* The halo rows of g with both neighbours (MPI_PROC_NULL at the ends). */
static void exchange_up(double *g) {
  MPI_Sendrecv(&g[nx], nx, MPI_DOUBLE, up, 0, &g[0], nx, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}
static void exchange_down(double *g) {
  MPI_Sendrecv(&g[rows * nx], nx, MPI_DOUBLE, down, 1, &g[(rows + 1) * nx], nx, MPI_DOUBLE, down, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void swap(void) {
  double *t = u;
  u = v;
  v = t;
}

/* (a) exchange, then a parallel loop. */
static void run_forkjoin(int n) {
  for (int it = 0; it < n; it++) {
    exchange_up(u);
    exchange_down(u);
#pragma omp parallel for schedule(static)
    for (int b = 0; b < blocks; b++) update(u, v, block_lo(b), block_lo(b + 1));
    swap();
  }
}

/* (b) the iteration as a task graph; the tokens stand for blocks of u (tok_u) and v (tok_v),
 * index 0 the top halo, blocks + 1 the bottom one. */
static void run_tasks(int n) {
#pragma omp parallel
#pragma omp single
  {
    double *src = u, *dst = v;
    char *ts = tok_u, *td = tok_v;
    for (int it = 0; it < n; it++) {
#pragma omp task depend(in : ts[1]) depend(out : ts[0]) firstprivate(src)
      exchange_up(src);
#pragma omp task depend(in : ts[blocks]) depend(out : ts[blocks + 1]) firstprivate(src)
      exchange_down(src);
      for (int b = 0; b < blocks; b++) {
#pragma omp task depend(in                                                 \
                        : ts[b], ts[b + 1], ts[b + 2]) depend(out          \
                                                              : td[b + 1]) \
    firstprivate(src, dst, b)
        update(src, dst, block_lo(b), block_lo(b + 1));
      }
      double *t = src;
      src = dst;
      dst = t;
      char *tt = ts;
      ts = td;
      td = tt;
    }
  }
  if (n % 2) swap();
}

/* (c) with the C API. */
typedef struct Block {
  int b;
} Block;
static void block_task(void *p) {
  int b = ((Block *)p)->b;
  update(u, v, block_lo(b), block_lo(b + 1));
}

static void run_mrc(int n) {
  Block bl[64];
  for (int b = 0; b < blocks; b++) bl[b].b = b;
  for (int it = 0; it < n; it++) {
    MPI_Request r[4];
    MPI_Irecv(&u[0], nx, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&u[(rows + 1) * nx], nx, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(&u[nx], nx, MPI_DOUBLE, up, 0, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(&u[rows * nx], nx, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &r[3]);
    MR_SyncTerm st;
    MR_sync_term_init(&st, (unsigned)blocks - 1); /* the interior sparks, and this context */
    for (int b = 1; b < blocks - 1; b++) MR_fork_new_child(&st, block_task, &bl[b]);
    MR_mpi_waitall(4, r, MPI_STATUSES_IGNORE); /* suspends: the engines run the sparks */
    block_task(&bl[0]);
    block_task(&bl[blocks - 1]);
    MR_join_and_continue(&st);
    swap();
  }
}

static void run(const char *mode, int n) {
  if (strcmp(mode, "forkjoin") == 0)
    run_forkjoin(n);
  else if (strcmp(mode, "tasks") == 0)
    run_tasks(n);
  else
    run_mrc(n);
}

/* Every block's update once, as sparks (the C API's compute phase alone). */
static void compute_mrc(void) {
  Block bl[64];
  MR_SyncTerm st;
  MR_sync_term_init(&st, (unsigned)blocks + 1);
  for (int b = 0; b < blocks; b++) {
    bl[b].b = b;
    MR_fork_new_child(&st, block_task, &bl[b]);
  }
  MR_join_and_continue(&st);
}

/* Each phase alone, per iteration: the exchange, and the compute (as the mode computes). */
static void alone(int mrc, double *t_comm, double *t_comp) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now();
  for (int it = 0; it < iters; it++) {
    exchange_up(u);
    exchange_down(u);
  }
  *t_comm = (now() - t0) / iters;
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = now();
  for (int it = 0; it < iters; it++) {
    if (mrc) {
      compute_mrc();
      continue;
    }
#pragma omp parallel for schedule(static)
    for (int b = 0; b < blocks; b++) update(u, v, block_lo(b), block_lo(b + 1));
  }
  *t_comp = (now() - t0) / iters;
}

static double grid_sum(void) {
  double s = 0, all = 0;
  for (int i = 1; i <= rows; i++)
    for (int j = 0; j < nx; j++) s += u[i * nx + j];
  MPI_Allreduce(&s, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

static void args(int argc, char **argv, int *check) {
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--check") == 0)
      *check = 1;
    else if (i + 1 < argc && strcmp(argv[i], "--nx") == 0)
      nx = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--rows") == 0)
      rows = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--iters") == 0)
      iters = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--blocks") == 0)
      blocks = atoi(argv[++i]);
  }
  if (nx < 3 || rows < 2 || iters < 1 || blocks < 2 || blocks > 64 || blocks > rows) {
    if (rank == 0) fprintf(stderr, "mpi_heat: bad sizes\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char **argv) {
  int provided, check = 0;
  const char *mode = argc > 1 ? argv[1] : "";
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (strcmp(mode, "forkjoin") && strcmp(mode, "tasks") && strcmp(mode, "mrc")) {
    if (rank == 0) fprintf(stderr, "usage: mpi_heat forkjoin|tasks|mrc [options]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  args(argc, argv, &check);
  up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  init();
  double t_comm, t_comp;
  if (strcmp(mode, "mrc") == 0 && MR_init(NULL) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
  alone(strcmp(mode, "mrc") == 0, &t_comm, &t_comp);
  memset(u, 0, (size_t)(rows + 2) * (size_t)nx * sizeof *u);
  memset(v, 0, (size_t)(rows + 2) * (size_t)nx * sizeof *v);
  if (rank == 0)
    for (int j = 0; j < nx; j++) u[j] = v[j] = 1.0;
  MPI_Barrier(MPI_COMM_WORLD);
  double c0 = cpu(), t0 = now();
  run(mode, iters);
  MPI_Barrier(MPI_COMM_WORLD);
  double wall = now() - t0, busy = (cpu() - c0) / wall, t_iter = wall / iters;
  double sum = grid_sum();
  if (strcmp(mode, "mrc") == 0) MR_shutdown();
  double overlap = t_comm > 0 ? (t_comp + t_comm - t_iter) / t_comm : 0;
  overlap = overlap < 0 ? 0 : overlap > 1 ? 1 : overlap;
  if (rank == 0) printf("%s %d %.9f %.3f %.3f %.6e\n", mode, size, t_iter, overlap, busy, sum);
  int bad = 0;
  if (check) {
    memset(u, 0, (size_t)(rows + 2) * (size_t)nx * sizeof *u);
    memset(v, 0, (size_t)(rows + 2) * (size_t)nx * sizeof *v);
    if (rank == 0)
      for (int j = 0; j < nx; j++) u[j] = v[j] = 1.0;
    run_forkjoin(iters);
    double want = grid_sum();
    bad = fabs(want - sum) > 1e-9 * (fabs(want) + 1);
    if (bad && rank == 0)
      fprintf(stderr, "mpi_heat %s: sum %.12e, fork-join %.12e\n", mode, sum, want);
  }
  MPI_Finalize();
  return bad;
}
