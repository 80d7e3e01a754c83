/* client.c: a client of an installed mrengine (tests/install_clients.sh builds it once through
 * pkg-config and once through CMake): the sum 1..N as a parallel divide and conquer, with forks,
 * joins and a future, checked against the formula. */
#include <stdio.h>

#include <mrengine.h>

typedef struct Range {
  unsigned long lo, hi, sum;
} Range;

static void sum_range(void *arg) {
  Range *r = arg;
  if (r->hi - r->lo <= 64) {
    unsigned long i;
    r->sum = 0;
    for (i = r->lo; i < r->hi; i++) r->sum += i;
    return;
  }
  {
    unsigned long mid = r->lo + (r->hi - r->lo) / 2;
    Range left = {0, 0, 0}, right = {0, 0, 0};
    MR_SyncTerm st;
    left.lo = r->lo;
    left.hi = mid;
    right.lo = mid;
    right.hi = r->hi;
    MR_sync_term_init(&st, 2);
    MR_fork_new_child(&st, sum_range, &right);
    sum_range(&left);
    MR_join_and_continue(&st);
    r->sum = left.sum + right.sum;
  }
}

static void signal_sum(void *arg) {
  MR_Future *f = arg;
  Range r = {0, 100000, 0};
  sum_range(&r);
  MR_future_signal(f, (uintptr_t)r.sum);
}

int main(void) {
  MR_Config cfg;
  MR_Future f = MR_FUTURE_INIT;
  unsigned long want = 100000UL * 99999UL / 2, got;
  int err;
  MR_config_default(&cfg);
  cfg.engines = 2;
  cfg.flags |= MR_CONFIG_IGNORE_ENV;
  if ((err = MR_init(&cfg)) != 0) {
    fprintf(stderr, "MR_init: %s\n", MR_strerror(err));
    return 1;
  }
  if ((err = MR_spawn(signal_sum, &f, NULL)) != 0) {
    fprintf(stderr, "MR_spawn: %s\n", MR_strerror(err));
    return 1;
  }
  got = (unsigned long)MR_future_wait(&f);
  if ((err = MR_shutdown()) != 0) {
    fprintf(stderr, "MR_shutdown: %s\n", MR_strerror(err));
    return 1;
  }
  if (got != want) {
    fprintf(stderr, "sum: %lu, expected %lu\n", got, want);
    return 1;
  }
  printf("installed mrengine: sum %lu on 2 engines\n", got);
  return 0;
}
