// mrmpi.hpp: task-aware MPI for C++ (mrmpi.h, which it includes), in namespace mr. Link
// -lmrmpi -lmrengine and the MPI library.
#ifndef MRMPI_HPP
#define MRMPI_HPP

#include <memory>
#include <span>
#include <string>

#include "mrengine.hpp"
#include "mrmpi.h"

namespace mr {

// An MPI call failed (with an error handler that returns codes): code() is its MPI code.
class mpi_error : public error {
 public:
  explicit mpi_error(int code) : error(code, "MPI error " + std::to_string(code)) {}
};

// MR_mpi_wait: the calling context suspends until req completes; throws mr::mpi_error.
inline void mpi_wait(MPI_Request &req, MPI_Status *status = MPI_STATUS_IGNORE) {
  if (int rc = MR_mpi_wait(&req, status); rc != MPI_SUCCESS) throw mpi_error(rc);
}

// MR_mpi_waitall over reqs (statuses: MPI_STATUSES_IGNORE, or one per request).
inline void mpi_waitall(std::span<MPI_Request> reqs, MPI_Status *statuses = MPI_STATUSES_IGNORE) {
  if (int rc = MR_mpi_waitall(static_cast<int>(reqs.size()), reqs.data(), statuses);
      rc != MPI_SUCCESS)
    throw mpi_error(rc);
}

// MR_mpi_waitany: the index of the request that completed (MPI_UNDEFINED if all were null).
inline int mpi_waitany(std::span<MPI_Request> reqs, MPI_Status *status = MPI_STATUS_IGNORE) {
  int index = MPI_UNDEFINED;
  if (int rc = MR_mpi_waitany(static_cast<int>(reqs.size()), reqs.data(), &index, status);
      rc != MPI_SUCCESS)
    throw mpi_error(rc);
  return index;
}

// A future of req's completion: a context (mr::spawn) waits for it and gives its status, or
// mr::mpi_error. Any thread while the runtime runs.
inline std::shared_ptr<future<MPI_Status>> mpi_future(MPI_Request req) {
  return spawn([req]() mutable {
    MPI_Status st;
    mpi_wait(req, &st);
    return st;
  });
}

}  // namespace mr

#endif
