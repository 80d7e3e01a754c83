// nqueens.cpp: count the solutions of the n-queens problem with the same search in five
// implementations: sequential, mrengine's C ABI (one parallel conjunction per board row),
// mrengine's C++ API (mr::parallel_invoke on halves of the candidate set), oneTBB's
// task_group and OpenMP tasks. Every parallel version splits only the first CUTOFF rows and
// searches below them sequentially, so all of them do the same work.
//
//   ./bench/nqueens            check mode (make check): n = 6..10, one run each, every
//                              implementation must find the known count
//   ./bench/nqueens N RUNS     benchmark mode (make bench): a table of medians, min and max,
//                              with mrengine's times as ratios of oneTBB's and OpenMP's
//
// The counts for n = 1..14 are the published ones (OEIS A000170).
#include <omp.h>
#include <tbb/global_control.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "mrengine.h"
#include "mrengine.hpp"

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
  for (Mask free = all & ~(cols | d1 | d2); free != 0; free &= free - 1) out[k++] = free & (~free + 1);
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

struct Impl {
  const char *name;
  std::function<long(int)> run;  // count for n with `threads` workers set up by the caller
};

double seconds_of(const std::function<void()> &f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Time `runs` runs of impl on n with `threads` workers; every run's count is checked.
std::vector<double> measure(const char *name, int n, int threads, int runs, bool *ok) {
  std::vector<double> t;
  for (int r = 0; r < runs; r++) {
    long got = -1;
    std::string which = name;
    if (which == "sequential") {
      t.push_back(seconds_of([&] { got = seq(n, 0, 0, 0, 0); }));
    } else if (which == "mrengine C" || which == "mrengine C++") {
      MR_Config c;
      MR_config_default(&c);
      c.engines = threads;
      c.flags |= MR_CONFIG_IGNORE_ENV;
      mr::runtime rt(&c);
      bool cxx = which == "mrengine C++";
      t.push_back(seconds_of([&] { got = cxx ? mr_cxx(n, 0, 0, 0, 0) : mr_c(n, 0, 0, 0, 0); }));
    } else if (which == "oneTBB") {
      tbb::global_control gc(tbb::global_control::max_allowed_parallelism,
                             static_cast<std::size_t>(threads));
      t.push_back(seconds_of([&] { got = tbb_q(n, 0, 0, 0, 0); }));
    } else {
      omp_set_num_threads(threads);
      t.push_back(seconds_of([&] {
#pragma omp parallel
#pragma omp single
        got = omp_q(n, 0, 0, 0, 0);
      }));
    }
    if (got != kKnown[n]) {
      std::fprintf(stderr, "nqueens: %s with %d worker(s) counted %ld solutions for n = %d, not %ld\n",
                   name, threads, got, n, kKnown[n]);
      *ok = false;
    }
  }
  std::sort(t.begin(), t.end());
  return t;
}

}  // namespace

int main(int argc, char **argv) {
  static const char *const kImpls[] = {"sequential", "mrengine C", "mrengine C++", "oneTBB",
                                       "OpenMP"};
  bool ok = true;
  if (argc < 2) {  // check mode
    for (int n = 6; n <= 10; n++)
      for (const char *impl : kImpls)
        for (int threads = 1; threads <= 2; threads++) (void)measure(impl, n, threads, 1, &ok);
    std::printf("nqueens: every implementation found the known counts for n = 6..10: %s\n",
                ok ? "yes" : "NO");
    return ok ? 0 : 1;
  }
  int n = std::atoi(argv[1]);
  int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  if (n < 1 || n > 14 || runs < 1) {
    std::fprintf(stderr, "usage: %s [N (1..14) [RUNS]]\n", argv[0]);
    return 2;
  }
  // Warm up (CPU frequency, caches, page faults) so that the first implementation measured is
  // not the one that pays for it.
  for (int w = 0; w < 3; w++) (void)seq(n, 0, 0, 0, 0);
  std::printf("nqueens(%d) = %ld, cutoff %d rows, %d runs: median (min .. max) seconds\n", n,
              kKnown[n], kCutoff, runs);
  for (int threads = 1; threads <= 2; threads++) {
    double med[5];
    for (int i = 0; i < 5; i++) {
      if (i == 0 && threads > 1) {
        med[0] = 0;
        continue;
      }
      std::vector<double> t = measure(kImpls[i], n, threads, runs, &ok);
      med[i] = t[t.size() / 2];
      std::printf("  %-13s %d worker(s)  %.4f  (%.4f .. %.4f)\n", kImpls[i], threads, med[i],
                  t.front(), t.back());
    }
    std::printf("  ratios, %d worker(s): mrengine C / oneTBB %.2f, / OpenMP %.2f; "
                "mrengine C++ / oneTBB %.2f, / OpenMP %.2f\n",
                threads, med[1] / med[3], med[1] / med[4], med[2] / med[3], med[2] / med[4]);
  }
  return ok ? 0 : 1;
}
