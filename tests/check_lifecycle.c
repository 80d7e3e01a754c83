/* check_lifecycle.c: --lazy-engines (engines start when work first needs them) and
 * MR_shutdown_now (stop at the next suspension point, drop and count what is left). */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>

#include "mrengine.h"
#include "mrengine_time.h"
#include "testutil.h"

static long sfib(int n) { return n < 2 ? n : sfib(n - 1) + sfib(n - 2); }

/* ---- lazy engines ---- */

START_TEST(test_lazy_engines_start_on_demand) {
  int threads0 = mr_test_count_threads();
  mr_test_start(4, "--lazy-engines");
  mr_test_expect_threads(threads0 + MR_TEST_RUNTIME_THREADS); /* no engine thread yet */
  ck_assert_int_eq(sfib(20), 6765);                           /* sequential work starts none */
  mr_test_expect_threads(threads0 + MR_TEST_RUNTIME_THREADS);
  ck_assert_int_eq(mr_test_pfib(22), 17711); /* sparks wake (start) sleepers */
  int started = mr_test_count_threads() - threads0 - MR_TEST_RUNTIME_THREADS;
  if (MR_TEST_EXACT_RESOURCES) {
    ck_assert_int_ge(started, 1);
    ck_assert_int_le(started, 3);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  mr_test_expect_threads(threads0);
}
END_TEST

/* A context bound to an engine that has not started starts it (CONTEXT to a sleeper). With
 * pinning, the engine binds itself when it starts. */
static atomic_int bound_ok;
static void on_engine_1(void *arg) {
  (void)arg;
  int cpu = -2;
  ck_assert_int_eq(MR_engine_id(), 1);
  ck_assert_int_eq(MR_engine_cpu(1, &cpu), 0);
  if (cpu >= 0) ck_assert_int_eq(sched_getcpu(), cpu);
  atomic_fetch_add(&bound_ok, 1);
}

START_TEST(test_lazy_bound_context_starts_its_engine) {
  int threads0 = mr_test_count_threads();
  mr_test_start(2, "--lazy-engines --thread-pinning cores");
  int cpu = 0;
  ck_assert_int_eq(MR_engine_cpu(1, &cpu), 0);
  ck_assert_int_eq(cpu, -1); /* not started, not bound */
  atomic_store(&bound_ok, 0);
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.engine = 1;
  for (int i = 0; i < 10; i++) ck_assert_int_eq(MR_spawn(on_engine_1, NULL, &o), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&bound_ok), 10);
  mr_test_expect_threads(threads0);
}
END_TEST

/* Shutdown races with engines being started by wakers: nothing leaks, the census balances
 * (MR_shutdown checks it), every spawned context runs. */
static atomic_int runs;
static void small_job(void *arg) {
  (void)arg;
  ck_assert_int_eq(mr_test_pfib(12), 144);
  atomic_fetch_add(&runs, 1);
}

#ifndef MR_TEST_SANITIZER
/* The process's mapped size in bytes (/proc/self/status, VmSize). */
static unsigned long long vm_size(void) {
  char line[256];
  unsigned long long kib = 0;
  FILE *f = fopen("/proc/self/status", "r");
  ck_assert_ptr_nonnull(f);
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmSize: %llu kB", &kib) == 1) break;
  fclose(f);
  ck_assert_uint_gt(kib, 0);
  return kib << 10;
}

/* A lazy engine whose thread cannot be made (an address-space limit leaves no room for a
 * thread's 8 MiB stack, as a thread limit would): the runtime goes on with the engines it has,
 * sparks and unbound contexts included, and a spawn bound to that engine fails with MR_EAGAIN,
 * also once the limit is gone. */
