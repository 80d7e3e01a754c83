// fib.cpp: fib(n) with one spark (task) per call and no cutoff: the scheduler's overhead.
//
//   ./bench/fib N [--granularity] [harness options]     (bench/harness.hpp)
//   ./bench/fib --check                                  fib(2..20) everywhere (make check)
//
// Implementations: a sequential fib that really makes every call (noipa); mrengine's C ABI (a
// sync term of two conjuncts, the first sparked); mrengine's C++ API (mr::parallel_invoke);
// oneTBB task_group; OpenMP task + taskwait. With --granularity the mrengine C version sparks
// only when MR_par_cond_local_wsdeque_length() says so, the test a compiler would emit.
//
// Besides the table it prints the cost per spark/task on 1 worker, (parallel - sequential) /
// tasks, the fib(32) target's ratio of mrengine's 2-engine time to oneTBB's, and the wake-up
// counters of the 2-engine mrengine runs.
#include "harness.hpp"

#include <tbb/task_group.h>

namespace {

bool g_granularity = false;

__attribute__((noipa)) long seq_fib(int n) { return n < 2 ? n : seq_fib(n - 1) + seq_fib(n - 2); }

// ---- mrengine, C ABI ----
struct Arg {
  int n;
  long r;
};
long mr_c_fib(int n);
void mr_c_branch(void *env) {
  Arg *a = static_cast<Arg *>(env);
  a->r = mr_c_fib(a->n);
}
long mr_c_fib(int n) {
  if (n < 2) return n;
  if (g_granularity && !MR_par_cond_local_wsdeque_length())
    return mr_c_fib(n - 1) + mr_c_fib(n - 2);
  MR_SyncTerm st;
  Arg a{n - 1, 0};
  MR_sync_term_init(&st, 2);
  MR_fork_new_child(&st, mr_c_branch, &a);
  long b = mr_c_fib(n - 2);
  MR_join_and_continue(&st);
  return a.r + b;
}

// ---- mrengine, C++ API ----
long mr_cxx_fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  mr::parallel_invoke([&] { a = mr_cxx_fib(n - 1); }, [&] { b = mr_cxx_fib(n - 2); });
  return a + b;
}

// ---- oneTBB ----
long tbb_fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  tbb::task_group g;
  g.run([&] { a = tbb_fib(n - 1); });
  b = tbb_fib(n - 2);
  g.wait();
  return a + b;
}

// ---- OpenMP ----
long omp_fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
#pragma omp task shared(a) firstprivate(n)
  a = omp_fib(n - 1);
  b = omp_fib(n - 2);
#pragma omp taskwait
  return a + b;
}

long run(int impl, int n) {
  switch (impl) {
    case bench::kMrC:
      return mr_c_fib(n);
    case bench::kMrCxx:
      return mr_cxx_fib(n);
    case bench::kTbb:
      return tbb_fib(n);
    case bench::kOmp:
      return omp_fib(n);
    default:
      return seq_fib(n);
  }
}

long known_fib(int n) {
  long a = 0, b = 1;
  for (int i = 0; i < n; i++) {
    long t = a + b;
    a = b;
    b = t;
  }
  return a;
}

}  // namespace

int main(int argc, char **argv) {
  bench::Options o = bench::parse(argc, argv);
  int n = 0;
  for (const std::string &a : o.rest) {
    if (a == "--granularity")
      g_granularity = true;
    else if (n == 0)
      n = bench::parse_int(argv[0], a, 2, 45, "N");
    else
      bench::usage_error(argv[0], "unexpected argument '" + a + "'");
  }
  if (o.check) {
    bool ok = true;
    for (int k = 2; k <= 20; k++) {
      bench::Report rep("fib", std::to_string(k), o);
      rep.run([k](int impl) { return run(impl, k) == known_fib(k); });
      ok = ok && rep.ok();
    }
    std::printf("fib: every implementation computed fib(2..20) on %d worker count(s): %s\n",
                static_cast<int>(o.workers.size()), ok ? "yes" : "NO");
    return ok ? 0 : 1;
  }
  if (n == 0)
    bench::usage_error(
        argv[0], "usage: fib N [--granularity] [--runs R] [--workers L] [--impls L] [--csv F]");
  long expect = known_fib(n);
  double tasks = static_cast<double>(known_fib(n + 1) - 1);  // one per call with n >= 2
  std::string param = std::to_string(n) + (g_granularity ? "-granularity" : "");
  bench::Report rep("fib", param, o);
  rep.run([n, expect](int impl) { return run(impl, n) == expect; });
  rep.print();
  std::printf("  %.0f tasks (one per call with n >= 2)\n", tasks);
  const bench::Series *seq = rep.find(bench::kSeq, 1);
  for (int i : {bench::kMrC, bench::kMrCxx, bench::kTbb, bench::kOmp}) {
    const bench::Series *one = rep.find(i, 1);
    if (seq != nullptr && one != nullptr)
      std::printf("  overhead per task, %-13s 1 worker: %.1f ns (sequential call: %.1f ns)\n",
                  bench::impl_name(i), (one->median() - seq->median()) / tasks * 1e9,
                  seq->median() / tasks * 1e9);
  }
  for (int w : o.workers) {
    const bench::Series *m = rep.find(bench::kMrC, w), *t = rep.find(bench::kTbb, w);
    if (m != nullptr && t != nullptr)
      std::printf("  oneTBB / mrengine C, %d worker(s): %.2fx (wall ns per task: %.1f vs %.1f)\n",
                  w, t->median() / m->median(), m->median() / tasks * 1e9,
                  t->median() / tasks * 1e9);
  }
  return rep.ok() ? 0 : 1;
}
