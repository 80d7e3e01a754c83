/* check_channel_stress.c: lost wake-ups with work posted to random channels (FIFO and deadline,
 * every level) from contexts, engines and threads that are not engines, while engines spin, fall
 * asleep or sleep: a lost wake-up hangs a poster and the time-out fails the test. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "channelutil.h"

#define STRESS_CHANNELS 12
static int stress_ch[STRESS_CHANNELS];
static atomic_uint stress_runs;
struct ping {
  MR_Future done;
};
static void pong(void *arg) {
  struct ping *p = arg;
  atomic_fetch_add_explicit(&stress_runs, 1, memory_order_relaxed);
  MR_future_signal(&p->done, 1);
}

/* One poster's rounds: spawn into a random channel, wait for it to run (engines fall asleep
 * between rounds); a lost wake-up hangs and the time-out fails the test. */
static void post_rounds(unsigned seed, long rounds) {
  for (long i = 0; i < rounds; i++) {
    struct ping p;
    MR_future_init(&p.done);
    seed = seed * 1103515245u + 12345u;
    int ch = stress_ch[(seed >> 16) % STRESS_CHANNELS];
    ck_assert_int_eq(spawn_in(pong, &p, ch, ch == stress_ch[0] ? MR_now() : 0), 0);
    MR_future_wait(&p.done);
    /* Pauses of random length: engines are spinning, falling asleep or asleep when the next
     * context comes. */
    if ((seed >> 8) % 16 == 0) {
      struct timespec ts = {0, (long)((seed >> 12) % 200) * 1000L};
      nanosleep(&ts, NULL);
    }
  }
}

static long stress_rounds;
static void *poster_thread(void *arg) {
  post_rounds((unsigned)(uintptr_t)arg, stress_rounds);
  return NULL;
}
static MR_Future engine_poster_done;
static void poster_context(void *arg) {
  post_rounds((unsigned)(uintptr_t)arg, stress_rounds);
  MR_future_signal(&engine_poster_done, 1);
}

START_TEST(test_lost_wakeup_random_channels) {
  const char *full = getenv("MR_TEST_FULL");
  long total = full && strcmp(full, "1") == 0 ? 100000 : 10000;
  stress_rounds = MR_TEST_SCALE(total) / 4;
  mr_test_start(2, NULL);
  for (int i = 0; i < STRESS_CHANNELS; i++)
    stress_ch[i] = make_channel(i % MR_LEVELS, i == 0 ? MR_CHANNEL_DEADLINE : MR_CHANNEL_FIFO,
                                MR_CLOSE_COMPLETE, i % 3 == 2 ? 0 : -1);
  atomic_store(&stress_runs, 0);
  MR_future_init(&engine_poster_done);
  pthread_t t[3];
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(pthread_create(&t[i], NULL, poster_thread, (void *)(uintptr_t)(i + 1)), 0);
  ck_assert_int_eq(spawn_in(poster_context, (void *)(uintptr_t)77, stress_ch[5], 0), 0);
  MR_future_wait(&engine_poster_done);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(pthread_join(t[i], NULL), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_uint_eq(atomic_load(&stress_runs), (unsigned)(4 * stress_rounds));
}
END_TEST

int main(void) {
  Suite *s = suite_create("channel_stress");
  TCase *tc = mr_tcase("stress", 300);
  tcase_add_test(tc, test_lost_wakeup_random_channels);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
