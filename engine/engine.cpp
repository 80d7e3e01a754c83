// engine.cpp: the scheduler.
//
// Terms (doc/design.md has the full protocol with its proofs):
//   engine     an OS thread that runs contexts; engine 0 is the thread that called MR_init.
//   scheduler  the code an engine runs when no context runs on it: on engines 1..N-1 the
//              thread's own stack, on engine 0 a fiber of its own (the thread's stack belongs to
//              the primordial context). Only the scheduler walks the idle loop.
//   context    a fiber that runs tasks; it switches to the scheduler (or straight to another
//              context) when it suspends or finishes. Every switch is a resume_with whose ontop
//              function, running on the destination's stack, saves the source's continuation and
//              only then publishes the source (to a free cache, a join counter, a queue): so
//              nobody can resume a context that has not finished switching away (J1).
//   census     how many engines search for work and how many sleep (sleep.hpp, Census).
//
// The idle loop (find_work), in order: the engine's bound queue and the shared run queue, then its
// own deque, then (CAS IDLE->STEALING) bounded steal rounds, then (CAS STEALING->SLEEPING) a last
// look at all work after announcing itself as a sleeper, then the semaphore.
#include "config.h"

#include "engine.hpp"

#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <time.h>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>
#include <new>

#include "context.hpp"
#include "fatal.hpp"
#include "overflow.hpp"
#include "runqueue.hpp"
#include "sanitizer.hpp"
#include "sleep.hpp"
#include "topology.hpp"
#include "wsdeque.hpp"

namespace mr::engine {

namespace bctx = boost::context;

namespace {

constexpr int kCacheMax = 16;  // free contexts an engine keeps for itself, per stack kind

// Per-engine counters: written only by the owning engine (relaxed load + store, no RMW), read by
// anyone (relaxed). The figures are exact at a quiescent point. Each engine's counters are on
// their own cache lines, so counting costs no sharing.
struct alignas(64) Counters {
  std::atomic<std::uint64_t> sparks_pushed{0}, sparks_run_local{0}, sparks_stolen{0},
      steal_attempts{0}, steal_failures{0}, sleeps{0}, wakeups[kNumActions]{},
      spurious_wakeups{0}, notifications_sent{0}, notifications_dropped{0},
      contexts_created{0}, contexts_reused{0}, contexts_suspended{0}, contexts_resumed{0},
      sparks_injected{0}, blocking_offloaded{0}, blocking_inline{0};
};

inline void bump(std::atomic<std::uint64_t> &c) {
  // relaxed load + store: one writer (the owner); readers only need an eventually-exact value.
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// What the idle loop does after handling a notification or a sleep.
enum class Next { RUN, LOOK, LOOK_FROM_WORKING, EXIT };

}  // namespace

struct Engine {
  explicit Engine(int i) : id(i) {}

