// micro.cpp: the scheduler micro-benchmarks (../shared/TARGETS.md says how each is measured).
//
//   ./bench/micro wake [--trials N] [--idle-ms M]   wake latency: an idle runtime gets one job;
//                  time from just before it is posted to its start. The poster then blocks
//                  (futex) or stays busy (spins until the job has started). mrengine from an
//                  engine and from a foreign thread, oneTBB (task_arena::enqueue) and OpenMP (a
//                  parallel region), each in alternation with the floor: the raw futex wake-up
//                  of a plain thread, from the same poster after the same idle time.
//   ./bench/micro idle                              process CPU over 2 s with no work, after work
//   ./bench/micro trickle                           one ~30 us job every 1 ms and every 10 ms for
//                  2 s: process CPU / the jobs' own CPU, against one plain worker thread woken
//                  through a futex per job (the floor)
//   ./bench/micro switch [--rounds N]               context switch: two contexts on one engine
//                  passing futures back and forth, against a raw Boost.Context switch
//   ./bench/micro all                               all four
//   --csv FILE      summary rows (bench/harness.hpp's columns) appended to FILE
//   --reps N        processes per idle and trickle figure (default 5; the median is reported)
//   --mr-options T  options text (doc/options.md) for mrengine's runtimes
//   --samples FILE  every wake-latency sample (variant,poster,microseconds), for the plot
//   --mrengine-only wake: the two mrengine variants only
//   --check         each measurement once, briefly (make check): they must run and finish
#include <boost/context/fiber.hpp>

#include "micro.hpp"

namespace micro {

Config C;

namespace {

// ---- idle CPU ----
// Process CPU time spent while `idle` (which sleeps window_s) runs, in ms.
double cpu_ms_during(const std::function<void()> &idle) {
  double c0 = bench::process_cpu_s();
  idle();
  return (bench::process_cpu_s() - c0) * 1e3;
}

// Each idle and trickle measurement runs in a process of its own (this program, re-run with a
// hidden command), so that no runtime's threads linger in another's figures.
double isolated(const std::string &args) {
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) std::abort();
  self[len] = '\0';
  char window[32];
  std::snprintf(window, sizeof window, "%g", C.window_s);
  std::string cmd = std::string("'") + self + "' " + args + " --window " + window;
  if (!C.mr_options.empty()) cmd += " --mr-options '" + C.mr_options + "'";
  std::FILE *p = popen(cmd.c_str(), "r");
  double v = -1;
  if (p == nullptr || std::fscanf(p, "%lf", &v) != 1) v = -1;
  if (p != nullptr && pclose(p) != 0) v = -1;
  if (v < 0) {
    std::fprintf(stderr, "micro: '%s' failed\n", cmd.c_str());
    std::exit(1);
  }
  return v;
}

// Process CPU (ms) over the window with no work, after some work, for one variant.
double idle_one(const std::string &v) {
  auto idle = [] { sleep_ms(C.window_s * 1e3); };
  if (v == "mrc") {
    MR_Config c = mr_config(2);
    mr::runtime rt(&c);
    (void)warm_fib(25);
    // In a blocking region, so that engine 0 is idle too; measured inside it, so that the
    // backup thread's creation is not counted as idle time.
    double ms = 0;
    mr::blocking([&] { ms = cpu_ms_during(idle); });
    return ms;
  }
  if (v == "tbb") {
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 2);
    tbb::task_arena arena(2);
    arena.execute([] { tbb::parallel_for(0, 100000, [](int) {}); });
    return cpu_ms_during(idle);
  }
  if (v == "omp") {
    omp_set_num_threads(2);
#pragma omp parallel for
    for (int i = 0; i < 100000; i++) {}
    return cpu_ms_during(idle);
  }
  return cpu_ms_during(idle);
}

void idle_all() {
  std::printf("idle CPU: process CPU over %.1f s with no work, after some work (ms)\n", C.window_s);
  const char *keys[] = {"none", "mrc", "tbb", "omp"};
  const char *names[] = {"no runtime (the floor)", "mrengine, 2 engines", "oneTBB, 2 threads",
                         "OpenMP, 2 threads"};
  double v[4];
  for (int i = 0; i < 4; i++) {
    bench::Series s;
    for (int r = 0; r < C.reps; r++) s.add(isolated(std::string("idle-one ") + keys[i]) * 1e-3);
    s.done();
    v[i] = s.median() * 1e3;
    std::printf("  %-26s %8.3f  (%.3f .. %.3f)\n", names[i], v[i], s.min() * 1e3, s.max() * 1e3);
    bench::append_csv(C.csv, "idle-cpu", "2s", keys[i], 2, s);
  }
  std::printf("  ratio mrengine / oneTBB %.2f (medians of %d processes each)\n",
              v[2] > 0 ? v[1] / v[2] : 0, C.reps);
}