START_TEST(test_lazy_engine_that_cannot_start) {
  struct rlimit old, low;
  mr_test_start(3, "--lazy-engines --stack-size 64 --small-stack-size 64");
  atomic_store(&bound_ok, 0);
  atomic_store(&runs, 0);
  ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
  low = old;
  low.rlim_cur = vm_size() + (4u << 20);
  ck_assert_int_eq(setrlimit(RLIMIT_AS, &low), 0);
  for (int i = 0; i < 20; i++) ck_assert_int_eq(mr_test_pfib(18), 2584); /* wakes engines */
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  for (o.engine = 1; o.engine < 3; o.engine++)
    ck_assert_int_eq(MR_spawn(on_engine_1, NULL, &o), MR_EAGAIN);
  for (int i = 0; i < 10; i++) ck_assert_int_eq(MR_spawn(small_job, NULL, NULL), 0);
  ck_assert_int_eq(setrlimit(RLIMIT_AS, &old), 0);
  o.engine = 1;
  ck_assert_int_eq(MR_spawn(on_engine_1, NULL, &o), MR_EAGAIN);
  for (int e = 1; e < 3; e++) {
    int cpu = 0;
    ck_assert_int_eq(MR_engine_cpu(e, &cpu), 0);
    ck_assert_int_eq(cpu, -1);
  }
  ck_assert_int_eq(mr_test_pfib(20), 6765);
  ck_assert_int_eq(MR_shutdown(), 0); /* its census check: no unit lost */
  ck_assert_int_eq(atomic_load(&runs), 10);
  ck_assert_int_eq(atomic_load(&bound_ok), 0);
}
END_TEST

/* A timer armed by a thread that is not an engine goes to the engines in turn; when its covering
 * wake-up is what finds that the lazy engine cannot start (the engine is retired), another
 * engine must answer for the timer: the primordial context waits for it with engine 0 asleep
 * (it hung). */
static MR_Future timer_f1, timer_fx;
static MR_Timer timer_t1 = MR_TIMER_INIT, timer_tx = MR_TIMER_INIT;
static void *arm_from_outside(void *arg) {
  (void)arg;
  mr_test_sleep_ms(5); /* the primordial context waits, engine 0 sleeps */
  /* Turn 0 goes to engine 0: take it with a timer cancelled at once. */
  ck_assert_int_eq(MR_future_signal_at(&timer_fx, 1, MR_now() + 3600000000000ull, &timer_tx), 0);
  ck_assert_int_eq(MR_timer_cancel(&timer_tx), 0);
  mr_test_sleep_ms(5);
  struct rlimit low;
  ck_assert_int_eq(getrlimit(RLIMIT_AS, &low), 0);
  low.rlim_cur = vm_size() + (4u << 20);
  ck_assert_int_eq(setrlimit(RLIMIT_AS, &low), 0);
  ck_assert_int_eq(MR_future_signal_at(&timer_f1, 2, MR_now() + 20000000, &timer_t1), 0);
  return NULL;
}

