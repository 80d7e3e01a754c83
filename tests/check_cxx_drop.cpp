// check_cxx_drop.cpp: the future of mr::spawn when its context is dropped (MR_shutdown of a drop
// channel, MR_shutdown_now, mr::channel_close of a drop channel): wait() throws mr::dropped, the
// job and its callable are freed (an ASan build finds no leak), and a context that ran to its
// end still gives its value. mr::channel_close and mr::channel_wait.
#include <atomic>
#include <memory>
#include <vector>

#include "mrengine.hpp"
#include "testutil.h"

// wait() on f throws mr::dropped (an mr::error with MR_EDROPPED).
template <class T>
static bool throws_dropped(const std::shared_ptr<mr::future<T>> &f) {
  try {
    (void)f->wait();
  } catch (const mr::dropped &e) {
    ck_assert_int_eq(e.code(), MR_EDROPPED);
    return true;
  }
  return false;
}

static int make_channel(int level, int close) {
  MR_ChannelOptions c = mr::channel_options();
  c.level = level;
  c.close = close;
  return mr::channel_create(c);
}

// Futures of contexts dropped at a shutdown throw, once the shutdown has returned; the callables
// (holding a shared_ptr each) are destroyed; those that finished give their values. 1 engine:
// what is spawned is queued until this context waits. _i: 0 MR_shutdown, 1 MR_shutdown_now.
START_TEST(test_dropped_at_shutdown) {
  bool now = _i;
  mr_test_start(1, nullptr);
  int drop = make_channel(0, MR_CLOSE_DROP);
  auto held = std::make_shared<int>(7);
  auto first = mr::spawn([held] { return *held; }, mr::spawn_options(drop));
  ck_assert_int_eq(first->wait(), 7);  // ran to its end before the shutdown
  // A context that suspends for good: it starts when this one yields.
  mr::future<int> never;
  auto waiting = mr::spawn([&never] { return never.wait(); }, mr::spawn_options(drop));
  mr::yield();
  std::vector<std::shared_ptr<mr::future<int>>> queued;
  for (int i = 0; i < 8; i++)
    queued.push_back(mr::spawn([held, i] { return *held + i; }, mr::spawn_options(drop)));
  auto complete = mr::spawn([held] { return *held; });  // MR_shutdown runs it; _now drops it
  if (now)
    ck_assert_int_eq(MR_shutdown_now(nullptr), 0);
  else
    ck_assert_int_eq(MR_shutdown(), 0);
  for (auto &f : queued) ck_assert(throws_dropped(f));
  ck_assert(throws_dropped(waiting));
  if (now)
    ck_assert(throws_dropped(complete));
  else
    ck_assert_int_eq(complete->wait(), 7);
  ck_assert_int_eq(held.use_count(), 1);  // every job freed
}
END_TEST

// A drop channel closed while the runtime runs: its queued contexts' futures throw at once, in a
// context that waits for them too; the channel is joined with mr::channel_wait.
START_TEST(test_dropped_by_close) {
  mr_test_start(2, nullptr);
  int ch = make_channel(1, MR_CLOSE_DROP);
  auto held = std::make_shared<int>(3);
  std::vector<std::shared_ptr<mr::future<int>>> fs;
  MR_SpawnOptions o = mr::spawn_options(ch);
  o.engine = 1;
  std::atomic<bool> closed{false};
  // Engine 1 is busy with the first until the close (it then suspends, and is dropped); the rest
  // are queued behind it.
  auto busy = mr::spawn(
      [&closed] {
        while (!closed.load()) {}
        mr::yield();
        return 1;
      },
      o);
  for (int i = 0; i < 6; i++) fs.push_back(mr::spawn([held] { return *held; }, o));
  auto watcher = mr::spawn([&fs] {
    int n = 0;
    for (auto &f : fs) n += throws_dropped(f);
    return n;
  });
  mr::channel_close(ch);
  closed.store(true);
  mr::channel_wait(ch);
  ck_assert(throws_dropped(busy));
  ck_assert_int_eq(watcher->wait(), 6);
  ck_assert_int_eq(held.use_count(), 1);
  try {
    (void)mr::spawn([] { return 0; }, mr::spawn_options(ch));
    ck_abort_msg("spawned into a closed channel");
  } catch (const mr::error &e) {
    ck_assert_int_eq(e.code(), MR_ECLOSED);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

// The wrappers' errors are mr::error with their codes.
START_TEST(test_wrapper_errors) {
  mr_test_start(1, nullptr);
  int ch = make_channel(0, MR_CLOSE_COMPLETE);
  auto code_of = [](auto f) {
    try {
      f();
    } catch (const mr::error &e) {
      return e.code();
    }
    return 0;
  };
  ck_assert_int_eq(code_of([] { mr::channel_close(MR_CHANNEL_DEFAULT); }), MR_EINVAL);
  ck_assert_int_eq(code_of([ch] { mr::channel_wait(ch); }), MR_EINVAL);
  ck_assert_int_eq(code_of([ch] { mr::channel_close(ch); }), 0);
  ck_assert_int_eq(code_of([ch] { mr::channel_close(ch); }), MR_ECLOSED);
  ck_assert_int_eq(code_of([ch] { mr::channel_wait(ch); }), 0);
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cxx_drop");
  TCase *tc = mr_tcase("cxx_drop", 60);
  tcase_add_loop_test(tc, test_dropped_at_shutdown, 0, 2);
  tcase_add_test(tc, test_dropped_by_close);
  tcase_add_test(tc, test_wrapper_errors);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
