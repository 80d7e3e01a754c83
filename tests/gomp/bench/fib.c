/* fib.c: fib(n) with one task per call and a taskwait (task creation, joins and stealing). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static long fib(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a)
  a = fib(n - 1);
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 32;
  long r = 0;
  double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  r = fib(n);
  double t = omp_get_wtime() - t0;
  long want = 0, prev = 1;
  for (int i = 0; i < n; i++) {
    long next = want + prev;
    prev = want;
    want = next;
  }
  if (r != want) {
    fprintf(stderr, "fib(%d) = %ld, not %ld\n", n, r, want);
    return 1;
  }
  printf("%.6f\n", t);
  return 0;
}
