/* loop.c: many short work-shared loops: each round is its own parallel region holding one
 * `for schedule(dynamic, 64)` over `len` elements, so the figure (us per loop) is the runtime's
 * cost of starting a team, handing out chunks one at a time and the barrier at the loop's end,
 * with little work to hide it.
 *
 *   loop [rounds] [len]   20,000 loops of 4,096 by default; every element must have been
 *                          visited exactly once per round */
#include "ompbench.h"

int main(int argc, char **argv) {
  long rounds = ob_arg(argc, argv, 1, 20000, 1, 100000000);
  long len = ob_arg(argc, argv, 2, 4096, 1, 100000000);
  long *a = calloc((size_t)len, sizeof *a);
  if (a == NULL) {
    fprintf(stderr, "loop: out of memory\n");
    return 2;
  }
  int team = ob_warm_up();
  double t0 = ob_now();
  for (long r = 0; r < rounds; r++) {
    /* An integer sum rather than a floating-point update, so that a chunk handed out twice or
     * not at all leaves an element that differs from rounds * i exactly. */
#pragma omp parallel for schedule(dynamic, 64)
    for (long i = 0; i < len; i++) a[i] += i;
  }
  double t = ob_now() - t0;
  long wrong = 0, first_wrong = -1;
  for (long i = 0; i < len; i++)
    if (a[i] != rounds * i) {
      if (first_wrong < 0) first_wrong = i;
      wrong++;
    }
  free(a);
  char size[64], detail[128];
  snprintf(size, sizeof size, "%ldx%ld", rounds, len);
  snprintf(detail, sizeof detail, "wrong_elements=%ld first_wrong=%ld", wrong, first_wrong);
  ob_report("loop", size, team, t, t * 1e6 / (double)rounds, "us/loop", wrong == 0, detail);
  return wrong == 0 ? 0 : 1;
}
