// waits.hpp: libmrmpi's waits (doc/mpi.md): what a suspended context waits for, the poll source
// that its engine tests, and the test that decides whether a call suspends.
#ifndef MR_MPI_WAITS_HPP
#define MR_MPI_WAITS_HPP

#include "mrmpi.h"

namespace mr::mpi {

// One context's wait, on its stack: the item of MR_poll_wait.
struct Wait {
  enum Kind { ONE, ANY, SOME, PROBE, MPROBE } kind = ONE;
  MPI_Request *reqs = nullptr;  // ONE: the request; ANY, SOME: n of them
  int n = 1;
  MPI_Status *status = MPI_STATUS_IGNORE;  // where the completion's status goes (SOME: n of them)
  int source = 0, tag = 0;                 // PROBE, MPROBE
  MPI_Comm comm = MPI_COMM_NULL;           // PROBE, MPROBE
  MPI_Message *message = nullptr;          // MPROBE: where the matched message goes
  int index = MPI_UNDEFINED;               // ANY: the request that completed; SOME: how many
  int *indices = nullptr;                  // SOME: which ones
  int rc = MPI_SUCCESS;                    // the MPI code of the completion
  const char *call = "MPI_Wait";           // the MPI call that waits: named if it cannot suspend
};

// The source every engine polls (poll.cpp): one MPI_Testsome over the engine's ONE waits (each
// tested alone if that call fails as a whole), and an MPI_Testany, MPI_Testsome, MPI_Iprobe or
// MPI_Improbe per other wait.
const MR_PollSource *source();

// Whether the calling code runs in a context, where a blocking call is its nonblocking form and,
// unless that completes at once, a suspension.
bool task_aware();

// Suspend the calling context until w is complete (its rc set); the blocking MPI call if the
// runtime refuses (not a context after all, or out of memory). Returns w's MPI code. Unless MPI
// was initialised with MPI_THREAD_MULTIPLE, stops the process instead, with a message naming
// w->call: only a call that would suspend needs that level.
int suspend_on(Wait *w);

// MPI_Wait of *req for `call` (the MPI function's name): in a context a test, then, unless the
// request is complete, a suspension; elsewhere PMPI_Wait.
int wait_one(const char *call, MPI_Request *req, MPI_Status *status);

}  // namespace mr::mpi

#endif
