/* levels.c: a request level above a batch level, with channels (doc/api.md, "Channels").
 *
 * usage: levels [requests]
 * Batch jobs (level 1, dropped at shutdown) keep every engine busy: each does 1 ms steps and
 * gives its engine away with MR_yield between steps. Meanwhile a thread that is not an engine
 * (standing for a network) spawns a request every 1 to 3 ms into the request channel (level 0,
 * completed at shutdown); a request starts at the next pick of any engine, ahead of all queued
 * batch work. The program prints the requests' start latencies (arrival to start) and what
 * became of the batch, and checks its own results: every request ran once, and MR_shutdown_report
 * dropped exactly the batch jobs that had not finished. It exits 1 if not. Options (engines,
 * --schedule) come from MRENGINE_OPTIONS. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mrengine.h"

#define BATCH_JOBS 8
#define BATCH_STEPS 1000
#define STEP_NS 1000000ull

static atomic_int batch_finished;
static atomic_long batch_steps;

static void busy(uint64_t ns) {
  uint64_t end = MR_now() + ns;
  while (MR_now() < end) {}
}

static void batch_job(void *arg) {
  (void)arg;
  for (int i = 0; i < BATCH_STEPS; i++) {
    busy(STEP_NS);
    atomic_fetch_add(&batch_steps, 1);
    MR_yield(); /* a request waiting now runs before the next step */
  }
  atomic_fetch_add(&batch_finished, 1);
}

struct request {
  uint64_t arrived, started;
  atomic_int runs;
  MR_Future done;
};

static void serve(void *arg) {
  struct request *r = arg;
  r->started = MR_now();
  atomic_fetch_add(&r->runs, 1);
  busy(50000); /* 50 us of work */
  MR_future_signal(&r->done, 1);
}

struct network {
  struct request *reqs;
  long n;
  int channel;
  MR_Future all_served;
};

static void *network(void *arg) {
  struct network *net = arg;
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = net->channel;
  unsigned seed = 1;
  for (long i = 0; i < net->n; i++) {
    /* A request every 1 to 3 ms, at random: at a fixed period the arrivals would fall into step
     * with the batch's 1 ms steps, and the latencies would show that rather than the levels. */
    seed = seed * 1103515245u + 12345u;
    struct timespec gap = {0, 1000000L + (long)((seed >> 8) % 2000000u)};
    nanosleep(&gap, NULL);
    struct request *r = &net->reqs[i];
    MR_future_init(&r->done);
    r->arrived = MR_now();
    if (MR_spawn(serve, r, &o) != 0) {
      fprintf(stderr, "levels: MR_spawn failed\n");
      exit(1);
    }
  }
  for (long i = 0; i < net->n; i++) MR_future_wait(&net->reqs[i].done); /* blocks this thread */
  MR_future_signal(&net->all_served, 1);
  return NULL;
}

static int by_value(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 200;
  if (n < 1 || n > 1000000) {
    fprintf(stderr, "usage: levels [requests]   (1 <= requests <= 1000000)\n");
    return 2;
  }
  if (MR_init(NULL) != 0) {
    fprintf(stderr, "levels: MR_init: %s\n", MR_init_error_message());
    return 1;
  }

  MR_ChannelOptions c;
  MR_channel_options_default(&c);
  c.level = 1;
  c.close = MR_CLOSE_DROP; /* unfinished batch work is dropped at shutdown */
  int batch = MR_channel_create(&c);
  c.level = 0;
  c.close = MR_CLOSE_COMPLETE;
  int requests = MR_channel_create(&c);
  if (batch < 0 || requests < 0) {
    fprintf(stderr, "levels: MR_channel_create: %s\n", MR_strerror(batch < 0 ? batch : requests));
    return 1;
  }

  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = batch;
  for (int i = 0; i < BATCH_JOBS; i++)
    if (MR_spawn(batch_job, NULL, &o) != 0) return 1;

  struct network net;
  net.reqs = calloc((size_t)n, sizeof *net.reqs);
  if (!net.reqs) return 1;
  net.n = n;
  net.channel = requests;
  MR_future_init(&net.all_served);
  pthread_t t;
  if (pthread_create(&t, NULL, network, &net) != 0) return 1;
  MR_future_wait(&net.all_served); /* this engine serves both levels meanwhile */
  pthread_join(t, NULL);

  int finished_before = atomic_load(&batch_finished);
  MR_ShutdownReport rep;
  MR_shutdown_report_init(&rep);
  int engines = MR_num_engines();
  if (MR_shutdown_report(&rep) != 0) return 1;

  int ok = 1;
  uint64_t *lat = malloc((size_t)n * sizeof *lat);
  if (!lat) return 1;
  for (long i = 0; i < n; i++) {
    if (atomic_load(&net.reqs[i].runs) != 1) {
      fprintf(stderr, "levels: request %ld ran %d times\n", i, atomic_load(&net.reqs[i].runs));
      ok = 0;
    }
    lat[i] = net.reqs[i].started - net.reqs[i].arrived;
  }
  qsort(lat, (size_t)n, sizeof *lat, by_value);
  int finished = atomic_load(&batch_finished);
  printf("levels: %ld requests, %d engines, %d batch jobs of 1 ms steps\n", n, engines, BATCH_JOBS);
  printf("  request start latency: median %.1f us, p99 %.1f us, max %.1f us\n",
         (double)lat[n / 2] / 1e3, (double)lat[(size_t)((double)n * 0.99)] / 1e3,
         (double)lat[n - 1] / 1e3);
  printf("  batch: %ld steps, %d jobs finished (%d before shutdown), %llu dropped at shutdown\n",
         atomic_load(&batch_steps), finished, finished_before,
         (unsigned long long)rep.channel_contexts_dropped[batch]);
  /* A batch job ends by finishing or by being dropped (queued, or at its next MR_yield). */
  if ((uint64_t)finished + rep.channel_contexts_dropped[batch] != BATCH_JOBS ||
      rep.channel_contexts_dropped[requests] != 0) {
    fprintf(stderr, "levels: %d batch jobs finished and %llu dropped, of %d\n", finished,
            (unsigned long long)rep.channel_contexts_dropped[batch], BATCH_JOBS);
    ok = 0;
  }
  free(lat);
  free(net.reqs);
  return ok ? 0 : 1;
}
