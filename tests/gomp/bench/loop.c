/* loop.c: many short parallel loops with a dynamic schedule (team start-up, chunk hand-out and
 * the barrier at each loop's end). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 20000;
  enum { N = 4096 };
  static double a[N];
  double t0 = omp_get_wtime();
  for (int r = 0; r < rounds; r++) {
#pragma omp parallel for schedule(dynamic, 64)
    for (int i = 0; i < N; i++) a[i] = a[i] * 0.5 + i;
  }
  double t = omp_get_wtime() - t0;
  for (int i = 0; i < N; i++)
    if (a[i] < i) {
      fprintf(stderr, "a[%d] = %g\n", i, a[i]);
      return 1;
    }
  printf("%.6f\n", t);
  return 0;
}