// ---- trickle load ----
// A job that burns `job_us` of its thread's CPU; returns the CPU it took (ns).
constexpr double kJobUs = 30;
std::int64_t job() {
  std::int64_t c0 = thread_cpu_ns(), c;
  do c = thread_cpu_ns();
  while (c - c0 < static_cast<std::int64_t>(kJobUs * 1e3));
  return c - c0;
}

struct Trickle {
  double period_ms;
  int jobs() const { return static_cast<int>(C.window_s * 1e3 / period_ms); }
};

// Runs post(i) at every tick of the period; returns process CPU / jobs' CPU.
double trickle_ratio(const Trickle &tr, const std::function<void(int)> &post,
                     const std::function<void()> &drain, std::atomic<std::int64_t> &jobs_cpu) {
  jobs_cpu.store(0);
  double c0 = bench::process_cpu_s();
  std::int64_t next = now_ns();
  for (int i = 0; i < tr.jobs(); i++) {
    next += static_cast<std::int64_t>(tr.period_ms * 1e6);
    sleep_until_ns(next);
    post(i);
  }
  drain();
  double cpu = bench::process_cpu_s() - c0;
  return cpu / (static_cast<double>(jobs_cpu.load()) * 1e-9);
}

// Process CPU / jobs' CPU for one variant at one period.
double trickle_one(const std::string &v, double period) {
  Trickle tr{period};
  std::atomic<std::int64_t> jobs_cpu{0};
  if (v == "floor") {  // one plain worker thread, a futex wake per job
    std::atomic<int> word{0};
    std::thread w([&] {
      for (int i = 0; i < tr.jobs(); i++) {
        futex_wait(&word, i);
        jobs_cpu.fetch_add(job());
      }
    });
    return trickle_ratio(
        tr,
        [&](int) {
          word.fetch_add(1);
          futex_wake(&word);
        },
        [&] { w.join(); }, jobs_cpu);
  }
  if (v == "mrc") {  // the poster is the primordial context in a blocking region (not an engine)
    MR_Config c = mr_config(2);
    mr::runtime rt(&c);
    (void)warm_fib(20);
    double r = 0;
    mr::blocking([&] {
      MR_SyncTerm st;
      bool pending = false;
      auto run_job = [](void *p) { static_cast<std::atomic<std::int64_t> *>(p)->fetch_add(job()); };
      r = trickle_ratio(
          tr,
          [&](int) {
            if (pending) MR_join_and_continue(&st);
            MR_sync_term_init(&st, 2);  // the job and the poster, which runs nothing
            MR_fork_new_child(&st, run_job, &jobs_cpu);
            pending = true;
          },
          [&] {
            if (pending) MR_join_and_continue(&st);
          },
          jobs_cpu);
    });
    return r;
  }
  if (v == "tbb") {
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 2);
    tbb::task_arena arena(2);
    std::atomic<int> finished{0};
    return trickle_ratio(
        tr,
        [&](int) {
          arena.enqueue([&] {
            jobs_cpu.fetch_add(job());
            finished.fetch_add(1);
          });
        },
        [&] {
          while (finished.load() < tr.jobs()) sleep_ms(0.1);
        },
        jobs_cpu);
  }
  omp_set_num_threads(2);  // a parallel region per job, one thread running it
  return trickle_ratio(
      tr,
      [&](int) {
#pragma omp parallel
#pragma omp single
        jobs_cpu.fetch_add(job());
      },
      [] {}, jobs_cpu);
}

void trickle_all() {
  std::printf(
      "trickle load: one %.0f us job every 1 ms and every 10 ms for %.1f s; "
      "process CPU / the jobs' own CPU\n",
      kJobUs, C.window_s);
  const char *keys[] = {"floor", "mrc", "tbb", "omp"};
  for (int period : {1, 10}) {
    double v[4];
    for (int i = 0; i < 4; i++) {
      bench::Series s;
      for (int r = 0; r < C.reps; r++)
        s.add(isolated(std::string("trickle-one ") + keys[i] + " --period " +
                       std::to_string(period)));
      s.done();
      v[i] = s.median();
      bench::append_csv(C.csv, "trickle-cpu-ratio", std::to_string(period) + "ms", keys[i], 2, s);
    }
    std::printf(
        "  every %2d ms (medians of %d processes): plain thread + futex (floor) %.2f, "
        "mrengine %.2f, oneTBB %.2f, OpenMP %.2f; mrengine / floor %.2f\n",
        period, C.reps, v[0], v[1], v[2], v[3], v[1] / v[0]);
  }
}

// ---- context switch ----
struct PingPong {
  std::vector<MR_Future> to_b, to_a;
};
void pong(void *p) {
  auto *pp = static_cast<PingPong *>(p);
  for (std::size_t i = 0; i < pp->to_b.size(); i++) {
    (void)MR_future_wait(&pp->to_b[i]);
    MR_future_signal(&pp->to_a[i], i);
  }
}

