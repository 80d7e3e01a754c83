/* gs.c: a blocked Gauss-Seidel sweep, the dependence-heavy kernel: the n x n interior of a grid
 * (fixed boundary) is relaxed in place, `sweeps` times, one task per b x b block, each declaring
 * depend(inout:) on its block and depend(in:) on its four neighbours. Created in the sequential
 * order, those dependences let a block run once its upper and left neighbours are done with
 * this sweep and its lower and right ones with the last: a wavefront across the grid that
 * overlaps the next sweep's.
 *
 *   gs [n] [b] [sweeps]   n = 1,024, b = 32, sweeps = 20 by default (b must divide n): 20,480
 *                         tasks of 1,024 points each
 *
 * Running the blocks in that order makes every point see exactly the values the point-by-point
 * sequential sweep gives it (new above and left, old below and right), and the arithmetic is
 * the same, so the result is checked for equality with a sequential run (not timed). */
#include "ompbench.h"

static long n, b, sweeps;
#define AT(g, i, j) ((g)[(long)(i) * (n + 2) + (j)])

static void relax_block(double *g, long i0, long j0) {
  for (long i = i0; i < i0 + b; i++)
    for (long j = j0; j < j0 + b; j++)
      AT(g, i, j) = 0.25 * (AT(g, i - 1, j) + AT(g, i, j - 1) + AT(g, i + 1, j) + AT(g, i, j + 1));
}

static void init(double *g) {
  /* A boundary that is not constant, so the relaxation moves every point on every sweep. */
  for (long i = 0; i < n + 2; i++)
    for (long j = 0; j < n + 2; j++)
      AT(g, i, j) =
          (i == 0 || j == 0 || i == n + 1 || j == n + 1) ? (double)((i * 7 + j * 3) % 11) : 0.0;
}

int main(int argc, char **argv) {
  n = ob_arg(argc, argv, 1, 1024, 1, 1 << 16);
  b = ob_arg(argc, argv, 2, 32, 1, 1 << 16);
  sweeps = ob_arg(argc, argv, 3, 20, 1, 1 << 20);
  if (n % b != 0) {
    fprintf(stderr, "gs: the block size %ld does not divide n = %ld\n", b, n);
    return 2;
  }
  long nb = n / b;
  size_t cells = (size_t)(n + 2) * (size_t)(n + 2);
  double *g = malloc(cells * sizeof *g), *ref = malloc(cells * sizeof *ref);
  /* One sentinel byte per block, with a ring of blocks around the grid that no task writes, so
   * every task can name its four neighbours in one depend clause. Only the addresses matter. */
  char *tok = calloc((size_t)(nb + 2) * (size_t)(nb + 2), 1);
  if (g == NULL || ref == NULL || tok == NULL) {
    fprintf(stderr, "gs: out of memory\n");
    return 2;
  }
#define TOK(bi, bj) tok[(long)(bi) * (nb + 2) + (bj)]
  init(ref);
  for (long s = 0; s < sweeps; s++)
    for (long i = 1; i <= n; i++)
      for (long j = 1; j <= n; j++)
        AT(ref, i, j) =
            0.25 * (AT(ref, i - 1, j) + AT(ref, i, j - 1) + AT(ref, i + 1, j) + AT(ref, i, j + 1));
  init(g);
  int team = ob_warm_up();
  double t0 = ob_now();
#pragma omp parallel
#pragma omp single
  for (long s = 0; s < sweeps; s++)
    for (long bi = 1; bi <= nb; bi++)
      for (long bj = 1; bj <= nb; bj++) {
#pragma omp task firstprivate(bi, bj) depend(inout          \
                                             : TOK(bi, bj)) \
    depend(in                                               \
           : TOK(bi - 1, bj), TOK(bi, bj - 1), TOK(bi + 1, bj), TOK(bi, bj + 1))
        relax_block(g, 1 + (bi - 1) * b, 1 + (bj - 1) * b);
      }
  double t = ob_now() - t0;
  long diff = 0;
  for (size_t k = 0; k < cells; k++) diff += g[k] != ref[k];
  char size[64], detail[96];
  snprintf(size, sizeof size, "%ld/%ld/%ld", n, b, sweeps);
  snprintf(detail, sizeof detail, "tasks=%ld differing=%ld", sweeps * nb * nb, diff);
  ob_report("gs", size, team, t, t, "s", diff == 0, detail);
  free(g);
  free(ref);
  free(tok);
  return diff == 0 ? 0 : 1;
}
