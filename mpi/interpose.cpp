// interpose.cpp: the blocking MPI calls, through the MPI profiling interface (mrmpi.h). In a
// context each is its nonblocking form and a suspension (waits.hpp); elsewhere the call itself.
#include "waits.hpp"

using mr::mpi::task_aware;
using mr::mpi::Wait;

namespace {

// The wait for a request just started by `start` (its MPI code), in a context.
int finish(int start, MPI_Request *req, MPI_Status *status) {
  return start != MPI_SUCCESS ? start : MR_mpi_wait(req, status);
}

}  // namespace

extern "C" {

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
  if (!task_aware("MPI_Recv")) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  MPI_Request r;
  return finish(PMPI_Irecv(buf, count, type, source, tag, comm, &r), &r, status);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!task_aware("MPI_Send")) return PMPI_Send(buf, count, type, dest, tag, comm);
  MPI_Request r;
  return finish(PMPI_Isend(buf, count, type, dest, tag, comm, &r), &r, MPI_STATUS_IGNORE);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!task_aware("MPI_Ssend")) return PMPI_Ssend(buf, count, type, dest, tag, comm);
  MPI_Request r;
  return finish(PMPI_Issend(buf, count, type, dest, tag, comm, &r), &r, MPI_STATUS_IGNORE);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                 MPI_Status *status) {
  if (!task_aware("MPI_Sendrecv"))
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                         status);
  MPI_Request r[2];
  int rc = PMPI_Irecv(rbuf, rcount, rtype, source, rtag, comm, &r[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Isend(sbuf, scount, stype, dest, stag, comm, &r[1]);
  if (rc != MPI_SUCCESS) {  // the receive is still posted: wait for it as the call would have
    (void)MR_mpi_wait(&r[0], status);
    return rc;
  }
  rc = MR_mpi_wait(&r[1], MPI_STATUS_IGNORE);
  int rc2 = MR_mpi_wait(&r[0], status);
  return rc != MPI_SUCCESS ? rc : rc2;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) { return MR_mpi_wait(req, status); }

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status *statuses) {
  return MR_mpi_waitall(n, reqs, statuses);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
  return MR_mpi_waitany(n, reqs, index, status);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
  if (!task_aware("MPI_Probe")) return PMPI_Probe(source, tag, comm, status);
  int flag = 0;
  int rc = PMPI_Iprobe(source, tag, comm, &flag, status);
  if (rc != MPI_SUCCESS || flag) return rc;
  Wait w;
  w.kind = Wait::PROBE;
  w.source = source;
  w.tag = tag;
  w.comm = comm;
  w.status = status;
  return mr::mpi::suspend_on(&w);
}

// The collectives: their nonblocking forms. Every rank must still start a communicator's
// collectives in one order (MPI's rule); a task-parallel program keeps it by dependences.
int MPI_Barrier(MPI_Comm comm) {
  if (!task_aware("MPI_Barrier")) return PMPI_Barrier(comm);
  MPI_Request r;
  return finish(PMPI_Ibarrier(comm, &r), &r, MPI_STATUS_IGNORE);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (!task_aware("MPI_Bcast")) return PMPI_Bcast(buf, count, type, root, comm);
  MPI_Request r;
  return finish(PMPI_Ibcast(buf, count, type, root, comm, &r), &r, MPI_STATUS_IGNORE);
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  if (!task_aware("MPI_Reduce")) return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
  MPI_Request r;
  return finish(PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, &r), &r, MPI_STATUS_IGNORE);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  if (!task_aware("MPI_Allreduce")) return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
  MPI_Request r;
  return finish(PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, &r), &r, MPI_STATUS_IGNORE);
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!task_aware("MPI_Gather"))
    return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  MPI_Request r;
  return finish(PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
  if (!task_aware("MPI_Allgather"))
    return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  MPI_Request r;
  return finish(PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (!task_aware("MPI_Scatter"))
    return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  MPI_Request r;
  return finish(PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
  if (!task_aware("MPI_Alltoall"))
    return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  MPI_Request r;
  return finish(PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r), &r,
                MPI_STATUS_IGNORE);
}

}  // extern "C"
