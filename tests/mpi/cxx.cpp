// cxx.cpp: mrmpi.hpp on 2 ranks, one engine each: mr::mpi_wait, mr::mpi_waitall,
// mr::mpi_waitany and mr::mpi_future in contexts while rank 1 sends late and in reverse order.
#include <cstdio>
#include <vector>

#include "mrmpi.hpp"

namespace {

int rank_;

void check(bool ok, const char *what) {
  if (ok) return;
  std::fprintf(stderr, "cxx rank %d: %s\n", rank_, what);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

void receive() {
  int a = 0, b[2] = {0, 0}, c = 0, d = 0;
  MPI_Request r;
  MPI_Status st;
  MPI_Irecv(&a, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
  mr::mpi_wait(r, &st);
  check(a == 100 && st.MPI_TAG == 0 && r == MPI_REQUEST_NULL, "mpi_wait");
  std::vector<MPI_Request> rs(2);
  MPI_Irecv(&b[0], 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &rs[0]);
  MPI_Irecv(&b[1], 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &rs[1]);
  mr::mpi_waitall(rs);
  check(b[0] == 101 && b[1] == 102, "mpi_waitall");
  std::vector<MPI_Request> any{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Irecv(&c, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &any[1]);
  check(mr::mpi_waitany(any) == 1 && c == 103, "mpi_waitany");
  MPI_Irecv(&d, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &r);
  auto f = mr::mpi_future(r);
  check(f->wait().MPI_TAG == 4 && d == 104, "mpi_future");
}

void send() {
  mr::sleep_for(std::chrono::milliseconds(20));
  for (int tag = 4; tag >= 0; tag--) {
    int v = 100 + tag;
    MPI_Send(&v, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
  }
}

}  // namespace

int main(int argc, char **argv) {
  int provided, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check(provided == MPI_THREAD_MULTIPLE && size == 2, "needs MPI_THREAD_MULTIPLE and 2 ranks");
  {
    MR_Config c;
    MR_config_default(&c);
    c.engines = 1;
    mr::runtime rt(&c);
    auto done = mr::spawn([] { rank_ == 0 ? receive() : send(); });
    done->wait();
  }
  MPI_Finalize();
  return 0;
}
