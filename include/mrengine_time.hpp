// mrengine_time.hpp: the C++ layer of mrengine_time.h: sleeps, timers and tickers. Part of
// mrengine's C++ API: include <mrengine.hpp>, which includes this header at its end.
#ifndef MRENGINE_TIME_HPP
#define MRENGINE_TIME_HPP

#ifndef MRENGINE_HPP
#error "include <mrengine.hpp>, not <mrengine_time.hpp>"
#endif

namespace mr {

// ---- Time (mrengine.h, "Time"): steady_clock is CLOCK_MONOTONIC, the clock of MR_now. ----

namespace detail {

// d in nanoseconds, truncated (as duration_cast), 0 if d <= 0, and saturated at
// nanoseconds::max() (292 years) as std::this_thread::sleep_for saturates: a duration_cast to
// nanoseconds of a longer duration overflows. The count is taken in long double, whose range
// holds any duration's nanoseconds and whose precision is exact for every integer below 2^64.
template <class Rep, class Period>
uint64_t saturated_ns(std::chrono::duration<Rep, Period> d) noexcept {
  constexpr long double kMax = static_cast<long double>(std::chrono::nanoseconds::max().count());
  const long double ns = std::chrono::duration<long double, std::nano>(d).count();
  if (!(ns >= 1)) return 0;  // NaN too
  if (ns >= kMax) return static_cast<uint64_t>(std::chrono::nanoseconds::max().count());
  return static_cast<uint64_t>(ns);
}

}  // namespace detail

// Suspend the calling context (a thread that is not an engine sleeps) until tp. Throws mr::error
// (MR_ENOMEM).
inline void sleep_until(std::chrono::steady_clock::time_point tp) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(tp.time_since_epoch()).count();
  if (ns <= 0) return;
  int rc = MR_sleep_until(static_cast<uint64_t>(ns));
  if (rc != 0) throw error(rc, MR_strerror(rc));
}

// The same for a duration; a duration <= 0 (or shorter than a nanosecond) returns at once, and
// one longer than nanoseconds::max() (292 years) sleeps that long, as std::this_thread::sleep_for
// does. Throws mr::error (MR_ENOMEM).
template <class Rep, class Period>
void sleep_for(std::chrono::duration<Rep, Period> d) {
  const uint64_t ns = detail::saturated_ns(d);
  if (ns == 0) return;
  int rc = MR_sleep_for(ns);
  if (rc != 0) throw error(rc, MR_strerror(rc));
}

// A one-shot timer: at tp, run f() in a new context. cancel() (and the destructor) stop it if it
// has not fired. An exception thrown by f has nobody to go to: it is reported on stderr and
// dropped. Not copyable or movable. Throws mr::error if the timer cannot be started.
class timer {
 public:
  template <class F>
  timer(std::chrono::steady_clock::time_point tp, F f) : job_(new job_of<F>(std::move(f))) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(tp.time_since_epoch()).count();
    MR_Timer z = MR_TIMER_INIT;
    t_ = z;
    int rc = MR_timer_start(&t_, ns < 0 ? 0 : static_cast<uint64_t>(ns), &job::run, job_);
    if (rc != 0) {
      delete job_;
      throw error(rc, MR_strerror(rc));
    }
  }
  ~timer() { (void)cancel(); }
  timer(const timer &) = delete;
  timer &operator=(const timer &) = delete;

  // True if this call stopped the timer (f will never run); false if it had fired (f runs or
  // ran) or was cancelled before.
  bool cancel() noexcept {
    int rc = MR_timer_cancel(&t_);
    if (rc == 0 || rc == MR_ESHUTDOWN) {
      delete job_;  // never run (cancelled, or dropped at shutdown), so never deleted by run()
      job_ = nullptr;
    }
    return rc == 0;
  }

 private:
  struct job {
    virtual ~job() = default;
    virtual void call() = 0;
    static void run(void *p) noexcept {
      job *j = static_cast<job *>(p);
      try {
        j->call();
      } catch (const std::exception &e) {
        std::fprintf(stderr, "mrengine: a timer's function threw: %s\n", e.what());
      } catch (...) {
        std::fprintf(stderr, "mrengine: a timer's function threw\n");
      }
      delete j;
    }
  };
  template <class F>
  struct job_of final : job {
    explicit job_of(F g) : f(std::move(g)) {}
    void call() override { f(); }
    F f;
  };
  job *job_;
  MR_Timer t_;
};

// A periodic ticker: wait() returns how many periods have elapsed since the previous wait
// returned (missed ticks are counted, not queued). A period longer than nanoseconds::max() (292
// years) is that long. Throws mr::error (MR_EINVAL for a period < 1 ns).
class ticker {
 public:
  template <class Rep, class Period>
  explicit ticker(std::chrono::duration<Rep, Period> period) {
    const uint64_t ns = detail::saturated_ns(period);
    int rc = ns == 0 ? MR_EINVAL : MR_ticker_start(&tk_, ns);
    if (rc != 0) throw error(rc, MR_strerror(rc));
  }
  uint64_t wait() {
    uint64_t n = 0;
    int rc = MR_ticker_wait(&tk_, &n);
    if (rc != 0) throw error(rc, MR_strerror(rc));
    return n;
  }

 private:
  MR_Ticker tk_;
};

}  // namespace mr

#endif
