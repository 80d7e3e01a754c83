// check_deque.cpp: the Chase-Lev deque alone: order, growth, held sparks (doc/design.md, H1),
// and one owner against two thieves, with every spark published or with held ones.

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

// The owner pops items `from` down to `to`, newest first, and then finds the deque empty.
static void pop_down_to_empty(WsDeque &d, std::uintptr_t from, std::uintptr_t to) {
  Task t;
  for (std::uintptr_t i = from; i >= to; i--) {
    ck_assert(d.pop(t));
    ck_assert_uint_eq(id_of(t), i);
  }
  ck_assert(!d.pop(t));
}

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
  pop_down_to_empty(d, n, 2);
}
END_TEST

// With one spark kept published, the others are held: thieves get only the published one, and
// the next oldest once the owner publishes again after a pop; publish_all hands over the rest.
START_TEST(test_held_sparks_are_the_owners) {
  WsDeque d(3, 1);
  ck_assert(d.push(task_of(1)));   // nothing published yet: published
  ck_assert(!d.push(task_of(2)));  // one is: held
  ck_assert(!d.push(task_of(3)));
  ck_assert(!d.push(task_of(4)));
  ck_assert_int_eq(d.size_estimate(), 4);
  ck_assert_int_eq(d.published_estimate(), 1);
  Task t;
  ck_assert(d.steal(t) == WsDeque::Steal::TAKEN);
  ck_assert_uint_eq(id_of(t), 1);
  ck_assert(d.steal(t) == WsDeque::Steal::EMPTY);  // 2..4 are held
  ck_assert(d.pop(t));                             // the newest, held
  ck_assert_uint_eq(id_of(t), 4);
  ck_assert(d.publish());  // the published one was taken: the oldest held goes out
  ck_assert(!d.publish());
  ck_assert(d.steal(t) == WsDeque::Steal::TAKEN);  // the last published: asks
  ck_assert_uint_eq(id_of(t), 2);
  ck_assert(d.publish_all());  // 3
  ck_assert(!d.publish_all());
  ck_assert(d.push(task_of(5)));   // 3 is published, but the request stands: 5 goes out
  ck_assert(!d.push(task_of(6)));  // answered, and 3 and 5 are published: held
  ck_assert(d.publish_all());
  ck_assert_int_eq(d.published_estimate(), 3);
  ck_assert(d.pop(t));  // a published one, popped back by the owner
  ck_assert_uint_eq(id_of(t), 6);
  ck_assert(d.pop(t));  // a published one, popped back by the owner
  ck_assert_uint_eq(id_of(t), 5);
  ck_assert(d.steal(t) == WsDeque::Steal::TAKEN);
  ck_assert_uint_eq(id_of(t), 3);
  ck_assert(!d.pop(t));
  ck_assert_int_eq(d.size_estimate(), 0);
}
END_TEST

// The owner takes its only published spark back (the last element's CAS): the next push must
// publish again, or thieves would see nothing until one asked.
START_TEST(test_pop_of_the_published_one_publishes_the_next) {
  WsDeque d(3, 1);
  Task t;
  for (std::uintptr_t i = 1; i <= 3; i++) {
    ck_assert(d.push(task_of(i)));
    ck_assert_int_eq(d.published_estimate(), 1);
    ck_assert(d.pop(t));
    ck_assert_uint_eq(id_of(t), i);
  }
  ck_assert(d.push(task_of(4)));
  ck_assert(d.steal(t) == WsDeque::Steal::TAKEN);
  ck_assert_uint_eq(id_of(t), 4);
  // The owner's count does not see the steal, but the thief took the last published spark and
  // asked (test_request_publishes_half): the next push publishes.
  ck_assert(d.push(task_of(5)));
}
END_TEST

// No engine to steal: nothing is ever published, and growth keeps the held sparks.
START_TEST(test_nothing_published_for_no_thief) {
  WsDeque d(1, 0);
  const std::uintptr_t n = 1000;
  for (std::uintptr_t i = 1; i <= n; i++) ck_assert(!d.push(task_of(i)));
  ck_assert(!d.publish());
  ck_assert_int_eq(d.published_estimate(), 0);
  pop_down_to_empty(d, n, 1);
}
END_TEST

// A thief that takes the last published spark asks, as one that finds nothing published does;
// the owner's next publication hands over half of its held sparks, the oldest.
START_TEST(test_request_publishes_half) {
  WsDeque d(3, 1);
  for (std::uintptr_t i = 1; i <= 8; i++) d.push(task_of(i));
  Task t;
  ck_assert(d.steal(t) == WsDeque::Steal::TAKEN);  // the only published one: asks
  ck_assert_uint_eq(id_of(t), 1);
  ck_assert(d.pop(t));
  ck_assert_uint_eq(id_of(t), 8);
  ck_assert(d.publish());  // 2, 3, 4: half of the six held, rounded up
  ck_assert_int_eq(d.published_estimate(), 3);
  ck_assert(!d.publish());  // answered
  for (std::uintptr_t i = 2; i <= 4; i++) {
    ck_assert(d.steal(t) == WsDeque::Steal::TAKEN);  // 4 is the last published: asks
    ck_assert_uint_eq(id_of(t), i);
  }
  ck_assert(d.steal(t) == WsDeque::Steal::EMPTY);  // asks (already asked: the word stays)
  ck_assert(d.publish());                          // 5, 6: half of 5..7, rounded up
  ck_assert_int_eq(d.published_estimate(), 2);
  pop_down_to_empty(d, 7, 5);
}
END_TEST

// One owner pushes and pops (publishing again after each pop, as the engine does), two thieves
// steal; every item must be taken exactly once. Every spark published, or one or two kept
// published and the rest held.
START_TEST(test_owner_against_two_thieves) {
  static const std::int64_t kPublish[] = {WsDeque::kAlwaysPublish, 1, 2};
  for (int round = 0; round < 24; round++) {
    const std::uintptr_t n = 200000;
    WsDeque d(3, kPublish[round % 3]);
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
        d.publish();
      }
    }
    while (d.pop(t)) {
      taken[id_of(t)].fetch_add(1, std::memory_order_relaxed);
      d.publish();
    }
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
  tcase_add_test(tc, test_held_sparks_are_the_owners);
  tcase_add_test(tc, test_nothing_published_for_no_thief);
  tcase_add_test(tc, test_pop_of_the_published_one_publishes_the_next);
  tcase_add_test(tc, test_request_publishes_half);
  tcase_add_test(tc, test_owner_against_two_thieves);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