  const int id;
  // ---- owner only (the engine's own thread) ----
  Context *current = nullptr;    // the context running on this engine
  bctx::fiber sched;             // the scheduler's continuation while a context runs
  san::Fiber sched_san;          // the scheduler's stack, for the sanitizers (sanitizer.hpp)
  boost::context::stack_context sched_stack{};  // engine 0 only: its scheduler fiber's stack
  Context *next_ctx = nullptr;   // run this before looking for work (a join that completed)
  bool holds_search_unit = false;  // this engine owns one searching unit of the census
  bool woken_for_work = false;   // woken by advice or poll and has not found work yet
  int advised_victim = -1;       // from WORKSTEAL_ADVICE: steal here first
  unsigned steal_offset = 0;     // rotating start of the victim scan within each tier
  int spin_budget = 1;           // steal rounds of its next own search (steal_rounds); start: full
  bool search_advised = false;   // woken by WORKSTEAL_ADVICE and not searched since
  topo::Order order;             // victims (and engines to wake for work here), tier by tier
  Context *free_small[kCacheMax];
  Context *free_regular[kCacheMax];
  int n_free_small = 0, n_free_regular = 0;
  pthread_t thread{};
  // Lazy engines: the first to exchange start_claimed to true creates the thread (a waker that
  // delivered a notification to the engine, or stop(), which then creates none). acq_rel.
  std::atomic<bool> start_claimed{false};
  // Set (release) once `thread` is written, by whoever created it; stop() joins after an
  // acquire load.
  std::atomic<bool> thread_started{false};
  bool start_asleep = false;     // lazy: the thread begins by consuming its wake-up (set at start)
  // The PU this engine is bound to, or -1. Written (release) by the engine's thread once it is
  // bound; read (acquire) by anyone. An engine that has not started yet reports -1.
  std::atomic<int> pu{-1};
  int planned_pu = -1;           // from the pinning plan; -1 for none
  Counters stats;
  overflow::AltStack altstack;   // the engine thread's alternate signal stack
  // ---- shared ----
  WsDeque deque;                 // owner pushes/pops; thieves steal
  MR_EngineView view{};          // what generated code reads inline (set in start, then frozen)
  alignas(64) SleepSync sleep;   // the sleep-sync record
  // When the engine last fell asleep, from Runtime::sleep_clock. relaxed: a hint that orders
  // sleepers for the wake choice (LIFO); the wake itself is decided under the wake lock.
  std::atomic<std::uint64_t> sleep_stamp{0};
  alignas(64) RunQueue bound;    // contexts bound to this engine
};

// A backup thread: it runs one context in a blocking region at a time, off every engine
// (doc/design.md, "Blocking regions").
struct Backup {
  pthread_t thread{};
  sem_t go;                      // posted once per context handed over, and once to exit
  // Written by whoever hands a context over, before the post; read by the backup after its
  // wait (sem_post/sem_wait order them). nullptr with `exit` set: leave.
  Context *ctx = nullptr;
  bool exit = false;
  boost::context::fiber home;    // the backup's own continuation while it runs ctx
  mr::engine::san::Fiber home_san;  // the backup thread's own stack, for the sanitizers
  overflow::AltStack altstack;   // the backup thread's alternate signal stack
  Backup *next_idle = nullptr;   // protected by Runtime::backup_lock
};

namespace {

struct Runtime {
  Params p;
  int n = 0;
  Engine **engines = nullptr;
  RunQueue shared;               // unbound runnable contexts
  Injector injector;             // sparks from threads that are not engines (P1 covers it)
  Census census;
  // Set once by stop() (seq_cst store, proof P4); read by every idle loop, and at the end of
  // every task (MR_shutdown_now): on a line of its own, never written while the runtime runs.
  alignas(64) std::atomic<bool> shutdown{false};
  // Every spawned context arrives here; the primordial waits on it. Written at each spawn and
  // at each spawned context's end, so not on the shutdown flag's line.
  alignas(64) Join spawned{};
  std::mutex free_lock;          // protects the global free caches
  Context *free_small = nullptr, *free_regular = nullptr;
  Context primordial;
  // Topology: loaded only when engines are pinned; nullptr otherwise.
  hwloc_topology_t topo = nullptr;
  hwloc_bitmap_t saved_binding = nullptr;  // engine 0's thread binding before MR_init
  topo::Order any_order;         // the wake order for threads that are not engines
  // relaxed fetch_add: only the order of stamps matters (sleep_stamp).
  std::atomic<std::uint64_t> sleep_clock{0};
  sem_t started;                 // posted by each engine thread once it is bound and running
  bool started_init = false;
  std::mutex backup_lock;        // protects the three fields below
  Backup *idle_backups = nullptr;
  std::vector<Backup *> backups; // every backup thread created, to join at stop
};

Runtime *g = nullptr;
// Written by MR_init/MR_shutdown on the primordial thread; read by any thread (acquire pairs
// with the release store in start()).
std::atomic<bool> g_running{false};

thread_local Engine *t_engine __attribute__((tls_model("initial-exec"))) = nullptr;
// The backup record of a backup thread, nullptr on every other thread. initial-exec, like
// t_engine: the stack overflow handler reads both, and must not call __tls_get_addr.
thread_local Backup *t_backup __attribute__((tls_model("initial-exec"))) = nullptr;

static_assert(sizeof(std::atomic<std::int64_t>) == sizeof(AO_t) &&
                  std::atomic<std::int64_t>::is_always_lock_free,
              "the deque indices must be readable as AO_t");

// Called only by engine e's own thread: make e the current thread's engine (or none).
void set_current(Engine *e) {
  t_engine = e;
  MR_engine_view = e ? &e->view : nullptr;
}

// ---- contexts and caches ----------------------------------------------------------------

std::size_t stack_bytes(StackKind k) {
  return k == StackKind::REGULAR ? g->p.stack_size : g->p.small_stack_size;
}

// Called only by engine e's thread (e may be nullptr: a thread that is not an engine).
Context *get_context(Engine *e, StackKind k) {
  if (e) {
    int &n = k == StackKind::REGULAR ? e->n_free_regular : e->n_free_small;
    Context **cache = k == StackKind::REGULAR ? e->free_regular : e->free_small;
    if (n > 0) {
      bump(e->stats.contexts_reused);
      return cache[--n];
    }
  }
  {
    std::lock_guard<std::mutex> lk(g->free_lock);
    Context *&head = k == StackKind::REGULAR ? g->free_regular : g->free_small;
    if (Context *c = head) {
      head = c->next;
      if (e) bump(e->stats.contexts_reused);
      return c;
    }
  }
  Context *c = context_create(k, stack_bytes(k));
  if (c && e) bump(e->stats.contexts_created);
  return c;
}

// Called only by engine e's thread, from an ontop function: c has finished switching away.
void release_context(Engine *e, Context *c) {
  c->bound = -1;
  int &n = c->kind == StackKind::REGULAR ? e->n_free_regular : e->n_free_small;
  Context **cache = c->kind == StackKind::REGULAR ? e->free_regular : e->free_small;
  if (n < kCacheMax) {
    cache[n++] = c;
    return;
  }
  std::lock_guard<std::mutex> lk(g->free_lock);
  Context *&head = c->kind == StackKind::REGULAR ? g->free_regular : g->free_small;
  c->next = head;
  head = c;
}

Context *context_for_spark(Engine *e, const Task &t) {
  Context *c = get_context(e, StackKind::SMALL);
  if (!c)
    fatal("cannot map a %zu KiB stack for a spark context (out of memory or address space); "
          "lower --small-stack-size or -P",
          g->p.small_stack_size / 1024);
  c->task = t;
  return c;
}

// ---- the census and waking ----------------------------------------------------------------

// Any thread. Relaxed loads: every caller has a seq_cst fence right before (P1, P2, P3).
bool work_visible(const Engine *self) {
  for (int i = 0; i < g->n; i++)
    if (g->engines[i]->deque.size_estimate() > 0) return true;
  if (g->shared.maybe_nonempty() || g->injector.maybe_nonempty()) return true;
  return self && self->bound.maybe_nonempty();
}

void *engine_main(void *arg);

// After a notification was delivered to engine t: if t is lazy and has no thread yet, create it
// (its first act is to consume the notification). Any thread.
void ensure_started(Engine *t) {
  // relaxed pre-check: start_claimed only goes false->true; the exchange decides.
  if (!g->p.lazy_engines || t->start_claimed.load(std::memory_order_relaxed)) return;
  if (t->start_claimed.exchange(true, std::memory_order_acq_rel)) return;
  int rc = pthread_create(&t->thread, nullptr, engine_main, t);
  if (rc != 0)
    fatal("cannot start engine %d (--lazy-engines): %s", t->id, std::strerror(rc));
  t->thread_started.store(true, std::memory_order_release);
}

// Deliver through try_wake_engine (SLEEPING only) and start a lazy engine that got it.
Sent wake_engine(Engine *t, Action a, void *data) {
  Sent r = try_wake_engine(t->sleep, g->census, a, data);
  if (r == Sent::DELIVERED) ensure_started(t);
  return r;
}

// Deliver following kDelivery (try_notify_engine) and start a lazy engine that got it.
Sent notify_engine(Engine *t, Action a, void *data) {
  Sent r = try_notify_engine(t->sleep, g->census, a, data);
  if (r == Sent::DELIVERED) ensure_started(t);
  return r;
}

// Hand a searching unit the caller owns to a sleeping engine, with WORKSTEAL_ADVICE naming
// `origin` (the engine where work is). The sleeper chosen is the closest to origin (its tier
// order) and, within a tier, the one that fell asleep last (doc/design.md, "Which engine is
// woken"). Returns false if no engine was asleep. Any thread.
bool wake_one_with_unit(int origin) {
  Engine *self = t_engine;
  const topo::Order &o = origin >= 0 ? g->engines[origin]->order : g->any_order;
  auto sleeping = [self](int v) {
    const Engine *x = g->engines[v];
    // relaxed: only a hint to skip the lock; try_wake_engine decides under it.
    return x != self && x->sleep.state.load(std::memory_order_relaxed) == State::SLEEPING;
  };
  auto stamp = [](int v) { return g->engines[v]->sleep_stamp.load(std::memory_order_relaxed); };
  for (int k = 0; k < topo::kTiers; k++) {
    std::uint64_t below = UINT64_MAX;
    for (;;) {
      int v = topo::latest_sleeper(o, o.tier_begin(k), o.tier_end[k], below, sleeping, stamp);
      if (v < 0) break;
      below = stamp(v);
      if (wake_engine(g->engines[v], Action::WORKSTEAL_ADVICE,
                      reinterpret_cast<void *>(static_cast<std::intptr_t>(origin))) ==
          Sent::DELIVERED) {
        if (self) bump(self->stats.notifications_sent);
        return true;
      }
    }
  }
  return false;
}

// Give back a searching unit. If it was the last one while engines sleep, look once more for
// work that posters left to this searcher (P2) and wake a sleeper for it. Any thread.
void release_search_unit(int origin) {
  for (;;) {
    std::uint64_t old = g->census.release_searcher();
    if (Census::searching(old) != 1 || Census::sleeping(old) == 0) return;
    // seq_cst fence: proof P2 (the last searcher's release vs a poster that saw it searching).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!work_visible(nullptr)) return;
    if (!g->census.try_claim_searcher()) return;  // someone else searches or nobody sleeps
    if (wake_one_with_unit(origin)) return;
    // every counted sleeper left SLEEPING under us: give the claimed unit back and re-check
  }
}

// The cheap post-work check, after work was published and a seq_cst fence (P1): wake one
// sleeper if engines sleep and none searches. Any thread.
inline void maybe_wake(int origin) {
  std::uint64_t w = g->census.load();
  if (__builtin_expect(Census::sleeping(w) == 0 || Census::searching(w) != 0, 1)) return;
  if (!g->census.try_claim_searcher()) return;
  if (!wake_one_with_unit(origin)) release_search_unit(origin);
}

// ---- scheduling contexts -----------------------------------------------------------------

// Make a suspended context runnable (or resume a thread waiting at a join). Any thread.
void schedule(Context *c) {
  if (c->kind == StackKind::FOREIGN) {
    sem_post(c->wake);  // c is on the waiter's stack: not touched after the post
    return;
  }
  Engine *self = t_engine;
  if (c->bound < 0) {
    g->shared.push(c);
    // seq_cst fence: proof P1 (publish, then read the census).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    maybe_wake(self ? self->id : -1);
    return;
  }
  Engine *t = g->engines[c->bound];
  // A sleeping target gets the context itself (never dropped: only through the lock).
  if (t->sleep.state.load(std::memory_order_relaxed) == State::SLEEPING &&
      wake_engine(t, Action::CONTEXT, c) == Sent::DELIVERED) {
    if (self) bump(self->stats.notifications_sent);
    return;
  }
  t->bound.push(c);
  // seq_cst fence: proof P3 (queue the context, then read the target's state).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Advice until the target is seen in a state that will re-check its queue by itself.
  Sent r = notify_engine(t, Action::CONTEXT_ADVICE, nullptr);
  if (self) bump(r == Sent::DELIVERED ? self->stats.notifications_sent
                                      : self->stats.notifications_dropped);
}

// ---- switching ----------------------------------------------------------------------------

// The two switches every other one is made of. Both name their destination to the sanitizers
// (sanitizer.hpp) and save the source in the ontop function, on the destination's stack.

// Run context c from a stack that is not a context's (a scheduler, a backup thread's loop):
// that stack's continuation goes into `slot` until c switches back to it.
void resume_context(Context *c, san::Fiber &from, bctx::fiber &slot) {
  bctx::fiber f = std::move(c->fiber);
  san::leave(from, c->san);
  (void)std::move(f).resume_with([c, &slot](bctx::fiber &&back) {
    san::arrive(c->san);
    slot = std::move(back);
    return bctx::fiber{};
  });
}

// Leave context self for the continuation `to` (whose stack is `to_san`): self is saved in
// self->fiber, and only then does `publish` run, on the destination's stack (J1).
template <class F>
void leave_context(Context *self, bctx::fiber &&to, san::Fiber &to_san, F publish) {
  san::leave(self->san, to_san);
  (void)std::move(to).resume_with([self, &to_san, publish](bctx::fiber &&back) {
    san::arrive(to_san);
    self->fiber = std::move(back);
    publish();
    return bctx::fiber{};
  });
}

// Called only by engine e's scheduler: run c until something switches back to the scheduler.
void run_context(Engine *e, Context *c) {
  e->current = c;
  if (c->suspended) {
    c->suspended = false;
    bump(e->stats.contexts_resumed);
  }
  resume_context(c, e->sched_san, e->sched);
}

// Called only by a context on engine e: switch to e's scheduler; `publish` runs on the
// scheduler's stack after this context's continuation is saved in self->fiber.
template <class F>
void switch_to_scheduler(Engine *e, Context *self, F publish) {
  e->current = nullptr;
  leave_context(self, std::move(e->sched), e->sched_san, publish);
}

// Called only by the context running on engine e: suspend it until someone
// resumes it. `publish(self)` runs on the scheduler's stack once self is saved, so it may make
// self findable by whoever will resume it (J1); if it returns true instead, self is run again
// at once. Joins, futures and loop control all wait through here.
template <class F>
void suspend_self(Engine *e, const char *what, F publish) {
  Context *self = e->current;
  MR_CHECK(self != nullptr, what);
  self->suspended = true;
  bump(e->stats.contexts_suspended);
  switch_to_scheduler(e, self, [e, self, &publish] {
    if (publish(self)) e->next_ctx = self;  // run_context counts the resumption
  });
}

// The same for a thread that is not an engine: it waits as a FOREIGN record on its own stack,
// which `publish` makes findable; `schedule` of the record posts the thread's semaphore.
template <class F>
void block_foreign(F publish) {
  sem_t sem;
  sem_init(&sem, 0, 0);
  Context self;
  self.kind = StackKind::FOREIGN;
  self.wake = &sem;
  if (!publish(&self))
    while (sem_wait(&sem) != 0) MR_CHECK(errno == EINTR, "sem_wait failed");
  // The post came after whatever made the wait end, and sem_wait synchronises with it.
  sem_destroy(&sem);
}

// Wait until whoever `publish(self)` hands self to resumes it: the context running on engine e
// suspends, or, with e == nullptr, the calling thread blocks. Joins and futures wait here.
template <class F>
void wait_here(Engine *e, const char *what, F publish) {
  if (e)
    suspend_self(e, what, publish);
  else
    block_foreign(publish);
}

// ---- the idle loop ------------------------------------------------------------------------

// Called only by engine e: give back its searching unit if it holds one.
void drop_search_unit(Engine *e) {
  if (!e->holds_search_unit) return;
  e->holds_search_unit = false;
  release_search_unit(e->id);
}

// Called only by engine e: a notifier holds BUSY with e's wake lock; wait for it to finish by
// taking the lock (a blocking wait, not a spin on BUSY).
void wait_out_busy(Engine *e) {
  pthread_mutex_lock(&e->sleep.wake_lock);
  pthread_mutex_unlock(&e->sleep.wake_lock);
}

// Called only by engine e, in IDLE or STEALING, with work in hand: move to WORKING by CAS.
// A notification that arrived meanwhile can only be advice or SHUTDOWN (CONTEXT and work-steal
// advice go to sleepers only): it is absorbed, since a WORKING engine re-checks its queues and
// the shutdown flag at its next working->idle.
void leave_idle(Engine *e) {
  SleepSync &s = e->sleep;
  // acquire: pairs with a notifier's release store of NOTIFIED.
  State cur = s.state.load(std::memory_order_acquire);
  for (;;) {
    if (cur == State::IDLE || cur == State::STEALING) {
      // CAS acq_rel (idle/stealing->working); failure acquire: decide again on what we read.
      if (s.state.compare_exchange_strong(cur, State::WORKING, std::memory_order_acq_rel,
                                          std::memory_order_acquire))
        return;
    } else if (cur == State::BUSY) {
      wait_out_busy(e);
      cur = s.state.load(std::memory_order_acquire);
    } else {
      MR_CHECK(cur == State::NOTIFIED, "engine left idle from an impossible state");
      MR_CHECK(s.action == Action::CONTEXT_ADVICE || s.action == Action::SHUTDOWN,
               "a sleeper's notification reached an engine that was not asleep");
      bump(e->stats.wakeups[static_cast<int>(s.action)]);
      // store-release (notified->working).
      s.state.store(State::WORKING, std::memory_order_release);
      return;
    }
  }
}

// Called only by engine e, now WORKING: it found work, so it stops counting as a searcher.
void after_found_work(Engine *e, const Engine *victim) {
  e->woken_for_work = false;
  e->search_advised = false;  // the advice is used up, however the work was found
  if (!e->holds_search_unit) return;
  e->holds_search_unit = false;
  // The chain: found work while more waits at the victim, and engines sleep: pass the unit on.
  if (victim && victim->deque.size_estimate() > 0 &&
      Census::sleeping(g->census.load()) != 0 && wake_one_with_unit(victim->id))
    return;
  release_search_unit(e->id);
}

// Called only by engine e, in IDLE or STEALING, with work in hand.
void become_working(Engine *e, const Engine *victim) {
  leave_idle(e);
  after_found_work(e, victim);
}

// Called only by engine e: take a spark from the injector into *t.
bool pop_injected(Engine *e, Task *t) {
  Injected *n = g->injector.pop();
  if (!n) return false;
  *t = n->task;
  delete n;
  bump(e->stats.sparks_injected);
  return true;
}

// Called only by engine e: a context from the queues, or a spark from its own deque or the
// injector. Foreign sparks wait until an engine runs out of its own.
Context *take_local(Engine *e) {
  if (Context *c = e->bound.pop()) return c;
  if (Context *c = g->shared.pop()) return c;
  Task t;
  if (e->deque.pop(t)) {
    bump(e->stats.sparks_run_local);
    return context_for_spark(e, t);
  }
  if (pop_injected(e, &t)) return context_for_spark(e, t);
  return nullptr;
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

// Called only by engine e in STEALING with a searching unit. Returns work (and the engine
// WORKING) or nullptr when the rounds are spent or a notification arrived.
// Called only by engine e in STEALING: one steal attempt on v; work (the engine WORKING) or
// nullptr.
Context *try_steal(Engine *e, Engine *v) {
  Task t;
  bump(e->stats.steal_attempts);
  if (v->deque.steal(t) != WsDeque::Steal::TAKEN) {
    bump(e->stats.steal_failures);
    return nullptr;
  }
  bump(e->stats.sparks_stolen);
  become_working(e, v);
  return context_for_spark(e, t);
}

// Pause instructions between two steal rounds. With the default 32 rounds an engine that finds
// nothing searches for about 9 us before it sleeps (a pause takes 29 ns on the AMD EPYC of
// doc/performance.md): about what a sleep and a wake-up cost, which is all that spinning can
// save. With 64 pauses (60 us) a job every millisecond cost 1.8x the CPU of a plain worker
// thread (doc/performance.md, trickle load).
constexpr int kRoundPauses = 8;

// --spin-rounds, where 0 behaves as 1.
int full_spin_rounds() { return g->p.spin_rounds < 1 ? 1 : g->p.spin_rounds; }

Context *steal_rounds_of(Engine *e, int rounds, bool *interrupted);

// Adaptive spinning. A search the engine starts on its own after running out of work is a bet
// that work will appear: if it finds nothing in all its rounds, the engine's next such search
// gets half as many (down to 1); if it finds work, the full --spin-rounds again. A search after
// WORKSTEAL_ADVICE (search_advised) has been told that work is there: it always gets the full
// rounds and does not count. (A polling build's time-out is no such news: its search is the
// engine's own.) An engine fed one job at a time (a trickle) thus stops paying for
// a spin that never pays off, while one whose spins find work keeps them. Only the owner reads
// or writes spin_budget.
Context *steal_rounds(Engine *e) {
  const int full = full_spin_rounds();
  bool interrupted = false;
  if (e->search_advised) {
    e->search_advised = false;
    return steal_rounds_of(e, full, &interrupted);
  }
  Context *c = steal_rounds_of(e, e->spin_budget, &interrupted);
  if (c)
    e->spin_budget = full;
  else if (!interrupted)
    e->spin_budget = e->spin_budget > 1 ? e->spin_budget / 2 : 1;
  return c;
}

// Up to `rounds` steal rounds (the advised victim first, then tier by tier), then the queues and
// the injector, then kRoundPauses pauses. Work (the engine WORKING), or nullptr when the rounds
// are spent, or when a notification or the shutdown flag cut them short (*interrupted set).
Context *steal_rounds_of(Engine *e, int rounds, bool *interrupted) {
  const topo::Order &o = e->order;
  for (int r = 0; r < rounds; r++) {
    // The advised victim first, then tier by tier, each tier from a rotating offset.
    if (int first = e->advised_victim; first >= 0) {
      e->advised_victim = -1;
      if (Context *c = try_steal(e, g->engines[first])) return c;
    }
    for (int k = 0; k < topo::kTiers; k++) {
      int b = o.tier_begin(k);
      unsigned size = static_cast<unsigned>(o.tier_end[k] - b);
      for (unsigned j = 0; j < size; j++) {
        int v = o.victims[static_cast<std::size_t>(b) + (e->steal_offset + j) % size];
        if (Context *c = try_steal(e, g->engines[v])) return c;
      }
    }
    e->steal_offset++;
    if (g->shared.maybe_nonempty() || e->bound.maybe_nonempty() ||
        g->injector.maybe_nonempty()) {
      if (Context *c = e->bound.pop(); c || (c = g->shared.pop())) {
        become_working(e, nullptr);
        return c;
      }
      if (Task t; pop_injected(e, &t)) {
        become_working(e, nullptr);
        return context_for_spark(e, t);
      }
    }
    // acquire: pairs with a notifier's release store of NOTIFIED.
    if (e->sleep.state.load(std::memory_order_acquire) == State::NOTIFIED ||
        g->shutdown.load(std::memory_order_relaxed)) {
      *interrupted = true;
      return nullptr;
    }
    for (int i = 0; i < kRoundPauses; i++) cpu_relax();
  }
  return nullptr;
}

// Called only by engine e, having seen NOTIFIED (acquire).
Next handle_notification(Engine *e, Context **run) {
  SleepSync &s = e->sleep;
  Action a = s.action;
  void *d = s.data;
  bump(e->stats.wakeups[static_cast<int>(a)]);
  switch (a) {
    case Action::CONTEXT:
      *run = static_cast<Context *>(d);
      // store-release (notified->working): no notifier writes a NOTIFIED engine's state.
      s.state.store(State::WORKING, std::memory_order_release);
      after_found_work(e, nullptr);
      return Next::RUN;
    case Action::CONTEXT_ADVICE:
      // store-release; then the loop top re-checks the queues after its fence (P3).
      s.state.store(State::IDLE, std::memory_order_release);
      drop_search_unit(e);
      return Next::LOOK;
    case Action::WORKSTEAL_ADVICE:
      // Only ever delivered to a sleeper, together with a searching unit (Census).
      MR_CHECK(!e->holds_search_unit, "work-steal advice to an engine that was searching");
      s.state.store(State::STEALING, std::memory_order_release);
      e->holds_search_unit = true;
      e->woken_for_work = true;
      e->search_advised = true;
      e->advised_victim = static_cast<int>(reinterpret_cast<std::intptr_t>(d));
      if (e->advised_victim == e->id) e->advised_victim = -1;
      return Next::LOOK;
    case Action::SHUTDOWN:
      return Next::EXIT;
  }
  return Next::LOOK;
}

// Wait on the semaphore (engine e is SLEEPING or already NOTIFIED with a post on its way).
// Returns LOOK when NOTIFIED, LOOK_FROM_WORKING when a polling wait timed out.
Next wait_for_wake(Engine *e) {
  SleepSync &s = e->sleep;
  bump(e->stats.sleeps);
#ifdef MR_WORKSTEAL_POLLING
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  std::uint64_t ns = static_cast<std::uint64_t>(deadline.tv_nsec) +
                     static_cast<std::uint64_t>(g->p.poll_interval_us) * 1000u;
  deadline.tv_sec += static_cast<time_t>(ns / 1000000000u);
  deadline.tv_nsec = static_cast<long>(ns % 1000000000u);
  for (;;) {
    if (sem_clockwait(&s.sem, CLOCK_MONOTONIC, &deadline) == 0) return Next::LOOK;
    if (errno == EINTR) continue;
    MR_CHECK(errno == ETIMEDOUT, "sem_clockwait failed");
    // Timed out: leave SLEEPING ourselves, under our own wake lock, unless a notifier got there.
    pthread_mutex_lock(&s.wake_lock);
    if (s.state.load(std::memory_order_relaxed) == State::SLEEPING) {
      g->census.remove_sleeper();
      s.state.store(State::WORKING, std::memory_order_release);
      pthread_mutex_unlock(&s.wake_lock);
      e->woken_for_work = true;
      return Next::LOOK_FROM_WORKING;
    }
    pthread_mutex_unlock(&s.wake_lock);
    break;  // NOTIFIED: its post is on its way
  }
#endif
  while (sem_wait(&s.sem) != 0) MR_CHECK(errno == EINTR, "sem_wait failed");
  return Next::LOOK;
}

// Called only by engine e in STEALING, having found nothing.
Next fall_asleep(Engine *e) {
  SleepSync &s = e->sleep;
  State expected = State::STEALING;
  // Under our own wake lock, so that no waker sees SLEEPING before the census counts us as a
  // sleeper (a waker removes that unit under the same lock).
  pthread_mutex_lock(&s.wake_lock);
  // CAS acq_rel (stealing->sleeping): fails only on NOTIFIED (a CAS notifier, which does not
  // take the lock), which must not be overwritten; acquire on failure pairs with its store.
  if (!s.state.compare_exchange_strong(expected, State::SLEEPING, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
    pthread_mutex_unlock(&s.wake_lock);
    return Next::LOOK;
  }
  g->census.searcher_to_sleeper();
  e->sleep_stamp.store(g->sleep_clock.fetch_add(1, std::memory_order_relaxed) + 1,
                       std::memory_order_relaxed);
  pthread_mutex_unlock(&s.wake_lock);
  e->holds_search_unit = false;
  if (e->woken_for_work) {
    bump(e->stats.spurious_wakeups);
    e->woken_for_work = false;
  }
  // seq_cst fence: proofs P1, P2, P3, P4 (announce sleep, then the last look).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (g->shutdown.load(std::memory_order_relaxed) || work_visible(e)) {
    pthread_mutex_lock(&s.wake_lock);
    if (s.state.load(std::memory_order_relaxed) == State::SLEEPING) {
      g->census.remove_sleeper();
      s.state.store(State::WORKING, std::memory_order_release);
      pthread_mutex_unlock(&s.wake_lock);
      return Next::LOOK_FROM_WORKING;
    }
    pthread_mutex_unlock(&s.wake_lock);  // a notifier won: consume its post below
  }
  return wait_for_wake(e);
}

// Called only by engine e's scheduler, in WORKING. Returns the next context to run (the engine
// WORKING) or nullptr when the runtime shuts down.
Context *find_work(Engine *e) {
  SleepSync &s = e->sleep;
  // A lazy engine's thread starts SLEEPING with its first notification already delivered.
  bool asleep = e->start_asleep;
  e->start_asleep = false;
  if (asleep) MR_CHECK(wait_for_wake(e) == Next::LOOK, "a lazy engine started without a wake-up");
  for (;;) {
    if (!asleep) {
      // working->idle: plain store-release.
      s.state.store(State::IDLE, std::memory_order_release);
      // seq_cst fence: proof P3 (a bound context queued while we were WORKING) and P4.
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    asleep = false;
    bool leaving = false;  // SHUTDOWN received or the shutdown flag seen
    for (;;) {
      // acquire: pairs with a notifier's release store of NOTIFIED.
      State now = s.state.load(std::memory_order_acquire);
      if (now == State::BUSY) {
        wait_out_busy(e);
        continue;
      }
      if (now == State::NOTIFIED) {
        Context *c = nullptr;
        Next n = handle_notification(e, &c);
        if (n == Next::RUN) return c;
        if (n == Next::EXIT) {
          leaving = true;
          break;
        }
      }
      if (g->shutdown.load(std::memory_order_acquire)) {
        leaving = true;
        break;
      }
      if (Context *c = take_local(e)) {
        become_working(e, nullptr);
        return c;
      }
      State cur = s.state.load(std::memory_order_acquire);
      if (cur != State::IDLE && !e->holds_search_unit) continue;  // notified meanwhile
      if (cur == State::IDLE) {
        State expected = State::IDLE;
        // CAS acq_rel (idle->stealing): fails only on NOTIFIED; acquire pairs with its store.
        if (!s.state.compare_exchange_strong(expected, State::STEALING,
                                             std::memory_order_acq_rel,
                                             std::memory_order_acquire))
          continue;  // BUSY or NOTIFIED: the loop top waits it out or handles it
        g->census.add_searcher();
        e->holds_search_unit = true;
      }
      MR_CHECK(e->holds_search_unit, "an engine is stealing without a searching unit");
      if (g->n > 1) {
        if (Context *c = steal_rounds(e)) return c;
      } else if (g->shared.maybe_nonempty() || e->bound.maybe_nonempty() ||
                 g->injector.maybe_nonempty()) {
        continue;
      }
      if (s.state.load(std::memory_order_acquire) == State::NOTIFIED) continue;
      Next n = fall_asleep(e);
      if (n == Next::LOOK_FROM_WORKING) break;  // back to the outer loop: idle again
    }
    if (leaving) {
      drop_search_unit(e);
      return nullptr;
    }
    // else LOOK_FROM_WORKING: start again from working->idle
  }
}

// Called only by engine e's scheduler (its thread's stack, or engine 0's scheduler fiber).
void scheduler(Engine *e) {
  for (;;) {
    Context *c = e->next_ctx;
    if (c) {
      e->next_ctx = nullptr;
    } else {
      c = find_work(e);
      if (!c) return;
    }
    run_context(e, c);
  }
}

// Called only by engine e's own thread: bind it to its planned PU, or warn and stay unpinned.
void pin_self(Engine *e) {
  if (e->planned_pu < 0 || !g->topo) return;
  std::string why;
  if (topo::bind_thread(g->topo, e->planned_pu, &why))
    e->pu.store(e->planned_pu, std::memory_order_release);
  else
    warning(g->p.quiet, "cannot bind engine %d to processing unit %d: %s; it runs unpinned",
            e->id, e->planned_pu, why.c_str());
}

void *engine_main(void *arg) {
  auto *e = static_cast<Engine *>(arg);
  san::init_thread(e->sched_san);  // the scheduler runs on the thread's own stack
  (void)overflow::altstack_on(e->altstack);
  set_current(e);
  pin_self(e);
  if (!e->start_asleep) sem_post(&g->started);  // MR_init waits only for engines it started
  scheduler(e);
  set_current(nullptr);
  overflow::altstack_off(e->altstack);
  return nullptr;
}

// Any thread: the shutdown notification to every engine but engine 0 (P4).
void notify_shutdown() {
  for (int i = 1; i < g->n; i++)
    (void)try_notify_engine(g->engines[i]->sleep, g->census, Action::SHUTDOWN, nullptr);
}

// Called only by stop(), after the shutdown flag: make sure no lazy engine that never started
// ever will, and give back the census units it holds (its sleeping unit, or the searching unit
// a waker handed it with a notification it never read). The other engines' threads are then
// all known: wait for any that a waker is creating right now.
void retire_lazy_engines() {
  for (int i = 1; g->p.lazy_engines && i < g->n; i++) {
    Engine *x = g->engines[i];
    if (x->start_claimed.exchange(true, std::memory_order_acq_rel)) {
      // A waker claimed it: its pthread_create is done or about to be (or it stops the process).
      while (!x->thread_started.load(std::memory_order_acquire)) sched_yield();
      continue;
    }
    SleepSync &s = x->sleep;
    pthread_mutex_lock(&s.wake_lock);
    State st = s.state.load(std::memory_order_acquire);
    if (st == State::SLEEPING) {
      g->census.remove_sleeper();
    } else {
      MR_CHECK(st == State::NOTIFIED, "a lazy engine that never started left SLEEPING");
      MR_CHECK(s.action != Action::CONTEXT, "a context was handed to a lazy engine at shutdown");
      if (s.action == Action::WORKSTEAL_ADVICE) (void)g->census.release_searcher();
    }
    // Never SLEEPING again: later notifiers find it WORKING and latch or refuse.
    s.state.store(State::WORKING, std::memory_order_release);
    pthread_mutex_unlock(&s.wake_lock);
  }
}

// Called only by engine 0's thread, stopping: its scheduler fiber is suspended in run_context (or
// never started), holding nothing; forget it and free its stack.
void forget_scheduler_fiber(Engine *e0) {
  fiber_forget(e0->sched, e0->sched_stack, e0->sched_san);
}

void destroy_runtime() {
  for (int i = 0; g->engines && i < g->n; i++) {
    Engine *e = g->engines[i];
    if (!e) continue;
    for (int k = 0; k < e->n_free_small; k++) context_destroy(e->free_small[k]);
    for (int k = 0; k < e->n_free_regular; k++) context_destroy(e->free_regular[k]);
    delete e;
  }
  for (Context *head : {g->free_small, g->free_regular}) {
    while (head) {
      Context *next = head->next;
      context_destroy(head);
      head = next;
    }
  }
  delete[] g->engines;
  if (g->saved_binding) hwloc_bitmap_free(g->saved_binding);
  if (g->topo) hwloc_topology_destroy(g->topo);
  if (g->started_init) sem_destroy(&g->started);
  delete g;
  g = nullptr;
}

}  // namespace

// ---- contexts' side -------------------------------------------------------------------------

// A child's arrival at its join, then its next task. Called only by context self, which has just
// run self->task. Returns when self has a new task.
static void finish_task(Context *self, Join *j) {
  Engine *e = current();
  self->bound = -1;
  // acq_rel: release publishes the child's results to the parent; acquire (for the last
  // arrival) pairs with the parent's release in its suspend, so j->parent and its saved
  // continuation are visible (J1).
  // MR_shutdown_now: reach the scheduler, which leaves; run nothing more here.
  bool stopping = g->shutdown.load(std::memory_order_relaxed);
  if (j->count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    Context *p = j->parent;
    // The last arrival is a child only after the parent's own (which set parent first).
    if (p == nullptr)
      fatal("a conjunction's last branch finished before its parent joined: more branches "
            "forked than MR_sync_term_init counted");
    if (p->kind != StackKind::FOREIGN && (p->bound < 0 || p->bound == e->id) && !stopping) {
      // The parent may run here: switch straight to it; self goes to the free cache.
      p->suspended = false;
      bump(e->stats.contexts_resumed);
      e->current = p;
      leave_context(self, std::move(p->fiber), p->san, [e, self] { release_context(e, self); });
      return;
    }
    schedule(p);
  }
  // Prefer waiting contexts to sparks; else run a local spark in this same context.
  if (!stopping && !e->bound.maybe_nonempty() && !g->shared.maybe_nonempty()) {
    Task t;
    if (e->deque.pop(t)) {
      bump(e->stats.sparks_run_local);
      self->task = t;
      return;
    }
  }
  switch_to_scheduler(e, self, [e, self] { release_context(e, self); });
}

void context_loop(Context *self) {
  for (;;) {
    Task t = self->task;
    t.fn(t.env);
    finish_task(self, t.join);
  }
}

// ---- entry points ---------------------------------------------------------------------------

Engine *current() __attribute__((noinline));
Engine *current() {
  // A compiler barrier so the thread-local's address is computed afresh after a switch.
  __asm__ __volatile__("" ::: "memory");
  return t_engine;
}

int engine_id(const Engine *e) { return e ? e->id : -1; }

int bind_here() {
  Engine *e = current();
  if (!e) return MR_ENOTENGINE;
  // Written by the running context itself; whoever resumes it later reads it after the
  // suspension that published the context (as for MR_spawn's binding).
  e->current->bound = e->id;
  return e->id;
}

bool running() { return g_running.load(std::memory_order_acquire); }

int num_engines() { return running() ? g->n : 0; }

// A spark from a thread that is not an engine: into the injector, then the post-work check.
static void inject(const Task &t) {
  auto *n = new (std::nothrow) Injected{t, nullptr};
  if (!n) fatal("out of memory while submitting a spark from a thread that is not an engine");
  g->injector.push(n);
  // seq_cst fence: proof P1, the injector's push fence (push the spark, then read the census).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  maybe_wake(-1);
}

void fork(Join *j, MR_TaskFn fn, void *env) {
  Engine *e = current();
  if (!e) {
    if (!running()) fatal("MR_fork_new_child called while the runtime is not running");
    inject(Task{fn, env, j});
    return;
  }
  e->deque.push(Task{fn, env, j});
  bump(e->stats.sparks_pushed);
  // seq_cst fence: proof P1 (push the spark, then read the census).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  maybe_wake(e->id);
}

// The parent's own arrival at j, after which it waits for the last child (J1). e == nullptr: a
// thread that is not an engine, which blocks (J1 with no continuation to save).
static void suspend_on_join(Engine *e, Join *j) {
  wait_here(e, "join outside a context", [j](Context *self) {
    j->parent = self;
    // acq_rel: release publishes self->fiber and j->parent to the last child; acquire pairs
    // with the children that arrived meanwhile (J1). Zero: every child had arrived.
    return j->count.fetch_sub(1, std::memory_order_acq_rel) == 1;
  });
}

void join_wait(Join *j) {
  Engine *e = current();
  if (!e) {
    if (!running()) fatal("MR_join_and_continue called while the runtime is not running");
    suspend_on_join(nullptr, j);
    return;
  }
  for (;;) {
    // acquire: pairs with the children's release arrivals (their results become visible).
    if (j->count.load(std::memory_order_acquire) == 1) return;
    if (g->shutdown.load(std::memory_order_relaxed)) break;  // MR_shutdown_now: suspend here
    Task t;
    if (!e->deque.pop(t)) break;
    if (t.join != j) {  // an older spark of another conjunction: leave it where it was
      e->deque.push(t);
      break;
    }
    bump(e->stats.sparks_run_local);
    t.fn(t.env);
    // The inline child's arrival. With count 2 only this child and the parent were expected,
    // so no other thread can write the counter: a relaxed store does. Otherwise release RMW.
    if (j->count.load(std::memory_order_relaxed) == 2)
      j->count.store(1, std::memory_order_relaxed);
    else
      j->count.fetch_sub(1, std::memory_order_release);
    e = current();  // t.fn may have suspended and resumed this context on another engine
  }
  suspend_on_join(e, j);
}

// ---- futures -----------------------------------------------------------------------------

namespace {

// One waiter of a future, on the waiter's own stack: a suspended context, or a blocked thread
// that is not an engine. Valid until the waiter is resumed (the signaller reads `next` first).
struct FutureWaiter {
  FutureWaiter *next;
  Context *ctx;  // a suspended context, or a FOREIGN record (block_foreign)
};

// Push w on f's waiter list, unless f is signalled. Returns false if it was (w not pushed).
bool add_waiter(Future *f, FutureWaiter *w) {
  // acquire: if kSignalled, the value is visible to the caller.
  std::uintptr_t s = f->state.load(std::memory_order_acquire);
  for (;;) {
    if (s == Future::kSignalled) return false;
    w->next = reinterpret_cast<FutureWaiter *>(s);
    // CAS release: publishes *w (and the context's saved continuation) to the signaller;
    // failure acquire: as the load above.
    if (f->state.compare_exchange_weak(s, reinterpret_cast<std::uintptr_t>(w),
                                       std::memory_order_release, std::memory_order_acquire))
      return true;
  }
}

}  // namespace

void future_signal(Future *f, std::uintptr_t value) {
  // acq_rel: the first signaller is the only writer of value; a later one must see its value
  // once the state says kSignalled (below).
  if (f->signals.fetch_add(1, std::memory_order_acq_rel) != 0) {
    // A second signal: wait for the first to publish (it is between two stores), then compare.
    // acquire: pairs with the first signaller's exchange.
    while (f->state.load(std::memory_order_acquire) != Future::kSignalled) sched_yield();
    std::uintptr_t first = f->value.load(std::memory_order_relaxed);
    if (first != value)
      fatal("MR_future_signal: future %p signalled twice with different values (%#lx, then "
            "%#lx)",
            static_cast<void *>(f), static_cast<unsigned long>(first),
            static_cast<unsigned long>(value));
    return;
  }
  f->value.store(value, std::memory_order_relaxed);
  // exchange acq_rel: release publishes the value to waiters; acquire sees their nodes.
  std::uintptr_t s = f->state.exchange(Future::kSignalled, std::memory_order_acq_rel);
  MR_CHECK(s != Future::kSignalled, "future signalled by two first signallers");
  for (auto *w = reinterpret_cast<FutureWaiter *>(s); w;) {
    FutureWaiter *next = w->next;  // before waking: the node dies with the waiter's frame
    schedule(w->ctx);
    w = next;
  }
}

bool future_is_signalled(const Future *f) {
  // acquire: a caller that sees true may read what the signaller wrote before signalling.
  return f->state.load(std::memory_order_acquire) == Future::kSignalled;
}

std::uintptr_t future_wait(Future *f) {
  // acquire: pairs with the signaller's exchange, so the value is visible.
  if (f->state.load(std::memory_order_acquire) == Future::kSignalled)
    return f->value.load(std::memory_order_relaxed);
  Engine *e = current();
  FutureWaiter w{nullptr, nullptr};
  // Publish the waiter only once a context is saved: the signaller may resume it at once. If
  // the future was signalled meanwhile, go on at once.
  wait_here(e, "MR_future_wait outside a context", [f, &w](Context *self) {
    w.ctx = self;
    return !add_waiter(f, &w);
  });
  // acquire: pairs with the signaller's exchange (we were woken after it, or saw it in
  // add_waiter).
  MR_CHECK(f->state.load(std::memory_order_acquire) == Future::kSignalled,
           "a future waiter resumed before its future was signalled");
  return f->value.load(std::memory_order_relaxed);
}

const Context *context_on_this_thread() {
  if (Engine *e = t_engine) return e->current;
  if (Backup *b = t_backup) return b->ctx;
  return nullptr;
}

// ---- blocking regions ----------------------------------------------------------------------

namespace {

// The backup thread's own loop: wait for a context, run it until it leaves its blocking region
// (blocking_end switches back here, having put the backup back on the idle list).
void *backup_main(void *arg) {
  auto *b = static_cast<Backup *>(arg);
  t_backup = b;
  san::init_thread(b->home_san);
  (void)overflow::altstack_on(b->altstack);
  for (;;) {
    while (sem_wait(&b->go) != 0) MR_CHECK(errno == EINTR, "sem_wait failed");
    if (b->exit) {
      overflow::altstack_off(b->altstack);
      return nullptr;
    }
    resume_context(b->ctx, b->home_san, b->home);
    // The context has left its region: blocking_end's ontop function put this backup back on the idle
    // list (it may already have a new context: the semaphore counts it) and scheduled c.
  }
}

// Called only by backup b's thread, from blocking_end's ontop function, once its context is
// saved: b is free for the next region. Before the context is scheduled, so that a context that
// begins its next region at once finds b idle instead of making another thread.
void backup_idle(Backup *b) {
  b->ctx = nullptr;
  std::lock_guard<std::mutex> lk(g->backup_lock);
  b->next_idle = g->idle_backups;
  g->idle_backups = b;
}

// An idle backup, a new one while fewer than --max-backup-threads exist, or nullptr. Any thread.
Backup *take_backup() {
  {
    std::lock_guard<std::mutex> lk(g->backup_lock);
    if (Backup *b = g->idle_backups) {
      g->idle_backups = b->next_idle;
      return b;
    }
    if (g->backups.size() >= g->p.max_backup_threads) return nullptr;
  }
  auto *b = new (std::nothrow) Backup;
  if (!b) return nullptr;
  sem_init(&b->go, 0, 0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  // The backup's own stack only holds its loop and the hand-back (blocking_end's ontop).
  pthread_attr_setstacksize(&attr, 256 * 1024);
  int rc = pthread_create(&b->thread, &attr, backup_main, b);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    sem_destroy(&b->go);
    delete b;
    return nullptr;
  }
  std::lock_guard<std::mutex> lk(g->backup_lock);
  try {
    g->backups.push_back(b);
  } catch (const std::bad_alloc &) {
    fatal("out of memory while creating a backup thread");
  }
  return b;
}

// Called only by stop(), once no context can be in a blocking region: end every backup thread.
void stop_backups() {
  for (Backup *b : g->backups) {
    b->exit = true;
    sem_post(&b->go);
  }
  for (Backup *b : g->backups) {
    pthread_join(b->thread, nullptr);
    sem_destroy(&b->go);
    delete b;
  }
  g->backups.clear();
  g->idle_backups = nullptr;
}

// Never inlined, and re-read after every switch: a context moves between threads here.
Backup *current_backup() __attribute__((noinline));
Backup *current_backup() {
  __asm__ __volatile__("" ::: "memory");
  return t_backup;
}

}  // namespace

// Set errno of the thread that runs the caller now. Never inlined: __errno_location() is a
// const function, so a compiler may keep the address it returned before a switch to another
// thread (ThreadSanitizer caught exactly that: the write went to the backup thread's errno).
static void set_errno_here(int v) __attribute__((noinline));
static void set_errno_here(int v) {
  __asm__ __volatile__("" ::: "memory");
  errno = v;
}

void blocking_begin() {
  Engine *e = current();
  if (!e) {
    if (Backup *b = current_backup()) b->ctx->blocking_depth++;
    return;  // a thread that is not an engine blocks nobody else
  }
  Context *c = e->current;
  MR_CHECK(c != nullptr, "MR_blocking_begin outside a context");
  if (c->blocking_depth++ > 0) return;
  Backup *b = take_backup();
  c->offloaded = b != nullptr;
  if (!b) {
    bump(e->stats.blocking_inline);
    return;
  }
  bump(e->stats.blocking_offloaded);
  // The context leaves the engine as a suspension (the engine that runs it after the region
  // counts the resumption), handed over only once it is saved (J1's rule): the backup
  // resumes it at once.
  suspend_self(e, "MR_blocking_begin outside a context", [b](Context *self) {
    b->ctx = self;
    sem_post(&b->go);
    return false;
  });
  // Now on the backup thread, with no engine.
}

void blocking_end() {
  Backup *b = current_backup();
  Context *c = b ? b->ctx : nullptr;
  if (!c) {
    Engine *e = current();
    if (!e) return;  // a thread that is not an engine: nothing began
    c = e->current;
    MR_CHECK(c != nullptr, "MR_blocking_end outside a context");
  }
  if (c->blocking_depth == 0) fatal("MR_blocking_end without a matching MR_blocking_begin");
  if (--c->blocking_depth > 0 || !c->offloaded) return;
  c->offloaded = false;
  int saved_errno = errno;  // the region's last errno, set on the backup thread
  // Back to the backup's loop; once c is saved, make it runnable on an engine again.
  leave_context(c, std::move(b->home), b->home_san, [b, c] {
    backup_idle(b);
    schedule(c);
  });
  // Now on an engine again: on another thread, whose errno is elsewhere.
  set_errno_here(saved_errno);
}

// ---- loop control --------------------------------------------------------------------------

struct LoopControl {
  struct Slot {
    LoopControl *lc;
    MR_TaskFn fn;
    void *env;
    Slot *next_free;
  };
  std::mutex lock;                 // protects everything below
  Slot *free_slots = nullptr;
  Context *waiting = nullptr;      // the master, suspended until a slot is free
  unsigned slots = 0;
  Slot *all = nullptr;
};

namespace {

// Take a free slot, or suspend the calling context (the master) until an iteration gives one
// back. Called only by the loop's master context.
LoopControl::Slot *lc_acquire(LoopControl *lc) {
  {
    std::lock_guard<std::mutex> lk(lc->lock);
    if (LoopControl::Slot *s = lc->free_slots) {
      lc->free_slots = s->next_free;
      return s;
    }
  }
  LoopControl::Slot *got = nullptr;
  // Publish the master only once it is saved; if a slot came free meanwhile, take it and run
  // the master again at once.
  suspend_self(current(), "loop control outside a context", [lc, &got](Context *self) {
    std::lock_guard<std::mutex> lk(lc->lock);
    if (LoopControl::Slot *s = lc->free_slots) {
      lc->free_slots = s->next_free;
      got = s;
      return true;
    }
    lc->waiting = self;
    return false;
  });
  if (!got) {
    // Resumed by lc_release, which handed its slot over in lc->waiting's place.
    std::lock_guard<std::mutex> lk(lc->lock);
    got = lc->free_slots;
    MR_CHECK(got != nullptr, "loop control master resumed without a slot");
    lc->free_slots = got->next_free;
  }
  return got;
}

// Give a slot back and resume the master if it waits for one. Any engine.
void lc_release(LoopControl::Slot *s) {
  LoopControl *lc = s->lc;
  Context *wake = nullptr;
  {
    std::lock_guard<std::mutex> lk(lc->lock);
    s->next_free = lc->free_slots;
    lc->free_slots = s;
    wake = lc->waiting;
    lc->waiting = nullptr;
  }
  if (wake) schedule(wake);
}

void lc_iteration(void *p) {
  auto *s = static_cast<LoopControl::Slot *>(p);
  s->fn(s->env);
  lc_release(s);
}

}  // namespace

LoopControl *lc_create(unsigned slots) {
  auto *lc = new (std::nothrow) LoopControl;
  if (!lc) return nullptr;
  lc->slots = slots;
  lc->all = new (std::nothrow) LoopControl::Slot[slots];
  if (!lc->all) {
    delete lc;
    return nullptr;
  }
  for (unsigned i = 0; i < slots; i++) {
    lc->all[i] = LoopControl::Slot{lc, nullptr, nullptr, lc->free_slots};
    lc->free_slots = &lc->all[i];
  }
  return lc;
}

int lc_spawn(LoopControl *lc, MR_TaskFn fn, void *env) {
  LoopControl::Slot *s = lc_acquire(lc);
  s->fn = fn;
  s->env = env;
  int rc = spawn(lc_iteration, s, -1);
  if (rc != 0) lc_release(s);
  return rc;
}

void lc_finish(LoopControl *lc) {
  // Every slot back in hand means every iteration has finished (lc_release is its last act on
  // the loop; the slot is not touched after the lock is dropped).
  for (unsigned i = 0; i < lc->slots; i++) (void)lc_acquire(lc);
  // Take and drop the lock so that the last lc_release has left its critical section.
  { std::lock_guard<std::mutex> lk(lc->lock); }
  delete[] lc->all;
  delete lc;
}

unsigned lc_default_slots() {
  return g->p.lc_contexts_per_engine * static_cast<unsigned>(g->n);
}

int spawn(MR_TaskFn fn, void *arg, int engine) {
  Engine *e = current();
  // MR_shutdown_now has begun (MR_shutdown closes the counter below instead). relaxed: a
  // context that misses the flag only adds a context that is then dropped and counted.
  if (g->shutdown.load(std::memory_order_relaxed)) return MR_ESHUTDOWN;
  // Count the context in before it exists; refuse once the shutdown wait has ended (count 0).
  std::uint32_t c = g->spawned.count.load(std::memory_order_relaxed);
  do {
    if (c == 0) return MR_ESHUTDOWN;
    // CAS relaxed: only the total order of RMWs on this counter matters here (J1 for the end).
  } while (!g->spawned.count.compare_exchange_weak(c, c + 1, std::memory_order_relaxed));
  Context *ctx = get_context(e, StackKind::REGULAR);
  if (!ctx) {
    // Undo our unit; the primordial cannot be waiting on it alone (we were counted, it is >= 2
    // unless the waiter already left, and it only leaves at 0).
    if (g->spawned.count.fetch_sub(1, std::memory_order_acq_rel) == 1) schedule(g->spawned.parent);
    return MR_ENOMEM;
  }
  ctx->task = Task{fn, arg, &g->spawned};
  ctx->bound = engine;
  schedule(ctx);
  return 0;
}

void stats_get(int i, MR_EngineStats *out) {
  const Counters &c = g->engines[i]->stats;
  MR_EngineStats s{};
  s.size = out->size;
  auto rd = [](const std::atomic<std::uint64_t> &x) { return x.load(std::memory_order_relaxed); };
  s.sparks_pushed = rd(c.sparks_pushed);
  s.sparks_run_local = rd(c.sparks_run_local);
  s.sparks_stolen = rd(c.sparks_stolen);
  s.steal_attempts = rd(c.steal_attempts);
  s.steal_failures = rd(c.steal_failures);
  s.sleeps = rd(c.sleeps);
  for (int k = 0; k < kNumActions; k++) s.wakeups[k] = rd(c.wakeups[k]);
  s.spurious_wakeups = rd(c.spurious_wakeups);
  s.notifications_sent = rd(c.notifications_sent);
  s.notifications_dropped = rd(c.notifications_dropped);
  s.contexts_created = rd(c.contexts_created);
  s.contexts_reused = rd(c.contexts_reused);
  s.contexts_suspended = rd(c.contexts_suspended);
  s.contexts_resumed = rd(c.contexts_resumed);
  s.sparks_injected = rd(c.sparks_injected);
  s.blocking_offloaded = rd(c.blocking_offloaded);
  s.blocking_inline = rd(c.blocking_inline);
  std::size_t n = out->size < sizeof s ? out->size : sizeof s;
  std::memcpy(out, &s, n);
}

namespace {

// The PUs the process may run on: its binding within the topology's allowed set (the whole
// allowed set if the binding cannot be read). Returns a new bitmap or nullptr.
hwloc_bitmap_t process_cpuset(hwloc_topology_t topo) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (!set) return nullptr;
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0)
    hwloc_bitmap_and(set, set, hwloc_topology_get_allowed_cpuset(topo));
  if (hwloc_bitmap_iszero(set)) hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo));
  return set;
}

// Load the topology, plan where engines run and compute every engine's victim order.
// Called only by start(), before any engine thread exists.
void place_engines() {
  std::vector<int> plan(static_cast<std::size_t>(g->n), -1);
  if (g->p.pinning != Pinning::NONE) {
    if (hwloc_topology_init(&g->topo) != 0) {
      g->topo = nullptr;
    } else if (hwloc_topology_load(g->topo) != 0) {
      hwloc_topology_destroy(g->topo);
      g->topo = nullptr;
    }
    if (!g->topo) {
      warning(g->p.quiet, "cannot read the machine's topology (hwloc); engines run unpinned");
    } else {
      hwloc_bitmap_t allowed = process_cpuset(g->topo);
      std::string why;
      plan = topo::plan_pinning(g->topo, allowed, g->n, g->p.pinning, &why);
      if (allowed) hwloc_bitmap_free(allowed);
      if (!why.empty()) warning(g->p.quiet, "%s", why.c_str());
      g->saved_binding = hwloc_bitmap_alloc();
      if (g->saved_binding &&
          hwloc_get_cpubind(g->topo, g->saved_binding, HWLOC_CPUBIND_THREAD) != 0) {
        hwloc_bitmap_free(g->saved_binding);
        g->saved_binding = nullptr;
      }
    }
  }
  std::vector<topo::Order> orders = topo::steal_orders(g->topo, plan);
  for (int i = 0; i < g->n; i++) {
    g->engines[i]->planned_pu = plan[static_cast<std::size_t>(i)];
    g->engines[i]->order = std::move(orders[static_cast<std::size_t>(i)]);
  }
  g->any_order = topo::any_order(g->n);
}

}  // namespace

