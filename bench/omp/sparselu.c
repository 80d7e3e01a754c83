/* sparselu.c: LU factorisation, without pivoting, of a sparse matrix of nb x nb blocks of bs x bs
 * doubles, with coarse tasks: about three blocks in five are empty at the start, and an update
 * that lands on an empty block allocates it (fill-in). For each diagonal block kk: factor it in
 * place, then a task per non-empty block of row kk (solve with L) and of column kk (solve with
 * U), a taskwait, then a task per pair of those (the update of block (i, j)), a taskwait. Each
 * task is tens of microseconds of arithmetic or more: what the runtime adds is the phases'
 * hand-out and their taskwaits.
 *
 *   sparselu [nb] [bs]   nb = 32 and bs = 64 by default
 *
 * The matrix is diagonally dominant (no pivoting needed) and the same on every run and runtime.
 * The check: for a fixed vector x, L (U x) computed with the factors equals A x computed with the
 * original blocks, to a relative 1e-9. */
#include "ompbench.h"

#include <math.h>
#include <stdint.h>

static long nb, bs;

/* Block (i, j) of a matrix: NULL while empty. */
#define BLOCK(m, i, j) ((m)[(i)*nb + (j)])

static double *new_block(void) {
  double *b = calloc((size_t)(bs * bs), sizeof *b);
  if (b == NULL) {
    fprintf(stderr, "sparselu: out of memory\n");
    exit(2);
  }
  return b;
}

/* The same pattern and values on every run: block (i, j) is present on the diagonal, next to it,
 * and elsewhere when a hash of (i, j) says so (about three in eight of those); its values come
 * from a 64-bit LCG seeded by the block's position, and diagonal blocks get nb * bs added on
 * their diagonal, so that the matrix is diagonally dominant. */
static void generate(double **a) {
  for (long i = 0; i < nb; i++)
    for (long j = 0; j < nb; j++) {
      uint64_t h = (uint64_t)(i * 7919 + j * 104729) * 2654435761u;
      int present = i == j || i == j + 1 || j == i + 1 || ((h >> 13) & 7) < 3;
      BLOCK(a, i, j) = NULL;
      if (!present) continue;
      double *b = new_block();
      uint64_t x = (uint64_t)(i * nb + j) + 1;
      for (long k = 0; k < bs * bs; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        b[k] = (double)(x >> 11) / 9007199254740992.0 - 0.5; /* in [-0.5, 0.5) */
      }
      if (i == j)
        for (long k = 0; k < bs; k++) b[k * bs + k] += (double)(nb * bs);
      BLOCK(a, i, j) = b;
    }
}

/* Factor a diagonal block in place: L below the diagonal (unit diagonal), U on and above. */
static void lu0(double *d) {
  for (long k = 0; k < bs; k++)
    for (long i = k + 1; i < bs; i++) {
      d[i * bs + k] /= d[k * bs + k];
      for (long j = k + 1; j < bs; j++) d[i * bs + j] -= d[i * bs + k] * d[k * bs + j];
    }
}

/* Block (kk, j) of row kk: solve L(kk, kk) X = B in place. */
static void fwd(const double *d, double *b) {
  for (long k = 0; k < bs; k++)
    for (long i = k + 1; i < bs; i++)
      for (long j = 0; j < bs; j++) b[i * bs + j] -= d[i * bs + k] * b[k * bs + j];
}

/* Block (i, kk) of column kk: solve X U(kk, kk) = B in place. */
static void bdiv(const double *d, double *b) {
  for (long i = 0; i < bs; i++)
    for (long k = 0; k < bs; k++) {
      b[i * bs + k] /= d[k * bs + k];
      for (long j = k + 1; j < bs; j++) b[i * bs + j] -= b[i * bs + k] * d[k * bs + j];
    }
}

/* The update of block (i, j): C -= R * U, with R = block (i, kk) and U = block (kk, j). */
static void bmod(const double *r, const double *u, double *c) {
  for (long i = 0; i < bs; i++)
    for (long k = 0; k < bs; k++) {
      double rik = r[i * bs + k];
      for (long j = 0; j < bs; j++) c[i * bs + j] -= rik * u[k * bs + j];
    }
}