START_TEST(test_lazy_engine_that_cannot_start_keeps_timers) {
  struct rlimit old;
  ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
  mr_test_start(2, "--lazy-engines");
  MR_future_init(&timer_f1);
  MR_future_init(&timer_fx);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, arm_from_outside, NULL), 0);
  ck_assert_uint_eq(MR_future_wait(&timer_f1), 2);
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_int_eq(setrlimit(RLIMIT_AS, &old), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST
#endif

START_TEST(test_lazy_shutdown_races_with_starts) {
  int threads0 = mr_test_count_threads();
  for (int round = 0; round < 200; round++) {
    mr_test_start(4, "--lazy-engines");
    atomic_store(&runs, 0);
    int n = round % 4;
    for (int i = 0; i < n; i++) ck_assert_int_eq(MR_spawn(small_job, NULL, NULL), 0);
    ck_assert_int_eq(MR_shutdown(), 0);
    ck_assert_int_eq(atomic_load(&runs), n);
  }
  mr_test_expect_threads(threads0);
}
END_TEST

/* ---- MR_shutdown_now ---- */

static atomic_int ran;
static void count_job(void *arg) {
  (void)arg;
  atomic_fetch_add(&ran, 1);
}

static void *fork_three_and_leave(void *arg) {
  static MR_SyncTerm st; /* never joined: its sparks are dropped */
  (void)arg;
  MR_sync_term_init(&st, 4);
  for (int i = 0; i < 3; i++) MR_fork_new_child(&st, count_job, NULL);
  return NULL;
}

/* One engine, busy with this (the primordial) context: nothing queued ever runs, and
 * MR_shutdown_now counts exactly what was queued. */
START_TEST(test_shutdown_now_counts_what_it_drops) {
  mr_test_start(1, NULL);
  atomic_store(&ran, 0);
  for (int i = 0; i < 10; i++) ck_assert_int_eq(MR_spawn(count_job, NULL, NULL), 0);
  MR_SyncTerm st;
  MR_sync_term_init(&st, 6);
  for (int i = 0; i < 5; i++) MR_fork_new_child(&st, count_job, NULL);
  pthread_t t; /* 3 more sparks through the injector */
  ck_assert_int_eq(pthread_create(&t, NULL, fork_three_and_leave, NULL), 0);
  pthread_join(t, NULL);
  MR_ShutdownReport r;
  r.size = sizeof r;
  ck_assert_int_eq(MR_shutdown_now(&r), 0);
  ck_assert_uint_eq(r.contexts_dropped, 10);
  ck_assert_uint_eq(r.sparks_dropped, 8);
  ck_assert_int_eq(atomic_load(&ran), 0);
  ck_assert_int_eq(MR_num_engines(), 0);
}
END_TEST

/* A running context is waited for (it reaches the scheduler); one waiting on a future that
 * nobody will signal is dropped. */
static atomic_int running, release_it, finished;
static MR_Future never;
static void runs_a_while(void *arg) {
  (void)arg;
  atomic_store(&running, 1);
  while (!atomic_load(&release_it)) {}
  atomic_store(&finished, 1);
}
static void waits_forever(void *arg) {
  (void)arg;
  (void)MR_future_wait(&never);
  ck_abort_msg("a dropped context ran on");
}
static void *release_later(void *arg) {
  (void)arg;
  mr_test_sleep_ms(50);
  atomic_store(&release_it, 1);
  return NULL;
}

START_TEST(test_shutdown_now_waits_for_running_contexts) {
  mr_test_start(2, NULL);
  MR_future_init(&never);
  atomic_store(&running, 0);
  atomic_store(&release_it, 0);
  atomic_store(&finished, 0);
  ck_assert_int_eq(MR_spawn(waits_forever, NULL, NULL), 0);
  ck_assert_int_eq(MR_spawn(runs_a_while, NULL, NULL), 0);
  for (int i = 0; i < 10000 && !atomic_load(&running); i++) mr_test_sleep_ms(1);
  ck_assert_int_eq(atomic_load(&running), 1);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, release_later, NULL), 0);
  MR_ShutdownReport r;
  r.size = sizeof r;
  ck_assert_int_eq(MR_shutdown_now(&r), 0);
  ck_assert_int_eq(atomic_load(&finished), 1); /* it was allowed to finish */
  ck_assert_uint_eq(r.contexts_dropped, 1);    /* the future's waiter */
  ck_assert_uint_eq(r.sparks_dropped, 0);
  pthread_join(t, NULL);
}
END_TEST

/* Stopping in the middle of real work, over and over: no thread and no stack is left behind
 * (dropped contexts are unmapped without being unwound). */
static void fib_job(void *arg) {
  (void)arg;
  ck_assert_int_eq(mr_test_pfib(16), 987);
}

