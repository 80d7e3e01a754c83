// waits.cpp: suspending a context on MPI requests, and the C API of mrmpi.h.
#include "waits.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace mr::mpi {

namespace {

// MPI_THREAD_MULTIPLE confirmed (true once seen; relaxed: a repeated check is harmless).
std::atomic<bool> g_multiple{false};

const char *level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

void require_multiple(const char *call) {
  if (g_multiple.load(std::memory_order_relaxed)) return;
  int provided = MPI_THREAD_SINGLE;
  (void)PMPI_Query_thread(&provided);
  if (provided == MPI_THREAD_MULTIPLE) {
    g_multiple.store(true, std::memory_order_relaxed);
    return;
  }
  std::fprintf(stderr,
               "mrmpi: %s in an mrengine context needs MPI_THREAD_MULTIPLE, but MPI provides %s: "
               "initialise MPI with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...)\n",
               call, level_name(provided));
  std::fflush(stderr);
  PMPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; if it did, still never a hang
}

// The blocking call a refused suspension falls back to.
int block_on(Wait *w) {
  switch (w->kind) {
    case Wait::ONE:
      return PMPI_Wait(w->reqs, w->status);
    case Wait::ANY:
      return PMPI_Waitany(w->n, w->reqs, &w->index, w->status);
    case Wait::SOME:
      return PMPI_Waitsome(w->n, w->reqs, &w->index, w->indices, w->status);
    case Wait::PROBE:
      return PMPI_Probe(w->source, w->tag, w->comm, w->status);
    case Wait::MPROBE:
      return PMPI_Mprobe(w->source, w->tag, w->comm, w->message, w->status);
  }
  return MPI_ERR_OTHER;
}

}  // namespace

bool task_aware() { return MR_engine_id() >= 0; }

int suspend_on(Wait *w) {
  require_multiple(w->call);
  if (MR_poll_wait(source(), w) != 0) return block_on(w);
  return w->rc;
}

int wait_one(const char *call, MPI_Request *req, MPI_Status *status) {
  if (!task_aware()) return PMPI_Wait(req, status);
  int flag = 0;
  int rc = PMPI_Test(req, &flag, status);
  if (rc != MPI_SUCCESS || flag) return rc;
  Wait w;
  w.call = call;
  w.reqs = req;
  w.status = status;
  return suspend_on(&w);
}

}  // namespace mr::mpi

using mr::mpi::task_aware;
using mr::mpi::Wait;

MR_EXTERN int MR_mpi_wait(MPI_Request *req, MPI_Status *status) {
  return mr::mpi::wait_one("MPI_Wait", req, status);
}

MR_EXTERN int MR_mpi_waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
  if (!task_aware()) return PMPI_Waitall(n, reqs, statuses);
  int flag = 0;
  int rc = PMPI_Testall(n, reqs, &flag, statuses);
  if (rc != MPI_SUCCESS || flag) return rc;
  // One wait at a time: the last to complete decides when this returns, whatever the order.
  int failed = MPI_SUCCESS;
  for (int i = 0; i < n; i++) {
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    int r = mr::mpi::wait_one("MPI_Waitall", &reqs[i], st);
    if (r != MPI_SUCCESS) failed = MPI_ERR_IN_STATUS;
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = r;
  }
  return failed;
}

MR_EXTERN int MR_mpi_waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
  if (!task_aware()) return PMPI_Waitany(n, reqs, index, status);
  int flag = 0;
  int rc = PMPI_Testany(n, reqs, index, &flag, status);
  if (rc != MPI_SUCCESS || flag) return rc;
  Wait w;
  w.kind = Wait::ANY;
  w.call = "MPI_Waitany";
  w.reqs = reqs;
  w.n = n;
  w.status = status;
  rc = mr::mpi::suspend_on(&w);
  *index = w.index;
  return rc;
}

namespace {

struct FutureJob {
  MPI_Request *req;
  MPI_Status *status;
  MR_Future *f;
};

// The job's context owns the job until it signals; if it is dropped before (MR_shutdown_now),
// future_dropped frees it instead, at once or after the wait had begun.
void future_body(void *p) {
  auto *j = static_cast<FutureJob *>(p);
  int rc = MR_mpi_wait(j->req, j->status);
  MR_Future *f = j->f;
  delete j;
  MR_future_signal(f, static_cast<uintptr_t>(rc));
}

// The context's on_drop: f gets MR_EDROPPED (the request may still be active), so that a waiter
// on f does not wait for ever.
void future_dropped(void *p) {
  auto *j = static_cast<FutureJob *>(p);
  MR_Future *f = j->f;
  delete j;
  MR_future_signal(f, static_cast<uintptr_t>(static_cast<intptr_t>(MR_EDROPPED)));
}

}  // namespace

MR_EXTERN int MR_mpi_future(MPI_Request *req, MPI_Status *status, MR_Future *f) {
  auto *j = new (std::nothrow) FutureJob{req, status, f};
  if (!j) return MR_ENOMEM;
  MR_SpawnOptions opts;
  MR_spawn_options_default(&opts);
  opts.on_drop = future_dropped;
  int rc = MR_spawn(future_body, j, &opts);
  if (rc == 0) return 0;
  delete j;
  if (rc != MR_ENOTINIT) return rc;
  MR_future_signal(f, static_cast<uintptr_t>(PMPI_Wait(req, status)));
  return 0;
}

MR_EXTERN uint64_t MR_mpi_poll_period(void) { return mr::mpi::source()->period_ns; }
