// nqueens.cpp: count the solutions of the n-queens problem with the same search in five
// implementations: sequential, mrengine's C ABI (one parallel conjunction per board row),
// mrengine's C++ API (mr::parallel_invoke on halves of the candidate set), oneTBB's
// task_group and OpenMP tasks. Every parallel version splits only the first CUTOFF rows and
// searches below them sequentially, so all of them do the same work.
//
//   ./bench/nqueens N [harness options]   a table of medians (bench/harness.hpp)
//   ./bench/nqueens --check               n = 6..10 everywhere (make check)
//
// Every run's count is checked against the published counts for n = 1..14 (OEIS A000170).
#include "harness.hpp"

#include <tbb/task_group.h>

#include <cstdint>

namespace {

constexpr long kKnown[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596};
constexpr int kCutoff = 3;  // rows split in parallel; below them the search is sequential

using Mask = std::uint32_t;

// Solutions below a partial board: cols, diagonals as bit masks, `row` of n rows placed.
long seq(int n, int row, Mask cols, Mask d1, Mask d2) {
  if (row == n) return 1;
  long count = 0;
  Mask all = (Mask{1} << n) - 1;
  for (Mask free = all & ~(cols | d1 | d2); free != 0; free &= free - 1) {
    Mask bit = free & (~free + 1);
    count += seq(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
  }
  return count;
}

// The candidate placements of the next row.
int candidates(int n, Mask cols, Mask d1, Mask d2, Mask out[32]) {
  Mask all = (Mask{1} << n) - 1;
  int k = 0;
  for (Mask free = all & ~(cols | d1 | d2); free != 0; free &= free - 1)
    out[k++] = free & (~free + 1);
  return k;
}

// ---- mrengine, C ABI: one conjunction per row, each candidate a branch ----
struct Node {
  int n, row;
  Mask cols, d1, d2;
  long result;
};
long mr_c(int n, int row, Mask cols, Mask d1, Mask d2);
void mr_c_branch(void *env) {
  Node *x = static_cast<Node *>(env);
  x->result = mr_c(x->n, x->row, x->cols, x->d1, x->d2);
}
long mr_c(int n, int row, Mask cols, Mask d1, Mask d2) {
  if (row >= kCutoff || row == n) return seq(n, row, cols, d1, d2);
  Mask c[32];
  int k = candidates(n, cols, d1, d2, c);
  if (k == 0) return 0;
  Node nodes[32];
  for (int j = 0; j < k; j++)
    nodes[j] = Node{n, row + 1, cols | c[j], (d1 | c[j]) << 1, (d2 | c[j]) >> 1, 0};
  MR_SyncTerm st;
  MR_sync_term_init(&st, static_cast<unsigned>(k));
  for (int j = 1; j < k; j++) MR_fork_new_child(&st, mr_c_branch, &nodes[j]);
  mr_c_branch(&nodes[0]);
  MR_join_and_continue(&st);
  long sum = 0;
  for (int j = 0; j < k; j++) sum += nodes[j].result;
  return sum;
}

// ---- mrengine, C++ API: parallel_invoke over halves of the candidates ----
long mr_cxx_range(int n, int row, Mask cols, Mask d1, Mask d2, const Mask *c, int k);
long mr_cxx(int n, int row, Mask cols, Mask d1, Mask d2) {
  if (row >= kCutoff || row == n) return seq(n, row, cols, d1, d2);
  Mask c[32];
  int k = candidates(n, cols, d1, d2, c);
  return mr_cxx_range(n, row, cols, d1, d2, c, k);
}
long mr_cxx_range(int n, int row, Mask cols, Mask d1, Mask d2, const Mask *c, int k) {
  if (k == 0) return 0;
  if (k == 1) return mr_cxx(n, row + 1, cols | c[0], (d1 | c[0]) << 1, (d2 | c[0]) >> 1);
  long a = 0, b = 0;
  int h = k / 2;
  mr::parallel_invoke([&] { a = mr_cxx_range(n, row, cols, d1, d2, c, h); },
                      [&] { b = mr_cxx_range(n, row, cols, d1, d2, c + h, k - h); });
  return a + b;
}

// ---- oneTBB: task_group per row ----
long tbb_q(int n, int row, Mask cols, Mask d1, Mask d2) {
  if (row >= kCutoff || row == n) return seq(n, row, cols, d1, d2);
  Mask c[32];
  int k = candidates(n, cols, d1, d2, c);
  long r[32] = {0};
  tbb::task_group g;
  for (int j = 1; j < k; j++)
    g.run([&, j] { r[j] = tbb_q(n, row + 1, cols | c[j], (d1 | c[j]) << 1, (d2 | c[j]) >> 1); });
  if (k > 0) r[0] = tbb_q(n, row + 1, cols | c[0], (d1 | c[0]) << 1, (d2 | c[0]) >> 1);
  g.wait();
  long sum = 0;
  for (int j = 0; j < k; j++) sum += r[j];
  return sum;
}

// ---- OpenMP tasks ----
long omp_q(int n, int row, Mask cols, Mask d1, Mask d2) {
  if (row >= kCutoff || row == n) return seq(n, row, cols, d1, d2);
  Mask c[32];
  int k = candidates(n, cols, d1, d2, c);
  long r[32] = {0};
  for (int j = 1; j < k; j++) {
#pragma omp task shared(r, c) firstprivate(j)
    r[j] = omp_q(n, row + 1, cols | c[j], (d1 | c[j]) << 1, (d2 | c[j]) >> 1);
  }
  if (k > 0) r[0] = omp_q(n, row + 1, cols | c[0], (d1 | c[0]) << 1, (d2 | c[0]) >> 1);
#pragma omp taskwait
  long sum = 0;
  for (int j = 0; j < k; j++) sum += r[j];
  return sum;
}

long run(int impl, int n) {
  switch (impl) {
    case bench::kMrC:
      return mr_c(n, 0, 0, 0, 0);
    case bench::kMrCxx:
      return mr_cxx(n, 0, 0, 0, 0);
    case bench::kTbb:
      return tbb_q(n, 0, 0, 0, 0);
    case bench::kOmp:
      return omp_q(n, 0, 0, 0, 0);
    default:
      return seq(n, 0, 0, 0, 0);
  }
}

}  // namespace

int main(int argc, char **argv) {
  bench::Options o = bench::parse(argc, argv);
  if (o.check) {
    bool ok = true;
    for (int n = 6; n <= 10; n++) {
      bench::Report rep("nqueens", std::to_string(n), o);
      rep.run([n](int impl) { return run(impl, n) == kKnown[n]; });
      ok = ok && rep.ok();
    }
    std::printf("nqueens: every implementation found the known counts for n = 6..10: %s\n",
                ok ? "yes" : "NO");
    return ok ? 0 : 1;
  }
  if (o.rest.size() != 1)
    bench::usage_error(argv[0], "usage: nqueens N [--runs R] [--workers L] [--impls L] [--csv F]");
  int n = bench::parse_int(argv[0], o.rest[0], 1, 14, "N");
  bench::Report rep("nqueens", std::to_string(n), o);
  rep.run([n](int impl) { return run(impl, n) == kKnown[n]; });
  rep.print();
  std::printf("  %ld solutions; the first %d rows are split, the rest searched sequentially\n",
              kKnown[n], kCutoff);
  return rep.ok() ? 0 : 1;
}
