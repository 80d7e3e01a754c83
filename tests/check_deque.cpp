// check_deque.cpp: the Chase-Lev deque alone: order, growth, and one owner against two thieves.

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "engine/wsdeque.hpp"
#include "testutil.h"

using mr::engine::Task;
using mr::engine::WsDeque;

static Task task_of(std::uintptr_t i) {
  return Task{nullptr, reinterpret_cast<void *>(i), nullptr};
}
static std::uintptr_t id_of(const Task &t) { return reinterpret_cast<std::uintptr_t>(t.env); }

START_TEST(test_owner_lifo_thief_fifo) {
  WsDeque d(2);
  for (std::uintptr_t i = 1; i <= 3; i++) d.push(task_of(i));
  Task t;
  ck_assert(d.steal(t) == WsDeque::Steal::TAKEN);
  ck_assert_uint_eq(id_of(t), 1);  // thieves take the oldest
  ck_assert(d.pop(t));
  ck_assert_uint_eq(id_of(t), 3);  // the owner the newest
  ck_assert(d.pop(t));
  ck_assert_uint_eq(id_of(t), 2);
  ck_assert(!d.pop(t));
  ck_assert(d.steal(t) == WsDeque::Steal::EMPTY);
  ck_assert_int_eq(d.size_estimate(), 0);
}
END_TEST

START_TEST(test_growth_keeps_every_item) {
  WsDeque d(1);  // capacity 2: grows many times
  const std::uintptr_t n = 100000;
  for (std::uintptr_t i = 1; i <= n; i++) d.push(task_of(i));
  ck_assert_int_eq(d.size_estimate(), static_cast<std::int64_t>(n));
  Task t;
  ck_assert(d.steal(t) == WsDeque::Steal::TAKEN);
  ck_assert_uint_eq(id_of(t), 1);
  for (std::uintptr_t i = n; i >= 2; i--) {
    ck_assert(d.pop(t));
    ck_assert_uint_eq(id_of(t), i);
  }
  ck_assert(!d.pop(t));
}
END_TEST

// One owner pushes and pops, two thieves steal; every item must be taken exactly once.
START_TEST(test_owner_against_two_thieves) {
  for (int round = 0; round < 20; round++) {
    const std::uintptr_t n = 200000;
    WsDeque d(3);
    std::vector<std::atomic<int>> taken(n + 1);
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> stolen{0};
    auto thief = [&] {
      Task t;
      while (!done.load(std::memory_order_acquire)) {
        if (d.steal(t) == WsDeque::Steal::TAKEN) {
          taken[id_of(t)].fetch_add(1, std::memory_order_relaxed);
          stolen.fetch_add(1, std::memory_order_relaxed);
        }
      }
      while (d.steal(t) != WsDeque::Steal::EMPTY)
        if (d.size_estimate() == 0) break;
    };
    std::thread a(thief), b(thief);
    Task t;
    std::uintptr_t next = 1;
    unsigned rng = 12345u + static_cast<unsigned>(round);
    while (next <= n) {
      rng = rng * 1103515245u + 12345u;
      int pushes = 1 + static_cast<int>((rng >> 16) % 4);
      for (int k = 0; k < pushes && next <= n; k++) d.push(task_of(next++));
      if ((rng >> 20) & 1) {
        if (d.pop(t)) taken[id_of(t)].fetch_add(1, std::memory_order_relaxed);
      }
    }
    while (d.pop(t)) taken[id_of(t)].fetch_add(1, std::memory_order_relaxed);
    // The deque is empty for the owner; thieves may still hold nothing more.
    done.store(true, std::memory_order_release);
    a.join();
    b.join();
    for (std::uintptr_t i = 1; i <= n; i++)
      ck_assert_msg(taken[i].load() == 1, "item %lu taken %d times (round %d)",
                    static_cast<unsigned long>(i), taken[i].load(), round);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("deque");
  TCase *tc = mr_tcase("deque", 120);
  tcase_add_test(tc, test_owner_lifo_thief_fifo);
  tcase_add_test(tc, test_growth_keeps_every_item);
  tcase_add_test(tc, test_owner_against_two_thieves);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
