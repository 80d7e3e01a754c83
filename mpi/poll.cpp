// poll.cpp: the poll source that engines test for libmrmpi's waits (waits.hpp). Called only on
// an engine's own thread, never twice at once for one engine: the arrays are the thread's own.
#include "waits.hpp"

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace mr::mpi {

namespace {

void give_status(Wait *w, const MPI_Status &st) {
  if (w->status != MPI_STATUS_IGNORE) *w->status = st;
}

// The ONE waits among items, tested together; done[i] set for those complete. False if that
// MPI_Testsome failed as a whole (an error other than MPI_ERR_IN_STATUS: an invalid handle among
// them, under MPI_ERRORS_RETURN): the error is then one waiter's or a few's, not every one's,
// and the requests of the others are still active (for an interposed call, on its caller's
// stack, where MPI may still write), so the caller tests each alone instead.
bool test_ones(void *const *items, int n, unsigned char *done) {
  thread_local std::vector<MPI_Request> reqs;
  thread_local std::vector<int> at, indices;
  thread_local std::vector<MPI_Status> sts;
  reqs.clear();
  at.clear();
  for (int i = 0; i < n; i++) {
    auto *w = static_cast<Wait *>(items[i]);
    if (w->kind != Wait::ONE) continue;
    reqs.push_back(*w->reqs);
    at.push_back(i);
  }
  if (reqs.empty()) return true;
  const int m = static_cast<int>(reqs.size());
  indices.resize(reqs.size());
  sts.resize(reqs.size());
  int out = 0;
  int rc = PMPI_Testsome(m, reqs.data(), &out, indices.data(), sts.data());
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return false;
  for (int k = 0; k < out && out != MPI_UNDEFINED; k++) {
    const int j = indices[static_cast<std::size_t>(k)];
    const int i = at[static_cast<std::size_t>(j)];
    auto *w = static_cast<Wait *>(items[i]);
    *w->reqs = reqs[static_cast<std::size_t>(j)];  // MPI_REQUEST_NULL, or inactive if persistent
    give_status(w, sts[static_cast<std::size_t>(k)]);
    w->rc = rc == MPI_ERR_IN_STATUS ? sts[static_cast<std::size_t>(k)].MPI_ERROR : MPI_SUCCESS;
    done[i] = 1;
  }
  return true;
}

// A wait tested alone (every kind but ONE, and ONE when test_ones failed): true once complete or
// failed (w->rc set).
bool test_other(Wait *w) {
  MPI_Status st;
  int flag = 0;
  switch (w->kind) {
    case Wait::ONE: {  // alone: the call that failed over its own handle (not a copy), which
                       // checks the handle as it did there (MPI_Test may not: Open MPI reads it)
      int out = 0, index = 0;
      w->rc = PMPI_Testsome(1, w->reqs, &out, &index, &st);
      if (w->rc == MPI_ERR_IN_STATUS)
        w->rc = st.MPI_ERROR;  // completed with an error: out is 1
      else if (w->rc != MPI_SUCCESS || out == MPI_UNDEFINED)
        return true;  // failed, or no longer active: nothing to wait for
      flag = out;
      break;
    }
    case Wait::ANY:
      w->rc = PMPI_Testany(w->n, w->reqs, &w->index, &flag, &st);
      break;
    case Wait::SOME:  // complete once one is (index > 0), or none is active (MPI_UNDEFINED)
      w->rc = PMPI_Testsome(w->n, w->reqs, &w->index, w->indices, w->status);
      return (w->rc != MPI_SUCCESS && w->rc != MPI_ERR_IN_STATUS) || w->index != 0;
    case Wait::PROBE:
      w->rc = PMPI_Iprobe(w->source, w->tag, w->comm, &flag, &st);
      break;
    case Wait::MPROBE:  // a match takes the message out of the queue: it goes to *w->message
      w->rc = PMPI_Improbe(w->source, w->tag, w->comm, &flag, w->message, &st);
      break;
  }
  if (flag) give_status(w, st);  // also a request that completed with an error
  return flag != 0 || w->rc != MPI_SUCCESS;
}

int poll_mpi(void *, void *const *items, int n, unsigned char *done) {
  const bool together = test_ones(items, n, done);
  for (int i = 0; i < n; i++) {
    auto *w = static_cast<Wait *>(items[i]);
    if ((w->kind != Wait::ONE || !together) && test_other(w)) done[i] = 1;
  }
  return 0;
}

std::uint64_t period_from_env() {
  const char *s = std::getenv("MRMPI_POLL_US");
  if (!s || !*s) return 50000;
  char *end = nullptr;
  long us = std::strtol(s, &end, 10);
  if (*end != '\0' || us < 1 || us > 1000000) return 50000;
  return static_cast<std::uint64_t>(us) * 1000u;
}

}  // namespace

const MR_PollSource *source() {
  static const MR_PollSource src{poll_mpi, nullptr, period_from_env()};
  return &src;
}

}  // namespace mr::mpi
