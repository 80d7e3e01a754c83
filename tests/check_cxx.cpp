// check_cxx.cpp: the C++ API: mr::runtime, mr::parallel_invoke, exceptions carried to the joiner.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "mrengine.hpp"
#include "testutil.h"

static long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  mr::parallel_invoke([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

// Whether f() throws std::length_error.
template <class F>
bool throws_length_error(F f) {
  try {
    f();
  } catch (const std::length_error &) {
    return true;
  }
  return false;
}

START_TEST(test_parallel_invoke_fib) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  ck_assert_int_eq(mr::num_engines(), 2);
  ck_assert_int_eq(fib(22), 17711);
}
END_TEST

// mr::stats(): one entry per engine; after the join every spark was run once.
START_TEST(test_stats_and_engine_cpu) {
  ck_assert(mr::stats().empty());
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  ck_assert_int_eq(fib(18), 2584);
  std::vector<MR_EngineStats> st = mr::stats();
  ck_assert_int_eq(static_cast<int>(st.size()), 2);
  std::uint64_t pushed = 0, ran = 0;
  for (const MR_EngineStats &s : st) {
    pushed += s.sparks_pushed;
    ran += s.sparks_run_local + s.sparks_stolen;
  }
  ck_assert_uint_eq(pushed, 4180);  // fib(19) - 1 conjunctions
  ck_assert_uint_eq(ran, pushed);
  ck_assert_int_eq(mr::engine_cpu(1), -1);
  try {
    (void)mr::engine_cpu(2);
    ck_abort_msg("engine_cpu(2) did not throw");
  } catch (const mr::error &e) {
    ck_assert_int_eq(e.code(), MR_ERANGE);
  }
}
END_TEST

// mr::trace: a region's trace is written and closed by the destructor; a second one at the same
// time throws MR_EBUSY.
START_TEST(test_trace_region) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  char path[] = "/tmp/mrengine-cxx-XXXXXX.eventlog";
  int fd = mkstemps(path, 9);
  ck_assert_int_ge(fd, 0);
  {
    mr::trace t(path);
    mr::trace::marker("fib(18)");
    ck_assert_int_eq(fib(18), 2584);
    try {
      mr::trace again(path);
      ck_abort_msg("a second mr::trace did not throw");
    } catch (const mr::error &e) {
      ck_assert_int_eq(e.code(), MR_EBUSY);
    }
  }
  char end[2] = {0, 0};
  ck_assert_int_eq(pread(fd, end, 2, lseek(fd, 0, SEEK_END) - 2), 2);
  ck_assert_int_eq(end[0] & 0xff, 0xff);  // the eventlog's end marker: the file is complete
  ck_assert_int_eq(end[1] & 0xff, 0xff);
  close(fd);
  unlink(path);
  ck_assert_int_eq(MR_trace_stop(), MR_EINVAL);  // the destructor stopped it
}
END_TEST

// A pipeline of futures: a producer context fills them in order, a consumer waits for each.
START_TEST(test_future_pipeline) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  constexpr int kN = 2000;
  std::vector<std::unique_ptr<mr::future<std::string>>> items;
  for (int i = 0; i < kN; i++) items.push_back(std::make_unique<mr::future<std::string>>());
  auto consumer = mr::spawn([&] {
    std::size_t total = 0;
    for (auto &f : items) total += f->wait().size();
    return total;
  });
  auto producer = mr::spawn([&] {
    for (int i = 0; i < kN; i++)
      items[static_cast<std::size_t>(i)]->signal(std::string(static_cast<std::size_t>(i % 7), 'x'));
  });
  std::size_t want = 0;
  for (int i = 0; i < kN; i++) want += static_cast<std::size_t>(i % 7);
  ck_assert_uint_eq(consumer->wait(), want);
  (void)producer->wait();
  ck_assert(items.back()->ready());
}
END_TEST

START_TEST(test_future_signal_twice_throws) {
  MR_Config c = mr_test_config(1);
  mr::runtime rt(&c);
  mr::future<int> f;
  ck_assert(!f.ready());
  f.signal(4);
  try {
    f.signal(4);
    ck_abort_msg("a second signal did not throw");
  } catch (const mr::error &e) {
    ck_assert_int_eq(e.code(), MR_EBUSY);
  }
  ck_assert_int_eq(f.wait(), 4);
}
END_TEST

