/* gc_switch.c: what the collector hooks cost (doc/gc.md, "Cost"), for an instruction count
 * under callgrind, not a time: a ping-pong of two contexts through futures on one engine (each
 * wait a hand-off, one switch), and fib by sparks on one engine (no switch: the spark path).
 *
 *   gc_switch handoff|fib N [boehm]
 *
 * handoff: N round trips (2N switches); fib: fib(N). With "boehm", the runtime starts with
 * MR_gc_use_boehm (the program exits 77 if libmrengine was built without it). Built on request:
 * make bench/gc_switch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MR_BENCH_BDWGC
#define GC_THREADS
#include <gc/gc.h>
#endif

#include "mrengine.h"

static MR_Future ping[2], pong[2];
static long rounds;

static void ponger(void *arg) {
  long i;
  (void)arg;
  for (i = 0; i < rounds; i++) {
    (void)MR_future_wait(&ping[i & 1]);
    MR_future_init(&ping[i & 1]);
    MR_future_signal(&pong[i & 1], 1);
  }
}

typedef struct Fib {
  int n;
  long out;
} Fib;

static void fib(void *env) {
  Fib *f = env;
  if (f->n < 2) {
    f->out = f->n;
  } else {
    Fib a = {f->n - 1, 0}, b = {f->n - 2, 0};
    MR_SyncTerm st;
    MR_sync_term_init(&st, 2);
    MR_fork_new_child(&st, fib, &a);
    fib(&b);
    MR_join_and_continue(&st);
    f->out = a.out + b.out;
  }
}

int main(int argc, char **argv) {
  MR_Config cfg;
  long n;
  if (argc < 3 || (strcmp(argv[1], "handoff") != 0 && strcmp(argv[1], "fib") != 0)) {
    fprintf(stderr, "usage: gc_switch handoff|fib N [boehm]\n");
    return 2;
  }
  n = atol(argv[2]);
  MR_config_default(&cfg);
  cfg.flags |= MR_CONFIG_IGNORE_ENV;
  cfg.engines = 1;
  if (argc > 3 && strcmp(argv[3], "boehm") == 0) {
#ifdef MR_BENCH_BDWGC
    GC_INIT();
    if (MR_gc_use_boehm(&cfg) != 0) return 77;
#else
    return 77;
#endif
  }
  if (MR_init(&cfg) != 0) return 1;
  if (strcmp(argv[1], "handoff") == 0) {
    long i;
    rounds = n;
    for (i = 0; i < 2; i++) {
      MR_future_init(&ping[i]);
      MR_future_init(&pong[i]);
    }
    if (MR_spawn(ponger, NULL, NULL) != 0) return 1;
    for (i = 0; i < n; i++) {
      MR_future_signal(&ping[i & 1], 1);
      (void)MR_future_wait(&pong[i & 1]);
      MR_future_init(&pong[i & 1]);
    }
    printf("handoff %ld rounds\n", n);
  } else {
    Fib f = {(int)n, 0};
    fib(&f);
    printf("fib(%ld) = %ld\n", n, f.out);
  }
  return MR_shutdown() == 0 ? 0 : 1;
}
