/* barrier.c: barriers in one region (the cost of a barrier round trip). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 100000;
  int count = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel
  {
    for (int r = 0; r < rounds; r++) {
#pragma omp barrier
    }
#pragma omp atomic
    count++;
  }
  double t = omp_get_wtime() - t0;
  if (count != omp_get_max_threads()) {
    fprintf(stderr, "%d members finished\n", count);
    return 1;
  }
  printf("%.6f\n", t);
  return 0;
}
