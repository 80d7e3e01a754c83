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
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>

#include <atomic>
#include <boost/context/fiber.hpp>
#include <cmath>

#include "harness.hpp"

namespace {

// ---- small tools ----
long futex(std::atomic<int> *addr, int op, int val) {
  return syscall(SYS_futex, reinterpret_cast<int *>(addr), op | FUTEX_PRIVATE_FLAG, val, nullptr,
                 nullptr, 0);
}
// Wait while *w == seen.
void futex_wait(std::atomic<int> *w, int seen) {
  while (w->load(std::memory_order_acquire) == seen) (void)futex(w, FUTEX_WAIT, seen);
}
void futex_wake(std::atomic<int> *w) { (void)futex(w, FUTEX_WAKE, 1); }

std::int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}
std::int64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}
void sleep_ms(double ms) {
  timespec t{static_cast<time_t>(ms / 1000), static_cast<long>(std::fmod(ms, 1000.0) * 1e6)};
  while (nanosleep(&t, &t) != 0) {
  }
}
void sleep_until_ns(std::int64_t when) {
  timespec t{static_cast<time_t>(when / 1000000000), static_cast<long>(when % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) != 0) {
  }
}

struct Config {
  int trials = 200;
  double idle_ms = 100;
  long rounds = 200000;
  double window_s = 2.0;
  int reps = 5;  // processes per idle and trickle figure (the median is reported)
  std::string csv, samples;
  std::string mr_options;  // options text for mrengine's runtimes (--mr-options)
  bool check = false;
  bool mrengine_only = false;  // wake: the mrengine variants only (--mrengine-only)
};
Config C;

MR_Config mr_config(int engines) {
  MR_Config c;
  MR_config_default(&c);
  c.engines = engines;
  c.flags |= MR_CONFIG_IGNORE_ENV;
  if (!C.mr_options.empty()) c.options = C.mr_options.c_str();
  return c;
}

// Some parallel work, so that what follows starts from a runtime that has run.
long warm_fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  mr::parallel_invoke([&] { a = warm_fib(n - 1); }, [&] { b = warm_fib(n - 2); });
  return a + b;
}

// ---- wake latency ----
// One trial's shared record: the job stores its start time and then `started` = 1.
struct Trial {
  std::int64_t posted = 0, started = 0;
  std::atomic<int> done{0};
  void start() {
    started = now_ns();
    done.store(1, std::memory_order_release);
    futex_wake(&done);
  }
  // The poster after posting: block in the kernel, or keep its CPU busy.
  void wait(bool busy) {
    if (busy)
      while (done.load(std::memory_order_acquire) == 0) {
      }
    else
      futex_wait(&done, 0);
  }
  double latency_us() const { return static_cast<double>(started - posted) / 1e3; }
};

struct WakeResult {
  std::string variant;
  bool busy;
  bench::Series us;
};
std::vector<WakeResult> g_wake;

void record(const char *variant, bool busy, bench::Series s) {
  s.done();
  std::printf("  %-44s %-8s  median %8.1f  p90 %8.1f  p99 %8.1f  (min %.1f, max %.1f) us\n", variant,
              busy ? "busy" : "blocked", s.median(), s.quantile(0.9), s.quantile(0.99), s.min(),
              s.max());
  std::fflush(stdout);
  bench::Series secs;
  for (double x : s.v) secs.add(x * 1e-6);
  bench::append_csv(C.csv, "wake", std::string(variant) + (busy ? "-busy" : "-blocked"), "-", 2, secs);
  g_wake.push_back(WakeResult{variant, busy, s});
}

// The floor: a plain thread parked in FUTEX_WAIT; the poster bumps the word and wakes it. Each
// variant's trials alternate with trials of a floor of its own, from the same poster after the
// same idle time, so that both see the same machine (the other variants' threads asleep, the
// poster's CPU and caches in the same state); the engines and this thread are unpinned alike
// unless --mr-options pins the engines.
class FutexFloor {
 public:
  FutexFloor()
      : waiter_([this] {
          for (int seen = 0;; seen++) {
            futex_wait(&word_, seen);
            // acquire: pairs with the poster's release increment of word_, publishing the trial.
            Trial *t = trial_.load(std::memory_order_acquire);
            if (t == nullptr) return;
            t->start();
          }
        }) {}
  ~FutexFloor() { post(nullptr); waiter_.join(); }
  FutexFloor(const FutexFloor &) = delete;
  FutexFloor &operator=(const FutexFloor &) = delete;

