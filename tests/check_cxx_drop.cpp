// check_cxx_drop.cpp: the future of mr::spawn when its context is dropped (MR_shutdown of a drop
// channel, MR_shutdown_now, mr::channel_close of a drop channel): wait() throws mr::dropped, the
// job and its callable are freed when the runtime stops (an ASan build finds no leak), not
// before, since the scope tasks the callable started still use it; a context that ran to its
// end still gives its value, also one dropped while its callable is destroyed. mr::channel_close
// and mr::channel_wait.
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
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
  // The dropped callables are kept until the runtime frees their contexts.
  ck_assert_int_eq(held.use_count(), 7);
  try {
    (void)mr::spawn([] { return 0; }, mr::spawn_options(ch));
    ck_abort_msg("spawned into a closed channel");
  } catch (const mr::error &e) {
    ck_assert_int_eq(e.code(), MR_ECLOSED);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(held.use_count(), 1);
}
END_TEST

// A capture that says whether it has been destroyed (its destructor sets *gone) and can be
// copied (each copy reports to the same flag only once it is the last one standing).
struct Canary {
  std::shared_ptr<std::atomic<bool>> gone;
  std::shared_ptr<int> held = std::make_shared<int>(1);
  explicit Canary(std::shared_ptr<std::atomic<bool>> g) : gone(std::move(g)) {}
  Canary(const Canary &) = default;
  Canary(Canary &&) = default;
  ~Canary() {
    if (held && held.use_count() == 1) gone->store(true);
  }
};

// A spawned callable that opens a scope, spawns a task that uses the callable's capture, and
// waits on a future inside the scope is dropped by mr::channel_close (its context suspends, is
// made runnable and dropped): the task, which is not dropped, still runs on, and the capture
// must outlive it. The future throws mr::dropped at once; the callable is destroyed only when
// the runtime frees the dropped context, at MR_shutdown.
START_TEST(test_drop_keeps_callable_for_its_tasks) {
  mr_test_start(2, nullptr);
  int ch = make_channel(0, MR_CLOSE_DROP);
  auto gone = std::make_shared<std::atomic<bool>>(false);
  mr::future<int> go, release, started, checked;
  {
    Canary canary(gone);
    auto f = mr::spawn(
        [canary, &go, &release, &started, &checked] {
          mr::scope([&](mr::scope_handle &s) {
            s.spawn([&] {
              started.signal(1);
              (void)release.wait();
              // The callable's capture, read after its context was dropped.
              checked.signal(!canary.gone->load() && *canary.held == 1 ? 1 : 0);
            });
            (void)go.wait();
          });
          return 1;
        },
        mr::spawn_options(ch));
    (void)started.wait();
    mr::channel_close(ch);
    go.signal(1);  // the context is runnable now, and dropped when an engine would run it
    ck_assert(throws_dropped(f));
    mr::channel_wait(ch);
    release.signal(1);
    ck_assert_int_eq(checked.wait(), 1);
  }
  ck_assert(!gone->load());
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert(gone->load());  // freed with the dropped context
}
END_TEST

// The same at MR_shutdown of a drop channel: the scope's task uses the capture in a blocking
// region (on a backup thread, where nothing is dropped), and a plain thread makes the callable's
// context runnable once the shutdown has begun, so that an engine drops it. The task's context,
// of the drop channel too, is dropped when its region ends: the scope is the C one, whose task
// record lives on the callable's stack (a heap record would be left behind with the frame).
struct ShutdownTask {
  const Canary *canary;
  mr::future<int> *started;
  std::atomic<int> *step, *result;
  static void run(void *p) {
    auto *t = static_cast<ShutdownTask *>(p);
    (void)mr::blocking([t] {
      t->started->signal(1);
      while (t->step->load() == 0) mr_test_sleep_ms(1);
      *t->result = !t->canary->gone->load() && *t->canary->held == 1 ? 1 : 0;
      return 0;
    });
  }
};

