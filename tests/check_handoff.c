/* check_handoff.c: the hand-off slot (doc/design.md section 6) never runs a context ahead of
 * higher-level work, the yielder's own included. */
#include <string.h>

#include "mrengine.h"
#include "testutil.h"

static char order[8];
static int norder;
static MR_Future go, done;

static void mark(char c) { order[norder++] = c; }

static int channel(int level, int followup) {
  MR_ChannelOptions c;
  MR_channel_options_default(&c);
  c.level = level;
  c.followup = followup;
  int ch = MR_channel_create(&c);
  ck_assert_int_gt(ch, 0);
  return ch;
}

/* Waits for the yielder's signal, which puts it in the engine's hand-off slot. */
static void middle(void *arg) {
  (void)arg;
  MR_future_wait(&go);
  mark('M');
}

/* A level-4 context whose followup is level 1 makes a level-2 context runnable (it lands in the
 * engine's hand-off slot), then yields: it is queued at level 1, so it runs before the level-2
 * context does (doc/api.md, "Channels": a yield queues the context in its followup channel). */
static void yielder(void *arg) {
  (void)arg;
  mark('S');
  MR_future_signal(&go, 1);
  ck_assert_int_eq(MR_yield(), 0);
  mark('R');
  MR_future_signal(&done, 1);
}

/* On one engine: the level-2 context first (it waits), then the yielder. The primordial waits
 * on a future rather than in MR_shutdown, which turns the hand-off slot off. */
static void run(int yielder_followup_level, const char *want) {
  MR_SpawnOptions o;
  mr_test_start(1, NULL);
  norder = 0;
  memset(order, 0, sizeof order);
  MR_future_init(&go);
  MR_future_init(&done);
  MR_spawn_options_default(&o);
  o.channel = channel(2, -1);
  ck_assert_int_eq(MR_spawn(middle, NULL, &o), 0);
  o.channel = channel(4, channel(yielder_followup_level, -1));
  ck_assert_int_eq(MR_spawn(yielder, NULL, &o), 0);
  MR_future_wait(&done);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_str_eq(order, want);
}

START_TEST(test_yield_goes_before_lower_levels) { run(1, "SRM"); }
END_TEST

/* With the yielder's followup at the level-2 context's own level, the hand-off slot runs that
 * context first: a yield queues the yielder behind its level's work. */
START_TEST(test_yield_after_same_level) { run(2, "SMR"); }
END_TEST

int main(void) {
  Suite *s = suite_create("handoff");
  TCase *tc = mr_tcase("handoff", 30);
  for (int i = 0; i < 20; i++) {
    tcase_add_test(tc, test_yield_goes_before_lower_levels);
    tcase_add_test(tc, test_yield_after_same_level);
  }
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
