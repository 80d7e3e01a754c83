// micro_wake.cpp: the wake-latency micro-benchmark (micro.cpp's usage says what it measures):
// mrengine from an engine and from a foreign thread, oneTBB and OpenMP, each in alternation with
// the raw futex wake-up of a plain thread.
#include "micro.hpp"

namespace micro {
namespace {

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
      while (done.load(std::memory_order_acquire) == 0) {}
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
  std::printf("  %-44s %-8s  median %8.1f  p90 %8.1f  p99 %8.1f  (min %.1f, max %.1f) us\n",
              variant, busy ? "busy" : "blocked", s.median(), s.quantile(0.9), s.quantile(0.99),
              s.min(), s.max());
  std::fflush(stdout);
  bench::Series secs;
  for (double x : s.v) secs.add(x * 1e-6);
  bench::append_csv(C.csv, "wake", std::string(variant) + (busy ? "-busy" : "-blocked"), "-", 2,
                    secs);
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
  ~FutexFloor() {
    post(nullptr);
    waiter_.join();
  }
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
  arena.execute([] { tbb::parallel_for(0, 1000, [](int) {}); });
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
  {}
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

}  // namespace

void wake_all() {
  std::printf(
      "wake latency, %d trials, %.0f ms idle before each, each variant in alternation with "
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

}  // namespace micro
