/* vcoll.c: libmrmpi's test of the collectives beyond tasks.c's (MPI_Gatherv, MPI_Scatterv,
 * MPI_Allgatherv, MPI_Alltoallv, MPI_Alltoallw, MPI_Reduce_scatter, MPI_Reduce_scatter_block,
 * MPI_Scan, MPI_Exscan), run on 2 and 3 ranks with one engine per rank by tests/mpi/check-mpi.sh
 * (which bounds every run in time). One context per rank calls them in turn. The last rank enters
 * each collective first, and only then does another context of its engine tell the other ranks
 * to enter it: the last rank's part needs theirs (it is the root of MPI_Gatherv, not of
 * MPI_Scatterv, and last in the scans), so the call completes only if it suspends; as the
 * blocking call it deadlocks. Every value received is checked, and what must stay untouched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define MAXR 4       /* ranks at most */
#define BUF 64       /* ints in a buffer: enough for MAXR ranks' blocks and the gaps */
#define UNTOUCHED -7 /* what a receive must not write over */
#define GO_TAG 900
static const MPI_Comm comm = MPI_COMM_WORLD;
static int done; /* contexts finished; one engine per rank: no race */

static void fill(int *buf, int n) {
  for (int i = 0; i < n; i++) buf[i] = UNTOUCHED;
}

/* buf[0..n): block p (counts[p] ints at displs[p]) holds val(p, i); every other int untouched. */
static void check_blocks(const int *buf, int n, const int counts[], const int displs[],
                         int (*val)(int p, int i)) {
  int want[BUF];
  fill(want, n);
  for (int p = 0; p < size; p++)
    for (int i = 0; i < counts[p]; i++) want[displs[p] + i] = val(p, i);
  for (int i = 0; i < n; i++)
    if (buf[i] != want[i]) FAIL("int %d is %d, not %d", i, buf[i], want[i]);
}

/* Blocks of p + 1 ints with 2 untouched ints after each: gatherv and allgatherv's layout. */
static void layout_growing(int counts[], int displs[]) {
  int at = 0;
  for (int p = 0; p < size; p++) {
    counts[p] = p + 1;
    displs[p] = at;
    at += p + 1 + 2;
  }
}

static int gatherv_val(int p, int i) { return 100 * p + i; }
static void vc_gatherv(void) {
  int mine[MAXR], all[BUF], counts[MAXR], displs[MAXR];
  layout_growing(counts, displs);
  for (int i = 0; i <= rank; i++) mine[i] = gatherv_val(rank, i);
  fill(all, BUF);
  CHECK(MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, size - 1, comm) == 0);
  if (rank == size - 1) {
    check_blocks(all, BUF, counts, displs, gatherv_val);
  } else { /* not the root: nothing received */
    for (int i = 0; i < BUF; i++) CHECK(all[i] == UNTOUCHED);
  }
}

static int scatterv_val(int p, int i) { return 200 * p + i; }
static void vc_scatterv(void) { /* root 0: the last rank receives p + 2 ints */
  int all[BUF], counts[MAXR], displs[MAXR], mine[MAXR + 4], at = 0;
  for (int p = 0; p < size; p++) {
    counts[p] = p + 2;
    displs[p] = at;
    for (int i = 0; i < p + 2; i++) all[at + i] = scatterv_val(p, i);
    at += p + 2 + 1;
  }
  fill(mine, MAXR + 4);
  CHECK(MPI_Scatterv(all, counts, displs, MPI_INT, mine, rank + 2, MPI_INT, 0, comm) == 0);
  for (int i = 0; i < MAXR + 4; i++)
    CHECK(mine[i] == (i < rank + 2 ? scatterv_val(rank, i) : UNTOUCHED));
}

static int allgatherv_val(int p, int i) { return 300 * p + i; }
static void vc_allgatherv(void) {
  int mine[MAXR], all[BUF], counts[MAXR], displs[MAXR];
  layout_growing(counts, displs);
  for (int i = 0; i <= rank; i++) mine[i] = allgatherv_val(rank, i);
  fill(all, BUF);
  CHECK(MPI_Allgatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, comm) == 0);
  check_blocks(all, BUF, counts, displs, allgatherv_val);
}

/* alltoallv: from p to q, (p + q) % 3 + 1 ints of 1000 p + 10 q + i, one untouched int after. */
static int a2a_count(int p, int q) { return (p + q) % 3 + 1; }
static int a2a_val(int p, int i) { return 1000 * p + 10 * rank + i; }
static void vc_alltoallv(void) {
  int out[BUF], in[BUF], sc[MAXR], sd[MAXR], rc[MAXR], rd[MAXR], so = 0, ro = 0;
  for (int q = 0; q < size; q++) {
    sc[q] = a2a_count(rank, q);
    sd[q] = so;
    for (int i = 0; i < sc[q]; i++) out[so + i] = 1000 * rank + 10 * q + i;
    so += sc[q] + 1;
    rc[q] = a2a_count(q, rank);
    rd[q] = ro;
    ro += rc[q] + 1;
  }
  fill(in, BUF);
  CHECK(MPI_Alltoallv(out, sc, sd, MPI_INT, in, rc, rd, MPI_INT, comm) == 0);
  check_blocks(in, BUF, rc, rd, a2a_val);
}