// A spawned function's exception reaches whoever waits; the engines go on.
START_TEST(test_spawn_carries_exceptions) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  for (int rep = 0; rep < 100; rep++) {
    auto bad =
        mr::spawn([rep]() -> int { throw std::runtime_error("boom " + std::to_string(rep)); });
    auto good = mr::spawn([] { return fib(12); }, rep % 2);
    try {
      (void)bad->wait();
      ck_abort_msg("no exception");
    } catch (const std::runtime_error &e) {
      // A named string: ck_assert_str_eq keeps a pointer past the full expression.
      const std::string expected = "boom " + std::to_string(rep);
      ck_assert_str_eq(e.what(), expected.c_str());
    }
    ck_assert_int_eq(good->wait(), 144);
  }
  try {
    (void)mr::spawn([] {}, 7);
    ck_abort_msg("spawn on engine 7 of 2 did not throw");
  } catch (const mr::error &e) {
    ck_assert_int_eq(e.code(), MR_ERANGE);
  }
}
END_TEST

// A result whose move throws: the waiter gets that exception (before, the spawned context called
// std::terminate), and a future's own signal hands it to the waiters and rethrows it.
struct MoveThrows {
  int v = 7;
  MoveThrows() = default;
  MoveThrows(const MoveThrows &) = delete;
  MoveThrows(MoveThrows &&) { throw std::length_error("move"); }
};
START_TEST(test_result_whose_move_throws) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  for (int rep = 0; rep < 20; rep++) {
    auto f = mr::spawn([] { return MoveThrows(); });
    ck_assert_msg(throws_length_error([&] { (void)f->wait(); }), "wait did not rethrow");
  }
  mr::future<MoveThrows> g;
  ck_assert_msg(throws_length_error([&] { g.signal(MoveThrows()); }), "signal did not rethrow");
  ck_assert(g.ready());
  ck_assert_msg(throws_length_error([&] { (void)g.wait(); }), "wait did not rethrow");
}
END_TEST

// parallel_for: every index once, never more contexts at once than asked, exceptions carried.
START_TEST(test_parallel_for) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  constexpr int kN = 20000;
  std::vector<std::atomic<int>> hits(kN);
  std::atomic<int> alive{0}, peak{0};
  mr::parallel_for(
      0, kN,
      [&](int i) {
        int now = ++alive;
        for (int p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {}
        hits[static_cast<std::size_t>(i)]++;
        --alive;
      },
      3);
  for (auto &h : hits) ck_assert_int_eq(h.load(), 1);
  ck_assert_int_le(peak.load(), 3);
  try {
    mr::parallel_for(0, 100, [](int i) {
      if (i == 37) throw std::out_of_range("37");
    });
    ck_abort_msg("no exception");
  } catch (const std::out_of_range &e) {
    ck_assert_str_eq(e.what(), "37");
  }
}
END_TEST

START_TEST(test_parallel_invoke_many_branches) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  for (int rep = 0; rep < 1000; rep++) {
    std::atomic<int> hits[4] = {};
    mr::parallel_invoke([&] { hits[0]++; }, [&] { hits[1]++; }, [&] { hits[2]++; },
                        [&] { hits[3]++; });
    for (auto &h : hits) ck_assert_int_eq(h.load(), 1);
  }
}
END_TEST

START_TEST(test_exception_reaches_joiner_after_all_branches) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  for (int rep = 0; rep < 500; rep++) {
    std::atomic<int> finished{0};
    bool caught = false;
    try {
      mr::parallel_invoke([&] { finished++; },
                          [&] {
                            finished++;
                            throw std::runtime_error("branch " + std::to_string(rep % 2 ? 2 : 3));
                          },
                          [&] {
                            (void)fib(10);
                            finished++;
                          });
    } catch (const std::runtime_error &e) {
      caught = std::string(e.what()) == (rep % 2 ? "branch 2" : "branch 3");
    }
    ck_assert(caught);
    ck_assert_int_eq(finished.load(), 3);  // rethrown only after every branch finished
  }
  // The engines survived: more work still runs.
  ck_assert_int_eq(fib(15), 610);
}
END_TEST

