// check_sleep.cpp: every notification kind sent to an engine in every state: delivered (and how)
// or dropped, exactly as DESIGN section 3 says; the census' ownership rules.
#include <semaphore.h>
#include <signal.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "engine/sleep.hpp"
#include "testutil.h"

using namespace mr::engine;

// The expected outcome, written from the design (not copied from the code's table):
// CONTEXT is only ever handed to a SLEEPING engine; advice may be dropped; work-steal advice
// only wakes sleepers; SHUTDOWN reaches every state (latched where it cannot be delivered).
static const char *const kExpected[kNumActions][kNumStates] = {
    //  WORKING    IDLE     STEALING  SLEEPING  NOTIFIED   BUSY
    {"refused", "refused", "refused", "locked", "refused", "refused"},  // CONTEXT
    {"dropped", "cas", "cas", "locked", "dropped", "dropped"},          // CONTEXT_ADVICE
    {"dropped", "dropped", "dropped", "locked", "dropped", "dropped"},  // WORKSTEAL_ADVICE
    {"latched", "cas", "cas", "locked", "latched", "latched"},          // SHUTDOWN
};

static int sem_value(sem_t *s) {
  int v = -1;
  sem_getvalue(s, &v);
  return v;
}

START_TEST(test_every_action_to_every_state) {
  for (int a = 0; a < kNumActions; a++) {
    for (int st = 0; st < kNumStates; st++) {
      SleepSync s;
      Census census;
      State from = static_cast<State>(st);
      if (from == State::SLEEPING) {  // a real sleeper holds a sleeping unit
        census.add_searcher();
        census.searcher_to_sleeper();
      }
      s.state.store(from);
      s.action = Action::CONTEXT_ADVICE;
      s.data = nullptr;
      int marker = 0;
      Sent r = try_notify_engine(s, census, static_cast<Action>(a), &marker);
      const char *want = kExpected[a][st];
      const char *ctx = action_name(static_cast<Action>(a));
      if (!std::strcmp(want, "cas") || !std::strcmp(want, "locked")) {
        ck_assert_msg(r == Sent::DELIVERED, "%s to %s not delivered", ctx, state_name(from));
        ck_assert(s.state.load() == State::NOTIFIED);
        ck_assert(s.action == static_cast<Action>(a));
        ck_assert_ptr_eq(s.data, &marker);
        // Locked delivery posts the semaphore and takes the sleeper out of the census.
        ck_assert_int_eq(sem_value(&s.sem), !std::strcmp(want, "locked") ? 1 : 0);
        ck_assert_uint_eq(Census::sleeping(census.load()), 0);
      } else {
        Sent expect = !std::strcmp(want, "dropped")   ? Sent::DROPPED
                      : !std::strcmp(want, "refused") ? Sent::REFUSED
                                                      : Sent::LATCHED;
        ck_assert_msg(r == expect, "%s to %s: wrong outcome", ctx, state_name(from));
        ck_assert_msg(s.state.load() == from, "%s to %s changed the state", ctx, state_name(from));
        ck_assert_ptr_null(s.data);
        ck_assert_int_eq(sem_value(&s.sem), 0);
      }
      // The code's table says the same.
      Delivery d = kDelivery[a][st];
      const char *code = d == Delivery::DELIVERED_CAS      ? "cas"
                         : d == Delivery::DELIVERED_LOCKED ? "locked"
                         : d == Delivery::DROPPED          ? "dropped"
                         : d == Delivery::REFUSED          ? "refused"
                                                           : "latched";
      ck_assert_str_eq(code, want);
    }
  }
}
END_TEST

START_TEST(test_try_wake_needs_a_sleeper) {
  for (int st = 0; st < kNumStates; st++) {
    if (static_cast<State>(st) == State::SLEEPING) continue;
    SleepSync s;
    Census census;
    s.state.store(static_cast<State>(st));
    ck_assert(try_wake_engine(s, census, Action::CONTEXT, nullptr) == Sent::RETRY);
    ck_assert(s.state.load() == static_cast<State>(st));
    ck_assert_int_eq(sem_value(&s.sem), 0);
  }
}
END_TEST

START_TEST(test_census_claims_only_for_sleepers_without_searcher) {
  Census c;
  ck_assert(!c.try_claim_searcher());  // nobody sleeps
  c.add_searcher();
  c.searcher_to_sleeper();  // one sleeper, no searcher
  ck_assert(c.try_claim_searcher());
  ck_assert_uint_eq(Census::searching(c.load()), 1);
  ck_assert(!c.try_claim_searcher());  // one searcher in flight is enough
  c.remove_searcher();
  c.remove_sleeper();
  ck_assert_uint_eq(c.load(), 0);
}
END_TEST

START_TEST(test_census_underflow_stops) {
  Census c;
  c.remove_searcher();  // nobody held a unit: must abort with a message
}
END_TEST

// Many notifiers race an engine that moves IDLE -> STEALING -> SLEEPING and back: every CONTEXT
// sent to it must arrive exactly once, none may be lost in the semaphore.
START_TEST(test_racing_notifiers_lose_no_context) {
  SleepSync s;
  Census census;
  const int n = 20000;
  std::atomic<int> sent{0};
  std::atomic<bool> stop{false};
  int received = 0;
  std::thread notifier([&] {
    for (int i = 0; i < n;) {
      if (try_wake_engine(s, census, Action::CONTEXT, nullptr) == Sent::DELIVERED) {
        i++;
        sent.fetch_add(1);
      }
    }
    stop.store(true);
  });
  while (received < n) {
    // the engine's side: idle, steal, announce sleep, wait, take the notification
    s.state.store(State::IDLE, std::memory_order_release);
    State e = State::IDLE;
    if (!s.state.compare_exchange_strong(e, State::STEALING)) continue;
    census.add_searcher();
    e = State::STEALING;
    pthread_mutex_lock(&s.wake_lock);  // as the engine does: count itself before it is seen
    ck_assert(s.state.compare_exchange_strong(e, State::SLEEPING));
    census.searcher_to_sleeper();
    pthread_mutex_unlock(&s.wake_lock);
    while (sem_wait(&s.sem) != 0) {}
    ck_assert(s.state.load(std::memory_order_acquire) == State::NOTIFIED);
    ck_assert(s.action == Action::CONTEXT);
    received++;
  }
  notifier.join();
  ck_assert_int_eq(sent.load(), n);
  ck_assert_int_eq(received, n);
  ck_assert_uint_eq(census.load(), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sleep");
  TCase *tc = mr_tcase("notify", 60);
  tcase_add_test(tc, test_every_action_to_every_state);
  tcase_add_test(tc, test_try_wake_needs_a_sleeper);
  tcase_add_test(tc, test_census_claims_only_for_sleepers_without_searcher);
  tcase_add_test_raise_signal(tc, test_census_underflow_stops, SIGABRT);
  tcase_add_test(tc, test_racing_notifiers_lose_no_context);
  suite_add_tcase(s, tc);
  return mr_test_run(s);
}
