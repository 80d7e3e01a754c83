// interpose.cpp: the blocking MPI calls, through the MPI profiling interface (mrmpi.h). In a
// context each is its nonblocking form and a suspension (waits.hpp); elsewhere the call itself.
#include <algorithm>
#include <memory>
#include <new>

#include "waits.hpp"

using mr::mpi::task_aware;
using mr::mpi::Wait;

namespace {

// The wait for a request just started by `start` (its MPI code), in a context, for `call`.
int finish(const char *call, int start, MPI_Request *req, MPI_Status *status) {
  return start != MPI_SUCCESS ? start : mr::mpi::wait_one(call, req, status);
}

// MPI_Sendrecv in a context (for `call`): the receive and the send started, then both waited
// for. A send that cannot start (a bad destination, under MPI_ERRORS_RETURN) returns its error
// at once, as the call does: the receive already posted is cancelled, and a cancelled receive
// completes without any other process (MPI's rule for a cancelled request), so the blocking
// PMPI_Wait returns at once. Only a message that matched it in the meantime is taken.
int sendrecv(const char *call, const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
             void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
             MPI_Status *status) {
  MPI_Request r[2];
  int rc = PMPI_Irecv(rbuf, rcount, rtype, source, rtag, comm, &r[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Isend(sbuf, scount, stype, dest, stag, comm, &r[1]);
  if (rc != MPI_SUCCESS) {
    (void)PMPI_Cancel(&r[0]);
    (void)PMPI_Wait(&r[0], MPI_STATUS_IGNORE);
    return rc;
  }
  rc = mr::mpi::wait_one(call, &r[1], MPI_STATUS_IGNORE);
  int rc2 = mr::mpi::wait_one(call, &r[0], status);
  return rc != MPI_SUCCESS ? rc : rc2;
}

// An error found here rather than by an MPI call: comm's error handler decides, as in MPI.
int fail(MPI_Comm comm, int code) {
  (void)PMPI_Comm_call_errhandler(comm, code);
  return code;
}

// MPI_Probe and MPI_Mprobe in a context (kind PROBE or MPROBE): a test, then a suspension.
int probe(Wait::Kind kind, int source, int tag, MPI_Comm comm, MPI_Message *message,
          MPI_Status *status) {
  int flag = 0;
  int rc = kind == Wait::PROBE ? PMPI_Iprobe(source, tag, comm, &flag, status)
                               : PMPI_Improbe(source, tag, comm, &flag, message, status);
  if (rc != MPI_SUCCESS || flag) return rc;
  Wait w;
  w.kind = kind;
  w.call = kind == Wait::PROBE ? "MPI_Probe" : "MPI_Mprobe";
  w.source = source;
  w.tag = tag;
  w.comm = comm;
  w.message = message;
  w.status = status;
  return mr::mpi::suspend_on(&w);
}

}  // namespace

extern "C" {

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
  if (!task_aware()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  MPI_Request r;
  return finish("MPI_Recv", PMPI_Irecv(buf, count, type, source, tag, comm, &r), &r, status);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!task_aware()) return PMPI_Send(buf, count, type, dest, tag, comm);
  MPI_Request r;
  return finish("MPI_Send", PMPI_Isend(buf, count, type, dest, tag, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!task_aware()) return PMPI_Ssend(buf, count, type, dest, tag, comm);
  MPI_Request r;
  return finish("MPI_Ssend", PMPI_Issend(buf, count, type, dest, tag, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                 MPI_Status *status) {
  if (!task_aware())
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                         status);
  return sendrecv("MPI_Sendrecv", sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source,
                  rtag, comm, status);
}

// Open MPI 4.1 has no MPI_Isendrecv_replace (MPI 4.0): the message is received into a packed
// buffer (a receive of MPI_PACKED matches a send of any type) while the send reads buf, then
// unpacked into buf. Not a copy of buf's whole extent received with the same datatype: a
// derived datatype may have holes (a matrix column, padding, MPI_BOTTOM's absolute addresses),
// and copying the extent back would write the holes too, over what other contexts wrote there
// meanwhile; MPI_Unpack writes the type map's bytes only, as the receive does. On one machine
// (homogeneous) an element packs to MPI_Type_size bytes, and MPI keeps a status's count in
// bytes (Open MPI and MPICH), so MPI_Get_count(status, type) is what the receive would give.
// A message that ends inside an element leaves that element as it was.
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int source,
                         int rtag, MPI_Comm comm, MPI_Status *status) {
  if (!task_aware())
    return PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status);
  int cap = 0, size = 0;
  int rc = PMPI_Pack_size(count, type, comm, &cap);
  if (rc == MPI_SUCCESS) rc = PMPI_Type_size(type, &size);
  if (rc != MPI_SUCCESS) return rc;
  std::unique_ptr<char[]> packed(new (std::nothrow) char[static_cast<unsigned>(std::max(cap, 1))]);
  if (!packed) return fail(comm, MPI_ERR_NO_MEM);
  MPI_Status st{};  // what the caller gets if the call fails before the receive completes
  rc = sendrecv("MPI_Sendrecv_replace", buf, count, type, dest, stag, packed.get(), cap, MPI_PACKED,
                source, rtag, comm, &st);
  if (status != MPI_STATUS_IGNORE) *status = st;
  if (rc != MPI_SUCCESS) return rc;
  int got = 0;
  (void)PMPI_Get_count(&st, MPI_PACKED, &got);
  if (size == 0) return MPI_SUCCESS;
  // Pack_size may exceed count * size (an upper bound): more than count elements is truncation.
  if (got / size > count) return fail(comm, MPI_ERR_TRUNCATE);
  int pos = 0;
  return PMPI_Unpack(packed.get(), got, &pos, buf, got / size, type, comm);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) { return MR_mpi_wait(req, status); }

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status *statuses) {
  return MR_mpi_waitall(n, reqs, statuses);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
  return MR_mpi_waitany(n, reqs, index, status);
}

// Until at least one request completes, then every one complete by then (MPI's outcount,
// indices and statuses); MPI_UNDEFINED at once when none is active (all null or inactive).
int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status *statuses) {
  if (!task_aware()) return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
  int rc = PMPI_Testsome(n, reqs, outcount, indices, statuses);
  if (rc != MPI_SUCCESS || *outcount != 0) return rc;
  Wait w;
  w.kind = Wait::SOME;
  w.call = "MPI_Waitsome";
  w.reqs = reqs;
  w.n = n;
  w.indices = indices;
  w.status = statuses;
  rc = mr::mpi::suspend_on(&w);
  *outcount = w.index;
  return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
  if (!task_aware()) return PMPI_Probe(source, tag, comm, status);
  return probe(Wait::PROBE, source, tag, comm, nullptr, status);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
  if (!task_aware()) return PMPI_Mprobe(source, tag, comm, message, status);
  return probe(Wait::MPROBE, source, tag, comm, message, status);
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status) {
  if (!task_aware()) return PMPI_Mrecv(buf, count, type, message, status);
  MPI_Request r;
  return finish("MPI_Mrecv", PMPI_Imrecv(buf, count, type, message, &r), &r, status);
}

