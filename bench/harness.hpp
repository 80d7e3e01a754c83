// harness.hpp: what every comparison benchmark in bench/ shares.
//
// A kernel program times the same computation in five implementations (sequential C, mrengine's
// C ABI, mrengine's C++ API, oneTBB, OpenMP tasks) on 1..P workers, P = the PUs this process
// may run on. Each (implementation, workers) pair gets one untimed warm-up run and then RUNS
// timed runs, every one checked; the report is the median with min and max, and mrengine's
// medians as ratios of oneTBB's and OpenMP's measured in the same invocation.
//
// Common command line (after the kernel's own arguments):
//   --runs N        timed runs per pair (default 5)
//   --workers LIST  comma-separated worker counts (default 1..P)
//   --impls LIST    comma-separated implementation keys: seq,mrc,mrcxx,tbb,omp (default all)
//   --csv FILE      append one CSV row per pair to FILE (the header is written if FILE is new)
//   --check         one run per pair on the kernel's small input; exit 1 on a wrong answer
#ifndef MR_BENCH_HARNESS_HPP
#define MR_BENCH_HARNESS_HPP

#include <omp.h>
#include <sys/resource.h>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "mrengine.h"
#include "mrengine.hpp"

namespace bench {

enum Impl { kSeq, kMrC, kMrCxx, kTbb, kOmp, kImpls };
inline const char *impl_key(int i) {
  static const char *const k[] = {"seq", "mrc", "mrcxx", "tbb", "omp"};
  return k[i];
}
inline const char *impl_name(int i) {
  static const char *const k[] = {"sequential", "mrengine C", "mrengine C++", "oneTBB", "OpenMP"};
  return k[i];
}

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Process CPU time (user + system), seconds.
inline double process_cpu_s() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

inline int machine_pus() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

// "AMD EPYC, 2 PUs" from /proc/cpuinfo.
inline std::string machine_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  return model + ", " + std::to_string(machine_pus()) + " PUs";
}

// Sorted samples of one measurement.
struct Series {
  std::vector<double> v;
  void add(double x) { v.push_back(x); }
  void done() { std::sort(v.begin(), v.end()); }
  double median() const { return quantile(0.5); }
  double min() const { return v.empty() ? 0 : v.front(); }
  double max() const { return v.empty() ? 0 : v.back(); }
  // q in [0, 1]: the sample with floor(q * n) samples below it (the last one for q = 1), so
  // the median of an even count is the upper of the middle two and quantiles never decrease.
  double quantile(double q) const {
    if (v.empty()) return 0;
    auto k = static_cast<std::size_t>(q * static_cast<double>(v.size()));
    return v[std::min(k, v.size() - 1)];
  }
};

struct Options {
  int runs = 5;
  std::vector<int> workers;
  bool impl_on[kImpls] = {true, true, true, true, true};
  std::string csv;
  bool check = false;
  std::vector<std::string> rest;  // the kernel's own arguments
};

[[noreturn]] inline void usage_error(const char *prog, const std::string &what) {
  std::fprintf(stderr, "%s: %s\n", prog, what.c_str());
  std::exit(2);
}

inline std::vector<std::string> split_commas(const std::string &s) {
  std::vector<std::string> out;
  std::size_t a = 0;
  for (;;) {
    std::size_t b = s.find(',', a);
    out.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) return out;
    a = b + 1;
  }
}

inline int parse_int(const char *prog, const std::string &s, int lo, int hi, const char *what) {
  char *end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < lo || v > hi)
    usage_error(prog, std::string("bad ") + what + " '" + s + "' (" + std::to_string(lo) + ".." +
                          std::to_string(hi) + ")");
  return static_cast<int>(v);
}

inline Options parse(int argc, char **argv) {
  Options o;
  const char *prog = argv[0];
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(prog, a + " needs a value");
      return argv[++i];
    };
    if (a == "--runs") {
      o.runs = parse_int(prog, value(), 1, 1000, "--runs");
    } else if (a == "--workers") {
      for (const std::string &w : split_commas(value()))
        o.workers.push_back(parse_int(prog, w, 1, 4096, "worker count"));
    } else if (a == "--impls") {
      std::fill(o.impl_on, o.impl_on + kImpls, false);
      for (const std::string &k : split_commas(value())) {
        int i = 0;
        while (i < kImpls && k != impl_key(i)) i++;
        if (i == kImpls)
          usage_error(prog, "unknown implementation '" + k + "' (seq,mrc,mrcxx,tbb,omp)");
        o.impl_on[i] = true;
      }
    } else if (a == "--csv") {
      o.csv = value();
    } else if (a == "--check") {
      o.check = true;
    } else {
      o.rest.push_back(a);
    }
  }
  if (o.workers.empty())
    for (int w = 1; w <= machine_pus(); w++) o.workers.push_back(w);
  if (o.check) o.runs = 1;
  return o;
}

