// micro.hpp: what the scheduler micro-benchmarks (micro.cpp, micro_wake.cpp) share: futexes,
// clocks, sleeps, the command line's settings and mrengine's configuration.
#ifndef MR_BENCH_MICRO_HPP
#define MR_BENCH_MICRO_HPP

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>

#include <atomic>
#include <cmath>
#include <string>

#include "harness.hpp"

namespace micro {

inline long futex(std::atomic<int> *addr, int op, int val) {
  return syscall(SYS_futex, reinterpret_cast<int *>(addr), op | FUTEX_PRIVATE_FLAG, val, nullptr,
                 nullptr, 0);
}
// Wait while *w == seen.
inline void futex_wait(std::atomic<int> *w, int seen) {
  while (w->load(std::memory_order_acquire) == seen) (void)futex(w, FUTEX_WAIT, seen);
}
inline void futex_wake(std::atomic<int> *w) { (void)futex(w, FUTEX_WAKE, 1); }

inline std::int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}
inline std::int64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}
inline void sleep_ms(double ms) {
  timespec t{static_cast<time_t>(ms / 1000), static_cast<long>(std::fmod(ms, 1000.0) * 1e6)};
  while (nanosleep(&t, &t) != 0) {}
}
inline void sleep_until_ns(std::int64_t when) {
  timespec t{static_cast<time_t>(when / 1000000000), static_cast<long>(when % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) != 0) {}
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
extern Config C;  // the command line (micro.cpp)

inline MR_Config mr_config(int engines) {
  MR_Config c;
  MR_config_default(&c);
  c.engines = engines;
  c.flags |= MR_CONFIG_IGNORE_ENV;
  if (!C.mr_options.empty()) c.options = C.mr_options.c_str();
  return c;
}

// Some parallel work, so that what follows starts from a runtime that has run.
inline long warm_fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  mr::parallel_invoke([&] { a = warm_fib(n - 1); }, [&] { b = warm_fib(n - 2); });
  return a + b;
}

// The wake-latency figures (micro_wake.cpp).
void wake_all();

}  // namespace micro

#endif
