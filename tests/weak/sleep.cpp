// sleep.cpp: the sleep protocol (doc/design.md proofs P1 to P4) under GenMC, with the
// engine's own census, notifiers and protocol steps (engine/sleep.*, engine/wsdeque.*). The
// scenarios are those of the Spin model (tests/model/engine_sleep.pml), for one engine E that
// falls asleep and one poster:
//   SCENARIO_SPARK   an engine pushes a spark on its deque, then the post-work check (P1);
//   SCENARIO_INJECT  a thread that is not an engine injects a spark (the injector's size, written
//                    under its lock), then the post-work check (P1);
//   SCENARIO_BOUND   a context bound to E is scheduled while E goes WORKING -> IDLE -> STEALING
//                    -> SLEEPING: CONTEXT if E sleeps, else the bound queue, the fence and
//                    CONTEXT_ADVICE (P3); the context is never lost;
//   SCENARIO_SEARCHER  E sleeps, another engine S is the last searcher and gives its unit back
//                    while a spark is pushed (P2: the poster saw S searching and woke nobody);
//   SCENARIO_SEARCH  E starts searching (IDLE -> STEALING, add_searcher) while a spark is pushed
//                    and another engine sleeps, finds nothing and falls asleep (P1, P2: a poster
//                    that saw E searching woke nobody, and E's sleep fence covers the spark);
//   SCENARIO_SHUTDOWN  MR_shutdown's flag and SHUTDOWN while E goes WORKING -> IDLE -> STEALING
//                    -> SLEEPING (P4): E leaves, or is notified.
// E stops where it would park; the final check is the proofs' claim: E does not sleep (SLEEPING,
// never notified) while the work it must take is pending, and the census counts what it says.
#include "harness.hpp"

#include <time.h>  // before semaphore.h, which needs clockid_t

#include "engine/sleep.cpp"
#include "engine/wsdeque.cpp"

using namespace mr::engine;

#if defined(SCENARIO_SEARCHER) || defined(SCENARIO_SEARCH)  // the work is a spark
#define SCENARIO_SPARK
#endif
#ifdef SCENARIO_SEARCH
#define OTHER_SLEEPERS 1  // counted in the census; the poster's wake goes to E or to nobody
#else
#define OTHER_SLEEPERS 0
#endif

// The park is not part of the protocol under test: an unpark is recorded, and E, instead of
// parking, stops (the final check reads what it left). SleepSync's semaphore is never used.
extern "C" int sem_init(sem_t *, int, unsigned) { return 0; }
extern "C" int sem_destroy(sem_t *) { return 0; }
namespace mr::engine {
std::atomic<int> unparks;
void unpark_engine(const Park &, sem_t *, int) { unparks.fetch_add(1, std::memory_order_relaxed); }
}  // namespace mr::engine

