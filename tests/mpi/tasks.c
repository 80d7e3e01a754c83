/* tasks.c: libmrmpi's tests, one per command-line word, each run on 2-4 ranks with one engine
 * per rank by tests/mpi/check-mpi.sh (which bounds every run in time):
 *   deadlock MODE  N contexts receive in the reverse order of the peer's synchronous sends:
 *                  MODE api (MR_mpi_wait) and interpose (MPI_Recv, MPI_Ssend) complete, plain
 *                  (PMPI_Recv, PMPI_Ssend: blocking) deadlocks, the negative control;
 *   ring, halo     10^4 messages sent per rank, every byte checked;
 *   mixed          waitall, waitany, probe, a future, and the collectives, all in contexts;
 *   early          a request complete before its wait;
 *   cancel         a context waits on a receive that another context cancels;
 *   shutdown       MR_shutdown_now while a context waits (doc/mpi.md: dropped, no hang);
 *   future_drop    MR_shutdown_now before MR_mpi_future's context ran: its future says
 *                  MR_EDROPPED, and 200 rounds of it leave no memory behind;
 *   sendrecv_error MPI_Sendrecv and MPI_Sendrecv_replace to a rank that does not exist, under
 *                  MPI_ERRORS_RETURN: MPI_ERR_RANK at once, and the receive they had posted
 *                  takes nothing;
 *   isolate        a waiter whose request handle became invalid (MPI_ERRORS_RETURN) gets the
 *                  error; another waiter on the same engine waits on and completes;
 *   serialized     MPI_THREAD_SERIALIZED: the first blocking call in a context stops the
 *                  process with mrmpi's message;
 *   funneled       MPI_THREAD_FUNNELED: waits that need not suspend return (printing a line
 *                  that says so), then the first call that would suspend stops the process. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static unsigned char byte_of(int src, int tag, int seq, int k) {
  return (unsigned char)(src * 131 + tag * 31 + seq * 7 + k);
}

/* ---- deadlock ---- */
#define DL_N 16
#define DL_LEN 256
static const char *dl_mode;
static int dl_ok;

