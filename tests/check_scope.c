/* check_scope.c: scopes (MR_scope_begin, MR_scope_spawn, MR_scope_end, MR_scope): every task
 * spawned into a scope, by its owner or by its tasks, runs exactly once and has finished when
 * the scope ends, on 1 and 2 engines, from a context and from a thread that is not an engine;
 * nested scopes; tasks that suspend; a scope's tasks keep its channel; MR_ECLOSED. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mrengine.h"
#include "testutil.h"

/* ---- A tree of nested spawns ---------------------------------------------------------------- */

enum { TREE = 10000 };

/* A binary tree of n tasks spawned into one scope: task i spawns tasks 2i+1 and 2i+2 into the
 * scope, and counts its own runs in hits[i]. `done` counts finished tasks, so the owner can tell
 * whether MR_scope_end returned before the last one finished. */
struct tree {
  MR_Scope *scope;
  int n;
  atomic_uchar *hits;
  atomic_int done;
};
struct tree_task {
  struct tree *t;
  int i;
};
static struct tree_task g_tree_tasks[TREE];

static void tree_run(void *env) {
  struct tree_task *k = (struct tree_task *)env;
  struct tree *t = k->t;
  int c;
  atomic_fetch_add_explicit(&t->hits[k->i], 1, memory_order_relaxed);
  for (c = 2 * k->i + 1; c <= 2 * k->i + 2 && c < t->n; c++)
    ck_assert_int_eq(MR_scope_spawn(t->scope, tree_run, &g_tree_tasks[c]), 0);
  atomic_fetch_add_explicit(&t->done, 1, memory_order_relaxed);
}

/* Spawn the tree's root into s, end s, and check that each task ran once before the end
 * returned. */
static void tree_in_scope(MR_Scope *s, void *env) {
  struct tree *t = (struct tree *)env;
  t->scope = s;
  ck_assert_int_eq(MR_scope_spawn(s, tree_run, &g_tree_tasks[0]), 0);
}

static atomic_uchar g_hits[TREE];

static void run_tree(int n) {
  struct tree t;
  int i;
  t.n = n;
  t.hits = g_hits;
  atomic_init(&t.done, 0);
  for (i = 0; i < n; i++) {
    atomic_init(&g_hits[i], 0);
    g_tree_tasks[i].t = &t;
    g_tree_tasks[i].i = i;
  }
  ck_assert_int_eq(MR_scope(tree_in_scope, &t), 0);
  /* The end returned after every task had finished, not only after the tasks it saw. */
  ck_assert_int_eq(atomic_load(&t.done), n);
  for (i = 0; i < n; i++) ck_assert_int_eq(atomic_load(&g_hits[i]), 1);
}

/* 10^4 tasks of one scope, almost all spawned by other tasks: each runs once (x 20 rounds), on
 * 1 and 2 engines (the loop index is the engine count minus one). */
