/* check_stress.c: work posted while engines are falling asleep; nothing lost, nothing run twice.
 * A lost wake-up shows as a hang, which the test case's timeout turns into a failure. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "mrengine.h"
#include "testutil.h"

static void start(int engines, const char *extra) {
  char opts[128];
  snprintf(opts, sizeof opts, "-P %d %s", engines, extra);
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_IGNORE_ENV;
  c.options = opts;
  ck_assert_int_eq(MR_init(&c), 0);
}

static unsigned rng_next(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 16;
}

static void spin(unsigned n) {
  for (volatile unsigned i = 0; i < n; i++) {
  }
}

/* Each spark marks its own slot: a slot seen twice or never is a failure. */
static unsigned char *runs;
struct job {
  long id;
  unsigned work;
};
static void mark(void *env) {
  struct job *j = env;
  spin(j->work);
  runs[j->id]++;
}

/* 10^5 rounds: the primordial context (bound to engine 0) forks one spark, works a random
 * while, and joins. Engines 1.. are woken to steal it and fall asleep again between rounds;
 * when a thief finishes last it must wake engine 0 (sleeping or about to) with the primordial. */
static const char *kModes[] = {"--spin-rounds 0", "--spin-rounds 2", "--spin-rounds 50"};

START_TEST(test_post_while_falling_asleep) {
  const long rounds = 100000;
  runs = calloc((size_t)rounds, 1);
  start(_i == 2 ? 3 : 2, kModes[_i]);
  unsigned seed = 42u + (unsigned)_i;
  for (long r = 0; r < rounds; r++) {
    struct job j = {r, rng_next(&seed) % 2000};
    MR_SyncTerm st;
    MR_sync_term_init(&st, 2);
    MR_fork_new_child(&st, mark, &j);
    spin(rng_next(&seed) % 1500);
    MR_join_and_continue(&st);
    ck_assert_int_eq(runs[r], 1);
  }
  unsigned long long stolen = 0;
  for (int e = 0; e < MR_num_engines(); e++) {
    MR_EngineStats s;
    s.size = sizeof s;
    MR_stats_get(e, &s);
    stolen += s.sparks_stolen;
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_uint_gt(stolen, 0); /* the thieves really took part */
  free(runs);
}
END_TEST

/* Spawned contexts, bound and unbound, posted in bursts with pauses in which engines sleep. */
static atomic_long spawned_sum;
static void add_arg(void *arg) { atomic_fetch_add(&spawned_sum, (long)(intptr_t)arg); }

START_TEST(test_spawn_bursts_against_sleepers) {
  start(3, "--spin-rounds 1");
  atomic_store(&spawned_sum, 0);
  unsigned seed = 7;
  long expect = 0;
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  for (long i = 1; i <= MR_TEST_SCALE(100000); i++) {
    o.engine = (int)(rng_next(&seed) % 4) - 1; /* -1 (any), 0, 1, 2 */
    ck_assert_int_eq(MR_spawn(add_arg, (void *)(intptr_t)i, &o), 0);
    expect += i;
    if (rng_next(&seed) % 1000 == 0) spin(200000); /* a pause: engines fall asleep */
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&spawned_sum), expect);
}
END_TEST

/* Threads that are not engines spawn contexts while engines keep falling asleep. */
static void *foreign_spawner(void *arg) {
  unsigned seed = (unsigned)(intptr_t)arg;
  for (int i = 0; i < 20000; i++) {
    if (MR_spawn(add_arg, (void *)(intptr_t)1, NULL) != 0) abort();
    if (rng_next(&seed) % 64 == 0) spin(rng_next(&seed) % 50000);
  }
  return NULL;
}

START_TEST(test_foreign_threads_spawn) {
  start(2, "--spin-rounds 1");
  atomic_store(&spawned_sum, 0);
  pthread_t t[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, foreign_spawner, (void *)(intptr_t)(i + 1));
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&spawned_sum), 4 * 20000);
  /* After the shutdown, spawning is refused, not lost. */
  ck_assert_int_eq(MR_spawn(add_arg, NULL, NULL), MR_ENOTINIT);
}
END_TEST

int main(void) {
  Suite *s = suite_create("stress");
  TCase *tc = mr_tcase("stress", 240);
  tcase_add_loop_test(tc, test_post_while_falling_asleep, 0, 3);
  tcase_add_test(tc, test_spawn_bursts_against_sleepers);
  tcase_add_test(tc, test_foreign_threads_spawn);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