int engine_cpu(int i) { return g->engines[i]->pu.load(std::memory_order_acquire); }

void print_stats(FILE *out) {
  // Rows: each engine, then the totals. Columns: the counters, each as wide as its widest figure.
  constexpr int kCols = 16 + kNumActions;
  static const char *const names[kCols] = {
      "pushed", "local", "stolen", "inject", "offload", "inplace", "steals", "failed", "sleeps", "spurious", "sent", "dropped",
      "created", "reused", "suspend", "resume", "w:ctx", "w:adv", "w:steal", "w:shut"};
  std::vector<std::uint64_t> v(static_cast<std::size_t>((g->n + 1) * kCols), 0);
  for (int i = 0; i < g->n; i++) {
    MR_EngineStats st{};
    st.size = sizeof st;
    stats_get(i, &st);
    const std::uint64_t row[kCols] = {
        st.sparks_pushed,      st.sparks_run_local,      st.sparks_stolen,
        st.sparks_injected,    st.blocking_offloaded,    st.blocking_inline,
        st.steal_attempts,     st.steal_failures,        st.sleeps,
        st.spurious_wakeups,   st.notifications_sent,    st.notifications_dropped,
        st.contexts_created,   st.contexts_reused,       st.contexts_suspended,
        st.contexts_resumed,   st.wakeups[0],            st.wakeups[1],
        st.wakeups[2],         st.wakeups[3]};
    for (int c = 0; c < kCols; c++) {
      v[static_cast<std::size_t>(i * kCols + c)] = row[c];
      v[static_cast<std::size_t>(g->n * kCols + c)] += row[c];
    }
  }
  int width[kCols];
  for (int c = 0; c < kCols; c++) {
    width[c] = static_cast<int>(std::strlen(names[c]));
    int digits = std::snprintf(nullptr, 0, "%llu",
                               static_cast<unsigned long long>(v[static_cast<std::size_t>(
                                   g->n * kCols + c)]));
    if (digits > width[c]) width[c] = digits;
  }
  std::fprintf(out, "mrengine statistics, %d engine(s)\n%-6s %4s", g->n, "engine", "cpu");
  for (int c = 0; c < kCols; c++) std::fprintf(out, " %*s", width[c], names[c]);
  std::fprintf(out, "\n");
  for (int i = 0; i <= g->n; i++) {
    if (i < g->n)
      std::fprintf(out, "%-6d %4d", i, engine_cpu(i));
    else
      std::fprintf(out, "%-6s %4s", "total", "");
    for (int c = 0; c < kCols; c++)
      std::fprintf(out, " %*llu", width[c],
                   static_cast<unsigned long long>(v[static_cast<std::size_t>(i * kCols + c)]));
    std::fprintf(out, "\n");
  }
  std::fflush(out);
}