START_TEST(test_shutdown_now_in_flight_leaves_nothing) {
  int threads0 = mr_test_count_threads();
  int maps0 = 0;
  uint64_t dropped = 0;
  for (int round = 0; round < 60; round++) {
    mr_test_start(2, round % 2 ? "--lazy-engines" : NULL);
    for (int i = 0; i < 20; i++) ck_assert_int_eq(MR_spawn(fib_job, NULL, NULL), 0);
    if (round % 3 == 0) mr_test_sleep_ms(1);
    MR_ShutdownReport r;
    r.size = sizeof r;
    ck_assert_int_eq(MR_shutdown_now(&r), 0);
    dropped += r.contexts_dropped + r.sparks_dropped;
    mr_test_expect_threads(threads0);
    if (round == 2) maps0 = mr_test_count_mappings();
    if (round > 2) mr_test_expect_mappings(maps0);
  }
  ck_assert_uint_gt(dropped, 0); /* the test did stop work in flight */
}
END_TEST

START_TEST(test_shutdown_now_errors) {
  ck_assert_int_eq(MR_shutdown_now(NULL), MR_ENOTINIT);
  mr_test_start(2, NULL);
  MR_ShutdownReport r;
  r.size = 3;
  ck_assert_int_eq(MR_shutdown_now(&r), MR_EINVAL);
  ck_assert_int_eq(MR_num_engines(), 2); /* still running */
  ck_assert_int_eq(MR_shutdown_now(NULL), 0);
  ck_assert_int_eq(MR_spawn(count_job, NULL, NULL), MR_ENOTINIT);
}
END_TEST

/* A thread that is not an engine forks a branch that sleeps, and waits at its join while the
 * primordial shuts down: MR_shutdown waits for the branch (the default channel completes its
 * work), drops nothing, and the thread's join returns (before, the branch's context was dropped,
 * "dropped contexts 1", and the join never returned). */
static atomic_int thread_forked, thread_joined, branch_ran;

static void sleepy_branch(void *arg) {
  (void)arg;
  ck_assert_int_eq(MR_sleep_for(50 * 1000000ull), 0);
  atomic_fetch_add(&branch_ran, 1);
}

static void *fork_and_join(void *arg) {
  (void)arg;
  MR_SyncTerm st;
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, sleepy_branch, NULL);
  atomic_store(&thread_forked, 1);
  MR_join_and_continue(&st);
  atomic_store(&thread_joined, 1);
  return NULL;
}

START_TEST(test_shutdown_waits_for_a_threads_join) {
  for (int round = 0; round < 20; round++) {
    mr_test_start(2, NULL);
    atomic_store(&thread_forked, 0);
    atomic_store(&thread_joined, 0);
    atomic_store(&branch_ran, 0);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, fork_and_join, NULL), 0);
    while (!atomic_load(&thread_forked)) sched_yield();
    MR_ShutdownReport r;
    MR_shutdown_report_init(&r);
    ck_assert_int_eq(MR_shutdown_report(&r), 0);
    ck_assert_uint_eq(r.contexts_dropped, 0);
    ck_assert_uint_eq(r.sparks_dropped, 0);
    ck_assert_int_eq(atomic_load(&branch_ran), 1);
    /* The thread may still be on its way out of the join; it must get there. */
    for (int w = 0; w < 2000 && !atomic_load(&thread_joined); w++) mr_test_sleep_ms(1);
    ck_assert_int_eq(atomic_load(&thread_joined), 1);
    pthread_join(t, NULL);
  }
}
END_TEST

/* A thread that is not an engine joins only after its branches have arrived (the inline join of
 * mrengine_view.h could then return without calling the library), in a flat term and with the
 * outer term of a nested pair: MR_shutdown still returns (before the hold on such a term, the
 * units its branches held were never given back and MR_shutdown waited forever). */
static atomic_int quick_ran;

static void quick_branch(void *arg) {
  (void)arg;
  atomic_fetch_add(&quick_ran, 1);
}

static void *join_after_arrival(void *arg) {
  int nested = *(int *)arg;
  MR_SyncTerm outer, inner;
  MR_sync_term_init(&outer, 2);
  MR_fork_new_child(&outer, quick_branch, NULL);
  if (nested) {
    MR_sync_term_init(&inner, 2);
    MR_fork_new_child(&inner, quick_branch, NULL);
  }
  while (atomic_load(&quick_ran) < 1 + nested) sched_yield();
  if (nested) MR_join_and_continue(&inner);
  mr_test_sleep_ms(2); /* the branch's context is past its arrival */
  MR_join_and_continue(&outer);
  return NULL;
}

