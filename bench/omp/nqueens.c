/* nqueens.c: the number of ways to place n queens on an n x n board, one task per safe
 * placement in every row, with no cutoff: every node of the search tree but the root is a task.
 * The tasks write their counts into their parent's array, summed after the taskwait, so the
 * kernel has no shared counter to contend on and measures task creation and joining.
 *
 *   nqueens [n]    n = 12 by default (1 <= n <= 16); the count is checked against the known
 *                  number of solutions. */
#include "ompbench.h"

/* Solutions for n = 0..16 (OEIS A000170). */
static const long kSolutions[] = {1,   1,   0,    0,     2,     10,     4,       40,      92,
                                  352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};

/* The board as three bit masks: columns taken, and the two diagonals, shifted to this row. */
static long solve(int n, int row, unsigned cols, unsigned diag1, unsigned diag2) {
  if (row == n) return 1;
  long count[32];
  int k = 0;
  unsigned all = (1u << n) - 1;
  unsigned free_sq = all & ~(cols | diag1 | diag2);
  while (free_sq != 0) {
    unsigned bit = free_sq & -free_sq;
    free_sq &= free_sq - 1;
    long *slot = &count[k++];
#pragma omp task firstprivate(slot, bit)
    *slot = solve(n, row + 1, cols | bit, ((diag1 | bit) << 1) & all, (diag2 | bit) >> 1);
  }
#pragma omp taskwait
  long sum = 0;
  for (int i = 0; i < k; i++) sum += count[i];
  return sum;
}

int main(int argc, char **argv) {
  int n = (int)ob_arg(argc, argv, 1, 12, 1, 16);
  int team = ob_warm_up();
  long r = 0;
  double t0 = ob_now();
#pragma omp parallel
#pragma omp single
  r = solve(n, 0, 0, 0, 0);
  double t = ob_now() - t0;
  char size[32], detail[96];
  snprintf(size, sizeof size, "%d", n);
  snprintf(detail, sizeof detail, "solutions=%ld expected=%ld", r, kSolutions[n]);
  ob_report("nqueens", size, team, t, t, "s", r == kSolutions[n], detail);
  return r == kSolutions[n] ? 0 : 1;
}
