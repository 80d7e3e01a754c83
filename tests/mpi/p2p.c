/* p2p.c: libmrmpi's tests of the point-to-point calls beyond tasks.c's (vcoll.c has the
 * collectives), one per command-line word, each run with one engine per rank by
 * tests/mpi/check-mpi.sh (which bounds every run in time). In each, a context makes the call
 * before another context of its engine has done what the call waits for, so the call completes
 * only if it suspends: as the blocking call it deadlocks.
 *   waitsome  (2 ranks) MPI_Waitsome over null, inactive and real requests completing out of
 *             their order, one by one and then two at once, until MPI_UNDEFINED;
 *   replace   (2, 3 ranks) MPI_Sendrecv_replace of a strided datatype around the ring, whose
 *             message the left rank's other context sends only after it has received this one's;
 *   mprobe    (2 ranks) MPI_Mprobe before the message is sent, then MPI_Mrecv of a large message
 *             whose sender makes no MPI call (so no progress) until the receiving engine acts.
 * Every byte or value received is checked, and what must stay untouched too. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

#define MS 1000000u /* nanoseconds */
#define GO_TAG 900
static int done; /* contexts finished; one engine per rank: no race */

/* ---- waitsome: rank 1 sends tags 2, 0, 3 one at a time, then 4 and 1 together ---- */
#define WS_N 8
#define WS_LEN 64
static const int ws_tag[WS_N] = {-1, 2, 4, -1, 0, 5, 3, 1}; /* -1: null; 5: never started */

static int ws_value(int tag, int k) { return tag * 1000 + k + 7; }

static void ws_check(int i, const MPI_Status *st, int (*buf)[WS_LEN]) {
  int n;
  CHECK(ws_tag[i] >= 0 && ws_tag[i] != 5);
  CHECK(st->MPI_SOURCE == 1 && st->MPI_TAG == ws_tag[i]);
  MPI_Get_count(st, MPI_INT, &n);
  CHECK(n == WS_LEN);
  for (int k = 0; k < WS_LEN; k++) CHECK(buf[i][k] == ws_value(ws_tag[i], k));
}

static void ws_waiter(void *arg) {
  static int buf[WS_N][WS_LEN];
  MPI_Request r[WS_N];
  int out, idx[WS_N], order[WS_N], seen = 0;
  MPI_Status st[WS_N];
  (void)arg;
  for (int i = 0; i < WS_N; i++) {
    r[i] = MPI_REQUEST_NULL;
    if (ws_tag[i] >= 4) /* persistent: tag 4 started, tag 5 left inactive */
      CHECK(MPI_Recv_init(buf[i], WS_LEN, MPI_INT, 1, ws_tag[i], MPI_COMM_WORLD, &r[i]) == 0);
    else if (ws_tag[i] >= 0)
      CHECK(MPI_Irecv(buf[i], WS_LEN, MPI_INT, 1, ws_tag[i], MPI_COMM_WORLD, &r[i]) == 0);
  }
  CHECK(MPI_Start(&r[2]) == MPI_SUCCESS);
  for (;;) {
    CHECK(MPI_Waitsome(WS_N, r, &out, idx, st) == MPI_SUCCESS);
    if (out == MPI_UNDEFINED) break;
    CHECK(out >= 1 && seen + out <= 5);
    for (int k = 0; k < out; k++) {
      for (int j = 0; j < seen; j++) CHECK(order[j] != idx[k]);
      ws_check(idx[k], &st[k], buf);
      order[seen++] = idx[k];
    }
    CHECK(MPI_Send(&out, 1, MPI_INT, 1, GO_TAG + 1, MPI_COMM_WORLD) == 0); /* acknowledged */
  }
  /* The order of the sends: tags 2, 0, 3 (indices 1, 4, 6), then tags 4 and 1 in either order. */
  CHECK(seen == 5 && order[0] == 1 && order[1] == 4 && order[2] == 6);
  CHECK((order[3] == 2 && order[4] == 7) || (order[3] == 7 && order[4] == 2));
  for (int i = 0; i < WS_N; i++) CHECK((r[i] == MPI_REQUEST_NULL) == (ws_tag[i] < 4));
  MPI_Request_free(&r[2]);
  MPI_Request_free(&r[5]);
  done++;
}