namespace {

Census &census = *new Census;  // on the heap: GenMC cannot name a static Census
SleepSync *e;                  // engine E's record
WsDeque *deque;                // SCENARIO_SPARK: the poster's deque
pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
// SCENARIO_INJECT / SCENARIO_BOUND: the injector's or E's bound queue's size hint, written under
// queue_lock, read relaxed (Injector and LockedFifo in engine/runqueue.hpp, whose std::mutex and
// Boost ring GenMC cannot compile).
std::atomic<int> queued;
std::atomic<bool> shutdown;  // SCENARIO_SHUTDOWN: Runtime::shutdown
int taken;                   // E took the work (E's own variable; read by main after the join)
bool got_context;            // SCENARIO_BOUND: the context came to E as CONTEXT

// E's look at the work it must take (a relaxed load, ordered by the fence before it).
bool work_there() {
#ifdef SCENARIO_SHUTDOWN
  return shutdown.load(std::memory_order_relaxed);
#elif defined(SCENARIO_SPARK)
  return deque->published_estimate() > 0;
#else
  return queued.load(std::memory_order_relaxed) != 0;
#endif
}

// E takes the work it saw.
void take_work() {
#ifdef SCENARIO_SHUTDOWN
  taken = 1;  // E leaves
#elif defined(SCENARIO_SPARK)
  Task t;
  if (deque->steal(t) == WsDeque::Steal::TAKEN) taken++;
#else
  pthread_mutex_lock(&queue_lock);
  if (queued.load(std::memory_order_relaxed) != 0) {
    queued.store(0, std::memory_order_relaxed);
    taken++;
  }
  pthread_mutex_unlock(&queue_lock);
#endif
}

// The work is published by the poster (under the queue's lock for the locked queues).
void publish() {
#ifdef SCENARIO_SHUTDOWN
  raise_shutdown(shutdown);
#elif defined(SCENARIO_SPARK)
  deque->push(Task{nullptr, nullptr, nullptr});
#else
  pthread_mutex_lock(&queue_lock);
  queued.store(queued.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  pthread_mutex_unlock(&queue_lock);
#endif
}

// idle.cpp's leave_sleeping: under E's wake lock, if still SLEEPING, E goes WORKING itself.
bool leave_sleeping() {
  pthread_mutex_lock(&e->wake_lock);
  bool still = e->state.load(std::memory_order_relaxed) == State::SLEEPING;
  if (still) {
    census.remove_sleeper();
    store_own_state<State::SLEEPING, State::WORKING>(*e);
  }
  pthread_mutex_unlock(&e->wake_lock);
  return still;
}

// E in STEALING with a searching unit, having found nothing: idle.cpp's fall_asleep up to the
// park. Returns false when a notification came in the way (E then handles it).
bool fall_asleep() {
  pthread_mutex_lock(&e->wake_lock);
  State seen;
  if (!cas_own_state<State::STEALING, State::SLEEPING>(*e, &seen)) {
    pthread_mutex_unlock(&e->wake_lock);
    return false;
  }
  census.searcher_to_sleeper();
  pthread_mutex_unlock(&e->wake_lock);
  sleep_fence();
  if (work_there() && leave_sleeping()) take_work();
  return true;
}

#if defined(SCENARIO_BOUND) || defined(SCENARIO_SHUTDOWN)
// E handles a notification it found (acquire): CONTEXT runs the context; CONTEXT_ADVICE takes E
// back to IDLE, the fence, and a look at its bound queue; SHUTDOWN makes it leave. Returns true
// when E has its context or leaves.
bool handle_notification() {
#ifdef SCENARIO_SHUTDOWN
  assert(e->action == Action::SHUTDOWN);
  take_work();
  return true;
#endif
  if (e->action == Action::CONTEXT) {
    assert(e->data == &got_context);
    got_context = true;
    store_own_state<State::NOTIFIED, State::WORKING>(*e);
    return true;
  }
  assert(e->action == Action::CONTEXT_ADVICE);
  store_own_state<State::NOTIFIED, State::IDLE>(*e);
  advice_fence();
  return false;
}

// E: idle.cpp's find_work from WORKING: WORKING -> IDLE and the fence, a look at its bound queue
// (or the shutdown flag), IDLE -> STEALING with a searching unit, then fall_asleep; with the
// notifications that come in the way.
void *engine(void *) {
  store_own_state<State::WORKING, State::IDLE>(*e);
  idle_fence();
  for (int pass = 0; pass < 3; pass++) {
    if (e->state.load(std::memory_order_acquire) == State::NOTIFIED && handle_notification())
      return nullptr;
    if (work_there()) {
      take_work();  // the engine then leaves IDLE by CAS; not part of the race
      return nullptr;
    }
    State seen;
    if (e->state.load(std::memory_order_relaxed) == State::IDLE) {
      if (!cas_own_state<State::IDLE, State::STEALING>(*e, &seen)) continue;
      census.add_searcher();
    }
    if (fall_asleep()) break;
  }
  // The park: a notification that came after the announcement is handled once more.
  if (e->state.load(std::memory_order_acquire) == State::NOTIFIED && !handle_notification() &&
      work_there())
    take_work();
  return nullptr;
}

#ifdef SCENARIO_SHUTDOWN
// MR_shutdown (lifecycle.cpp's stop_engine_threads): the flag and the fence, then SHUTDOWN
// following the table (latched when E is WORKING, NOTIFIED or BUSY).
void *poster(void *) {
  publish();
  try_notify_engine(*e, census, Action::SHUTDOWN, nullptr);
  return nullptr;
}
#else
// The scheduler of a context bound to E (wake.cpp's enqueue): CONTEXT if E sleeps, else the
// bound queue, the fence, and CONTEXT_ADVICE following the table.
void *poster(void *) {
  if (e->state.load(std::memory_order_relaxed) == State::SLEEPING &&
      try_wake_engine(*e, census, Action::CONTEXT, &got_context) == Sent::DELIVERED)
    return nullptr;
  publish();
  bound_post_fence();
  try_notify_engine(*e, census, Action::CONTEXT_ADVICE, nullptr);
  return nullptr;
}
#endif
#elif defined(SCENARIO_SEARCHER)
// Not E but S, the last searcher, which found nothing: wake.cpp's give_back_unit.
void *engine(void *) {
  std::uint64_t old = census.remove_searcher();
  if (Census::searching(old) != 1 || Census::sleeping(old) == 0) return nullptr;
  last_searcher_fence();
  if (work_there() && census.try_claim_searcher() &&
      try_wake_engine(*e, census, Action::WORKSTEAL_ADVICE, nullptr) != Sent::DELIVERED)
    census.remove_searcher();
  return nullptr;
}
#else
// E: in STEALING with a searching unit (SCENARIO_SEARCH: it goes IDLE -> STEALING and takes
// the unit first, idle.cpp's find_work), it found nothing and falls asleep.
void *engine(void *) {
#ifdef SCENARIO_SEARCH
  State seen;
  if (!cas_own_state<State::IDLE, State::STEALING>(*e, &seen)) return nullptr;
  census.add_searcher();
#endif
  fall_asleep();
  // The park: E sees NOTIFIED (acquire) and reads the notification (published by the release).
  if (e->state.load(std::memory_order_acquire) == State::NOTIFIED)
    assert(e->action == Action::WORKSTEAL_ADVICE);
  return nullptr;
}

#endif

#if !defined(SCENARIO_BOUND) && !defined(SCENARIO_SHUTDOWN)
// The poster: publish, then the post-work check (wake.hpp's work_posted and wake_for_work).
void *poster(void *) {
  publish();
  post_work_fence();
  if (!Census::nobody_to_wake(census.load()) && census.try_claim_searcher() &&
      try_wake_engine(*e, census, Action::WORKSTEAL_ADVICE, nullptr) != Sent::DELIVERED)
    census.remove_searcher();  // nobody left to wake: the unit goes back
  return nullptr;
}
#endif

}  // namespace

int main() {
  e = new SleepSync;
  // No notification of the scenario has this action: a stale read of it after NOTIFIED fails
  // the checks.
#ifdef SCENARIO_SHUTDOWN
  e->action = Action::CONTEXT;
#else
  e->action = Action::SHUTDOWN;
#endif
  deque = new WsDeque(2);
#if defined(SCENARIO_BOUND) || defined(SCENARIO_SHUTDOWN)
  e->state.store(State::WORKING, std::memory_order_relaxed);
#elif defined(SCENARIO_SEARCH)
  e->state.store(State::IDLE, std::memory_order_relaxed);
  census.add_searcher();
  census.searcher_to_sleeper();  // the other engine's sleeping unit
#elif defined(SCENARIO_SEARCHER)
  e->state.store(State::SLEEPING, std::memory_order_relaxed);
  census.add_searcher();
  census.searcher_to_sleeper();  // E's sleeping unit
  census.add_searcher();         // S's searching unit
#else
  e->state.store(State::STEALING, std::memory_order_relaxed);
  census.add_searcher();  // E's searching unit
#endif
  pthread_t te, tp;
  pthread_create(&te, nullptr, engine, nullptr);
  pthread_create(&tp, nullptr, poster, nullptr);
  pthread_join(te, nullptr);
  pthread_join(tp, nullptr);
  State st = e->state.load(std::memory_order_relaxed);
  std::uint64_t w = census.load();
  bool pending = work_there();
  // No lost wake-up: E is not left SLEEPING with its work pending and no notification.
  assert(!(st == State::SLEEPING && pending));
  // The census counts E as a sleeper exactly when it is SLEEPING.
  assert(Census::sleeping(w) == (st == State::SLEEPING ? 1u : 0u) + OTHER_SLEEPERS);
  // Each notification that left E SLEEPING->NOTIFIED unparked it once.
  assert(unparks.load(std::memory_order_relaxed) <= 1);
#ifdef SCENARIO_SHUTDOWN
  // E left, or is NOTIFIED with SHUTDOWN, which it handles when its park returns.
  assert(taken == 1 || (st == State::NOTIFIED && e->action == Action::SHUTDOWN));
#elif defined(SCENARIO_BOUND)
  // E, NOTIFIED after it stopped, would take a CONTEXT when its park returns (with advice, it
  // looks at its queue: the context is pending, and E not SLEEPING).
  if (st == State::NOTIFIED && e->action == Action::CONTEXT) got_context = true;
  // The context is never lost nor run twice: taken from the queue, delivered as CONTEXT, or
  // still queued for an engine that is not asleep.
  assert(taken + (got_context ? 1 : 0) + (pending ? 1 : 0) == 1);
#else
  assert(taken + (pending ? 1 : 0) == 1);
  // A woken E holds the unit its waker claimed; a searching unit is held by nobody else.
  assert(Census::searching(w) == (st == State::NOTIFIED ? 1u : 0u));
#endif
  return 0;
}