// The collectives: their nonblocking forms. Every rank must still start a communicator's
// collectives in one order (MPI's rule); a task-parallel program keeps it by dependences.
int MPI_Barrier(MPI_Comm comm) {
  if (!task_aware()) return PMPI_Barrier(comm);
  MPI_Request r;
  return finish("MPI_Barrier", PMPI_Ibarrier(comm, &r), &r, MPI_STATUS_IGNORE);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (!task_aware()) return PMPI_Bcast(buf, count, type, root, comm);
  MPI_Request r;
  return finish("MPI_Bcast", PMPI_Ibcast(buf, count, type, root, comm, &r), &r, MPI_STATUS_IGNORE);
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  if (!task_aware()) return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
  MPI_Request r;
  return finish("MPI_Reduce", PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  if (!task_aware()) return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
  MPI_Request r;
  return finish("MPI_Allreduce", PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!task_aware()) return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  MPI_Request r;
  return finish("MPI_Gather",
                PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
  if (!task_aware()) return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  MPI_Request r;
  return finish("MPI_Allgather",
                PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!task_aware()) return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  MPI_Request r;
  return finish("MPI_Scatter",
                PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
  if (!task_aware()) return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  MPI_Request r;
  return finish("MPI_Alltoall", PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r),
                &r, MPI_STATUS_IGNORE);
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!task_aware())
    return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
  MPI_Request r;
  return finish("MPI_Gatherv",
                PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, &r),
                &r, MPI_STATUS_IGNORE);
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                 void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!task_aware())
    return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
  MPI_Request r;
  return finish("MPI_Scatterv",
                PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, &r),
                &r, MPI_STATUS_IGNORE);
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  if (!task_aware())
    return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  MPI_Request r;
  return finish("MPI_Allgatherv",
                PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm) {
  if (!task_aware())
    return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  MPI_Request r;
  return finish(
      "MPI_Alltoallv",
      PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, &r), &r,
      MPI_STATUS_IGNORE);
}

int MPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[],
                  const MPI_Datatype stypes[], void *rbuf, const int rcounts[], const int rdispls[],
                  const MPI_Datatype rtypes[], MPI_Comm comm) {
  if (!task_aware())
    return PMPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
  MPI_Request r;
  return finish(
      "MPI_Alltoallw",
      PMPI_Ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, &r), &r,
      MPI_STATUS_IGNORE);
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm) {
  if (!task_aware()) return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
  MPI_Request r;
  return finish("MPI_Reduce_scatter", PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, type, op, comm, &r),
                &r, MPI_STATUS_IGNORE);
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  if (!task_aware()) return PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm);
  MPI_Request r;
  return finish("MPI_Reduce_scatter_block",
                PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, type, op, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!task_aware()) return PMPI_Scan(sbuf, rbuf, count, type, op, comm);
  MPI_Request r;
  return finish("MPI_Scan", PMPI_Iscan(sbuf, rbuf, count, type, op, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm) {
  if (!task_aware()) return PMPI_Exscan(sbuf, rbuf, count, type, op, comm);
  MPI_Request r;
  return finish("MPI_Exscan", PMPI_Iexscan(sbuf, rbuf, count, type, op, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

}  // extern "C"
