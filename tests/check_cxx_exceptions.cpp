// check_cxx_exceptions.cpp: the C++ runtime's exception state (the stack of caught exceptions
// and std::uncaught_exceptions(), kept per OS thread) goes with each context across its switches:
// contexts that suspend inside catch handlers on one engine and on several, a handler that
// rethrows after a blocking region, and exceptions that unwind through the end of a blocking
// region (which moves the context to another thread half-way through the unwinding).
#include <atomic>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mrengine.hpp"
#include "testutil.h"

namespace {

// The exception being handled here, as std::current_exception() sees it: its text, or "" if
// none is.
std::string current_text() {
  std::exception_ptr p = std::current_exception();
  if (!p) return "";
  try {
    std::rethrow_exception(p);
  } catch (const std::exception &e) {
    return e.what();
  } catch (...) {
    return "?";
  }
}

// Let the engines run until `count` reaches n (the calling context sleeps meanwhile).
void wait_for(const std::atomic<int> &count, int n) {
  while (count.load() < n) mr::sleep_for(std::chrono::milliseconds(1));
}

// n contexts on `engines` engines, each inside a catch handler of its own exception, all waiting
// on one future: they resume interleaved, on whatever engine, and each still handles its own
// exception (the same object, what() intact, current_exception() it), and none is uncaught.
// The first to finish its handler must not end another's.
void handlers_across_waits(int engines, int n) {
  mr_test_start(engines, nullptr);
  {
    mr::future<int> go;
    std::atomic<int> waiting{0};
    std::vector<std::shared_ptr<mr::future<int>>> out;
    for (int i = 0; i < n; i++)
      out.push_back(mr::spawn([i, &go, &waiting] {
        std::string mine = "context " + std::to_string(i);
        try {
          throw std::runtime_error(mine);
        } catch (const std::runtime_error &e) {
          const void *obj = &e;
          int bad = 0;
          waiting++;
          for (int round = 0; round < 3; round++) {
            (void)go.wait();
            mr::yield();  // the others' handlers run and end meanwhile
            if (&e != obj || mine != e.what()) bad++;
            if (current_text() != mine) bad++;
            if (std::uncaught_exceptions() != 0) bad++;
          }
          return bad;
        }
      }));
    wait_for(waiting, n);  // each is in its handler, waiting
    go.signal(1);
    for (auto &f : out) ck_assert_int_eq(f->wait(), 0);
    ck_assert(current_text().empty());
    ck_assert_int_eq(std::uncaught_exceptions(), 0);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}

START_TEST(test_handlers_one_engine) { handlers_across_waits(1, 16); }
END_TEST

START_TEST(test_handlers_two_engines) { handlers_across_waits(2, 64); }
END_TEST

// The primordial context, inside a handler of its own, waits while contexts that throw and catch
// run on its engine: its exception is still the one it handles after the wait.
START_TEST(test_primordial_handler) {
  mr_test_start(1, nullptr);
  try {
    throw std::runtime_error("primordial");
  } catch (const std::exception &e) {
    std::vector<std::shared_ptr<mr::future<int>>> out;
    for (int i = 0; i < 8; i++)
      out.push_back(mr::spawn([i] {
        try {
          throw std::runtime_error("spawned " + std::to_string(i));
        } catch (const std::exception &) {
          mr::yield();
          return current_text() == "spawned " + std::to_string(i) ? 0 : 1;
        }
      }));
    for (auto &f : out) ck_assert_int_eq(f->wait(), 0);
    ck_assert_str_eq(e.what(), "primordial");
    ck_assert(current_text() == "primordial");
  }
  ck_assert(current_text().empty());
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

// catch (...) { mr::blocking(...); throw; }: the handler moves to a backup thread and back
// (another thread each way), then rethrows the exception it handles. 2 engines, many rounds
// from several contexts at once: each rethrow finds its exception, never "terminate called
// without an active exception".
START_TEST(test_rethrow_after_blocking) {
  mr_test_start(2, nullptr);
  {
    const int n = 8, rounds = MR_TEST_SCALE(200);
    std::vector<std::shared_ptr<mr::future<int>>> out;
    for (int i = 0; i < n; i++)
      out.push_back(mr::spawn([i, rounds] {
        int caught = 0;
        for (int r = 0; r < rounds; r++) {
          try {
            try {
              throw std::runtime_error("round " + std::to_string(r));
            } catch (...) {
              (void)mr::blocking([] { return 0; });
              throw;
            }
          } catch (const std::runtime_error &e) {
            if (e.what() == "round " + std::to_string(r)) caught++;
          }
          if (r % 4 == i % 4) mr::yield();
        }
        return caught;
      }));
    for (auto &f : out) ck_assert_int_eq(f->wait(), rounds);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

// An exception thrown in mr::blocking's function unwinds through the end of the region, which
// moves the context from its backup thread back to an engine: the throw counted it uncaught on
// one thread, the catch on another. Afterwards no thread and no context counts an uncaught
// exception: the context itself, a context bound to each engine, and a blocking region.
START_TEST(test_unwinding_through_blocking) {
  mr_test_start(2, nullptr);
  {
    auto f = mr::spawn([] {
      int thrown = 0;
      for (int i = 0; i < 50; i++) {
        try {
          (void)mr::blocking([]() -> int { throw std::runtime_error("in the region"); });
        } catch (const std::runtime_error &) {
          thrown++;
          if (std::uncaught_exceptions() != 0) return -1;
        }
      }
      if (std::uncaught_exceptions() != 0) return -2;
      if (mr::blocking([] { return std::uncaught_exceptions(); }) != 0) return -3;
      return thrown;
    });
    ck_assert_int_eq(f->wait(), 50);
    for (int e = 0; e < 2; e++)
      for (int k = 0; k < 4; k++) {
        auto g = mr::spawn([] { return std::uncaught_exceptions(); }, e);
        ck_assert_int_eq(g->wait(), 0);
        ck_assert_int_eq(mr::blocking([] { return std::uncaught_exceptions(); }), 0);
      }
    ck_assert_int_eq(std::uncaught_exceptions(), 0);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

// A destructor that suspends while an exception unwinds (a wait in it: it sees one uncaught
// exception, its own), with other contexts throwing and catching on the engine meanwhile.
START_TEST(test_suspend_while_unwinding) {
  mr_test_start(1, nullptr);
  {
    struct waits_in_destructor {
      mr::future<int> *go;
      int *seen;
      std::atomic<int> *waiting;
      ~waits_in_destructor() {
        (*waiting)++;
        (void)go->wait();
        *seen = std::uncaught_exceptions();
      }
    };
    mr::future<int> go;
    std::atomic<int> waiting{0};
    std::vector<int> seen(8, -1);
    std::vector<std::shared_ptr<mr::future<int>>> out;
    for (int i = 0; i < 8; i++)
      out.push_back(mr::spawn([i, &go, &seen, &waiting] {
        try {
          waits_in_destructor w{&go, &seen[static_cast<std::size_t>(i)], &waiting};
          throw std::runtime_error("unwinding");
        } catch (const std::runtime_error &) {
          return std::uncaught_exceptions();
        }
      }));
    wait_for(waiting, 8);  // every one is in its destructor, waiting
    go.signal(1);
    for (auto &f : out) ck_assert_int_eq(f->wait(), 0);
    for (int s : seen) ck_assert_int_eq(s, 1);
  }
  ck_assert_int_eq(MR_shutdown(), 0);
}
END_TEST

}  // namespace

int main(void) {
  Suite *s = suite_create("cxx_exceptions");
  TCase *tc = mr_tcase("cxx_exceptions", 60);
  tcase_add_test(tc, test_handlers_one_engine);
  tcase_add_test(tc, test_handlers_two_engines);
  tcase_add_test(tc, test_primordial_handler);
  tcase_add_test(tc, test_rethrow_after_blocking);
  tcase_add_test(tc, test_unwinding_through_blocking);
  tcase_add_test(tc, test_suspend_while_unwinding);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
