/* fib.c: Fibonacci by spawn-one: fib(n-1) is a task, fib(n-2) runs inline, then taskwait.
 * Almost no work per task, so the figure is the runtime's cost of a task and a taskwait
 * (about fib(n+1) tasks).
 *
 *   fib [n]        n = 32 by default; the answer is checked against the loop. */
#include "ompbench.h"

static long fib(int n) {
  if (n < 2) return n;
  long x, y;
  /* shared(x): the task writes the parent's variable, which the taskwait makes safe to read. */
#pragma omp task shared(x) firstprivate(n)
  x = fib(n - 1);
  y = fib(n - 2);
#pragma omp taskwait
  return x + y;
}

static long fib_loop(int n) {
  long a = 0, b = 1;
  for (int i = 0; i < n; i++) {
    long t = a + b;
    a = b;
    b = t;
  }
  return a;
}

int main(int argc, char **argv) {
  int n = (int)ob_arg(argc, argv, 1, 32, 0, 60);
  int team = ob_warm_up();
  long r = 0;
  double t0 = ob_now();
#pragma omp parallel
#pragma omp single
  r = fib(n);
  double t = ob_now() - t0;
  long expect = fib_loop(n);
  char size[32], detail[96];
  snprintf(size, sizeof size, "%d", n);
  snprintf(detail, sizeof detail, "result=%ld expected=%ld", r, expect);
  ob_report("fib", size, team, t, t, "s", r == expect, detail);
  return r == expect ? 0 : 1;
}
