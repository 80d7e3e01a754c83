/* pipeline.c: a producer/consumer pipeline of futures through the C ABI of mrengine.
 *
 * usage: pipeline [n]
 * Three stages run in their own contexts, joined item by item by futures (Mercury's dependent
 * parallel conjunctions): `produce` makes the items 1..n, `square` waits for each and squares it,
 * and the primordial context waits for each square and adds it up. A stage that gets ahead of
 * the one before it suspends on the next future and its engine runs the other stages. The
 * program checks the sum against n(n+1)(2n+1)/6 and exits 1 if it differs. */
#include <stdio.h>
#include <stdlib.h>

#include "mrengine.h"

struct stage {
  MR_Future *in, *out; /* in == NULL: the first stage */
  long n;
};

static void produce(void *arg) {
  struct stage *s = arg;
  for (long i = 0; i < s->n; i++) MR_future_signal(&s->out[i], (uintptr_t)(i + 1));
}

static void square(void *arg) {
  struct stage *s = arg;
  for (long i = 0; i < s->n; i++) {
    uintptr_t v = MR_future_wait(&s->in[i]); /* suspends while the producer is behind */
    MR_future_signal(&s->out[i], v * v);
  }
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  if (n < 1 || n > 10000000) {
    fprintf(stderr, "usage: pipeline [n]   (1 <= n <= 10000000)\n");
    return 2;
  }
  MR_Future *items = calloc((size_t)n, sizeof *items); /* zeroed futures are unsignalled */
  MR_Future *squares = calloc((size_t)n, sizeof *squares);
  if (!items || !squares) {
    fprintf(stderr, "pipeline: out of memory\n");
    return 1;
  }
  int rc = MR_init(NULL);
  if (rc != 0) {
    fprintf(stderr, "pipeline: MR_init: %s\n", MR_strerror(rc));
    return 1;
  }
  struct stage p = {NULL, items, n}, q = {items, squares, n};
  /* The consumer's side first, so that it starts out waiting. */
  if ((rc = MR_spawn(square, &q, NULL)) != 0 || (rc = MR_spawn(produce, &p, NULL)) != 0) {
    fprintf(stderr, "pipeline: MR_spawn: %s\n", MR_strerror(rc));
    return 1;
  }
  unsigned long long sum = 0;
  for (long i = 0; i < n; i++) sum += MR_future_wait(&squares[i]);
  unsigned long long want =
      (unsigned long long)n * (unsigned long long)(n + 1) * (unsigned long long)(2 * n + 1) / 6;
  printf("sum of squares 1..%ld = %llu on %d engine(s): %s\n", n, sum, MR_num_engines(),
         sum == want ? "right" : "WRONG");
  MR_shutdown();
  free(items);
  free(squares);
  return sum == want ? 0 : 1;
}