START_TEST(test_first_branch_exception_wins) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  try {
    mr::parallel_invoke([] { throw std::logic_error("first"); },
                        [] { throw std::runtime_error("second"); });
    ck_abort_msg("no exception");
  } catch (const std::logic_error &e) {
    ck_assert_str_eq(e.what(), "first");
  }
}
END_TEST

// parallel_invoke from threads that are not engines: the branches go through the injector, the
// caller blocks, and an exception still reaches it.
START_TEST(test_parallel_invoke_from_foreign_threads) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  std::vector<long> got(4, 0);
  std::atomic<int> caught{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++)
    threads.emplace_back([&, t] {
      ck_assert_int_eq(mr::engine_id(), -1);
      got[static_cast<std::size_t>(t)] = fib(16 + t);
      try {
        mr::parallel_invoke([] {}, [] { throw std::runtime_error("foreign"); });
      } catch (const std::runtime_error &e) {
        if (std::string(e.what()) == "foreign") caught++;
      }
    });
  for (auto &th : threads) th.join();
  ck_assert_int_eq(got[0], 987);
  ck_assert_int_eq(got[1], 1597);
  ck_assert_int_eq(got[2], 2584);
  ck_assert_int_eq(got[3], 4181);
  ck_assert_int_eq(caught.load(), 4);
}
END_TEST

// mr::blocking: the callable runs off the engine, its result comes back, an exception ends the
// region and propagates, and the context is on an engine again afterwards.
START_TEST(test_blocking_region) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  int where = mr::blocking([] { return MR_engine_id(); });
  ck_assert_int_eq(where, -1);
  ck_assert_int_eq(mr::engine_id(), 0);
  try {
    mr::blocking([] { throw std::runtime_error("blocked"); });
    ck_abort_msg("no exception");
  } catch (const std::runtime_error &e) {
    ck_assert_str_eq(e.what(), "blocked");
  }
  ck_assert_int_eq(mr::engine_id(), 0);
  ck_assert_int_eq(fib(15), 610);
}
END_TEST

START_TEST(test_runtime_error_is_an_exception) {
  setenv("MRENGINE_OPTIONS", "-P banana", 1);
  MR_Config c;
  MR_config_default(&c);
  c.flags |= MR_CONFIG_QUIET;
  try {
    mr::runtime rt(&c);
    ck_abort_msg("MR_init accepted a bad option");
  } catch (const mr::error &e) {
    ck_assert_int_eq(e.code(), MR_EOPTION);
    ck_assert_ptr_nonnull(std::strstr(e.what(), "banana"));
  }
}
END_TEST

// Sleeps, a timer (fired, cancelled, one whose function throws: reported, nothing else breaks)
// and a ticker through the C++ API.
START_TEST(test_time) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  using namespace std::chrono;
  auto t0 = steady_clock::now();
  mr::sleep_for(milliseconds(5));
  ck_assert(steady_clock::now() - t0 >= milliseconds(5));
  mr::sleep_for(milliseconds(-5));  // at once
  mr::sleep_until(steady_clock::now() + milliseconds(2));
  std::atomic<int> fired{0};
  mr::future<int> done;
  {
    mr::timer a(steady_clock::now() + milliseconds(3), [&] {
      fired.fetch_add(1);
      done.signal(1);
    });
    ck_assert_int_eq(done.wait(), 1);
    ck_assert(!a.cancel());  // fired
  }
  {
    mr::timer b(steady_clock::now() + hours(1), [&] { fired.fetch_add(100); });
    ck_assert(b.cancel());
    ck_assert(!b.cancel());  // cancelled before
  }
  {
    mr::timer d(steady_clock::now() + hours(1), [&] { fired.fetch_add(100); });
  }  // ~timer cancels
  mr::future<int> thrown;
  mr::timer e(steady_clock::now(), [&] {
    thrown.signal(1);
    throw std::length_error("from a timer");
  });
  ck_assert_int_eq(thrown.wait(), 1);
  mr::ticker tk(milliseconds(2));
  ck_assert_uint_ge(tk.wait(), 1);
  mr::sleep_for(milliseconds(10));
  ck_assert_uint_ge(tk.wait(), 5);
  bool threw = false;
  try {
    mr::ticker bad(milliseconds(0));
  } catch (const mr::error &x) {
    threw = x.code() == MR_EINVAL;
  }
  ck_assert(threw);
  ck_assert_int_eq(fired.load(), 1);
}
END_TEST