int allowed_pus() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return 1;
  int n = 1;
  if (hwloc_topology_load(topo) == 0) {
    if (hwloc_bitmap_t set = process_cpuset(topo)) {
      int w = hwloc_bitmap_weight(set);
      if (w > 0) n = w;
      hwloc_bitmap_free(set);
    }
  }
  hwloc_topology_destroy(topo);
  return n;
}

int start(const Params &p, std::string *err) {
  g = new (std::nothrow) Runtime;
  if (!g) return MR_ENOMEM;
  g->p = p;
  g->n = p.engines;
  g->spawned.count.store(1, std::memory_order_relaxed);  // the primordial's own unit
  if (sem_init(&g->started, 0, 0) != 0) {
    destroy_runtime();
    return MR_ENOMEM;
  }
  g->started_init = true;
  g->engines = new (std::nothrow) Engine *[static_cast<std::size_t>(g->n)]();
  if (!g->engines) {
    destroy_runtime();
    return MR_ENOMEM;
  }
  for (int i = 0; i < g->n; i++) {
    g->engines[i] = new (std::nothrow) Engine(i);
    if (!g->engines[i]) {
      destroy_runtime();
      return MR_ENOMEM;
    }
    g->engines[i]->spin_budget = full_spin_rounds();
  }
  Engine *e0 = g->engines[0];
  e0->start_claimed.store(true, std::memory_order_relaxed);  // its thread is the caller's
  g->primordial.kind = StackKind::PRIMORDIAL;
  g->primordial.bound = 0;
  san::init_thread(g->primordial.san);  // the caller's own stack
  e0->current = &g->primordial;
  try {
    place_engines();
    e0->sched = bctx::fiber(std::allocator_arg, RecordingStack(256 * 1024, &e0->sched_stack),
                            [e0](bctx::fiber &&from) {
                              (void)from;
                              scheduler(e0);
                              fatal("engine 0's scheduler ended while the runtime runs");
                              return bctx::fiber{};
                            });
    san::init_stack(e0->sched_san, e0->sched_stack);
  } catch (const std::bad_alloc &) {
    destroy_runtime();
    if (err) *err = "out of memory while starting the runtime";
    return MR_ENOMEM;
  }
  for (int i = 0; i < g->n; i++) {
    Engine *e = g->engines[i];
    e->view.deque_top = static_cast<const volatile AO_t *>(e->deque.top_address());
    e->view.deque_bottom = static_cast<const volatile AO_t *>(e->deque.bottom_address());
    e->view.spark_threshold = static_cast<AO_t>(p.granularity_factor) * static_cast<AO_t>(g->n);
    e->view.version = MR_ENGINE_VIEW_VERSION;
  }
  set_current(e0);
  pin_self(e0);
  overflow::install();
  (void)overflow::altstack_on(e0->altstack);
  if (p.lazy_engines) {
    // Engines 1..N-1 sleep without a thread; the first notification delivered to one starts it
    // (ensure_started). They count as sleepers, so the post-work check (P1) wakes them.
    for (int i = 1; i < g->n; i++) {
      g->engines[i]->start_asleep = true;
      g->engines[i]->sleep.state.store(State::SLEEPING, std::memory_order_relaxed);
    }
    g->census.start_with_sleepers(static_cast<std::uint32_t>(g->n - 1));
  }
  // store-release: publishes g (and the lazy engines' states) to threads that test running().
  g_running.store(true, std::memory_order_release);
  int created = 1;
  for (int i = 1; i < g->n && !p.lazy_engines; i++) {
    Engine *e = g->engines[i];
    int rc = pthread_create(&e->thread, nullptr, engine_main, e);
    if (rc != 0) {
      if (err) *err = "cannot create engine thread " + std::to_string(i) + " of " +
                      std::to_string(g->n);
      g->shutdown.store(true, std::memory_order_seq_cst);
      notify_shutdown();
      for (int k = 1; k < i; k++) pthread_join(g->engines[k]->thread, nullptr);
      g_running.store(false, std::memory_order_release);
      if (g->saved_binding) hwloc_set_cpubind(g->topo, g->saved_binding, HWLOC_CPUBIND_THREAD);
      set_current(nullptr);
      forget_scheduler_fiber(e0);
      overflow::altstack_off(e0->altstack);
      overflow::uninstall();
      destroy_runtime();
      return MR_EAGAIN;
    }
    e->start_claimed.store(true, std::memory_order_relaxed);
    e->thread_started.store(true, std::memory_order_release);
    created++;
  }
  // MR_init returns once every engine is bound and running (so MR_engine_cpu is exact).
  for (int i = 1; i < created; i++)
    while (sem_wait(&g->started) != 0) MR_CHECK(errno == EINTR, "sem_wait failed");
  return 0;
}

