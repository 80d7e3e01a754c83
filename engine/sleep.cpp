// sleep.cpp: the notifier side of the sleep/notify protocol and the census.
#include "config.h"

#include "sleep.hpp"

#include <errno.h>

#include "fatal.hpp"

namespace mr::engine {

const char *state_name(State s) {
  switch (s) {
    case State::WORKING:
      return "WORKING";
    case State::IDLE:
      return "IDLE";
    case State::STEALING:
      return "STEALING";
    case State::SLEEPING:
      return "SLEEPING";
    case State::NOTIFIED:
      return "NOTIFIED";
    case State::BUSY:
      return "BUSY";
  }
  return "?";
}

const char *action_name(Action a) {
  switch (a) {
#define MR_ACTION_NAME_(name, value, column) \
  case Action::name:                         \
    return #name;
    MR_NOTIFY_MAP(MR_ACTION_NAME_)
#undef MR_ACTION_NAME_
  }
  return "?";
}

// ---- Census -------------------------------------------------------------------------------

std::uint64_t Census::add_searcher() {
  // relaxed RMW: atomic, so every later RMW of the census counts the unit; no order is needed.
  // A poster that reads the unit wakes nobody, and the unit's end covers it: the searcher gives
  // it up by a seq_cst RMW and, as the last one with sleepers left, a seq_cst fence and a look
  // (P2, or P1's sleep fence), which the poster's load read before (doc/design.md, P2).
  return word_.fetch_add(kSearchOne, std::memory_order_relaxed);
}

std::uint64_t Census::remove_searcher() {
  // seq_cst RMW: proof P2 (the last searcher's release and a poster's check).
  std::uint64_t old =
      word_.fetch_sub(kSearchOne, MR_WEAK_MUTANT(UNSEARCH_RMW, std::memory_order_seq_cst));
  MR_CHECK(searching(old) != 0, "census: searching count underflow");
  return old;
}

std::uint64_t Census::searcher_to_sleeper() {
  // seq_cst RMW: proof P1, the sleeper's announcement.
  std::uint64_t old = word_.fetch_add(kSleepOne - kSearchOne,
                                      MR_WEAK_MUTANT(SLEEPER_RMW, std::memory_order_seq_cst));
  MR_CHECK(searching(old) != 0, "census: sleeper held no searching unit");
  return old;
}

void Census::remove_sleeper() {
  // seq_cst RMW; done under the sleeper's wake lock, together with its move out of SLEEPING.
  std::uint64_t old = word_.fetch_sub(kSleepOne, std::memory_order_seq_cst);
  MR_CHECK(sleeping(old) != 0, "census: sleeping count underflow");
}

bool Census::try_claim_searcher() {
  std::uint64_t w = word_.load(std::memory_order_relaxed);
  while (searching(w) == 0 && sleeping(w) != 0) {
    // CAS seq_cst on success (the claim must be ordered before the waker's look at the states),
    // relaxed on failure (we only re-test the word).
    if (word_.compare_exchange_weak(w, w + kSearchOne, std::memory_order_seq_cst,
                                    std::memory_order_relaxed))
      return true;
  }
  return false;
}

// ---- SleepSync ----------------------------------------------------------------------------

SleepSync::SleepSync() {
  MR_CHECK(sem_init(&sem, 0, 0) == 0, "sem_init failed");
  MR_CHECK(pthread_mutex_init(&wake_lock, nullptr) == 0, "pthread_mutex_init failed");
}

SleepSync::~SleepSync() {
  sem_destroy(&sem);
  pthread_mutex_destroy(&wake_lock);
}

Sent try_wake_engine(SleepSync &s, Census &census, Action a, void *data) {
  pthread_mutex_lock(&s.wake_lock);
  // relaxed: under the wake lock nobody else can move the engine out of SLEEPING.
  if (s.state.load(std::memory_order_relaxed) != State::SLEEPING) {
    pthread_mutex_unlock(&s.wake_lock);
    return Sent::RETRY;
  }
  s.action = a;
  s.data = data;
  census.remove_sleeper();
  // store-release: pairs with the engine's acquire load that sees NOTIFIED; publishes action/data.
  s.state.store(State::NOTIFIED, MR_WEAK_MUTANT(WAKE_NOTIFIED, std::memory_order_release));
  pthread_mutex_unlock(&s.wake_lock);
  unpark_engine(s.park, &s.sem, s.id);
  return Sent::DELIVERED;
}

Sent try_notify_engine(SleepSync &s, Census &census, Action a, void *data) {
  for (;;) {
    // acquire: pairs with the engine's release stores, so that what we decide matches a state
    // the engine really published.
    State st = s.state.load(std::memory_order_acquire);
    switch (kDelivery[static_cast<int>(a)][static_cast<int>(st)]) {
      case Delivery::DROPPED:
        return Sent::DROPPED;
      case Delivery::REFUSED:
        return Sent::REFUSED;
      case Delivery::LATCHED:
        return Sent::LATCHED;
      case Delivery::DELIVERED_LOCKED:
        if (try_wake_engine(s, census, a, data) == Sent::DELIVERED) return Sent::DELIVERED;
        continue;  // it left SLEEPING under us: decide again on its new state
      case Delivery::DELIVERED_CAS: {
        // BUSY is only ever held with the wake lock: an engine that finds BUSY in its way waits
        // on the lock (blocking, not spinning), and action/data have one writer at a time.
        pthread_mutex_lock(&s.wake_lock);
        // CAS acq_rel: acquire pairs with the engine's last store, release orders nothing yet;
        // failure acquire because we decide again on the value read.
        if (!s.state.compare_exchange_strong(st, State::BUSY, std::memory_order_acq_rel,
                                             std::memory_order_acquire)) {
          pthread_mutex_unlock(&s.wake_lock);
          continue;
        }
        s.action = a;
        s.data = data;
        // store-release: publishes action/data to the engine's acquire load of NOTIFIED.
        s.state.store(State::NOTIFIED, MR_WEAK_MUTANT(NOTIFY_NOTIFIED, std::memory_order_release));
        pthread_mutex_unlock(&s.wake_lock);
        return Sent::DELIVERED;
      }
    }
  }
}

void sem_wait_posted(sem_t *s) {
  while (sem_wait(s) != 0) MR_CHECK(errno == EINTR, "sem_wait failed");
}

}  // namespace mr::engine
