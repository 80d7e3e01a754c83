/* mrmpi.h: task-aware MPI, the C API of libmrmpi (link -lmrmpi -lmrengine and the MPI library).
 *
 * A context that waits for an MPI request through these calls suspends, and its engine runs
 * other work meanwhile: the engine tests the requests its contexts wait for (one MPI_Testsome)
 * at each pass of its idle loop and, while any is outstanding, sleeps no longer than the poll
 * period (MRMPI_POLL_US, default 50 us; doc/mpi.md). On a thread that is not an engine (or
 * with the runtime not running) each call is the blocking MPI call it stands for.
 *
 * libmrmpi also defines the blocking MPI calls themselves (MPI_Recv, MPI_Send, MPI_Ssend,
 * MPI_Sendrecv, MPI_Sendrecv_replace, MPI_Mrecv, MPI_Wait, MPI_Waitall, MPI_Waitany,
 * MPI_Waitsome, MPI_Probe, MPI_Mprobe, MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Allreduce,
 * MPI_Gather, MPI_Gatherv, MPI_Allgather, MPI_Allgatherv, MPI_Scatter, MPI_Scatterv,
 * MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw, MPI_Reduce_scatter, MPI_Reduce_scatter_block,
 * MPI_Scan, MPI_Exscan; doc/mpi.md) through the MPI profiling interface: linked before the
 * MPI library, or loaded with LD_PRELOAD, it makes an unmodified program's blocking calls in a
 * context (an OpenMP task or team member of libmrgomp included) the nonblocking call and a
 * suspension, and leaves them as they were everywhere else.
 *
 * Suspending needs MPI_THREAD_MULTIPLE (engines are threads, and any of them may test): a call
 * that would suspend under a lower level stops the process with a message that starts with
 * "mrmpi: " (MPI_Abort), never a hang; one whose requests complete at its first test returns as
 * the MPI call would. The calls return what the MPI calls return (MPI_SUCCESS or an MPI error
 * code, as the communicator's error handler lets them); MPI_Sendrecv and MPI_Sendrecv_replace
 * whose send cannot start return its error at once, their receive cancelled. */
#ifndef MRMPI_H
#define MRMPI_H

#include <mpi.h>

#include "mrengine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Task-aware MPI waits ------------------------------------------------------------------- */

/* Wait for *req as MPI_Wait does (*req becomes MPI_REQUEST_NULL unless it is persistent; status
 * may be MPI_STATUS_IGNORE): a context suspends until its engine sees the request complete; a
 * request already complete returns at once. Any thread. */
MR_EXTERN int MR_mpi_wait(MPI_Request *req, MPI_Status *status);

/* Wait for the n requests reqs[0..n-1] as MPI_Waitall does (statuses may be
 * MPI_STATUSES_IGNORE): a context suspends until all are complete. Any thread. */
MR_EXTERN int MR_mpi_waitall(int n, MPI_Request reqs[], MPI_Status statuses[]);

/* Wait for any of the n requests as MPI_Waitany does: *index is the one completed (or
 * MPI_UNDEFINED when all are MPI_REQUEST_NULL). Any thread. */
MR_EXTERN int MR_mpi_waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status);

/* Signal *f when *req completes, with the MPI return code of its wait as the value
 * (MR_future_signal): a context started for it (MR_spawn) waits as MR_mpi_wait and then signals,
 * so a dependent conjunction waits on f as on any future. *req and *status (or
 * MPI_STATUS_IGNORE) must stay alive until f is signalled; *req is MPI_REQUEST_NULL then. f must
 * be unsignalled. If MR_shutdown_now drops that context first, f is signalled with MR_EDROPPED
 * (negative: read the value as an int) and *req may still be active (cancel it). On a thread
 * that is not an engine with the runtime not running, the wait is done at once, blocking.
 * Returns 0; MR_ENOMEM; MR_ESHUTDOWN (no context could be started). */
MR_EXTERN int MR_mpi_future(MPI_Request *req, MPI_Status *status, MR_Future *f);

/* The poll period in nanoseconds, from MRMPI_POLL_US (microseconds, 1 .. 1000000; default 50)
 * at the first wait. Any thread. */
MR_EXTERN uint64_t MR_mpi_poll_period(void);

#ifdef __cplusplus
}
#endif

#endif /* MRMPI_H */