START_TEST(test_shutdown_after_a_threads_late_join) {
  for (int round = 0; round < 40; round++) {
    int nested = round % 2;
    mr_test_start(2, NULL);
    atomic_store(&quick_ran, 0);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, join_after_arrival, &nested), 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(atomic_load(&quick_ran), 1 + nested);
    ck_assert_int_eq(MR_shutdown(), 0);
  }
}
END_TEST

/* A context forks in a blocking region (on a backup thread, as a thread that is not an engine)
 * and joins after the region, on an engine: MR_shutdown still returns (the branch is the
 * context's, not a thread's to give back). */
static void region_fork_join(void *arg) {
  (void)arg;
  MR_SyncTerm st;
  MR_blocking_begin();
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, sleepy_branch, NULL);
  MR_blocking_end();
  MR_join_and_continue(&st);
}

START_TEST(test_shutdown_after_a_region_fork) {
  for (int round = 0; round < 20; round++) {
    mr_test_start(2, NULL);
    atomic_store(&branch_ran, 0);
    for (int i = 0; i < 4; i++) ck_assert_int_eq(MR_spawn(region_fork_join, NULL, NULL), 0);
    ck_assert_int_eq(MR_shutdown(), 0);
    ck_assert_int_eq(atomic_load(&branch_ran), 4);
  }
}
END_TEST

/* MR_shutdown and MR_shutdown_now from a branch that the primordial's join runs inline on its
 * stack, or from a blocking region it runs in place, are refused as from a branch that was
 * stolen (before, they freed the runtime under the unfinished join or region). The parenthesised
 * names call the library's join, not the inline one of mrengine_view.h. */
static void try_shutdowns(void *arg) {
  int *rc = (int *)arg;
  rc[0] = MR_shutdown();
  rc[1] = MR_shutdown_now(NULL);
}