void switch_all() {
  long rounds = C.rounds;
  int reps = C.check ? 1 : 5;
  bench::Series mr_ns, raw_ns;
  for (int r = 0; r < reps; r++) {
    {
      MR_Config c = mr_config(1);
      mr::runtime rt(&c);
      PingPong pp;
      pp.to_b.resize(static_cast<std::size_t>(rounds));
      pp.to_a.resize(static_cast<std::size_t>(rounds));
      for (std::size_t i = 0; i < pp.to_a.size(); i++) {
        MR_future_init(&pp.to_b[i]);
        MR_future_init(&pp.to_a[i]);
      }
      MR_SpawnOptions so;
      MR_spawn_options_default(&so);
      if (MR_spawn(pong, &pp, &so) != 0) std::abort();
      double t0 = bench::now_s();
      for (std::size_t i = 0; i < pp.to_a.size(); i++) {
        MR_future_signal(&pp.to_b[i], i);
        if (MR_future_wait(&pp.to_a[i]) != i) std::abort();
      }
      // Each round: the primordial context suspends and the other resumes, and back.
      mr_ns.add((bench::now_s() - t0) / static_cast<double>(2 * rounds) * 1e9);
    }
    {
      namespace ctx = boost::context;
      long n = 0;
      ctx::fiber f{[&n](ctx::fiber &&main) {
        for (;;) {
          n++;
          main = std::move(main).resume();
        }
        return std::move(main);
      }};
      double t0 = bench::now_s();
      for (long i = 0; i < rounds; i++) f = std::move(f).resume();
      raw_ns.add((bench::now_s() - t0) / static_cast<double>(2 * rounds) * 1e9);
      if (n != rounds) std::abort();
      // Destroying f unwinds the fiber (boost::context::detail::forced_unwind).
    }
  }
  mr_ns.done();
  raw_ns.done();
  std::printf(
      "context switch, %ld round trips, %d runs: median (min .. max) ns per switch\n"
      "  mrengine (future wait + signal, 1 engine) %7.1f  (%.1f .. %.1f)\n"
      "  raw Boost.Context fiber resume           %7.1f  (%.1f .. %.1f)\n",
      rounds, reps, mr_ns.median(), mr_ns.min(), mr_ns.max(), raw_ns.median(), raw_ns.min(),
      raw_ns.max());
  bench::Series a, b;
  for (double x : mr_ns.v) a.add(x * 1e-9);
  for (double x : raw_ns.v) b.add(x * 1e-9);
  a.done();
  b.done();
  bench::append_csv(C.csv, "context-switch", "1-engine", "mrc", 1, a);
  bench::append_csv(C.csv, "context-switch", "1-engine", "boost-fiber", 1, b);
}

}  // namespace
}  // namespace micro

int main(int argc, char **argv) {
  using namespace micro;
  std::string what, variant;
  double period = 1;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) bench::usage_error(argv[0], a + " needs a value");
      return argv[++i];
    };
    if (a == "--trials")
      C.trials = bench::parse_int(argv[0], value(), 1, 100000, "--trials");
    else if (a == "--idle-ms")
      C.idle_ms = bench::parse_int(argv[0], value(), 0, 10000, "--idle-ms");
    else if (a == "--reps")
      C.reps = bench::parse_int(argv[0], value(), 1, 1000, "--reps");
    else if (a == "--rounds")
      C.rounds = bench::parse_int(argv[0], value(), 1, 100000000, "--rounds");
    else if (a == "--csv")
      C.csv = value();
    else if (a == "--mr-options")
      C.mr_options = value();
    else if (a == "--samples")
      C.samples = value();
    else if (a == "--check")
      C.check = true;
    else if (a == "--mrengine-only")
      C.mrengine_only = true;
    else if (a == "--window")  // the hidden commands' window, seconds
      C.window_s = std::atof(value().c_str());
    else if (a == "--period")
      period = std::atof(value().c_str());
    else if (what.empty() && (a == "idle-one" || a == "trickle-one") && i + 1 < argc)
      what = a, variant = argv[++i];
    else if (what.empty() &&
             (a == "wake" || a == "idle" || a == "trickle" || a == "switch" || a == "all"))
      what = a;
    else
      bench::usage_error(argv[0],
                         "usage: micro wake|idle|trickle|switch|all [--trials N] "
                         "[--idle-ms M] [--reps N] [--rounds N] [--csv F] [--samples F] "
                         "[--mr-options T] [--mrengine-only] [--check]");
  }
  if (C.check) {  // every measurement once, briefly
    C.trials = 3;
    C.idle_ms = 20;
    C.rounds = 1000;
    C.window_s = 0.1;
    C.reps = 1;
    if (what.empty()) what = "all";
  }
  if (what.empty()) what = "all";
  if (what == "idle-one" || what == "trickle-one") {
    std::printf("%.6f\n", what == "idle-one" ? idle_one(variant) : trickle_one(variant, period));
    return 0;
  }
  if (what == "wake" || what == "all") wake_all();
  if (what == "idle" || what == "all") idle_all();
  if (what == "trickle" || what == "all") trickle_all();
  if (what == "switch" || what == "all") switch_all();
  return 0;
}