static void dl_receiver(void *arg) {
  int tag = (int)(intptr_t)arg;
  unsigned char buf[DL_LEN];
  MPI_Status st;
  if (strcmp(dl_mode, "plain") == 0) {
    CHECK(PMPI_Recv(buf, DL_LEN, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
  } else if (strcmp(dl_mode, "api") == 0) {
    MPI_Request r;
    CHECK(MPI_Irecv(buf, DL_LEN, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
    CHECK(MR_mpi_wait(&r, &st) == MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL);
  } else {
    CHECK(MPI_Recv(buf, DL_LEN, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
  }
  CHECK(st.MPI_TAG == tag && st.MPI_SOURCE == 1);
  for (int k = 0; k < DL_LEN; k++) CHECK(buf[k] == byte_of(1, tag, 0, k));
  dl_ok++; /* one engine: no race */
}

static void dl_sender(void *arg) {
  int tag = (int)(intptr_t)arg;
  unsigned char buf[DL_LEN];
  for (int k = 0; k < DL_LEN; k++) buf[k] = byte_of(1, tag, 0, k);
  if (strcmp(dl_mode, "plain") == 0) {
    CHECK(PMPI_Ssend(buf, DL_LEN, MPI_BYTE, 0, tag, MPI_COMM_WORLD) == MPI_SUCCESS);
  } else if (strcmp(dl_mode, "api") == 0) {
    MPI_Request r;
    CHECK(MPI_Issend(buf, DL_LEN, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
    CHECK(MR_mpi_wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  } else {
    CHECK(MPI_Ssend(buf, DL_LEN, MPI_BYTE, 0, tag, MPI_COMM_WORLD) == MPI_SUCCESS);
  }
  dl_ok++;
}

static void deadlock(const char *mode) {
  dl_mode = mode;
  CHECK(size == 2);
  for (int i = 0; i < DL_N; i++)
    spawn(rank == 0 ? dl_receiver : dl_sender, (void *)(intptr_t)(rank == 0 ? i : DL_N - 1 - i));
}

/* ---- ring: T contexts per rank, each M sends right and M receives from the left ---- */
#define RING_T 8
#define RING_M 1250
#define MSG_MAX 1024
static void ring_task(void *arg) {
  int t = (int)(intptr_t)arg;
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  unsigned char out[MSG_MAX], in[MSG_MAX];
  for (int m = 0; m < RING_M; m++) {
    int len = 16 * (1 + (m + t) % 64);
    for (int k = 0; k < len; k++) out[k] = byte_of(rank, t, m, k);
    MPI_Status st;
    /* Even ranks send first, odd ranks receive first: blocking calls that suspend. */
    if (rank % 2 == 0) CHECK(MPI_Send(out, len, MPI_BYTE, right, t, MPI_COMM_WORLD) == 0);
    CHECK(MPI_Recv(in, MSG_MAX, MPI_BYTE, left, t, MPI_COMM_WORLD, &st) == 0);
    if (rank % 2 != 0) CHECK(MPI_Send(out, len, MPI_BYTE, right, t, MPI_COMM_WORLD) == 0);
    int got;
    MPI_Get_count(&st, MPI_BYTE, &got);
    CHECK(got == len);
    for (int k = 0; k < len; k++)
      if (in[k] != byte_of(left, t, m, k)) FAIL("ring: byte %d of message %d of task %d", k, m, t);
  }
}

static void ring(void) {
  for (int t = 0; t < RING_T; t++) spawn(ring_task, (void *)(intptr_t)t);
}

/* ---- halo: T strips per rank; each iteration a strip's edge rows go up and down ---- */
#define HALO_T 4
#define HALO_I 1250
#define HALO_W 128
static void halo_task(void *arg) {
  int t = (int)(intptr_t)arg;
  int up = (rank + size - 1) % size, down = (rank + 1) % size;
  unsigned char top[HALO_W], bottom[HALO_W], from_up[HALO_W], from_down[HALO_W];
  for (int it = 0; it < HALO_I; it++) {
    for (int k = 0; k < HALO_W; k++) {
      top[k] = byte_of(rank, t, it, k);
      bottom[k] = byte_of(rank, t + HALO_T, it, k);
    }
    CHECK(MPI_Sendrecv(top, HALO_W, MPI_BYTE, up, 2 * t, from_down, HALO_W, MPI_BYTE, down, 2 * t,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE) == 0);
    CHECK(MPI_Sendrecv(bottom, HALO_W, MPI_BYTE, down, 2 * t + 1, from_up, HALO_W, MPI_BYTE, up,
                       2 * t + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == 0);
    for (int k = 0; k < HALO_W; k++) {
      if (from_down[k] != byte_of(down, t, it, k)) FAIL("halo: from below, strip %d", t);
      if (from_up[k] != byte_of(up, t + HALO_T, it, k)) FAIL("halo: from above, strip %d", t);
    }
  }
}

static void halo(void) {
  for (int t = 0; t < HALO_T; t++) spawn(halo_task, (void *)(intptr_t)t);
}

/* ---- mixed: rank 1 sends tags 0..5 late and out of order; rank 0 waits in several ways ---- */
static int mixed_vals[6];
static int mixed_done;
static void mixed_waitall(void *arg) {
  MPI_Request r[2];
  MPI_Status st[2];
  (void)arg;
  MPI_Irecv(&mixed_vals[0], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r[0]);
  MPI_Irecv(&mixed_vals[1], 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &r[1]);
  CHECK(MR_mpi_waitall(2, r, st) == MPI_SUCCESS);
  CHECK(st[0].MPI_TAG == 0 && st[1].MPI_TAG == 1 && mixed_vals[0] == 100 && mixed_vals[1] == 101);
  mixed_done++;
}
static void mixed_waitany(void *arg) {
  MPI_Request r[2];
  int index;
  MPI_Status st;
  (void)arg;
  MPI_Irecv(&mixed_vals[2], 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &r[0]);
  r[1] = MPI_REQUEST_NULL;
  CHECK(MPI_Waitany(2, r, &index, &st) == MPI_SUCCESS);
  CHECK(index == 0 && st.MPI_TAG == 2 && mixed_vals[2] == 102 && r[0] == MPI_REQUEST_NULL);
  mixed_done++;
}
static void mixed_probe(void *arg) {
  MPI_Status st;
  int n;
  (void)arg;
  CHECK(MPI_Probe(1, 3, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == 1 && st.MPI_TAG == 3);
  CHECK(MPI_Recv(&mixed_vals[3], 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &st) == 0);
  CHECK(mixed_vals[3] == 103);
  mixed_done++;
}
static void mixed_future(void *arg) {
  MPI_Request r;
  MPI_Status st;
  MR_Future f;
  (void)arg;
  MR_future_init(&f);
  MPI_Irecv(&mixed_vals[4], 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &r);
  CHECK(MR_mpi_future(&r, &st, &f) == 0);
  CHECK(MR_future_wait(&f) == MPI_SUCCESS);
  CHECK(st.MPI_TAG == 4 && mixed_vals[4] == 104 && r == MPI_REQUEST_NULL);
  mixed_done++;
}
static void mixed_collectives(void *arg) {
  (void)arg;
  int v = rank + 1, sum = 0, root_val = rank == 0 ? 42 : 0, red = 0;
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == 0);
  CHECK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == 0);
  CHECK(sum == size * (size + 1) / 2);
  CHECK(MPI_Bcast(&root_val, 1, MPI_INT, 0, MPI_COMM_WORLD) == 0);
  CHECK(root_val == 42);
  CHECK(MPI_Reduce(&v, &red, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD) == 0);
  CHECK(rank != 0 || red == size);
  mixed_done++;
}
static void mixed_sender(void *arg) {
  static const int order[6] = {4, 3, 1, 2, 0};
  (void)arg;
  CHECK(MR_sleep_for(20000000) == 0); /* the receivers are all waiting by now */
  for (int i = 0; i < 5; i++) {
    int v = 100 + order[i];
    CHECK(MPI_Send(&v, 1, MPI_INT, 0, order[i], MPI_COMM_WORLD) == 0);
  }
  mixed_done += 4;
}

static void mixed(void) {
  if (rank == 0) {
    spawn(mixed_waitall, NULL);
    spawn(mixed_waitany, NULL);
    spawn(mixed_probe, NULL);
    spawn(mixed_future, NULL);
  } else if (rank == 1) {
    spawn(mixed_sender, NULL);
  } else {
    mixed_done += 4;
  }
  spawn(mixed_collectives, NULL);
}

/* ---- early: the message arrived before the wait ---- */
static void early(void) {
  int v = rank == 1 ? 7 : 0;
  MPI_Request r;
  if (rank == 0) MPI_Irecv(&v, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, &r);
  if (rank == 1) MPI_Send(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int flag = 0;
    for (int i = 0; i < 1000 && !flag; i++) {
      MR_sleep_for(1000000);
      MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
    }
    CHECK(flag);
    CHECK(MR_mpi_wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(v == 7 && r == MPI_REQUEST_NULL);
  }
}

/* ---- cancel: one context waits on a receive nobody sends; another cancels it ---- */
static MPI_Request cancel_req;
static int cancel_seen;
static void cancel_waiter(void *arg) {
  int v;
  MPI_Status st;
  (void)arg;
  MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &cancel_req);
  CHECK(MPI_Wait(&cancel_req, &st) == MPI_SUCCESS);
  MPI_Test_cancelled(&st, &cancel_seen);
}
static void cancel_canceller(void *arg) {
  (void)arg;
  CHECK(MR_sleep_for(10000000) == 0);
  CHECK(MPI_Cancel(&cancel_req) == MPI_SUCCESS);
}

/* ---- shutdown: MR_shutdown_now drops a waiting context; the program cancels its request ---- */
static MPI_Request shut_req;
static int shut_v;
static void shut_waiter(void *arg) {
  (void)arg;
  MPI_Irecv(&shut_v, 1, MPI_INT, MPI_ANY_SOURCE, 78, MPI_COMM_WORLD, &shut_req);
  (void)MR_mpi_wait(&shut_req, MPI_STATUS_IGNORE);
  FAIL("a dropped wait ended");
}

/* ---- future_drop: the job of an MR_mpi_future whose context never ran ---- */
#define FD_ROUNDS 200
static void future_drop(void) {
  MPI_Request r;
  MPI_Status st;
  int v, cancelled = 0;
  size_t before = 0;
  CHECK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 79, MPI_COMM_WORLD, &r) == 0); /* never sent */
  for (int round = 0; round < FD_ROUNDS; round++) {
    MR_Future f;
    MR_ShutdownReport rep;
    if (round > 0) mpitest_start_engine();
    MR_future_init(&f);
    CHECK(MR_mpi_future(&r, &st, &f) == 0);
    MR_shutdown_report_init(&rep);
    CHECK(MR_shutdown_now(&rep) == 0); /* the primordial context never let it run */
    CHECK(rep.contexts_dropped == 1);
    CHECK(MR_future_is_signalled(&f));
    CHECK((int)MR_future_wait(&f) == MR_EDROPPED);
    if (round == 1) before = mallinfo2().uordblks; /* after the first round's one-time growth */
  }
  size_t after = mallinfo2().uordblks;
  if (after > before + 8 * FD_ROUNDS)
    FAIL("%zu bytes more after %d dropped futures", after - before, FD_ROUNDS - 2);
  CHECK(r != MPI_REQUEST_NULL); /* the request is still the program's: cancel it */
  CHECK(MPI_Cancel(&r) == MPI_SUCCESS);
  CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS);
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(cancelled);
}

/* ---- sendrecv_error: the send cannot start; the call returns its error at once ---- */
static int se_done;
static void se_task(void *arg) {
  int peer = 1 - rank, v = rank, got = -1, cls = MPI_SUCCESS;
  (void)arg;
  int rc = MPI_Sendrecv(&v, 1, MPI_INT, 99, 60, &got, 1, MPI_INT, peer, 60, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RANK);
  rc = MPI_Sendrecv_replace(&v, 1, MPI_INT, 99, 61, peer, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RANK);
  /* The receives those calls posted were cancelled: the peer's messages of those tags, sent only
   * now, come to the receives below. */
  CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
  v = 100 + rank;
  CHECK(MPI_Sendrecv(&v, 1, MPI_INT, peer, 60, &got, 1, MPI_INT, peer, 60, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(got == 100 + peer);
  v = 200 + rank;
  CHECK(MPI_Sendrecv_replace(&v, 1, MPI_INT, peer, 61, peer, 61, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(v == 200 + peer);
  se_done = 1;
}

/* ---- isolate: one waiter's invalid handle fails that waiter only ---- */
static MPI_Request iso_bad_req, iso_bad_saved;
static int iso_good_v, iso_bad_v;
static volatile int iso_good_rc = -1, iso_bad_rc = -1;
static void iso_good(void *arg) {
  MPI_Request r;
  (void)arg;
  CHECK(MPI_Irecv(&iso_good_v, 1, MPI_INT, rank, 71, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  iso_good_rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
}
static void iso_bad(void *arg) {
  (void)arg;
  CHECK(MPI_Irecv(&iso_bad_v, 1, MPI_INT, rank, 72, MPI_COMM_WORLD, &iso_bad_req) == 0);
  iso_bad_saved = iso_bad_req;
  iso_bad_rc = MPI_Wait(&iso_bad_req, MPI_STATUS_IGNORE);
}
/* Sleep in 1 ms steps (the engine polls meanwhile) until *flag is no longer -1, 5 s at most. */
static void await_set(volatile int *flag) {
  for (int i = 0; i < 5000 && *flag == -1; i++) CHECK(MR_sleep_for(1000000) == 0);
}
static void isolate(void) {
  int v = 73, cancelled = 0, cls = MPI_SUCCESS;
  MPI_Status st;
  spawn(iso_good, NULL);
  spawn(iso_bad, NULL);
  CHECK(MR_sleep_for(20000000) == 0);
  CHECK(iso_good_rc == -1 && iso_bad_rc == -1); /* both suspended */
  iso_bad_req = (MPI_Request)0; /* an invalid handle, as a program's bug could leave it */
  await_set(&iso_bad_rc);
  MPI_Error_class(iso_bad_rc, &cls);
  CHECK(cls == MPI_ERR_REQUEST);
  CHECK(MR_sleep_for(20000000) == 0);
  CHECK(iso_good_rc == -1); /* its request is fine and still MPI's: it waits on */
  CHECK(MPI_Send(&v, 1, MPI_INT, rank, 71, MPI_COMM_WORLD) == MPI_SUCCESS);
  await_set(&iso_good_rc);
  CHECK(iso_good_rc == MPI_SUCCESS && iso_good_v == 73);
  CHECK(MPI_Cancel(&iso_bad_saved) == MPI_SUCCESS);
  CHECK(MPI_Wait(&iso_bad_saved, &st) == MPI_SUCCESS);
  MPI_Test_cancelled(&st, &cancelled);
  CHECK(cancelled);
}

/* ---- serialized, funneled: below MPI_THREAD_MULTIPLE only a suspension stops the process ---- */
static void thread_level(const char *test) {
  int v = 0, index = 0;
  MPI_Request r = MPI_REQUEST_NULL, rs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status st;
  CHECK(MR_engine_id() == 0); /* the primordial context: the task-aware calls */
  if (strcmp(test, "funneled") == 0) {
    CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MR_mpi_wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Waitall(2, rs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(MPI_Waitany(2, rs, &index, MPI_STATUS_IGNORE) == MPI_SUCCESS && index == MPI_UNDEFINED);
    /* A message that is here already: MPI_Recv completes at its first test. */
    if (rank == 1) {
      v = 42;
      CHECK(PMPI_Send(&v, 1, MPI_INT, 0, 6, MPI_COMM_WORLD) == MPI_SUCCESS);
    } else {
      CHECK(PMPI_Probe(1, 6, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
      CHECK(MPI_Recv(&v, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &st) == MPI_SUCCESS && v == 42);
    }
    printf("funneled: waits that need not suspend returned\n");
    fflush(stdout);
  }
  if (rank == 0) MPI_Recv(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rank == 1) MPI_Recv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  FAIL("a blocking call under %s went on", test);
}

int main(int argc, char **argv) {
  mpitest_program = "tasks";
  const char *test = argc > 1 ? argv[1] : "";
  int want = strcmp(test, "serialized") == 0 ? MPI_THREAD_SERIALIZED
             : strcmp(test, "funneled") == 0 ? MPI_THREAD_FUNNELED
                                             : MPI_THREAD_MULTIPLE;
  int stopped = 0; /* MR_shutdown_now ended the runtime */
  mpitest_init_mpi(&argc, &argv, want);
  mpitest_start_engine();
  if (strcmp(test, "deadlock") == 0 && argc > 2) {
    deadlock(argv[2]);
  } else if (strcmp(test, "ring") == 0) {
    ring();
  } else if (strcmp(test, "halo") == 0) {
    halo();
  } else if (strcmp(test, "mixed") == 0) {
    mixed();
  } else if (strcmp(test, "early") == 0) {
    early();
  } else if (strcmp(test, "cancel") == 0) {
    spawn(cancel_waiter, NULL);
    spawn(cancel_canceller, NULL);
  } else if (strcmp(test, "shutdown") == 0) {
    spawn(shut_waiter, NULL);
    CHECK(MR_sleep_for(20000000) == 0);
    MR_ShutdownReport rep;
    MR_shutdown_report_init(&rep);
    CHECK(MR_shutdown_now(&rep) == 0);
    CHECK(rep.contexts_dropped == 1);
    CHECK(MPI_Cancel(&shut_req) == MPI_SUCCESS); /* no engine now: the blocking calls */
    MPI_Status st;
    int cancelled = 0;
    CHECK(MPI_Wait(&shut_req, &st) == MPI_SUCCESS);
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled);
    stopped = 1;
  } else if (strcmp(test, "future_drop") == 0) {
    future_drop();
    stopped = 1;
  } else if (strcmp(test, "sendrecv_error") == 0) {
    CHECK(size == 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    spawn(se_task, NULL);
  } else if (strcmp(test, "isolate") == 0) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    isolate();
  } else if (strcmp(test, "serialized") == 0 || strcmp(test, "funneled") == 0) {
    thread_level(test);
  } else {
    FAIL("unknown test '%s'", test);
  }
  if (!stopped) CHECK(MR_shutdown() == 0);
  if (strcmp(test, "deadlock") == 0) CHECK(dl_ok == DL_N);
  if (strcmp(test, "mixed") == 0) CHECK(mixed_done == 5);
  if (strcmp(test, "cancel") == 0) CHECK(cancel_seen);
  if (strcmp(test, "sendrecv_error") == 0) CHECK(se_done);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
