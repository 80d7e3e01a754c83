/* regions.c: many short parallel regions, each a static loop over a small vector (as numpy's
 * eigvalsh makes them through OpenBLAS: thousands of regions of a few microseconds' work). Run
 * with more threads than processors, it measures how a runtime waits when its threads outnumber
 * the cores: a member that spins for a preempted one only delays it.
 *
 *   regions [rounds] [len]   20,000 regions over 2,048 elements by default; every element
 *                            must come out as the sum the rounds give it */
#include "ompbench.h"

int main(int argc, char **argv) {
  long rounds = ob_arg(argc, argv, 1, 20000, 1, 100000000);
  long len = ob_arg(argc, argv, 2, 2048, 1, 100000000);
  double *a = calloc((size_t)len, sizeof *a);
  if (a == NULL) {
    fprintf(stderr, "regions: out of memory\n");
    return 2;
  }
  int team = ob_warm_up();
  double t0 = ob_now();
  for (long r = 0; r < rounds; r++) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < len; i++) a[i] += 1.0;
  }
  double t = ob_now() - t0;
  long wrong = 0;
  for (long i = 0; i < len; i++) wrong += a[i] != (double)rounds;
  free(a);
  char size[64], detail[64];
  snprintf(size, sizeof size, "%ldx%ld", rounds, len);
  snprintf(detail, sizeof detail, "wrong_elements=%ld", wrong);
  ob_report("regions", size, team, t, t * 1e6 / (double)rounds, "us/region", wrong == 0, detail);
  return wrong == 0 ? 0 : 1;
}