// Wake-up counters of a runtime's engines, summed (MR_stats_get).
struct WakeStats {
  double sparks = 0, wakeups = 0, spurious = 0;
};
inline WakeStats &last_wake_stats() {
  static WakeStats s;
  return s;
}
inline WakeStats wake_stats_now() {
  WakeStats w;
  for (const MR_EngineStats &e : mr::stats()) {
    w.sparks += static_cast<double>(e.sparks_pushed + e.sparks_injected);
    for (uint64_t k : e.wakeups) w.wakeups += static_cast<double>(k);
    w.spurious += static_cast<double>(e.spurious_wakeups);
  }
  return w;
}

// Run body() with `workers` workers of implementation `impl` ready. mrengine: a runtime of that
// many engines (the calling thread is engine 0, body runs in the primordial context; options in
// MRENGINE_OPTIONS apply); oneTBB:
// an arena of that many threads; OpenMP: inside a parallel region of that many threads, in one
// thread (`single`); sequential: body as it is.
inline void with_workers(int impl, int workers, const std::function<void()> &body) {
  switch (impl) {
    case kMrC:
    case kMrCxx: {
      MR_Config c;
      MR_config_default(&c);
      c.engines = workers;                   // MRENGINE_OPTIONS applies (make check empties it)
      c.stack_size = std::size_t{64} << 20;  // UTS T3 recurses 1572 levels deep
      c.small_stack_size = std::size_t{64} << 20;  // (reserved, not committed)
      mr::runtime rt(&c);
      body();
      last_wake_stats() = wake_stats_now();
      break;
    }
    case kTbb: {
      tbb::global_control gc(tbb::global_control::max_allowed_parallelism,
                             static_cast<std::size_t>(workers));
      tbb::global_control st(tbb::global_control::thread_stack_size, std::size_t{64} << 20);
      tbb::task_arena arena(workers);
      arena.execute([&] { body(); });
      break;
    }
    case kOmp:
      omp_set_num_threads(workers);
#pragma omp parallel
#pragma omp single
      body();
      break;
    default:
      body();
  }
}

// f(k) for k in [lo, hi) by OpenMP tasks that halve the range, as tbb::parallel_for does. (A
// taskloop of many chunks is no good here: libgomp runs a taskloop's tasks undeferred, in the
// encountering thread, once the team has 64 tasks per thread queued.)
template <class F>
void omp_halves(long lo, long hi, const F &f) {
  while (hi - lo > 1) {
    long mid = lo + (hi - lo) / 2;
#pragma omp task firstprivate(lo, mid) shared(f)
    omp_halves(lo, mid, f);
    lo = mid;
  }
  if (hi > lo) f(lo);
#pragma omp taskwait
}

// body(lo, hi) over [0, n) in chunks of `grain` as a parallel loop of implementation impl, from
// inside with_workers: mrengine C, loop control (MR_lc_*, one iteration per chunk, the default
// number of slots); mrengine C++, mr::parallel_for; oneTBB, tbb::parallel_for with that grain
// and the simple partitioner; OpenMP, tasks halving the range of chunks (omp_halves);
// sequential, in order.
template <class Body>
void parallel_loop(int impl, long n, long grain, const Body &body) {
  long chunks = (n + grain - 1) / grain;
  switch (impl) {
    case kMrC: {
      struct Chunk {
        const Body *body;
        long lo, hi;
        static void run(void *p) {
          auto *c = static_cast<Chunk *>(p);
          (*c->body)(c->lo, c->hi);
        }
      };
      std::vector<Chunk> cs(static_cast<std::size_t>(chunks));
      MR_LoopControl *lc = nullptr;
      if (MR_lc_create(0, &lc) != 0) std::abort();
      for (long k = 0; k < chunks; k++) {
        cs[static_cast<std::size_t>(k)] = Chunk{&body, k * grain, std::min(n, (k + 1) * grain)};
        if (MR_lc_spawn(lc, &Chunk::run, &cs[static_cast<std::size_t>(k)]) != 0) std::abort();
      }
      if (MR_lc_finish(lc) != 0) std::abort();
      break;
    }
    case kMrCxx:
      mr::parallel_for(0L, chunks, [&](long k) { body(k * grain, std::min(n, (k + 1) * grain)); });
      break;
    case kTbb:
      tbb::parallel_for(
          tbb::blocked_range<long>(0, n, static_cast<std::size_t>(grain)),
          [&](const tbb::blocked_range<long> &r) { body(r.begin(), r.end()); },
          tbb::simple_partitioner());
      break;
    case kOmp:
      omp_halves(0, chunks, [&](long k) { body(k * grain, std::min(n, (k + 1) * grain)); });
      break;
    default:
      for (long k = 0; k < chunks; k++) body(k * grain, std::min(n, (k + 1) * grain));
  }
}