// An index whose increment throws past `limit`.
struct ThrowingIndex {
  int v;
  int limit;
  bool operator<(const ThrowingIndex &o) const { return v < o.v; }
  ThrowingIndex &operator++() {
    if (v == limit) throw std::overflow_error("index");
    ++v;
    return *this;
  }
};

// parallel_for whose index throws after 6 iterations started: the exception leaves only once
// the started ones have finished (they use the loop's copy of the callable), and no iteration
// past it starts. Then from a plain thread and from a blocking region: mr::error
// MR_ENOTENGINE (a plain thread) or every iteration run (a region that stayed on its engine),
// and no loop control left behind (LeakSanitizer in an ASan build).
START_TEST(test_parallel_for_cleans_up) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  for (int round = 0; round < 5; round++) {
    std::atomic<int> started{0}, finished{0};
    int at_exit = -1;
    try {
      mr::parallel_for(
          ThrowingIndex{0, 5}, ThrowingIndex{100, 0},
          [&, tag = std::make_shared<int>(round)](ThrowingIndex i) {
            started++;
            mr::sleep_for(std::chrono::milliseconds(2 + i.v % 3));
            if (*tag == round) finished++;
          },
          4);
      ck_abort_msg("no exception");
    } catch (const std::overflow_error &) {
      at_exit = finished.load();
    }
    ck_assert_int_eq(started.load(), 6);
    ck_assert_int_eq(at_exit, 6);
  }
  int code = 0;
  std::thread t([&] {
    try {
      mr::parallel_for(0, 10, [](int) {});
    } catch (const mr::error &e) {
      code = e.code();
    }
  });
  t.join();
  ck_assert_int_eq(code, MR_ENOTENGINE);
  std::atomic<int> ran{0};
  int in_region = mr::blocking([&] {
    try {
      mr::parallel_for(0, 10, [&](int) { ran++; });
    } catch (const mr::error &e) {
      return e.code();
    }
    return 0;
  });
  if (in_region == 0)
    ck_assert_int_eq(ran.load(), 10);
  else
    ck_assert_int_eq(in_region, MR_ENOTENGINE);
}
END_TEST

// Durations too long for nanoseconds in an int64 (1,000 years, seconds::max(), a double of
// 1e30 s) sleep as long as nanoseconds::max() lets them: none returns within 100 ms. A ticker of
// hours::max() is made and its first wait does not return either. Contexts of a drop channel, so
// that MR_shutdown drops them.
START_TEST(test_long_durations) {
  using namespace std::chrono;
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  MR_ChannelOptions co = mr::channel_options();
  co.close = MR_CLOSE_DROP;
  int ch = mr::channel_create(co);
  std::atomic<int> returned{0}, started{0};
  std::vector<std::shared_ptr<mr::future<int>>> out;
  auto sleeper = [&](auto d) {
    out.push_back(mr::spawn(
        [&, d] {
          started++;
          mr::sleep_for(d);
          returned++;
          return 0;
        },
        mr::spawn_options(ch)));
  };
  sleeper(hours(24 * 365 * 1000));
  sleeper(seconds::max());
  sleeper(hours::max());
  sleeper(duration<double>(1e30));
  out.push_back(mr::spawn(
      [&] {
        mr::ticker tk(hours::max());
        started++;
        (void)tk.wait();
        returned++;
        return 0;
      },
      mr::spawn_options(ch)));
  for (int w = 0; w < 2000 && started.load() + returned.load() < 5; w++)
    mr::sleep_for(milliseconds(1));
  mr::sleep_for(milliseconds(100));
  ck_assert_int_eq(returned.load(), 0);
  ck_assert_int_eq(started.load(), 5);
  // The exact conversions below the limit are unchanged.
  auto t0 = steady_clock::now();
  mr::sleep_for(duration<double, std::milli>(3.5));
  ck_assert(steady_clock::now() - t0 >= microseconds(3500));
  mr::sleep_for(duration<long long, std::pico>(999));  // under a nanosecond: at once
}
END_TEST

// The channel wrappers: mr::channel_create, mr::channel_current, mr::yield, mr::channel_stats,
// mr::spawn with MR_SpawnOptions; errors are mr::error with their code.
template <class F>
static int error_code(F f) {
  try {
    f();
  } catch (const mr::error &e) {
    return e.code();
  }
  return 0;
}