namespace {

// The end of both shutdowns, on the primordial context (engine e = engine 0): stop every engine
// once its running context has reached the scheduler, then the backups; free everything,
// counting the sparks and contexts nobody will run into *dropped (if not null).
void finish_stop(Engine *e, MR_ShutdownReport *dropped) {
  // seq_cst store + fence: proof P4 (the flag, then each engine's state).
  g->shutdown.store(true, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  retire_lazy_engines();
  notify_shutdown();
  for (int i = 1; i < g->n; i++) {
    Engine *x = g->engines[i];
    // acquire: pairs with the creator's release store after pthread_create wrote x->thread.
    if (x->thread_started.load(std::memory_order_acquire)) pthread_join(x->thread, nullptr);
  }
  // MR_shutdown: every context has finished, so every backup is idle or about to be.
  // MR_shutdown_now: a backup's context may still be in its region; it is queued (and dropped)
  // when the region ends, and the backup leaves after that.
  stop_backups();
  overflow::altstack_off(e->altstack);
  overflow::uninstall();
  forget_scheduler_fiber(e);
  if (g->p.print_stats) print_stats(stderr);
  if (g->saved_binding) (void)hwloc_set_cpubind(g->topo, g->saved_binding, HWLOC_CPUBIND_THREAD);
  std::uint64_t w = g->census.load();
  MR_CHECK(Census::searching(w) == 0 && Census::sleeping(w) == 0,
           "census not zero after shutdown (a searching or sleeping unit was lost)");
  std::uint64_t sparks = 0;
  for (int i = 0; i < g->n; i++)
    sparks += static_cast<std::uint64_t>(g->engines[i]->deque.size_estimate());
  while (Injected *n = g->injector.pop()) {
    delete n;
    sparks++;
  }
  g_running.store(false, std::memory_order_release);
  set_current(nullptr);
  destroy_runtime();  // the free caches: every context still alive after is queued or waiting
  std::size_t contexts = context_drop_all();
  if (dropped) {
    dropped->contexts_dropped = contexts;
    dropped->sparks_dropped = sparks;
  }
}

}  // namespace

int stop() {
  Engine *e = current();
  if (!e || e->id != 0 || e->current != &g->primordial) return MR_ENOTENGINE;
  // Wait for every spawned context, and close the counter at zero so that no spawn can slip in
  // after: the primordial always takes the suspend path (its decrement is the last or it is
  // resumed by the last one).
  suspend_on_join(e, &g->spawned);
  finish_stop(e, nullptr);
  return 0;
}

int stop_now(MR_ShutdownReport *dropped) {
  Engine *e = current();
  if (!e || e->id != 0 || e->current != &g->primordial) return MR_ENOTENGINE;
  finish_stop(e, dropped);
  return 0;
}

}  // namespace mr::engine

// The exported thread-local of mrengine.h. Written only through set_current.
extern "C" {
MR_EXTERN __thread const MR_EngineView *MR_engine_view = nullptr;
}