START_TEST(test_nested_spawns_run_once) {
  int r;
  mr_test_start(_i + 1, NULL);
  for (r = 0; r < 20; r++) run_tree(TREE);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* The same from a thread that is not an engine: its spawns go to the injector, its end
 * blocks. The primordial context waits on a future meanwhile, so that its engine is free to run
 * the tasks (with 1 engine, the only one). */
static void *tree_thread(void *arg) {
  run_tree(TREE);
  MR_future_signal((MR_Future *)arg, 1);
  return NULL;
}

START_TEST(test_foreign_owner) {
  int r;
  mr_test_start(_i + 1, NULL);
  for (r = 0; r < 10; r++) {
    pthread_t th;
    MR_Future done;
    MR_future_init(&done);
    ck_assert_int_eq(pthread_create(&th, NULL, tree_thread, &done), 0);
    ck_assert_uint_eq(MR_future_wait(&done), 1);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
  }
  /* The roots went through the injector. */
  ck_assert_uint_ge(MR_TEST_STAT(sparks_injected), 10);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- Nested scopes, and spawns into an outer scope ------------------------------------------- */

enum { OUTER = 64, INNER = 32 };

struct nest {
  MR_Scope *outer;
  atomic_int inner_runs;
  atomic_int outer_extra; /* tasks that inner tasks spawned into the outer scope */
};

static void extra_run(void *env) {
  struct nest *n = (struct nest *)env;
  atomic_fetch_add_explicit(&n->outer_extra, 1, memory_order_relaxed);
}

struct inner_arg {
  struct nest *n;
  atomic_int *count; /* the inner scope's own count of finished tasks */
};

static void inner_run(void *env) {
  struct inner_arg *a = (struct inner_arg *)env;
  atomic_fetch_add_explicit(a->count, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&a->n->inner_runs, 1, memory_order_relaxed);
  /* Into the outer scope, which cannot have ended: this task's scope is inside one of its tasks. */
  ck_assert_int_eq(MR_scope_spawn(a->n->outer, extra_run, a->n), 0);
}

/* An outer task: a scope of its own with INNER tasks on its stack, which it waits for. */
static void outer_run(void *env) {
  struct nest *n = (struct nest *)env;
  MR_Scope inner;
  atomic_int count;
  struct inner_arg a;
  int k;
  atomic_init(&count, 0);
  a.n = n;
  a.count = &count;
  ck_assert_int_eq(MR_scope_begin(&inner), 0);
  for (k = 0; k < INNER; k++) ck_assert_int_eq(MR_scope_spawn(&inner, inner_run, &a), 0);
  ck_assert_int_eq(MR_scope_end(&inner), 0);
  ck_assert_int_eq(atomic_load(&count), INNER);
}

START_TEST(test_nested_scopes) {
  int r;
  mr_test_start(_i + 1, NULL);
  for (r = 0; r < 50; r++) {
    MR_Scope outer;
    struct nest n;
    int k;
    n.outer = &outer;
    atomic_init(&n.inner_runs, 0);
    atomic_init(&n.outer_extra, 0);
    ck_assert_int_eq(MR_scope_begin(&outer), 0);
    for (k = 0; k < OUTER; k++) ck_assert_int_eq(MR_scope_spawn(&outer, outer_run, &n), 0);
    ck_assert_int_eq(MR_scope_end(&outer), 0);
    ck_assert_int_eq(atomic_load(&n.inner_runs), OUTER * INNER);
    /* The tasks spawned into the outer scope from inner ones were waited for too. */
    ck_assert_int_eq(atomic_load(&n.outer_extra), OUTER * INNER);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- Empty scopes, errors ------------------------------------------------------------------- */

static void spawn_nothing(MR_Scope *s, void *env) {
  (void)s;
  *(int *)env += 1;
}

static atomic_int g_never;
static void never_run(void *env) {
  (void)env;
  atomic_fetch_add(&g_never, 1);
}

START_TEST(test_empty_scope_and_errors) {
  MR_Scope s;
  int called = 0;
  ck_assert_int_eq(MR_scope_begin(&s), MR_ENOTINIT);
  ck_assert_int_eq(MR_scope_spawn(&s, never_run, NULL), MR_ENOTINIT);
  ck_assert_int_eq(MR_scope_end(&s), MR_ENOTINIT);
  ck_assert_int_eq(MR_scope(spawn_nothing, &called), MR_ENOTINIT);
  mr_test_start(2, NULL);
  /* Empty scopes end at once, however they are made. */
  ck_assert_int_eq(MR_scope_begin(&s), 0);
  ck_assert_int_eq(MR_scope_end(&s), 0);
  ck_assert_int_eq(MR_scope(spawn_nothing, &called), 0);
  ck_assert_int_eq(called, 1);
  /* An ended scope refuses spawns and a second end; its tasks never run. */
  atomic_init(&g_never, 0);
  ck_assert_int_eq(MR_scope_spawn(&s, never_run, NULL), MR_ECLOSED);
  ck_assert_int_eq(MR_scope_end(&s), MR_ECLOSED);
  /* A zeroed scope is an ended one. */
  memset(&s, 0, sizeof s);
  ck_assert_int_eq(MR_scope_spawn(&s, never_run, NULL), MR_ECLOSED);
  /* An ended scope opens again. */
  ck_assert_int_eq(MR_scope_begin(&s), 0);
  ck_assert_int_eq(MR_scope_spawn(&s, mr_test_count_run, &called), 0);
  ck_assert_int_eq(MR_scope_end(&s), 0);
  ck_assert_int_eq(called, 2);
  ck_assert_int_eq(MR_scope_spawn(&s, never_run, NULL), MR_ECLOSED);
  /* Bad arguments. */
  ck_assert_int_eq(MR_scope_begin(NULL), MR_EINVAL);
  ck_assert_int_eq(MR_scope_spawn(NULL, never_run, NULL), MR_EINVAL);
  ck_assert_int_eq(MR_scope_begin(&s), 0);
  ck_assert_int_eq(MR_scope_spawn(&s, NULL, NULL), MR_EINVAL);
  ck_assert_int_eq(MR_scope_end(&s), 0);
  ck_assert_int_eq(MR_scope_end(NULL), MR_EINVAL);
  ck_assert_int_eq(MR_scope(NULL, NULL), MR_EINVAL);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(atomic_load(&g_never), 0);
}
END_TEST

/* ---- Tasks that suspend ---------------------------------------------------------------------- */

enum { WAITERS = 200 };

struct gate {
  MR_Future f;
  atomic_int woke;
};

static void wait_gate(void *env) {
  struct gate *g = (struct gate *)env;
  ck_assert_uint_eq(MR_future_wait(&g->f), 7);
  atomic_fetch_add_explicit(&g->woke, 1, memory_order_relaxed);
}

static void open_gate(void *env) {
  struct gate *g = (struct gate *)env;
  MR_future_signal(&g->f, 7);
}

static void *open_gate_later(void *env) {
  mr_test_sleep_ms(20);
  open_gate(env);
  return NULL;
}

/* WAITERS tasks suspend on a future that another task of the scope signals, then the same with
 * the future signalled by a thread outside the runtime 20 ms later: the end returns only after
 * every waiter has woken. */
START_TEST(test_suspending_tasks) {
  int r, k;
  mr_test_start(_i + 1, NULL);
  for (r = 0; r < 20; r++) {
    MR_Scope s;
    struct gate g;
    MR_future_init(&g.f);
    atomic_init(&g.woke, 0);
    ck_assert_int_eq(MR_scope_begin(&s), 0);
    /* The signaller first: the owner's end takes the newest tasks first, so it runs a waiter
     * (and suspends in it) before the signaller runs. */
    ck_assert_int_eq(MR_scope_spawn(&s, open_gate, &g), 0);
    for (k = 0; k < WAITERS; k++) ck_assert_int_eq(MR_scope_spawn(&s, wait_gate, &g), 0);
    ck_assert_int_eq(MR_scope_end(&s), 0);
    ck_assert_int_eq(atomic_load(&g.woke), WAITERS);
  }
  for (r = 0; r < 5; r++) {
    MR_Scope s;
    struct gate g;
    pthread_t th;
    MR_future_init(&g.f);
    atomic_init(&g.woke, 0);
    ck_assert_int_eq(MR_scope_begin(&s), 0);
    for (k = 0; k < WAITERS; k++) ck_assert_int_eq(MR_scope_spawn(&s, wait_gate, &g), 0);
    ck_assert_int_eq(pthread_create(&th, NULL, open_gate_later, &g), 0);
    ck_assert_int_eq(MR_scope_end(&s), 0);
    ck_assert_int_eq(atomic_load(&g.woke), WAITERS);
    ck_assert_int_eq(pthread_join(th, NULL), 0);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- Channels ------------------------------------------------------------------------------ */

enum { CH_TASKS = 2000 };

struct chan_run {
  int expect;
  atomic_int wrong, runs, elsewhere;
  int owner_engine;
  MR_Future done; /* signalled by the owner once its scope has ended */
};

static void chan_task(void *env) {
  struct chan_run *c = (struct chan_run *)env;
  if (MR_channel_current() != c->expect) atomic_fetch_add(&c->wrong, 1);
  if (MR_engine_id() != c->owner_engine) atomic_fetch_add(&c->elsewhere, 1);
  /* A little work, so that the other engine steals some. */
  {
    volatile int k;
    for (k = 0; k < 2000; k++) {}
  }
  atomic_fetch_add(&c->runs, 1);
}

static void chan_owner(void *env) {
  struct chan_run *c = (struct chan_run *)env;
  MR_Scope s;
  int k;
  c->owner_engine = MR_engine_id();
  ck_assert_int_eq(MR_scope_begin(&s), 0);
  for (k = 0; k < CH_TASKS; k++) ck_assert_int_eq(MR_scope_spawn(&s, chan_task, c), 0);
  ck_assert_int_eq(MR_scope_end(&s), 0);
  ck_assert_int_eq(atomic_load(&c->runs), CH_TASKS);
  MR_future_signal(&c->done, 1);
}

/* A scope begun by a context of channel ch: every task, run inline or stolen by the other
 * engine, runs in ch. */
START_TEST(test_tasks_keep_channel) {
  MR_ChannelOptions o;
  int ch, r, stolen = 0;
  mr_test_start(2, NULL);
  MR_channel_options_default(&o);
  o.level = 3;
  ch = MR_channel_create(&o);
  ck_assert_int_gt(ch, 0);
  for (r = 0; r < 20; r++) {
    struct chan_run c;
    MR_SpawnOptions so;
    c.expect = ch;
    MR_future_init(&c.done);
    atomic_init(&c.wrong, 0);
    atomic_init(&c.runs, 0);
    atomic_init(&c.elsewhere, 0);
    MR_spawn_options_default(&so);
    so.channel = ch;
    ck_assert_int_eq(MR_spawn(chan_owner, &c, &so), 0);
    MR_future_wait(&c.done);
    ck_assert_int_eq(atomic_load(&c.wrong), 0);
    stolen += atomic_load(&c.elsewhere);
  }
  /* Some tasks ran on the other engine (stolen, or run by the owner after it moved), so the
   * channel was carried by the spark, not only by the context that ran them. */
  ck_assert_int_gt(stolen, 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

/* ---- Stress ------------------------------------------------------------------------------- */

struct fan {
  MR_Scope *s;
  atomic_int runs;
};
struct fan_task {
  struct fan *f;
  int depth;
};

static void fan_run(void *env);
static void fan_spawn(struct fan *f, int depth) {
  struct fan_task *t = malloc(sizeof *t);
  ck_assert_ptr_nonnull(t);
  t->f = f;
  t->depth = depth;
  ck_assert_int_eq(MR_scope_spawn(f->s, fan_run, t), 0);
}

static void fan_run(void *env) {
  struct fan_task *t = (struct fan_task *)env;
  struct fan *f = t->f;
  int k, depth = t->depth;
  free(t);
  atomic_fetch_add_explicit(&f->runs, 1, memory_order_relaxed);
  if (depth > 0)
    for (k = 0; k < 3; k++) fan_spawn(f, depth - 1);
}

/* 2,000 scopes back to back on 2 engines (400 in a sanitizer build), each of 1..8 roots spawned
 * by the owner, every task spawning three more into the scope down to a random depth 0..4; the
 * count of runs is exact when each scope ends. */
START_TEST(test_stress) {
  unsigned seed = 42;
  int r;
  mr_test_start(2, NULL);
  for (r = 0; r < MR_TEST_SCALE(2000); r++) {
    MR_Scope s;
    struct fan f;
    int k, roots = 1 + (int)(rand_r(&seed) % 8), depth = (int)(rand_r(&seed) % 5), expect = 0,
           p = 1;
    for (k = 0; k <= depth; k++, p *= 3) expect += p;
    f.s = &s;
    atomic_init(&f.runs, 0);
    ck_assert_int_eq(MR_scope_begin(&s), 0);
    for (k = 0; k < roots; k++) fan_spawn(&f, depth);
    ck_assert_int_eq(MR_scope_end(&s), 0);
    ck_assert_int_eq(atomic_load(&f.runs), roots * expect);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("scope");
  TCase *tc = mr_tcase("scope", 60);
  tcase_add_loop_test(tc, test_nested_spawns_run_once, 0, 2);
  tcase_add_loop_test(tc, test_foreign_owner, 0, 2);
  tcase_add_loop_test(tc, test_nested_scopes, 0, 2);
  tcase_add_test(tc, test_empty_scope_and_errors);
  tcase_add_loop_test(tc, test_suspending_tasks, 0, 2);
  tcase_add_test(tc, test_tasks_keep_channel);
  tcase_add_test(tc, test_stress);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