static void ws_go(void *arg) { /* runs only if the waiter's MPI_Waitsome let the engine go */
  int go = 1;
  (void)arg;
  CHECK(MR_sleep_for(20 * MS) == 0);
  CHECK(MPI_Send(&go, 1, MPI_INT, 1, GO_TAG, MPI_COMM_WORLD) == 0);
  done++;
}

static void ws_sender(void *arg) {
  static const int tags[5] = {2, 0, 3, 4, 1}, batch[5] = {1, 1, 1, 0, 1};
  int go, msg[5][WS_LEN], acked = 0, sent = 0;
  (void)arg;
  CHECK(MPI_Recv(&go, 1, MPI_INT, 0, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == 0);
  for (int i = 0; i < 5; i++) {
    for (int k = 0; k < WS_LEN; k++) msg[i][k] = ws_value(tags[i], k);
    CHECK(MPI_Send(msg[i], WS_LEN, MPI_INT, 0, tags[i], MPI_COMM_WORLD) == 0);
    sent++;
    while (batch[i] && acked < sent) { /* until the receiver has seen every one sent */
      int n;
      CHECK(MPI_Recv(&n, 1, MPI_INT, 0, GO_TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == 0);
      acked += n;
    }
  }
  CHECK(acked == 5);
  done += 2;
}

static void waitsome(void) {
  CHECK(size == 2);
  if (rank == 0) {
    spawn(ws_waiter, NULL);
    spawn(ws_go, NULL);
  } else {
    spawn(ws_sender, NULL);
  }
}

/* ---- replace: 2 contexts per rank; A's message comes from the left rank's B ---- */
#define RP_COUNT 4096 /* elements of a vector of 4 ints with stride 3: extent 10 ints */
#define RP_EXT 10
#define RP_DATA (4 * RP_COUNT) /* 64 KiB of data: above the eager limit */

static int rp_value(int from, int j) { return from * 100000 + j; }
static int rp_hole(int i) { return i % RP_EXT % 3 != 0; } /* the type holds ints 0, 3, 6, 9 */

static void rp_a(void *arg) { /* MPI_Sendrecv_replace: right gets ours, the left's B sends */
  int right = (rank + 1) % size, left = (rank + size - 1) % size,
      from = (rank + 2 * size - 2) % size;
  int *buf = malloc(sizeof(int) * RP_COUNT * RP_EXT), n, j = 0;
  MPI_Datatype vec;
  MPI_Status st;
  (void)arg;
  CHECK(buf != NULL);
  CHECK(MPI_Type_vector(4, 1, 3, MPI_INT, &vec) == 0 && MPI_Type_commit(&vec) == 0);
  for (int i = 0; i < RP_COUNT * RP_EXT; i++) buf[i] = rp_hole(i) ? -1 - i : rp_value(rank, j++);
  CHECK(MPI_Sendrecv_replace(buf, RP_COUNT, vec, right, 1, left, 2, MPI_COMM_WORLD, &st) == 0);
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 2);
  CHECK(MPI_Get_count(&st, vec, &n) == 0 && n == RP_COUNT);
  j = 0; /* the type's ints hold the message (from two ranks left, plus 1000), the holes not */
  for (int i = 0; i < RP_COUNT * RP_EXT; i++)
    if (buf[i] != (rp_hole(i) ? -1 - i : rp_value(from, j++) + 1000)) FAIL("replace: int %d", i);
  MPI_Type_free(&vec);
  free(buf);
  done++;
}

static void rp_b(void *arg) { /* the left rank's A's data on to the right, plus 1000 */
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int *tmp = malloc(sizeof(int) * RP_DATA);
  (void)arg;
  CHECK(tmp != NULL);
  CHECK(MPI_Recv(tmp, RP_DATA, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == 0);
  for (int j = 0; j < RP_DATA; j++) {
    CHECK(tmp[j] == rp_value(left, j));
    tmp[j] += 1000;
  }
  CHECK(MPI_Send(tmp, RP_DATA, MPI_INT, right, 2, MPI_COMM_WORLD) == 0);
  free(tmp);
  done++;
}

static void replace(void) {
  spawn(rp_a, NULL);
  spawn(rp_b, NULL);
}

/* ---- mprobe: rank 1 sends once rank 0's second context says so, and then makes no MPI call
 * (so the rest of the large message does not move) until that context creates a file ---- */
#define MP_LEN (256 * 1024) /* ints: 1 MiB, sent in fragments as the sender makes progress */
static char mp_path[256];
static int mp_in_mrecv;

static void mp_receiver(void *arg) {
  MPI_Message msg;
  MPI_Status st;
  int n;
  (void)arg;
  CHECK(MPI_Mprobe(1, 7, MPI_COMM_WORLD, &msg, &st) == MPI_SUCCESS);
  CHECK(msg != MPI_MESSAGE_NULL && st.MPI_SOURCE == 1 && st.MPI_TAG == 7);
  CHECK(MPI_Get_count(&st, MPI_INT, &n) == 0 && n == MP_LEN);
  int *buf = malloc(sizeof(int) * (size_t)n);
  CHECK(buf != NULL);
  mp_in_mrecv = 1;
  CHECK(MPI_Mrecv(buf, n, MPI_INT, &msg, &st) == MPI_SUCCESS);
  mp_in_mrecv = 0;
  CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == 1 && st.MPI_TAG == 7);
  for (int k = 0; k < n; k++)
    if (buf[k] != 3 * k + 1) FAIL("mprobe: int %d", k);
  free(buf);
  done++;
}

static void mp_go(void *arg) { /* runs only while mp_receiver's calls let the engine go */
  int go = 1, fd;
  (void)arg;
  CHECK(MR_sleep_for(20 * MS) == 0);
  CHECK(MPI_Send(&go, 1, MPI_INT, 1, GO_TAG, MPI_COMM_WORLD) == 0);
  while (!mp_in_mrecv) CHECK(MR_sleep_for(MS) == 0);
  CHECK(MR_sleep_for(20 * MS) == 0);
  CHECK(mp_in_mrecv); /* the message cannot have moved yet */
  fd = open(mp_path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  CHECK(fd >= 0 && close(fd) == 0);
  done++;
}

static void mp_sender(void *arg) {
  int go, *buf = malloc(sizeof(int) * MP_LEN);
  MPI_Request r;
  (void)arg;
  CHECK(buf != NULL);
  for (int k = 0; k < MP_LEN; k++) buf[k] = 3 * k + 1;
  CHECK(MPI_Recv(&go, 1, MPI_INT, 0, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == 0);
  CHECK(MPI_Isend(buf, MP_LEN, MPI_INT, 0, 7, MPI_COMM_WORLD, &r) == MPI_SUCCESS);
  while (access(mp_path, F_OK) != 0) CHECK(MR_sleep_for(MS) == 0);
  CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  free(buf);
  done += 2;
}

static void mprobe(void) {
  int pid = (int)getpid();
  const char *dir = getenv("TMPDIR");
  CHECK(size == 2);
  CHECK(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD) == 0); /* main: not yet in a context */
  snprintf(mp_path, sizeof mp_path, "%s/mrmpi-p2p-%d", dir && *dir ? dir : "/tmp", pid);
}

static void mprobe_spawn(void) {
  if (rank == 0) {
    spawn(mp_receiver, NULL);
    spawn(mp_go, NULL);
  } else {
    spawn(mp_sender, NULL);
  }
}

int main(int argc, char **argv) {
  mpitest_program = "p2p";
  const char *test = argc > 1 ? argv[1] : "";
  mpitest_init_mpi(&argc, &argv, MPI_THREAD_MULTIPLE);
  if (strcmp(test, "mprobe") == 0) mprobe();
  mpitest_start_engine();
  if (strcmp(test, "waitsome") == 0) {
    waitsome();
  } else if (strcmp(test, "replace") == 0) {
    replace();
  } else if (strcmp(test, "mprobe") == 0) {
    mprobe_spawn();
  } else {
    FAIL("unknown test '%s'", test);
  }
  CHECK(MR_shutdown() == 0);
  if (done != 2) FAIL("%d contexts finished, not 2", done);
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(test, "mprobe") == 0 && rank == 0) CHECK(unlink(mp_path) == 0);
  MPI_Finalize();
  return 0;
}
