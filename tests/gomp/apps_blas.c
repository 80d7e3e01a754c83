// apps_blas.c: a dgemm and an LU factorisation (dgetrf) through OpenBLAS's OpenMP build, on
// inputs that depend on nothing but the size, for tests/gomp/check-apps.sh, which runs it on
// libgomp and on libmrgomp and compares the bytes it writes. The results go to the file named
// by the first argument: C = A B, then the factors and the pivots of A.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// OpenBLAS's Fortran-style entry points (interface/gemm.c, interface/lapack/getrf.c).
void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);

enum { kN = 320 };

// A fixed sequence in [-1, 1): a 64-bit linear congruential generator's top bits.
static double next_value(uint64_t *state) {
  *state = *state * 6364136223846793005u + 1442695040888963407u;
  return (double)(*state >> 11) / (double)(UINT64_C(1) << 52) - 1.0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUTPUT\n", argv[0]);
    return 2;
  }
  static double a[kN * kN], b[kN * kN], c[kN * kN];
  static int ipiv[kN];
  uint64_t state = 42;
  for (int i = 0; i < kN * kN; i++) a[i] = next_value(&state);
  for (int i = 0; i < kN * kN; i++) b[i] = next_value(&state);
  int n = kN, info = 0;
  double one = 1.0, zero = 0.0;
  dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
  dgetrf_(&n, &n, a, &n, ipiv, &info);
  if (info != 0) {
    fprintf(stderr, "dgetrf: info %d\n", info);
    return 1;
  }
  FILE *out = fopen(argv[1], "wb");
  if (!out || fwrite(c, sizeof c, 1, out) != 1 || fwrite(a, sizeof a, 1, out) != 1 ||
      fwrite(ipiv, sizeof ipiv, 1, out) != 1 || fclose(out) != 0) {
    perror(argv[1]);
    return 1;
  }
  return 0;
}
