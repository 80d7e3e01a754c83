// fanout.cpp: flat fan-out, Smartpool's published kernel: B batches of T tasks, each task one
// atomic increment of a shared counter, and each batch waited for before the next begins. Pure
// scheduling cost: the tasks do nothing else, and the parallel implementations cannot beat the
// sequential one; the question is how far behind they stay, and whether more workers make it
// worse (they do, for every runtime measured here: doc/performance.md). The floor printed last
// is W plain threads doing only the increments: the shared counter alone costs W > 1 workers more
// than one.
//
//   ./bench/fanout [--scope] [BATCHES [TASKS]] [harness options]   (default 1000 x 1000;
//                                                                 bench/harness.hpp)
//   ./bench/fanout [--scope] --check                  10 x 100 everywhere (make check)
//
// Implementations: sequential increments; mrengine's C ABI, one conjunction of TASKS branches per
// batch (TASKS-1 sparks and the parent's own); mrengine's C++ API, mr::parallel_for over the
// batch (loop control); oneTBB, a task_group with TASKS run() and a wait(); OpenMP, TASKS tasks
// and a taskwait from one thread of a parallel region. The figure is ns per increment.
//
// With --scope each batch is a scope, Smartpool's own form of the kernel (its tasks are spawned
// one by one into a region whose size the region does not know): mrengine's C ABI, an MR_Scope
// with TASKS MR_scope_spawn and an MR_scope_end; its C++ API, mr::scope with TASKS s.spawn (a
// closure each); oneTBB, the same task_group; OpenMP, TASKS tasks in a taskgroup.
#include "harness.hpp"

#include <tbb/task_group.h>

#include <atomic>

namespace {

std::atomic<long> g_counter{0};

void increment() { g_counter.fetch_add(1, std::memory_order_relaxed); }

void mr_c_task(void *) { increment(); }

// oneTBB's form is the same in both variants: a task_group is its scope.
void tbb_batch(int tasks) {
  tbb::task_group g;
  for (int i = 0; i < tasks; i++) g.run([] { increment(); });
  g.wait();
}

// One batch as a scope (--scope).
void scope_batch(int impl, int tasks) {
  switch (impl) {
    case bench::kMrC: {
      MR_Scope s;
      MR_scope_begin(&s);
      for (int i = 0; i < tasks; i++) MR_scope_spawn(&s, mr_c_task, nullptr);
      MR_scope_end(&s);
      break;
    }
    case bench::kMrCxx:
      mr::scope([tasks](auto &s) {
        for (int i = 0; i < tasks; i++) s.spawn([] { increment(); });
      });
      break;
    case bench::kTbb:
      tbb_batch(tasks);
      break;
    case bench::kOmp:
      // In the one thread of the harness's parallel region (bench::with_workers).
#pragma omp taskgroup
    {
      for (int i = 0; i < tasks; i++) {
#pragma omp task
        increment();
      }
    } break;
    default:
      for (int i = 0; i < tasks; i++) increment();
  }
}

void batch(int impl, int tasks) {
  switch (impl) {
    case bench::kMrC: {
      MR_SyncTerm st;
      MR_sync_term_init(&st, static_cast<unsigned>(tasks));
      for (int i = 1; i < tasks; i++) MR_fork_new_child(&st, mr_c_task, nullptr);
      increment();
      MR_join_and_continue(&st);
      break;
    }
    case bench::kMrCxx:
      mr::parallel_for(0, tasks, [](int) { increment(); });
      break;
    case bench::kTbb:
      tbb_batch(tasks);
      break;
    case bench::kOmp:
      // In the one thread of the harness's parallel region (bench::with_workers).
      for (int i = 0; i < tasks; i++) {
#pragma omp task
        increment();
      }
#pragma omp taskwait
      break;
    default:
      for (int i = 0; i < tasks; i++) increment();
  }
}

bool run(int impl, int batches, int tasks, bool scopes) {
  g_counter.store(0);
  for (int b = 0; b < batches; b++) (scopes ? scope_batch : batch)(impl, tasks);
  return g_counter.load() == static_cast<long>(batches) * tasks;
}

}  // namespace

namespace {

// The floor of any schedule of this kernel on w workers: w plain threads that do nothing but the
// increments, n in all, shared out evenly. The median of `runs` runs, in seconds. With w > 1 the
// counter's cache line moves between cores at every increment; no runtime can go below this.
double counter_floor(int w, long n, int runs) {
  std::vector<double> times;
  for (int r = 0; r < runs; r++) {
    std::vector<std::thread> ts;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < w; i++)
      ts.emplace_back([n, w, i] {
        for (long k = i; k < n; k += w) increment();
      });
    for (std::thread &t : ts) t.join();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  bench::Options o = bench::parse(argc, argv);
  int batches = 0, tasks = 0;
  bool scopes = false;
  for (const std::string &a : o.rest) {
    if (a == "--scope")
      scopes = true;
    else if (batches == 0)
      batches = bench::parse_int(argv[0], a, 1, 1000000, "BATCHES");
    else if (tasks == 0)
      tasks = bench::parse_int(argv[0], a, 1, 1000000, "TASKS");
    else
      bench::usage_error(argv[0], "unexpected argument '" + a + "'");
  }
  const char *name = scopes ? "fanout-scope" : "fanout";
  if (o.check) {
    bench::Report rep(name, "10x100", o);
    rep.run([scopes](int impl) { return run(impl, 10, 100, scopes); });
    std::printf("%s: every implementation counted 10 x 100 increments: %s\n", name,
                rep.ok() ? "yes" : "NO");
    return rep.ok() ? 0 : 1;
  }
  if (batches == 0) batches = 1000;
  if (tasks == 0) tasks = 1000;
  bench::Report rep(name, std::to_string(batches) + "x" + std::to_string(tasks), o);
  rep.run([batches, tasks, scopes](int impl) { return run(impl, batches, tasks, scopes); });
  rep.print();
  double ops = static_cast<double>(batches) * tasks;
  for (int w : o.workers)
    for (int i = 0; i < bench::kImpls; i++)
      if (const bench::Series *s = rep.find(i, w))
        std::printf("  ns per increment, %-13s %d worker(s): %.1f (%.1f .. %.1f)\n",
                    bench::impl_name(i), w, s->median() / ops * 1e9, s->min() / ops * 1e9,
                    s->max() / ops * 1e9);
  for (int w : o.workers) {
    double f = counter_floor(w, batches * static_cast<long>(tasks), o.runs);
    std::printf("  floor: %d thread(s) doing only the increments: %.1f ns per increment\n", w,
                f / ops * 1e9);
  }
  return rep.ok() ? 0 : 1;
}
