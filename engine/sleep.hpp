// sleep.hpp: the engine sleep/notify state machine (doc/design.md, "Engine states").
//
// Each engine has one SleepSync record: a state word, the pending action and its data, a POSIX
// semaphore and a wake lock. The table kTransitions below is the whole state machine; the
// top-level par_engine_state.dot draws it and tests/check_table.cpp fails if the two differ.
//
// Who may change the state:
//   - the engine itself, by plain release store: WORKING->IDLE, NOTIFIED->WORKING/IDLE/STEALING
//     (no notifier ever writes a WORKING or NOTIFIED engine's state);
//   - the engine itself, by CAS (so that it cannot overwrite a BUSY or NOTIFIED): IDLE->WORKING,
//     STEALING->WORKING, IDLE->STEALING,
//     STEALING->SLEEPING (after which it must wait on its semaphore); the latter under its own
//     wake lock, together with its census update, so no waker sees an uncounted sleeper;
//   - the engine itself, holding its own wake lock: SLEEPING->WORKING (it found work after
//     announcing sleep, or its park returned without a notification: a time-out or an early
//     return, park.hpp);
//   - a notifier, holding the target's wake lock and then unparking it (park.hpp):
//     SLEEPING->NOTIFIED;
//   - a notifier, holding the target's wake lock, by CAS through the transient BUSY: IDLE->BUSY,
//     STEALING->BUSY, then a release store BUSY->NOTIFIED. BUSY is never seen without the lock
//     held, so an engine whose CAS meets BUSY waits on the lock instead of spinning.
// (A plain engine store out of IDLE/STEALING, as in the original design, could overwrite BUSY;
// the notifier's NOTIFIED store would then land on a later state, even SLEEPING, and the engine
// would sleep through a wake-up: doc/design.md, "Defects avoided".)
#ifndef MR_ENGINE_SLEEP_HPP
#define MR_ENGINE_SLEEP_HPP

#include <pthread.h>
#include <semaphore.h>

#include <atomic>
#include <cstdint>

#include "fatal.hpp"
#include "mrengine.h"
#include "mutant.hpp"
#include "park.hpp"

namespace mr::engine {

enum class State : std::uint32_t { WORKING, IDLE, STEALING, SLEEPING, NOTIFIED, BUSY };
inline constexpr int kNumStates = 6;

// The notification kinds, from mrengine.h's MR_NOTIFY_MAP (their values index the wake-up
// counters).
enum class Action : std::uint32_t {
#define MR_ACTION_(name, value, column) name = (value),
  MR_NOTIFY_MAP(MR_ACTION_)
#undef MR_ACTION_
};
inline constexpr int kNumActions = MR_NOTIFY_KINDS;

enum class Who : std::uint8_t { ENGINE, NOTIFIER };
enum class How : std::uint8_t { PLAIN, CAS, LOCKED };

struct Transition {
  State from, to;
  Who who;
  How how;
};

// The state machine, exactly. Any transition the code makes is one of these.
inline constexpr Transition kTransitions[] = {
    {State::WORKING, State::IDLE, Who::ENGINE, How::PLAIN},
    {State::IDLE, State::WORKING, Who::ENGINE, How::CAS},
    {State::IDLE, State::STEALING, Who::ENGINE, How::CAS},
    {State::STEALING, State::WORKING, Who::ENGINE, How::CAS},
    {State::STEALING, State::SLEEPING, Who::ENGINE, How::CAS},
    {State::SLEEPING, State::WORKING, Who::ENGINE, How::LOCKED},
    {State::NOTIFIED, State::WORKING, Who::ENGINE, How::PLAIN},
    {State::NOTIFIED, State::IDLE, Who::ENGINE, How::PLAIN},
    {State::NOTIFIED, State::STEALING, Who::ENGINE, How::PLAIN},
    {State::SLEEPING, State::NOTIFIED, Who::NOTIFIER, How::LOCKED},
    {State::IDLE, State::BUSY, Who::NOTIFIER, How::CAS},
    {State::STEALING, State::BUSY, Who::NOTIFIER, How::CAS},
    {State::BUSY, State::NOTIFIED, Who::NOTIFIER, How::PLAIN},
};

// What happens to each action sent to an engine in each state.
enum class Delivery : std::uint8_t {
  DELIVERED_CAS,     // IDLE/STEALING -> BUSY -> NOTIFIED (CAS, with the wake lock held)
  DELIVERED_LOCKED,  // SLEEPING -> NOTIFIED under the wake lock, then sem_post
  DROPPED,           // advice only: the target will look for work by itself
  REFUSED,           // CONTEXT to a target that is not sleeping: the caller must queue it
  LATCHED,           // SHUTDOWN to WORKING/NOTIFIED/BUSY: seen through the shutdown flag
};

// kDelivery[action][state]. Also printed in doc/design.md; tests/check_sleep.cpp checks the code
// against it for every pair.
// clang-format off
inline constexpr Delivery kDelivery[kNumActions][kNumStates] = {
  // WORKING          IDLE                     STEALING                 SLEEPING
  //   NOTIFIED           BUSY
  {Delivery::REFUSED, Delivery::REFUSED,       Delivery::REFUSED,       Delivery::DELIVERED_LOCKED,
     Delivery::REFUSED, Delivery::REFUSED},  // CONTEXT
  {Delivery::DROPPED, Delivery::DELIVERED_CAS, Delivery::DELIVERED_CAS, Delivery::DELIVERED_LOCKED,
     Delivery::DROPPED, Delivery::DROPPED},  // CONTEXT_ADVICE
  {Delivery::DROPPED, Delivery::DROPPED,       Delivery::DROPPED,       Delivery::DELIVERED_LOCKED,
     Delivery::DROPPED, Delivery::DROPPED},  // WORKSTEAL_ADVICE
  {Delivery::LATCHED, Delivery::DELIVERED_CAS, Delivery::DELIVERED_CAS, Delivery::DELIVERED_LOCKED,
     Delivery::LATCHED, Delivery::LATCHED},  // SHUTDOWN
};
// clang-format on

// Is from->to one of kTransitions? The debug build (--enable-debug) checks every transition the
// engine makes against it.
constexpr bool is_transition(State from, State to) {
  for (const Transition &t : kTransitions)
    if (t.from == from && t.to == to) return true;
  return false;
}

const char *state_name(State s);
const char *action_name(Action a);

// The engines' shared census: how many engines are searching for work (STEALING, or woken with
// work-steal advice and about to steal) and how many are SLEEPING, packed in one word so that the
// cheap post-work check is one load. Each unit has exactly one owner (doc/design.md, "One
// counter, one owner"):
//   - a searching unit is taken by the engine's CAS IDLE->STEALING, or claimed by a waker and
//     handed to the sleeper it wakes with WORKSTEAL_ADVICE; its holder gives it back once;
//   - a sleeping unit is added by the engine right after its CAS STEALING->SLEEPING and removed by
//     whoever moves it out of SLEEPING, under its wake lock (a notifier, or the engine itself).
class Census {
 public:
  static constexpr std::uint64_t kSearchOne = 1;
  static constexpr std::uint64_t kSleepOne = std::uint64_t{1} << 32;