START_TEST(test_shutdown_refused_inside_a_join_or_region) {
  int rc[2] = {0, 0};
  mr_test_start(1, "--max-backup-threads 0"); /* nobody steals; a region runs in place */
  MR_SyncTerm st;
  (MR_sync_term_init)(&st, 2);
  (MR_fork_new_child)(&st, try_shutdowns, rc);
  (MR_join_and_continue)(&st);
  ck_assert_int_eq(rc[0], MR_ENOTENGINE);
  ck_assert_int_eq(rc[1], MR_ENOTENGINE);
  ck_assert_int_eq(MR_num_engines(), 1);
  rc[0] = rc[1] = 0;
  MR_blocking_begin();
  ck_assert_int_eq(MR_engine_id(), 0); /* in place */
  try_shutdowns(rc);
  MR_blocking_end();
  ck_assert_int_eq(rc[0], MR_ENOTENGINE);
  ck_assert_int_eq(rc[1], MR_ENOTENGINE);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- who may start and stop the runtime ---- */

/* Threads that race MR_init: one runtime at a time; every other call is refused with MR_EBUSY
 * (it crashed before: both built a runtime into the same global). The winner works and stops
 * it; a loser may then win in turn. */
enum { RACERS = 3 };
static pthread_barrier_t race_start;
static atomic_int race_won;

static void *init_racer(void *arg) {
  int *rc = (int *)arg;
  MR_Config c = mr_test_config(2);
  c.flags |= MR_CONFIG_QUIET;
  pthread_barrier_wait(&race_start);
  *rc = MR_init(&c);
  if (*rc == 0) {
    atomic_fetch_add(&race_won, 1);
    if (mr_test_pfib(15) != 610) *rc = 1000;
    if (MR_shutdown() != 0) *rc = 1001;
  }
  return NULL;
}

START_TEST(test_init_races_init) {
  int threads0 = mr_test_count_threads();
  for (int round = 0; round < 300; round++) {
    pthread_t t[RACERS];
    int rc[RACERS];
    atomic_store(&race_won, 0);
    pthread_barrier_init(&race_start, NULL, RACERS);
    for (int i = 0; i < RACERS; i++)
      ck_assert_int_eq(pthread_create(&t[i], NULL, init_racer, &rc[i]), 0);
    for (int i = 0; i < RACERS; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&race_start);
    for (int i = 0; i < RACERS; i++) ck_assert(rc[i] == 0 || rc[i] == MR_EBUSY);
    ck_assert_int_ge(atomic_load(&race_won), 1);
    ck_assert_int_eq(MR_num_engines(), 0);
  }
  mr_test_expect_threads(threads0);
}
END_TEST

/* An MR_init while another thread's MR_shutdown frees the runtime: MR_EBUSY until that runtime is
 * gone, then a runtime of its own (before, it could start between the running flag's clearing
 * and the old runtime's deletion, and the deletion took its runtime). */

static void *init_during_shutdown(void *arg) {
  int *rc = (int *)arg;
  MR_Config c = mr_test_config(2);
  c.flags |= MR_CONFIG_QUIET;
  *rc = MR_EBUSY;
  while (*rc == MR_EBUSY) {
    *rc = MR_init(&c);
    if (*rc == MR_EBUSY) sched_yield();
  }
  if (*rc == 0) {
    if (mr_test_pfib(15) != 610) *rc = 1000;
    if (MR_shutdown() != 0) *rc = 1001;
  }
  return NULL;
}

START_TEST(test_init_races_shutdown) {
  int threads0 = mr_test_count_threads();
  for (int round = 0; round < 300; round++) {
    mr_test_start(2, NULL);
    pthread_t t;
    int rc = -1;
    ck_assert_int_eq(pthread_create(&t, NULL, init_during_shutdown, &rc), 0);
    ck_assert_int_eq(mr_test_pfib(12), 144);
    ck_assert_int_eq(MR_shutdown(), 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(MR_num_engines(), 0);
  }
  mr_test_expect_threads(threads0);
}
END_TEST

int main(void) {
  /* One malloc arena: the mapping count then only moves with what the runtime maps itself. */
  mallopt(M_ARENA_MAX, 1);
  Suite *s = suite_create("lifecycle");
  TCase *tc = mr_tcase("lazy", 120);
  tcase_add_test(tc, test_lazy_engines_start_on_demand);
  tcase_add_test(tc, test_lazy_bound_context_starts_its_engine);
  tcase_add_test(tc, test_lazy_shutdown_races_with_starts);
#ifndef MR_TEST_SANITIZER
  /* Not under the sanitizers (they reserve terabytes: an address-space limit stops them). */
  mr_tcase_add_native_test(tc, test_lazy_engine_that_cannot_start,
                           "qemu-user accepts setrlimit(RLIMIT_AS) and applies no limit");
  mr_tcase_add_native_test(tc, test_lazy_engine_that_cannot_start_keeps_timers,
                           "qemu-user accepts setrlimit(RLIMIT_AS) and applies no limit");
#endif
  suite_add_tcase(s, tc);
  tc = mr_tcase("shutdown_now", 120);
  tcase_add_test(tc, test_shutdown_now_counts_what_it_drops);
  tcase_add_test(tc, test_shutdown_now_waits_for_running_contexts);
  tcase_add_test(tc, test_shutdown_now_in_flight_leaves_nothing);
  tcase_add_test(tc, test_shutdown_now_errors);
  suite_add_tcase(s, tc);
  tc = mr_tcase("start_stop", 120);
  tcase_add_test(tc, test_init_races_init);
  tcase_add_test(tc, test_init_races_shutdown);
  tcase_add_test(tc, test_shutdown_waits_for_a_threads_join);
  tcase_add_test(tc, test_shutdown_after_a_threads_late_join);
  tcase_add_test(tc, test_shutdown_after_a_region_fork);
  tcase_add_test(tc, test_shutdown_refused_inside_a_join_or_region);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
