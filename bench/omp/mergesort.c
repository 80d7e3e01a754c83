/* mergesort.c: a task mergesort: each half is sorted by a task until a piece is at most the
 * cutoff long (then sequentially), and the halves are merged after a taskwait.
 *
 *   mergesort [n] [cutoff]   n = 4,000,000 and cutoff = 2,048 by default
 *
 * The input is the values 0,0,1,1,2,2,... (each i/2 once per i < n) shuffled with a fixed seed,
 * so the sorted array must hold i/2 at index i: one comparison per element checks both that
 * the output is sorted and that it is a permutation of the input. */
#include "ompbench.h"

#include <stdint.h>

static long cutoff;

/* Merge the sorted a[lo,mid) and a[mid,hi) through tmp[lo,hi). */
static void merge(int *a, int *tmp, long lo, long mid, long hi) {
  long i = lo, j = mid, k = lo;
  while (i < mid && j < hi) tmp[k++] = a[j] < a[i] ? a[j++] : a[i++];
  while (i < mid) tmp[k++] = a[i++];
  while (j < hi) tmp[k++] = a[j++];
  memcpy(a + lo, tmp + lo, (size_t)(hi - lo) * sizeof *a);
}

static void sort_seq(int *a, int *tmp, long lo, long hi) {
  if (hi - lo < 2) return;
  if (hi - lo <= 16) {
    /* Insertion sort for the smallest pieces, as any practical mergesort does. */
    for (long i = lo + 1; i < hi; i++) {
      int v = a[i];
      long j = i;
      for (; j > lo && a[j - 1] > v; j--) a[j] = a[j - 1];
      a[j] = v;
    }
    return;
  }
  long mid = lo + (hi - lo) / 2;
  sort_seq(a, tmp, lo, mid);
  sort_seq(a, tmp, mid, hi);
  merge(a, tmp, lo, mid, hi);
}

static void sort_task(int *a, int *tmp, long lo, long hi) {
  if (hi - lo <= cutoff) {
    sort_seq(a, tmp, lo, hi);
    return;
  }
  long mid = lo + (hi - lo) / 2;
#pragma omp task firstprivate(a, tmp, lo, mid)
  sort_task(a, tmp, lo, mid);
  sort_task(a, tmp, mid, hi);
#pragma omp taskwait
  merge(a, tmp, lo, mid, hi);
}

int main(int argc, char **argv) {
  long n = ob_arg(argc, argv, 1, 4000000, 1, 1L << 30);
  cutoff = ob_arg(argc, argv, 2, 2048, 1, 1L << 30);
  int *a = malloc((size_t)n * sizeof *a), *tmp = malloc((size_t)n * sizeof *tmp);
  if (a == NULL || tmp == NULL) {
    fprintf(stderr, "mergesort: out of memory\n");
    return 2;
  }
  for (long i = 0; i < n; i++) a[i] = (int)(i / 2);
  /* Fisher-Yates with a 64-bit LCG (Knuth's MMIX constants): the same input on every run and
   * runtime. */
  uint64_t x = 12345;
  for (long i = n - 1; i > 0; i--) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    long j = (long)((x >> 33) % (uint64_t)(i + 1));
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
  /* Touch tmp before the clock starts, so page faults are not the first sort's. */
  memset(tmp, 0, (size_t)n * sizeof *tmp);
  int team = ob_warm_up();
  double t0 = ob_now();
#pragma omp parallel
#pragma omp single
  sort_task(a, tmp, 0, n);
  double t = ob_now() - t0;
  long bad = 0;
  for (long i = 0; i < n; i++) bad += a[i] != (int)(i / 2);
  char size[64], detail[64];
  snprintf(size, sizeof size, "%ld/%ld", n, cutoff);
  snprintf(detail, sizeof detail, "misplaced=%ld", bad);
  ob_report("mergesort", size, team, t, t, "s", bad == 0, detail);
  free(a);
  free(tmp);
  return bad == 0 ? 0 : 1;
}