/* alltoallw: from p to q two ints or two doubles ((p + q) % 2), in slots of 24 bytes. */
#define SLOT 24
static void vc_alltoallw(void) {
  unsigned char out[MAXR * SLOT], in[MAXR * SLOT];
  int counts[MAXR], displs[MAXR];
  MPI_Datatype types[MAXR];
  for (int q = 0; q < size; q++) {
    counts[q] = 2;
    displs[q] = q * SLOT;
    types[q] = (rank + q) % 2 ? MPI_DOUBLE : MPI_INT; /* symmetric: q sends rank the same */
    for (int i = 0; i < 2; i++) {
      int v = 100 * rank + 10 * q + i;
      double d = v + 0.5;
      if (types[q] == MPI_INT)
        memcpy(out + q * SLOT + i * sizeof v, &v, sizeof v);
      else
        memcpy(out + q * SLOT + i * sizeof d, &d, sizeof d);
    }
  }
  memset(in, 0xEE, sizeof in);
  CHECK(MPI_Alltoallw(out, counts, displs, types, in, counts, displs, types, comm) == 0);
  for (int p = 0; p < size; p++) {
    size_t used = types[p] == MPI_INT ? 2 * sizeof(int) : 2 * sizeof(double);
    for (int i = 0; i < 2; i++) {
      int v = 100 * p + 10 * rank + i, got;
      double d;
      if (types[p] == MPI_INT) {
        memcpy(&got, in + p * SLOT + i * sizeof got, sizeof got);
        CHECK(got == v);
      } else {
        memcpy(&d, in + p * SLOT + i * sizeof d, sizeof d);
        CHECK(d == v + 0.5);
      }
    }
    for (size_t b = used; b < SLOT; b++) CHECK(in[p * SLOT + b] == 0xEE);
  }
}

static void vc_reduce_scatter(void) { /* rank q gets q + 1 sums, from offset q (q + 1) / 2 */
  int v[BUF], r[MAXR + 1], counts[MAXR], total = size * (size + 1) / 2;
  int off = rank * (rank + 1) / 2;
  for (int q = 0; q < size; q++) counts[q] = q + 1;
  for (int j = 0; j < total; j++) v[j] = rank + j;
  fill(r, MAXR + 1);
  CHECK(MPI_Reduce_scatter(v, r, counts, MPI_INT, MPI_SUM, comm) == 0);
  for (int j = 0; j < MAXR + 1; j++)
    CHECK(r[j] == (j <= rank ? size * (off + j) + size * (size - 1) / 2 : UNTOUCHED));
}

static void vc_reduce_scatter_block(void) { /* 3 sums per rank */
  int v[3 * MAXR], r[4];
  for (int j = 0; j < 3 * size; j++) v[j] = (rank + 1) * (j + 1);
  fill(r, 4);
  CHECK(MPI_Reduce_scatter_block(v, r, 3, MPI_INT, MPI_SUM, comm) == 0);
  for (int m = 0; m < 4; m++)
    CHECK(r[m] == (m < 3 ? (3 * rank + m + 1) * size * (size + 1) / 2 : UNTOUCHED));
}

static void vc_scan(void) {
  int v[4], r[5];
  for (int i = 0; i < 4; i++) v[i] = (rank + 1) * (i + 1);
  fill(r, 5);
  CHECK(MPI_Scan(v, r, 4, MPI_INT, MPI_SUM, comm) == 0);
  for (int i = 0; i < 5; i++)
    CHECK(r[i] == (i < 4 ? (i + 1) * (rank + 1) * (rank + 2) / 2 : UNTOUCHED));
}

static void vc_exscan(void) { /* rank 0's result is undefined (MPI): not checked */
  int v[4], r[5];
  for (int i = 0; i < 4; i++) v[i] = (rank + 1) * (i + 1);
  fill(r, 5);
  CHECK(MPI_Exscan(v, r, 4, MPI_INT, MPI_SUM, comm) == 0);
  for (int i = 0; rank > 0 && i < 5; i++)
    CHECK(r[i] == (i < 4 ? (i + 1) * rank * (rank + 1) / 2 : UNTOUCHED));
}

static const struct {
  const char *name;
  void (*call)(void);
} calls[] = {
    {"MPI_Gatherv", vc_gatherv},
    {"MPI_Scatterv", vc_scatterv},
    {"MPI_Allgatherv", vc_allgatherv},
    {"MPI_Alltoallv", vc_alltoallv},
    {"MPI_Alltoallw", vc_alltoallw},
    {"MPI_Reduce_scatter", vc_reduce_scatter},
    {"MPI_Reduce_scatter_block", vc_reduce_scatter_block},
    {"MPI_Scan", vc_scan},
    {"MPI_Exscan", vc_exscan},
};
#define NCALLS ((int)(sizeof calls / sizeof calls[0]))

static void go(void *arg) { /* on the last rank: runs only if its engine is free */
  int k = (int)(intptr_t)arg;
  CHECK(MR_sleep_for(10000000) == 0);
  for (int p = 0; p < size - 1; p++) CHECK(MPI_Send(&k, 1, MPI_INT, p, GO_TAG, comm) == 0);
  done++;
}

static void driver(void *arg) {
  (void)arg;
  for (int k = 0; k < NCALLS; k++) {
    mpitest_step = calls[k].name;
    if (rank == size - 1) {
      spawn(go, (void *)(intptr_t)k);
    } else {
      int got = -1;
      CHECK(MPI_Recv(&got, 1, MPI_INT, size - 1, GO_TAG, comm, MPI_STATUS_IGNORE) == 0);
      CHECK(got == k);
    }
    calls[k].call();
  }
  done++;
}

int main(int argc, char **argv) {
  mpitest_program = "vcoll";
  mpitest_step = "setup";
  mpitest_init_mpi(&argc, &argv, MPI_THREAD_MULTIPLE);
  CHECK(size >= 2 && size <= MAXR);
  mpitest_start_engine();
  spawn(driver, NULL);
  CHECK(MR_shutdown() == 0);
  CHECK(done == (rank == size - 1 ? 1 + NCALLS : 1));
  MPI_Barrier(comm);
  MPI_Finalize();
  return 0;
}