START_TEST(test_channels) {
  ck_assert_int_eq(error_code([] { mr::channel_create(mr::channel_options()); }), MR_ENOTINIT);
  ck_assert_int_eq(error_code([] { mr::yield(); }), MR_ENOTINIT);
  MR_Config c = mr_test_config(1);
  mr::runtime rt(&c);
  ck_assert_int_eq(mr::channel_current(), MR_CHANNEL_DEFAULT);
  MR_ChannelOptions o = mr::channel_options();
  o.level = 2;
  int batch = mr::channel_create(o);
  ck_assert_int_gt(batch, 0);
  o.level = 0;
  o.kind = MR_CHANNEL_DEADLINE;
  int requests = mr::channel_create(o);
  o.level = MR_LEVELS;
  ck_assert_int_eq(error_code([&] { mr::channel_create(o); }), MR_ELEVEL);
  ck_assert_int_eq(error_code([] { mr::channel_stats(MR_MAX_CHANNELS); }), MR_ENOCHANNEL);
  ck_assert_int_eq(error_code([&] { mr::spawn([] {}, mr::spawn_options(requests)); }),
                   MR_EDEADLINE);
  ck_assert_int_eq(error_code([&] { mr::spawn([] {}, mr::spawn_options(batch, 5)); }),
                   MR_EDEADLINE);
  ck_assert_int_eq(error_code([] { mr::spawn([] {}, mr::spawn_options(MR_MAX_CHANNELS)); }),
                   MR_ENOCHANNEL);
  std::uint64_t runs0 = mr::channel_stats(batch).contexts_run;
  // One engine: the batch context yields; the request spawned meanwhile (level 0) runs before
  // it resumes, and each sees its own channel.
  std::vector<int> order;
  mr::future<int> go;
  auto b = mr::spawn(
      [&] {
        order.push_back(mr::channel_current());
        go.wait();
        mr::spawn([&] { order.push_back(mr::channel_current()); },
                  mr::spawn_options(requests, MR_now()));
        mr::yield();
        order.push_back(-mr::channel_current());
        return 7;
      },
      mr::spawn_options(batch));
  go.signal(1);
  ck_assert_int_eq(b->wait(), 7);
  ck_assert_int_eq(static_cast<int>(order.size()), 3);
  ck_assert_int_eq(order[0], batch);
  ck_assert_int_eq(order[1], requests);
  ck_assert_int_eq(order[2], -batch);
  // Started, and resumed after the yield (the future was signalled before the wait).
  ck_assert_uint_eq(mr::channel_stats(batch).contexts_run - runs0, 2);
  ck_assert_uint_eq(mr::channel_stats(requests).contexts_run, 1);
  // A thread that is not an engine.
  int current = 0, yielded = 0;
  std::thread t([&] {
    current = error_code([] { mr::channel_current(); });
    yielded = error_code([] { mr::yield(); });
  });
  t.join();
  ck_assert_int_eq(current, MR_ENOTENGINE);
  ck_assert_int_eq(yielded, MR_ENOTENGINE);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cxx");
  TCase *tc = mr_tcase("cxx", 60);
  tcase_add_test(tc, test_parallel_invoke_fib);
  tcase_add_test(tc, test_parallel_invoke_many_branches);
  tcase_add_test(tc, test_stats_and_engine_cpu);
  tcase_add_test(tc, test_trace_region);
  tcase_add_test(tc, test_future_pipeline);
  tcase_add_test(tc, test_future_signal_twice_throws);
  tcase_add_test(tc, test_spawn_carries_exceptions);
  tcase_add_test(tc, test_result_whose_move_throws);
  tcase_add_test(tc, test_parallel_for);
  tcase_add_test(tc, test_parallel_for_cleans_up);
  tcase_add_test(tc, test_exception_reaches_joiner_after_all_branches);
  tcase_add_test(tc, test_first_branch_exception_wins);
  tcase_add_test(tc, test_parallel_invoke_from_foreign_threads);
  tcase_add_test(tc, test_blocking_region);
  tcase_add_test(tc, test_runtime_error_is_an_exception);
  tcase_add_test(tc, test_time);
  tcase_add_test(tc, test_long_durations);
  tcase_add_test(tc, test_channels);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
