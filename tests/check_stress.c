/* check_stress.c: work posted while engines are falling asleep; nothing lost, nothing run twice.
 * A lost wake-up shows as a hang, which the test case's timeout turns into a failure. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mrengine.h"
#include "testutil.h"

static unsigned rng_next(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 16;
}

static void spin(unsigned n) {
  for (volatile unsigned i = 0; i < n; i++) {}
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

/* 10^6 rounds (10^5 in the other two modes): the primordial context (bound to engine 0) forks
 * one spark, works a random while, and joins. Engines 1.. are woken to steal it and fall asleep
 * again between rounds;
 * when a thief finishes last it must wake engine 0 (sleeping or about to) with the primordial. */
static const char *kModes[] = {"--spin-rounds 0", "--spin-rounds 2", "--spin-rounds 50"};

START_TEST(test_post_while_falling_asleep) {
  const long rounds = MR_TEST_SCALE(_i == 0 ? 1000000 : 100000);
  runs = calloc((size_t)rounds, 1);
  mr_test_start(_i == 2 ? 3 : 2, kModes[_i]);
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
  uint64_t stolen = MR_TEST_STAT(sparks_stolen);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_uint_gt(stolen, 0); /* the thieves really took part */
  free(runs);
}
END_TEST

/* Spawned contexts, bound and unbound, posted in bursts with pauses in which engines sleep. */
static atomic_long spawned_sum;
static void add_arg(void *arg) { atomic_fetch_add(&spawned_sum, (long)(intptr_t)arg); }

START_TEST(test_spawn_bursts_against_sleepers) {
  mr_test_start(3, "--spin-rounds 1");
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

/* Threads that are not engines spawn contexts while engines keep falling asleep. Each context
 * exists from its MR_spawn to its end; the spawners keep at most FOREIGN_AHEAD of them alive, as
 * a program that waits for its work would: ThreadSanitizer has a fiber for each live context and
 * stops the process at 8128, and under it 2 engines run contexts far slower than 4 threads
 * spawn them. */
enum { FOREIGN_AHEAD = 4000 };
static atomic_long foreign_issued;
static void *foreign_spawner(void *arg) {
  unsigned seed = (unsigned)(intptr_t)arg;
  for (int i = 0; i < 20000; i++) {
    while (atomic_fetch_add(&foreign_issued, 1) - atomic_load(&spawned_sum) >= FOREIGN_AHEAD) {
      atomic_fetch_sub(&foreign_issued, 1);
      sched_yield();
    }
    if (MR_spawn(add_arg, (void *)(intptr_t)1, NULL) != 0) abort();
    if (rng_next(&seed) % 64 == 0) spin(rng_next(&seed) % 50000);
  }
  return NULL;
}

START_TEST(test_foreign_threads_spawn) {
  mr_test_start(2, "--spin-rounds 1");
  atomic_store(&spawned_sum, 0);
  atomic_store(&foreign_issued, 0);
  pthread_t t[4];
  for (int i = 0; i < 4; i++)
    pthread_create(&t[i], NULL, foreign_spawner, (void *)(intptr_t)(i + 1));
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&spawned_sum), 4 * 20000);
  /* After the shutdown, spawning is refused, not lost. */
  ck_assert_int_eq(MR_spawn(add_arg, NULL, NULL), MR_ENOTINIT);
}
END_TEST

/* Everything at once, 20 times: a context bound to each engine forks and joins; two threads
 * that are not engines submit sparks through the injector; then MR_shutdown runs while the
 * bound contexts are still posting. Each bound context stays on its engine, each foreign job
 * runs once. */
static atomic_int bound_rounds_ok;
static void bound_worker(void *arg) {
  int engine = (int)(intptr_t)arg;
  unsigned seed = 7u + (unsigned)engine;
  for (int r = 0; r < 300; r++) {
    ck_assert_int_eq(mr_test_pfib(8 + (int)(rng_next(&seed) % 4)) > 0, 1);
    ck_assert_int_eq(MR_engine_id(), engine);
    spin(rng_next(&seed) % 3000);
    atomic_fetch_add(&bound_rounds_ok, 1);
  }
}

enum { FOREIGN_JOBS = 3000 };
static unsigned char foreign_runs[2][FOREIGN_JOBS];
static void *foreign_submitter(void *arg) {
  int t = (int)(intptr_t)arg;
  unsigned seed = 99u + (unsigned)t;
  for (int done = 0; done < FOREIGN_JOBS;) {
    int n = 1 + (int)(rng_next(&seed) % 8);
    if (n > FOREIGN_JOBS - done) n = FOREIGN_JOBS - done;
    mr_test_fork_join_counts(&foreign_runs[t][done], n);
    done += n;
    spin(rng_next(&seed) % 20000);
  }
  return NULL;
}

START_TEST(test_everything_at_once) {
  for (int round = 0; round < 20; round++) {
    mr_test_start(3, round % 2 ? "--spin-rounds 0" : "--lazy-engines");
    memset(foreign_runs, 0, sizeof foreign_runs);
    atomic_store(&bound_rounds_ok, 0);
    MR_SpawnOptions o;
    MR_spawn_options_default(&o);
    for (int e = 0; e < 3; e++) {
      o.engine = e;
      ck_assert_int_eq(MR_spawn(bound_worker, (void *)(intptr_t)e, &o), 0);
    }
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
      ck_assert_int_eq(pthread_create(&t[i], NULL, foreign_submitter, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    ck_assert_int_eq(MR_shutdown(), 0); /* the bound contexts may still be posting */
    ck_assert_int_eq(atomic_load(&bound_rounds_ok), 3 * 300);
    for (int i = 0; i < 2; i++)
      for (int k = 0; k < FOREIGN_JOBS; k++) ck_assert_int_eq(foreign_runs[i][k], 1);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("stress");
  TCase *tc = mr_tcase("stress", 240);
  tcase_add_loop_test(tc, test_post_while_falling_asleep, 0, 3);
  tcase_add_test(tc, test_spawn_bursts_against_sleepers);
  tcase_add_test(tc, test_foreign_threads_spawn);
  tcase_add_test(tc, test_everything_at_once);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