START_TEST(test_shutdown_drop_keeps_callable_for_its_tasks) {
  mr_test_start(2, nullptr);
  int ch = make_channel(0, MR_CLOSE_DROP);
  auto gone = std::make_shared<std::atomic<bool>>(false);
  std::atomic<int> step{0}, result{-1};
  mr::future<int> go, started;
  std::shared_ptr<mr::future<int>> f;
  {
    Canary canary(gone);
    f = mr::spawn(
        [canary, &go, &started, &step, &result] {
          ShutdownTask task{&canary, &started, &step, &result};
          MR_Scope s;
          ck_assert_int_eq(MR_scope_begin(&s), 0);
          ck_assert_int_eq(MR_scope_spawn(&s, &ShutdownTask::run, &task), 0);
          (void)go.wait();
          (void)MR_scope_end(&s);
          return 1;
        },
        mr::spawn_options(ch));
  }
  // A context of the default channel keeps MR_shutdown waiting, and the engines running, until
  // the task has used the capture.
  mr::future<int> hold;
  auto holder = mr::spawn([&hold] { return hold.wait(); });
  (void)started.wait();
  std::atomic<bool> was_dropped{false};
  // MR_channel_close of a channel already closed answers MR_ECLOSED until MR_shutdown begins,
  // MR_ESHUTDOWN from then on: how the mover knows it has begun (a fixed 50 ms was too short
  // under qemu-user).
  int probe = make_channel(0, MR_CLOSE_COMPLETE);
  ck_assert_int_eq(MR_channel_close(probe), 0);
  std::thread mover([&] {
    int rc;
    while ((rc = MR_channel_close(probe)) == MR_ECLOSED) mr_test_sleep_ms(1);
    ck_assert_int_eq(rc, MR_ESHUTDOWN);
    go.signal(1);
    was_dropped = throws_dropped(f);
    step = 1;
    while (result.load() < 0) mr_test_sleep_ms(1);
    hold.signal(1);
  });
  ck_assert_int_eq(MR_shutdown(), 0);
  mover.join();
  ck_assert(was_dropped.load());
  ck_assert_int_eq(result.load(), 1);
  ck_assert(gone->load());
}
END_TEST

// A callable whose capture suspends in its destructor (after the function returned and the
// future got its value) and whose context is dropped there: the job is not destroyed twice,
// the future keeps its value, and the caller's reference stays the only one left. The capture's
// destructor began once and never ends.
static std::atomic<int> destructions{0};
struct WaitsWhenDestroyed {
  mr::future<int> *gate;
  explicit WaitsWhenDestroyed(mr::future<int> *g) : gate(g) {}
  WaitsWhenDestroyed(WaitsWhenDestroyed &&o) noexcept : gate(o.gate) { o.gate = nullptr; }
  WaitsWhenDestroyed(const WaitsWhenDestroyed &) = delete;
  ~WaitsWhenDestroyed() {
    if (!gate) return;  // moved from
    destructions++;
    (void)gate->wait();
  }
};

START_TEST(test_drop_while_callable_is_destroyed) {
  mr_test_start(1, nullptr);
  int ch = make_channel(0, MR_CLOSE_DROP);
  mr::future<int> gate;
  auto f = mr::spawn([w = WaitsWhenDestroyed(&gate)] { return 5; }, mr::spawn_options(ch));
  ck_assert_int_eq(f->wait(), 5);
  mr::sleep_for(std::chrono::milliseconds(5));  // its destructor waits now
  mr::channel_close(ch);
  gate.signal(1);  // runnable in the destructor: dropped when it would run
  mr::channel_wait(ch);
  ck_assert_int_eq(mr::channel_stats(ch).contexts_dropped, 1);
  ck_assert_int_eq(f->wait(), 5);
  ck_assert_int_eq(MR_shutdown(), 0);
  ck_assert_int_eq(f.use_count(), 1);
  ck_assert_int_eq(f->wait(), 5);
  ck_assert_int_eq(destructions.load(), 1);
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
  tcase_add_test(tc, test_drop_keeps_callable_for_its_tasks);
  tcase_add_test(tc, test_shutdown_drop_keeps_callable_for_its_tasks);
  tcase_add_test(tc, test_drop_while_callable_is_destroyed);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