  // One trial, run by the poster: idle, wake the thread, wait (blocked or busy) for it.
  double trial(bool busy) {
    Trial t;
    sleep_ms(C.idle_ms);
    t.posted = now_ns();
    post(&t);
    t.wait(busy);
    return t.latency_us();
  }

 private:
  void post(Trial *t) {
    // relaxed: published by the release increment that follows.
    trial_.store(t, std::memory_order_relaxed);
    // release: the trial (and its posted stamp) to the waiter's acquire load above.
    word_.fetch_add(1, std::memory_order_release);
    futex_wake(&word_);
  }
  std::atomic<int> word_{0};
  std::atomic<Trial *> trial_{nullptr};
  std::thread waiter_;
};

// A variant's samples and its floor's, taken in alternation.
struct Paired {
  bench::Series ours, floor;
};

void start_job(void *p) { static_cast<Trial *>(p)->start(); }

// The trials of one variant, run by the calling thread, each paired with a floor trial (which
// goes first alternates): `one` idles C.idle_ms, posts one job and waits for it to start
// (blocked or busy); returns the latency in us.
Paired paired_trials(bool busy, const std::function<double()> &one) {
  FutexFloor floor;
  Paired p;
  for (int i = 0; i < C.trials; i++) {
    if (i % 2 == 0) p.floor.add(floor.trial(busy));
    p.ours.add(one());
    if (i % 2 == 1) p.floor.add(floor.trial(busy));
  }
  return p;
}

// One mrengine trial, by the calling thread: idle, post one spark, wait for it to start
// (blocked or busy), join.
double mr_trial(bool busy) {
  Trial t;
  MR_SyncTerm st;
  MR_sync_term_init(&st, 2);  // the job and the poster, which runs nothing
  sleep_ms(C.idle_ms);
  t.posted = now_ns();
  MR_fork_new_child(&st, start_job, &t);
  t.wait(busy);
  MR_join_and_continue(&st);
  return t.latency_us();
}

// The poster is the primordial context on engine 0: it sparks the job and then blocks (or
// spins) without reaching the scheduler, so engine 1 must be woken to steal it.
Paired wake_mr_engine(bool busy) {
  MR_Config c = mr_config(2);
  mr::runtime rt(&c);
  (void)warm_fib(20);
  return paired_trials(busy, [busy] { return mr_trial(busy); });
}

// The poster is a thread that is not an engine (the injector); the primordial context waits in
// a blocking region meanwhile, so both engines are idle.
Paired wake_mr_foreign(bool busy) {
  MR_Config c = mr_config(2);
  mr::runtime rt(&c);
  (void)warm_fib(20);
  Paired p;
  mr::blocking([&] {
    std::thread poster([&] { p = paired_trials(busy, [busy] { return mr_trial(busy); }); });
    poster.join();
  });
  return p;
}

Paired wake_tbb(bool busy) {
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 2);
  tbb::task_arena arena(2);
  arena.execute([] {
    tbb::parallel_for(0, 1000, [](int) {});
  });
  return paired_trials(busy, [&arena, busy] {
    Trial t;
    sleep_ms(C.idle_ms);
    t.posted = now_ns();
    arena.enqueue([&t] { t.start(); });
    t.wait(busy);
    return t.latency_us();
  });
}

Paired wake_omp(bool busy) {
  omp_set_num_threads(2);
#pragma omp parallel
  {
  }
  return paired_trials(busy, [busy] {
    Trial t;
    sleep_ms(C.idle_ms);
    t.posted = now_ns();
#pragma omp parallel num_threads(2)
    {
      // (With one thread only, as under OMP_THREAD_LIMIT=1, it starts the job itself.)
      if (omp_get_thread_num() == 1 || omp_get_num_threads() == 1)
        t.start();
      else
        t.wait(busy);
    }
    return t.latency_us();
  });
}

