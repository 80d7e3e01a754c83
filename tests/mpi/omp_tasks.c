/* omp_tasks.c: an OpenMP program with blocking MPI calls in tasks, which knows nothing of
 * mrengine. On 1 thread per rank, rank 0 creates N tasks that each receive one message (tag i)
 * and, through depend, one task per pair that adds two received values; rank 1 sends the tags
 * in the reverse order with synchronous sends in tasks. On libgomp the first receive blocks the
 * only thread and the program deadlocks; on libmrgomp with libmrmpi each receiving task
 * suspends and the answer is checked. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 32

int main(int argc, char **argv) {
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided != MPI_THREAD_MULTIPLE || size != 2) {
    fprintf(stderr, "omp_tasks: needs MPI_THREAD_MULTIPLE and 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int vals[N], sums[N / 2], bad = 0;
#pragma omp parallel
#pragma omp single
  {
    for (int i = 0; i < N; i++) {
      if (rank == 0) {
#pragma omp task depend(out : vals[i]) firstprivate(i) shared(vals)
        MPI_Recv(&vals[i], 1, MPI_INT, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        int tag = N - 1 - i;
#pragma omp task firstprivate(tag)
        {
          int v = 1000 + tag;
          MPI_Ssend(&v, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
        }
      }
    }
    if (rank == 0)
      for (int p = 0; p < N / 2; p++) {
#pragma omp task depend(in : vals[2 * p], vals[2 * p + 1]) depend(out : sums[p]) firstprivate(p)
        sums[p] = vals[2 * p] + vals[2 * p + 1];
      }
  }
  if (rank == 0)
    for (int p = 0; p < N / 2; p++)
      if (sums[p] != 2000 + 4 * p + 1) bad++;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  if (bad) fprintf(stderr, "omp_tasks: %d wrong sums\n", bad);
  return bad != 0;
}
