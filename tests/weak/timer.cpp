// timer.cpp: a timer armed, cancelled and fired at once (doc/design.md section 21) under GenMC,
// with the engine's own steps on the record's state (engine/timer_state.hpp). One thread arms
// the record on engine 0's heap, another engine fires it as overdue (the takeover), and a third
// thread cancels it (MR_timer_cancel, deadline.cpp's timer_cancel) and, once the answer gives
// the record back, reuses it (a new arm writes its fields). The heap is one slot under a pthread
// mutex (TimerHeap's lock; its std::mutex and std::vector do not compile under GenMC), with
// TimerHeap's steps in their order. The timer fires at most once, with the fields it was armed
// with; the cancel's answer is "cancelled" iff it did not fire, "fired" iff it did. With
// SCENARIO_NOT_DUE the firing engine finds the timer not yet due (it reads its deadline) and a
// second thread cancels too, and the last of the two reuses the record whichever answer gave it
// back ("cancelled before" when the other cancel came first).
#include "harness.hpp"

#include "engine/timer_state.hpp"

using namespace mr::engine;

namespace {

enum Answer { kNone, kCancelled, kFired, kCancelledBefore, kDropped, kInvalid };

// The fields of timer.hpp's Timer that the steps touch.
struct Timer {
  std::uint64_t when;    // the deadline; set before arming
  int *a;                // the fire function's argument; set before arming
  std::int32_t heap_id;  // written by arm before the record is shared
  std::atomic<TimerState> state;
};

int token;  // what the timer fires with
Timer t;
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;  // engine 0's heap
Timer *slot;                                       // the heap's one entry; under lock
std::atomic<int> fired;                            // how many times the fire function ran
int answers[2];                                    // the cancels'
#ifdef SCENARIO_NOT_DUE
constexpr std::uint64_t kWhen = 2, kNow = 1;
constexpr int kCancellers = 2;
#else
constexpr std::uint64_t kWhen = 1, kNow = 1;
constexpr int kCancellers = 1;
#endif

void fire(int *a) {
  assert(a == &token);
  fired.fetch_add(1, std::memory_order_relaxed);
}

// TimerHeap::arm on engine 0's heap, from a thread that is not an engine (arm_or_fire).
void *armer(void *) {
  t.when = kWhen;
  t.a = &token;
  pthread_mutex_lock(&lock);
  slot = &t;
  t.heap_id = 0;
  timer_mark_pending(t.state);
  pthread_mutex_unlock(&lock);
  return nullptr;
}

// TimerHeap::fire_due on another engine: the timer is overdue.
void *firer(void *) {
  pthread_mutex_lock(&lock);
  Timer *x = slot;
  if (x == nullptr || x->when > kNow) {
    pthread_mutex_unlock(&lock);
    return nullptr;
  }
  slot = nullptr;
  int *a = x->a;
  timer_mark_fired(x->state);
  pthread_mutex_unlock(&lock);
  fire(a);
  return nullptr;
}

// TimerHeap::cancel.
bool heap_cancel(Timer *x, TimerState *was) {
  pthread_mutex_lock(&lock);
  TimerState s = timer_look_locked(x->state);
  if (s != TimerState::PENDING || slot != x) {
    *was = s == TimerState::PENDING ? TimerState::DROPPED : s;
    pthread_mutex_unlock(&lock);
    return false;
  }
  slot = nullptr;
  timer_mark_cancelled(x->state);
  pthread_mutex_unlock(&lock);
  return true;
}

// deadline.cpp's timer_cancel, then the record's reuse once it is the owner's again.
void *canceller(void *arg) {
  int &answer = *static_cast<int *>(arg);
  const bool owner = &answer == &answers[kCancellers - 1];  // the one that reuses the record
  TimerState s = timer_look(t.state);
  if (s == TimerState::PENDING) {
    assert(t.heap_id == 0);  // the heap it is in
    if (heap_cancel(&t, &s)) s = TimerState::CANCELLED, answer = kCancelled;
  }
  if (answer == kNone)
    answer = s == TimerState::FIRED       ? kFired
             : s == TimerState::CANCELLED ? kCancelledBefore
             : s == TimerState::DROPPED   ? kDropped
                                          : kInvalid;
  if (owner && (answer == kCancelled || answer == kFired || answer == kCancelledBefore)) {
    t.when = 0;  // a new arm's fields
    t.a = nullptr;
  }
  return nullptr;
}

}  // namespace

int main() {
  t.heap_id = -1;
  t.state.store(TimerState::FREE, std::memory_order_relaxed);
  pthread_t th[2 + kCancellers];
  pthread_create(&th[0], nullptr, armer, nullptr);
  pthread_create(&th[1], nullptr, firer, nullptr);
  for (int i = 0; i < kCancellers; i++) pthread_create(&th[2 + i], nullptr, canceller, &answers[i]);
  for (pthread_t &x : th) pthread_join(x, nullptr);
  int n = fired.load(std::memory_order_relaxed);
  assert(n <= 1);
  int cancelled = 0;
  for (int answer : answers) {
    assert(answer != kCancelled || n == 0);  // cancelled: it never fires
    assert(answer != kFired || n == 1);      // fired: it did
    assert(answer != kDropped);
    cancelled += answer == kCancelled;
  }
  assert(cancelled <= 1);
  return 0;
}