void wake_all() {
  std::printf("wake latency, %d trials, %.0f ms idle before each, each variant in alternation with "
              "a raw futex wake-up of a plain thread (its floor); %s\n",
              C.trials, C.idle_ms, bench::machine_description().c_str());
  struct Variant {
    const char *name;
    Paired (*run)(bool);
  };
  const Variant all[] = {{"mrengine from an engine", wake_mr_engine},
                         {"mrengine from a thread", wake_mr_foreign},
                         {"oneTBB enqueue", wake_tbb},
                         {"OpenMP parallel region", wake_omp}};
  const int count = C.mrengine_only ? 2 : 4;
  std::vector<std::string> ratios;
  for (bool busy : {false, true}) {
    for (int i = 0; i < count; i++) {
      Paired p = all[i].run(busy);
      std::string floor_name = std::string("raw futex (floor of ") + all[i].name + ")";
      record(all[i].name, busy, p.ours);
      record(floor_name.c_str(), busy, p.floor);
      const bench::Series &o = g_wake[g_wake.size() - 2].us, &f = g_wake.back().us;
      char line[200];
      std::snprintf(line, sizeof line,
                    "  ratio to its floor, %-8s %-26s median %.2f  p90 %.2f  p99 %.2f\n",
                    busy ? "busy" : "blocked", all[i].name, o.median() / f.median(),
                    o.quantile(0.9) / f.quantile(0.9), o.quantile(0.99) / f.quantile(0.99));
      ratios.emplace_back(line);
    }
  }
  for (const std::string &r : ratios) std::fputs(r.c_str(), stdout);
  if (!C.samples.empty()) {
    std::FILE *f = std::fopen(C.samples.c_str(), "w");
    if (f == nullptr) return std::perror(C.samples.c_str());
    std::fprintf(f, "variant,poster,us\n");
    for (const WakeResult &r : g_wake)
      for (double x : r.us.v)
        std::fprintf(f, "%s,%s,%.3f\n", r.variant.c_str(), r.busy ? "busy" : "blocked", x);
    std::fclose(f);
  }
}

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
    for (int i = 0; i < 100000; i++) {
    }
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
  std::printf("trickle load: one %.0f us job every 1 ms and every 10 ms for %.1f s; "
              "process CPU / the jobs' own CPU\n",
              kJobUs, C.window_s);
  const char *keys[] = {"floor", "mrc", "tbb", "omp"};
  for (int period : {1, 10}) {
    double v[4];
    for (int i = 0; i < 4; i++) {
      bench::Series s;
      for (int r = 0; r < C.reps; r++)
        s.add(isolated(std::string("trickle-one ") + keys[i] + " --period " + std::to_string(period)));
      s.done();
      v[i] = s.median();
      bench::append_csv(C.csv, "trickle-cpu-ratio", std::to_string(period) + "ms", keys[i], 2, s);
    }
    std::printf("  every %2d ms (medians of %d processes): plain thread + futex (floor) %.2f, "
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
  std::printf("context switch, %ld round trips, %d runs: median (min .. max) ns per switch\n"
              "  mrengine (future wait + signal, 1 engine) %7.1f  (%.1f .. %.1f)\n"
              "  raw Boost.Context fiber resume           %7.1f  (%.1f .. %.1f)\n",
              rounds, reps, mr_ns.median(), mr_ns.min(), mr_ns.max(), raw_ns.median(),
              raw_ns.min(), raw_ns.max());
  bench::Series a, b;
  for (double x : mr_ns.v) a.add(x * 1e-9);
  for (double x : raw_ns.v) b.add(x * 1e-9);
  a.done();
  b.done();
  bench::append_csv(C.csv, "context-switch", "1-engine", "mrc", 1, a);
  bench::append_csv(C.csv, "context-switch", "1-engine", "boost-fiber", 1, b);
}

}  // namespace

int main(int argc, char **argv) {
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
    else if (what.empty() && (a == "wake" || a == "idle" || a == "trickle" || a == "switch" || a == "all"))
      what = a;
    else
      bench::usage_error(argv[0], "usage: micro wake|idle|trickle|switch|all [--trials N] "
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