  static std::uint32_t searching(std::uint64_t w) { return static_cast<std::uint32_t>(w); }
  static std::uint32_t sleeping(std::uint64_t w) { return static_cast<std::uint32_t>(w >> 32); }
  // The post-work check (proof P1) on the word loaded after the poster's fence: nobody to wake
  // (no engine sleeps, or one searches)? If not, the poster claims a unit and wakes a sleeper.
  // Expected true: it is on the path of every spark.
  static bool nobody_to_wake(std::uint64_t w) {
    return __builtin_expect(sleeping(w) == 0 || searching(w) != 0, 1);
  }

  // relaxed: callers order it with their own seq_cst fence (proofs P1, P2).
  std::uint64_t load() const { return word_.load(std::memory_order_relaxed); }

  // RMWs: add_searcher relaxed (P2 says why); the others seq_cst, each followed on the paths of
  // P1 and P2 by the fence of its side of the Dekker pair; they also check underflow.
  std::uint64_t add_searcher();
  std::uint64_t remove_searcher();      // returns the old word
  std::uint64_t searcher_to_sleeper();  // returns the old word
  void remove_sleeper();
  // Claim a searching unit if nobody searches and somebody sleeps. seq_cst CAS.
  bool try_claim_searcher();

  // For the inline fork of mrengine.h (MR_EngineView.census), which reads the word with AO_load.
  const void *word_address() const { return &word_; }
  static_assert(sizeof(std::atomic<std::uint64_t>) == sizeof(AO_t), "census word is not an AO_t");

  // Count n engines as sleepers before any engine thread exists (--lazy-engines: engines that
  // have not started sleep until work needs them). relaxed: published by pthread_create.
  void start_with_sleepers(std::uint32_t n) {
    word_.store(static_cast<std::uint64_t>(n) * kSleepOne, std::memory_order_relaxed);
  }

 private:
  alignas(64) std::atomic<std::uint64_t> word_{0};
};

// The sleep-sync record of one engine.
struct SleepSync {
  // Written by the engine (plain stores, CAS) and by notifiers (CAS, or under wake_lock).
  std::atomic<State> state{State::WORKING};
  // action/data: written by the notifier that owns the record (state BUSY, or wake_lock held with
  // state SLEEPING) before its release store of NOTIFIED; read by the engine after an acquire
  // load that saw NOTIFIED.
  Action action{Action::CONTEXT_ADVICE};
  void *data{nullptr};
  sem_t sem;   // the default park (park.hpp)
  Park park;   // the embedder's park hook, or none; set at start, then read-only
  int id{-1};  // the engine's number, for the hook; set at start
  pthread_mutex_t wake_lock;

