/* align.c: all-pairs sequence alignment with coarse, independent tasks: n protein-like sequences
 * of a few hundred letters, and one task per pair that computes its global alignment score with
 * affine gaps (Gotoh's recurrences, a table row at a time): about len^2 cells, tens of
 * microseconds to a millisecond a task. One thread creates the tasks (single), the team runs
 * them, a taskwait ends it: what the runtime adds is the hand-out of many coarse tasks from one
 * producer.
 *
 *   align [n] [len]   n = 120 sequences of len/4..len letters, len = 400 by default
 *
 * The sequences come from a 64-bit LCG with a fixed seed, the same on every run and runtime. The
 * check: every pair was scored, and 64 pairs spread over the table are scored again after the
 * clock stops, sequentially, and must match. */
#include "ompbench.h"

#include <stdint.h>

enum { kLetters = 20, kGapOpen = 10, kGapExtend = 1, kMatch = 5, kMismatch = -3 };

static long n, maxlen;
static unsigned char **seq;
static long *seqlen;

static int max3(int a, int b, int c) {
  int m = a > b ? a : b;
  return m > c ? m : c;
}

/* The global alignment score of a and b: best over alignments of the letter scores, a gap of
 * length g costing kGapOpen + g * kGapExtend. Three rows: H (best), E (ends with a gap in a), F
 * (ends with a gap in b). */
static int score(const unsigned char *a, long la, const unsigned char *b, long lb) {
  const int neg = -(1 << 28);
  int *h = malloc((size_t)(lb + 1) * 3 * sizeof *h);
  if (h == NULL) {
    fprintf(stderr, "align: out of memory\n");
    exit(2);
  }
  int *e = h + lb + 1, *f = e + lb + 1;
  h[0] = 0;
  e[0] = f[0] = neg;
  for (long j = 1; j <= lb; j++) {
    h[j] = -(kGapOpen + (int)j * kGapExtend);
    e[j] = h[j];
    f[j] = neg;
  }
  for (long i = 1; i <= la; i++) {
    int diag = h[0], left;
    h[0] = -(kGapOpen + (int)i * kGapExtend);
    f[0] = h[0];
    e[0] = neg;
    left = h[0];
    int fl = neg; /* F of the cell to the left, in this row */
    for (long j = 1; j <= lb; j++) {
      int up = h[j];
      e[j] = max3(e[j] - kGapExtend, up - kGapOpen - kGapExtend, neg);
      fl = max3(fl - kGapExtend, left - kGapOpen - kGapExtend, neg);
      int m = diag + (a[i - 1] == b[j - 1] ? kMatch : kMismatch);
      int v = max3(m, e[j], fl);
      diag = up;
      h[j] = v;
      left = v;
    }
  }
  int r = h[lb];
  free(h);
  return r;
}

int main(int argc, char **argv) {
  n = ob_arg(argc, argv, 1, 120, 2, 100000);
  maxlen = ob_arg(argc, argv, 2, 400, 2, 1000000);
  long minlen = maxlen / 4 > 1 ? maxlen / 4 : 1;
  seq = malloc((size_t)n * sizeof *seq);
  seqlen = malloc((size_t)n * sizeof *seqlen);
  int *scores = malloc((size_t)(n * n) * sizeof *scores);
  if (seq == NULL || seqlen == NULL || scores == NULL) {
    fprintf(stderr, "align: out of memory\n");
    return 2;
  }
  /* A task that never ran would leave this value: every pair is checked for it. */
  memset(scores, 0x80, (size_t)(n * n) * sizeof *scores);
  uint64_t x = 2024;
  for (long s = 0; s < n; s++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    seqlen[s] = minlen + (long)((x >> 33) % (uint64_t)(maxlen - minlen + 1));
    seq[s] = malloc((size_t)seqlen[s]);
    if (seq[s] == NULL) {
      fprintf(stderr, "align: out of memory\n");
      return 2;
    }
    for (long k = 0; k < seqlen[s]; k++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      seq[s][k] = (unsigned char)((x >> 33) % kLetters);
    }
  }
  int team = ob_warm_up();
  double t0 = ob_now();
#pragma omp parallel
#pragma omp single
  {
    for (long i = 0; i < n; i++)
      for (long j = i + 1; j < n; j++) {
#pragma omp task firstprivate(i, j)
        scores[i * n + j] = score(seq[i], seqlen[i], seq[j], seqlen[j]);
      }
#pragma omp taskwait
  }
  double t = ob_now() - t0;
  long bad = 0, pairs = n * (n - 1) / 2;
  for (long k = 0; k < 64; k++) {
    long i = (k * 7919) % (n - 1), j = i + 1 + (k * 104729) % (n - 1 - i);
    bad += scores[i * n + j] != score(seq[i], seqlen[i], seq[j], seqlen[j]);
  }
  long sum = 0;
  int unset;
  memset(&unset, 0x80, sizeof unset);
  for (long i = 0; i < n; i++)
    for (long j = i + 1; j < n; j++) {
      bad += scores[i * n + j] == unset;
      sum += scores[i * n + j];
    }
  for (long s = 0; s < n; s++) free(seq[s]);
  free(seq);
  free(seqlen);
  free(scores);
  char size[64], detail[96];
  snprintf(size, sizeof size, "%ldx%ld", n, maxlen);
  snprintf(detail, sizeof detail, "pairs=%ld score_sum=%ld wrong=%ld", pairs, sum, bad);
  ob_report("align", size, team, t, t, "s", bad == 0, detail);
  return bad == 0 ? 0 : 1;
}
