// check_cxx_scope.cpp: mr::scope: tasks that borrow the caller's frame, spawned by the body and
// by tasks, each run once and finished when mr::scope returns; nested scopes; a thread that is
// not an engine; exceptions (the first one rethrown, after every task has finished); the
// body's result; tasks that suspend.
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mrengine.hpp"
#include "testutil.h"

constexpr int kTree = 10000;

// A binary tree of kTree tasks in one scope, each spawned by its parent task: each runs once,
// and all have finished when mr::scope returns.
static void tree_once() {
  std::vector<std::atomic<int>> hits(kTree);
  std::atomic<int> done{0};
  mr::scope([&](auto &s) {
    struct node {
      static void run(mr::scope_handle &s, std::vector<std::atomic<int>> &hits,
                      std::atomic<int> &done, int i) {
        hits[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed);
        for (int c = 2 * i + 1; c <= 2 * i + 2 && c < kTree; c++)
          s.spawn([&s, &hits, &done, c] { run(s, hits, done, c); });
        done.fetch_add(1, std::memory_order_relaxed);
      }
    };
    s.spawn([&] { node::run(s, hits, done, 0); });
  });
  ck_assert_int_eq(done.load(), kTree);
  for (auto &h : hits) ck_assert_int_eq(h.load(), 1);
}

// 10^4 nested spawns, 20 times, on 1 and 2 engines.
START_TEST(test_nested_spawns_run_once) {
  MR_Config c = mr_test_config(_i + 1);
  mr::runtime rt(&c);
  for (int r = 0; r < 20; r++) tree_once();
}
END_TEST

// The same with a thread that is not an engine as the owner (it blocks at the end), while the
// primordial context waits on a future so that its engine runs tasks too.
START_TEST(test_foreign_owner) {
  MR_Config c = mr_test_config(_i + 1);
  mr::runtime rt(&c);
  for (int r = 0; r < 5; r++) {
    mr::future<int> done;
    std::thread th([&] {
      tree_once();
      done.signal(1);
    });
    ck_assert_int_eq(done.wait(), 1);
    th.join();
  }
}
END_TEST

// A scope in each task of a scope; inner tasks spawn into the outer scope too.
START_TEST(test_nested_scopes) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  for (int r = 0; r < 20; r++) {
    std::atomic<int> inner{0}, extra{0};
    mr::scope([&](auto &outer) {
      for (int i = 0; i < 64; i++)
        outer.spawn([&] {
          std::atomic<int> mine{0};
          mr::scope([&](auto &s) {
            for (int k = 0; k < 16; k++)
              s.spawn([&] {
                mine.fetch_add(1);
                inner.fetch_add(1);
                outer.spawn([&] { extra.fetch_add(1); });
              });
          });
          ck_assert_int_eq(mine.load(), 16);
        });
    });
    ck_assert_int_eq(inner.load(), 64 * 16);
    ck_assert_int_eq(extra.load(), 64 * 16);
  }
}
END_TEST

// The body's result is returned; an empty scope returns at once.
START_TEST(test_result_and_empty) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  mr::scope([](auto &) {});
  int sum[4] = {0, 0, 0, 0};
  int r = mr::scope([&](auto &s) {
    for (int i = 0; i < 4; i++) s.spawn([&sum, i] { sum[i] = i * 10; });
    return 42;
  });
  ck_assert_int_eq(r, 42);
  ck_assert_int_eq(sum[0] + sum[1] + sum[2] + sum[3], 60);
  // A move-only result and a move-only task.
  auto p = mr::scope([](auto &s) {
    auto q = std::make_unique<int>(5);
    s.spawn([q = std::make_unique<int>(6)] { ck_assert_int_eq(*q, 6); });
    return q;
  });
  ck_assert_int_eq(*p, 5);
}
END_TEST

// Every task throws, after a delay that differs: the exception rethrown is one of theirs, and
// it comes only after every task has finished (the counter is complete). A task's exception and
// the body's: the first one thrown wins.
START_TEST(test_exceptions) {
  MR_Config c = mr_test_config(_i + 1);
  mr::runtime rt(&c);
  for (int r = 0; r < 20; r++) {
    std::atomic<int> finished{0};
    bool caught = false;
    try {
      mr::scope([&](auto &s) {
        for (int i = 0; i < 100; i++)
          s.spawn([&, i] {
            if (i % 10 == 0) mr::sleep_for(std::chrono::microseconds(200));
            finished.fetch_add(1);
            throw std::runtime_error("task " + std::to_string(i));
          });
      });
    } catch (const std::runtime_error &e) {
      caught = std::string(e.what()).rfind("task ", 0) == 0;
      ck_assert_int_eq(finished.load(), 100);
    }
    ck_assert(caught);
  }
  // The body throws after spawning its tasks, which wait for a future that a thread signals
  // 20 ms later and then throw: the body's exception is the first, and is the one rethrown, once
  // the tasks have finished.
  std::atomic<int> finished{0};
  mr::future<int> go;
  bool body_first = false;
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    go.signal(1);
  });
  try {
    mr::scope([&](auto &s) {
      for (int i = 0; i < 8; i++)
        s.spawn([&] {
          go.wait();
          finished.fetch_add(1);
          throw std::logic_error("task");
        });
      throw std::length_error("body");
    });
  } catch (const std::length_error &) {
    body_first = true;
    ck_assert_int_eq(finished.load(), 8);
  }
  opener.join();
  ck_assert(body_first);
}
END_TEST

// Without the runtime: mr::error(MR_ENOTINIT).
START_TEST(test_not_running) {
  bool refused = false;
  try {
    mr::scope([](auto &) {});
  } catch (const mr::error &e) {
    refused = e.code() == MR_ENOTINIT;
  }
  ck_assert(refused);
}
END_TEST

// Many scopes of tasks that suspend (sleep or wait on a future a later task signals).
START_TEST(test_stress_suspending) {
  MR_Config c = mr_test_config(2);
  mr::runtime rt(&c);
  for (int r = 0; r < MR_TEST_SCALE(500); r++) {
    std::atomic<int> n{0};
    mr::future<int> f;
    mr::scope([&](auto &s) {
      s.spawn([&] { f.signal(r); });
      for (int i = 0; i < 20; i++)
        s.spawn([&] {
          ck_assert_int_eq(f.wait(), r);
          n.fetch_add(1);
          if (r % 50 == 0) mr::sleep_for(std::chrono::microseconds(50));
        });
    });
    ck_assert_int_eq(n.load(), 20);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("cxx_scope");
  TCase *tc = mr_tcase("cxx_scope", 60);
  tcase_add_loop_test(tc, test_nested_spawns_run_once, 0, 2);
  tcase_add_loop_test(tc, test_foreign_owner, 0, 2);
  tcase_add_test(tc, test_nested_scopes);
  tcase_add_test(tc, test_result_and_empty);
  tcase_add_loop_test(tc, test_exceptions, 0, 2);
  tcase_add_test(tc, test_not_running);
  tcase_add_test(tc, test_stress_suspending);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