// Append one row (the columns below) to the CSV file `path`, writing the header first if the
// file is new; nothing if path is empty.
inline void append_csv(const std::string &path, const std::string &kernel, const std::string &param,
                       const char *impl, int workers, const Series &s) {
  if (path.empty()) return;
  bool fresh = access(path.c_str(), F_OK) != 0;
  std::FILE *f = std::fopen(path.c_str(), "a");
  if (f == nullptr) return std::perror(path.c_str());
  if (fresh) std::fprintf(f, "kernel,param,impl,workers,runs,median_s,min_s,max_s\n");
  std::fprintf(f, "%s,%s,%s,%d,%zu,%.9f,%.9f,%.9f\n", kernel.c_str(), param.c_str(), impl, workers,
               s.v.size(), s.median(), s.min(), s.max());
  std::fclose(f);
}

// One kernel's results: a row per (implementation, workers).
class Report {
 public:
  Report(std::string kernel, std::string param, const Options &o)
      : kernel_(std::move(kernel)), param_(std::move(param)), opt_(o) {}

  // Time fn (which returns true when its answer is right) opt.runs times after one warm-up run
  // for every selected implementation and worker count. `what` names the implementation when
  // fn reports a wrong answer.
  void run(const std::function<bool(int impl)> &fn) {
    for (int w : opt_.workers)
      for (int i = 0; i < kImpls; i++) {
        if (!opt_.impl_on[i] || (i == kSeq && w != opt_.workers.front())) continue;
        Series s;
        with_workers(i, i == kSeq ? 1 : w, [&] {
          if (!opt_.check && !fn(i)) fail(i, w);
          for (int r = 0; r < opt_.runs; r++) {
            double t0 = now_s();
            bool ok = fn(i);
            s.add(now_s() - t0);
            if (!ok) fail(i, w);
          }
        });
        s.done();
        rows_[{i, i == kSeq ? 1 : w}] = s;
        if (i == kMrC || i == kMrCxx) wake_[{i, w}] = last_wake_stats();
      }
  }

  const Series *find(int impl, int workers) const {
    auto it = rows_.find({impl, workers});
    return it == rows_.end() ? nullptr : &it->second;
  }

  bool ok() const { return ok_; }

  // The table, then the CSV rows. `unit` scales seconds (1 = s, 1e3 = ms).
  void print(double unit = 1e3, const char *unit_name = "ms") const {
    std::printf("%s %s on %s; %d run(s): median (min .. max) %s\n", kernel_.c_str(), param_.c_str(),
                machine_description().c_str(), opt_.runs, unit_name);
    for (const auto &[key, s] : rows_)
      std::printf("  %-13s %2d worker(s)  %10.3f  (%.3f .. %.3f)\n", impl_name(key.first),
                  key.second, s.median() * unit, s.min() * unit, s.max() * unit);
    for (int w : opt_.workers)
      for (int i : {kMrC, kMrCxx}) {
        const Series *m = find(i, w), *t = find(kTbb, w), *p = find(kOmp, w);
        if (m == nullptr || (t == nullptr && p == nullptr)) continue;
        std::printf("  ratio %-13s %2d worker(s):", impl_name(i), w);
        if (t != nullptr) std::printf("  / oneTBB %.3f", m->median() / t->median());
        if (p != nullptr) std::printf("  / OpenMP %.3f", m->median() / p->median());
        std::printf("\n");
      }
    for (int i : {kMrC, kMrCxx, kTbb, kOmp}) {
      const Series *one = find(i, 1);
      if (one == nullptr) continue;
      for (int w : opt_.workers)
        if (w > 1 && find(i, w) != nullptr)
          std::printf("  speedup %-13s 1 -> %d workers: %.2fx\n", impl_name(i), w,
                      one->median() / find(i, w)->median());
    }
    for (const auto &[key, ws] : wake_)
      if (key.second > 1)
        std::printf(
            "  wake-ups %-12s %2d engines: %.0f for %.0f sparks (%.4f per spark), "
            "%.0f spurious (%.1f%% of wake-ups)\n",
            impl_name(key.first), key.second, ws.wakeups, ws.sparks,
            ws.sparks > 0 ? ws.wakeups / ws.sparks : 0, ws.spurious,
            ws.wakeups > 0 ? 100 * ws.spurious / ws.wakeups : 0);
    write_csv();
  }

 private:
  void fail(int impl, int w) {
    std::fprintf(stderr, "%s %s: %s with %d worker(s) computed a wrong answer\n", kernel_.c_str(),
                 param_.c_str(), impl_name(impl), w);
    ok_ = false;
  }

  void write_csv() const {
    for (const auto &[key, s] : rows_)
      append_csv(opt_.csv, kernel_, param_, impl_key(key.first), key.second, s);
  }

  std::string kernel_, param_;
  const Options &opt_;
  std::map<std::pair<int, int>, Series> rows_;
  std::map<std::pair<int, int>, WakeStats> wake_;  // mrengine rows: the runtime's counters
  bool ok_ = true;
};

}  // namespace bench

#endif