static void factor(double **a) {
  for (long kk = 0; kk < nb; kk++) {
    lu0(BLOCK(a, kk, kk));
    for (long j = kk + 1; j < nb; j++)
      if (BLOCK(a, kk, j) != NULL) {
#pragma omp task firstprivate(kk, j)
        fwd(BLOCK(a, kk, kk), BLOCK(a, kk, j));
      }
    for (long i = kk + 1; i < nb; i++)
      if (BLOCK(a, i, kk) != NULL) {
#pragma omp task firstprivate(kk, i)
        bdiv(BLOCK(a, kk, kk), BLOCK(a, i, kk));
      }
#pragma omp taskwait
    for (long i = kk + 1; i < nb; i++) {
      if (BLOCK(a, i, kk) == NULL) continue;
      for (long j = kk + 1; j < nb; j++) {
        if (BLOCK(a, kk, j) == NULL) continue;
#pragma omp task firstprivate(kk, i, j)
        {
          /* Only this task touches block (i, j) in this phase: it may allocate it. */
          if (BLOCK(a, i, j) == NULL) BLOCK(a, i, j) = new_block();
          bmod(BLOCK(a, i, kk), BLOCK(a, kk, j), BLOCK(a, i, j));
        }
      }
    }
#pragma omp taskwait
  }
}

/* y = A x (blocks of the original matrix). */
static void times_a(double *const *a, const double *x, double *y) {
  memset(y, 0, (size_t)(nb * bs) * sizeof *y);
  for (long i = 0; i < nb; i++)
    for (long j = 0; j < nb; j++) {
      const double *b = BLOCK(a, i, j);
      if (b == NULL) continue;
      for (long r = 0; r < bs; r++)
        for (long c = 0; c < bs; c++) y[i * bs + r] += b[r * bs + c] * x[j * bs + c];
    }
}

/* y = L (U x) with the factors (L's unit diagonal implied). */
static void times_lu(double *const *f, const double *x, double *y) {
  long n = nb * bs;
  double *u = calloc((size_t)n, sizeof *u);
  if (u == NULL) exit(2);
  for (long i = 0; i < nb; i++)
    for (long j = i; j < nb; j++) {
      const double *b = BLOCK(f, i, j);
      if (b == NULL) continue;
      for (long r = 0; r < bs; r++)
        for (long c = i == j ? r : 0; c < bs; c++) u[i * bs + r] += b[r * bs + c] * x[j * bs + c];
    }
  for (long k = 0; k < n; k++) y[k] = u[k];
  for (long i = 0; i < nb; i++)
    for (long j = 0; j <= i; j++) {
      const double *b = BLOCK(f, i, j);
      if (b == NULL) continue;
      for (long r = 0; r < bs; r++)
        for (long c = 0; c < (i == j ? r : bs); c++) y[i * bs + r] += b[r * bs + c] * u[j * bs + c];
    }
  free(u);
}

int main(int argc, char **argv) {
  nb = ob_arg(argc, argv, 1, 32, 1, 1000);
  bs = ob_arg(argc, argv, 2, 64, 1, 1000);
  long n = nb * bs;
  double **a = calloc((size_t)(nb * nb), sizeof *a), **orig = calloc((size_t)(nb * nb), sizeof *a);
  double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y),
         *z = malloc((size_t)n * sizeof *z);
  if (a == NULL || orig == NULL || x == NULL || y == NULL || z == NULL) {
    fprintf(stderr, "sparselu: out of memory\n");
    return 2;
  }
  generate(orig);
  generate(a);
  int team = ob_warm_up();
  double t0 = ob_now();
#pragma omp parallel
#pragma omp single
  factor(a);
  double t = ob_now() - t0;
  long blocks = 0;
  for (long k = 0; k < nb * nb; k++) blocks += a[k] != NULL;
  for (long k = 0; k < n; k++) x[k] = (double)(k % 17) - 8.0;
  times_a(orig, x, y);
  times_lu(a, x, z);
  double err = 0, norm = 0;
  for (long k = 0; k < n; k++) {
    err += (y[k] - z[k]) * (y[k] - z[k]);
    norm += y[k] * y[k];
  }
  double rel = sqrt(err / norm);
  for (long k = 0; k < nb * nb; k++) {
    free(a[k]);
    free(orig[k]);
  }
  free(a);
  free(orig);
  free(x);
  free(y);
  free(z);
  char size[64], detail[96];
  snprintf(size, sizeof size, "%ldx%ld", nb, bs);
  snprintf(detail, sizeof detail, "blocks_after=%ld relative_error=%.3g", blocks, rel);
  ob_report("sparselu", size, team, t, t, "s", rel < 1e-9, detail);
  return rel < 1e-9 ? 0 : 1;
}