  SleepSync();
  ~SleepSync();
  SleepSync(const SleepSync &) = delete;
  SleepSync &operator=(const SleepSync &) = delete;
};

// ---- The protocol's own steps -----------------------------------------------------------------
// The state stores and the seq_cst fences of doc/design.md's proofs, written once: the engine
// (idle.cpp, wake.*) and the weak-memory harnesses of tests/weak run these same functions.

// The engine's own plain store-release of transition from->to: out of a state no notifier
// writes (WORKING, NOTIFIED), or with its own wake lock held. The pair is checked against the
// table at compile time, and that the engine is really in `from` in the debug build.
template <State from, State to>
void store_own_state(SleepSync &s) {
  static_assert(is_transition(from, to), "not a transition of kTransitions");
  MR_DASSERT(s.state.load(std::memory_order_relaxed) == from,
             "an engine left a state it was not in");
  s.state.store(to, MR_WEAK_MUTANT(OWN_STORE, std::memory_order_release));
}

// The engine's own CAS from->to (it must not overwrite a notifier's BUSY or NOTIFIED): acq_rel;
// on failure acquire, pairing with the notifier's store, and *seen holds the state found.
template <State from, State to>
bool cas_own_state(SleepSync &s, State *seen) {
  static_assert(is_transition(from, to), "not a transition of kTransitions");
  State expected = from;
  bool ok = s.state.compare_exchange_strong(expected, to, std::memory_order_acq_rel,
                                            std::memory_order_acquire);
  *seen = expected;
  return ok;
}

// seq_cst fence: proof P1, the poster's (publish the work, then read the census).
inline void post_work_fence() {
  std::atomic_thread_fence(MR_WEAK_MUTANT(POST_FENCE, std::memory_order_seq_cst));
}

// seq_cst fence: proofs P1, P2, P3, P4, the sleeper's (announce sleep, then the last look).
inline void sleep_fence() {
  std::atomic_thread_fence(MR_WEAK_MUTANT(SLEEP_FENCE, std::memory_order_seq_cst));
}

// seq_cst fence: proofs P3 and P4, after the engine's store of IDLE out of WORKING (a bound
// context queued while it was WORKING, the shutdown flag), then its look at its queue.
inline void idle_fence() {
  std::atomic_thread_fence(MR_WEAK_MUTANT(IDLE_FENCE, std::memory_order_seq_cst));
}

// seq_cst fence: proof P3, after the engine's store of IDLE out of NOTIFIED with CONTEXT_ADVICE:
// a poster that queued a bound context and saw it NOTIFIED dropped its advice, so the queue look
// that follows must see the context.
inline void advice_fence() {
  std::atomic_thread_fence(MR_WEAK_MUTANT(ADVICE_FENCE, std::memory_order_seq_cst));
}

// seq_cst fence: proof P3, the poster's (queue the context, then read the target's state).
inline void bound_post_fence() {
  std::atomic_thread_fence(MR_WEAK_MUTANT(BOUND_FENCE, std::memory_order_seq_cst));
}

// Proof P4, MR_shutdown's side: a seq_cst store of the shutdown flag, then a seq_cst fence, then
// (the caller) SHUTDOWN to every other engine, whose state it reads.
inline void raise_shutdown(std::atomic<bool> &flag) {
  flag.store(true, MR_WEAK_MUTANT(SHUTDOWN_STORE, std::memory_order_seq_cst));
  std::atomic_thread_fence(MR_WEAK_MUTANT(SHUTDOWN_FENCE, std::memory_order_seq_cst));
}

// seq_cst fence: proof P2 (the last searcher's release vs a poster that saw it searching).
inline void last_searcher_fence() {
  std::atomic_thread_fence(MR_WEAK_MUTANT(SEARCHER_FENCE, std::memory_order_seq_cst));
}

// Outcome of a notification attempt.
enum class Sent { DELIVERED, DROPPED, REFUSED, LATCHED, RETRY };

// Wake a SLEEPING engine: under its wake lock, if it is still SLEEPING, write the action, remove
// its sleeping unit from `census`, store NOTIFIED (release), unlock and unpark it (park.hpp).
// Returns DELIVERED, or RETRY if it was not sleeping (nothing changed). Any thread.
Sent try_wake_engine(SleepSync &s, Census &census, Action a, void *data);

// Send an action to an engine in whatever state it is in, following kDelivery: CAS through BUSY
// for IDLE/STEALING, try_wake_engine for SLEEPING, and the table's DROPPED/REFUSED/LATCHED
// otherwise. Retries while the state changes under it (the engine moved on), so the result is
// the table's answer for a state the target was really in. Any thread.
Sent try_notify_engine(SleepSync &s, Census &census, Action a, void *data);

// Wait until s is posted, retrying when a signal interrupts the wait. Any thread.
void sem_wait_posted(sem_t *s);

}  // namespace mr::engine

#endif
