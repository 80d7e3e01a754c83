// engine.hpp: the records every part of the scheduler shares: an engine's two parts (Shared,
// which any thread reaches, and the whole Engine, which only the engine's own thread is handed),
// the Runtime of one MR_init, and which engine the calling thread is.
//
// Terms (doc/design.md has the protocol with its proofs, P1..P4, D1, J1, which the comments of
// every file here cite; its "map of the code" lists the files in the order work flows):
//   engine     an OS thread that runs contexts; engine 0 is the thread that called MR_init.
//   scheduler  the code an engine runs when no context runs on it: on engines 1..N-1 the
//              thread's own stack, on engine 0 a fiber of its own (the thread's stack belongs to
//              the primordial context). Only the scheduler walks the idle loop (idle.cpp).
//   context    a fiber that runs tasks (context.hpp); it switches to the scheduler, or straight
//              to another context, when it suspends or finishes (switch.hpp).
//   census     how many engines search for work and how many sleep (sleep.hpp, Census).
//   owner      an engine's own thread. A function that takes an `Engine *` is called only by
//              that engine's owner; one that takes a `Shared *` may be handed any engine.
#ifndef MR_ENGINE_ENGINE_HPP
#define MR_ENGINE_ENGINE_HPP

#include <pthread.h>
#include <semaphore.h>

#include <boost/context/fiber.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "channel.hpp"
#include "context.hpp"
#include "counters.hpp"
#include "mrengine.h"
#include "overflow.hpp"
#include "params.hpp"
#include "runnext.hpp"
#include "runqueue.hpp"
#include "sanitizer.hpp"
#include "sleep.hpp"
#include "task.hpp"
#include "timer.hpp"
#include "topology.hpp"
#include "wsdeque.hpp"

namespace mr::engine {

inline constexpr int kCacheMax = 16;  // free contexts an engine keeps for itself, per stack size

struct Backup;
struct IoEngine;
struct PollEngine;
namespace trace {
class Tracer;
}

// One engine's searching state (idle.cpp, steal.cpp): what it holds of the census and where it
// looks. Owner only.
struct Search {
  bool holds_unit = false;      // this engine owns one searching unit of the census
  bool woken_for_work = false;  // woken by advice or poll and has not found work yet
  bool advised = false;         // woken by WORKSTEAL_ADVICE and not searched since
  int advised_victim = -1;      // from WORKSTEAL_ADVICE: steal here first
  unsigned steal_offset = 0;    // rotating start of the victim scan within each tier
  int spin_budget = 1;          // steal rounds of its next own search (idle.cpp); set at start
};

// gc::Stack's roots for an engine's scheduler stack: the slots of the engine's deque (owner: the
// Engine). Called by a collector with every thread stopped.
std::size_t deque_roots(const void *owner, MR_GcStackFn fn, void *arg);

// Whether an engine has a thread (Shared::start; doc/design.md section 15).
enum class StartState : std::uint8_t { UNCLAIMED, CLAIMED, RUNNING, ABSENT };

// The part of an engine that any thread may reach (Runtime::engines): what thieves, wakers,
// timer takers, the statistics and the shutdowns read or write. Each hot word that other
// threads write is on a line of its own.
struct Shared {
  explicit Shared(int i) : id(i), timers{i} {}

  const int id;
  topo::Order order;  // victims (and engines to wake for work here), tier by tier;
                      // written at start, before the engine's thread exists
  pthread_t thread{};
  // Whether the engine has a thread (doc/design.md section 15). Lazy engines begin UNCLAIMED;
  // the one CAS from UNCLAIMED to CLAIMED (acq_rel) decides who creates the thread (a waker that
  // delivered a notification, a spawn bound here) or who retires the engine (MR_shutdown, to
  // ABSENT). The claimant stores RUNNING (release: `thread` is written) or ABSENT (release: the
  // creation failed and the engine is retired); anyone who finds CLAIMED waits for one of them
  // with acquire loads. stop() joins the RUNNING ones.
  std::atomic<StartState> start{StartState::UNCLAIMED};
  // The PU this engine is bound to, or -1. Written (release) by the engine's thread once it is
  // bound; read (acquire) by anyone. An engine that has not started yet reports -1.
  std::atomic<int> pu{-1};
  WsDeque deque;         // owner pushes/pops; thieves steal
  MR_EngineView view{};  // what generated code reads inline (set in start; then only
                         // its `channel`, by the owner at each switch, and `slow`)
  // Owner-written, read by anyone (MR_stats_get, MR_channel_stats sum them): the counters, and
  // per channel the counts of contexts run and ns run.
  Counters stats;
  std::atomic<std::uint64_t> channel_runs[kMaxChannels]{};
  std::atomic<std::uint64_t> channel_ns[kMaxChannels]{};
  alignas(64) SleepSync sleep;  // the sleep-sync record
  // When the engine last fell asleep, from Runtime::sleep_clock. relaxed: a hint that orders
  // sleepers for the wake choice (LIFO); the wake itself is decided under the wake lock.
  std::atomic<std::uint64_t> sleep_stamp{0};
  alignas(64) RunQueue bound;  // contexts bound to this engine
  // Timers armed on this engine (timer.hpp), and the deadline of its current timed wait (kNever
  // while it is not in one): relaxed, ordered by the fences of TM1 (doc/design.md, "Timers").
  alignas(64) TimerHeap timers;
  std::atomic<std::uint64_t> wait_deadline{kNever};
  // The hand-off slot: the context that a context running here made runnable last (a future
  // signal, a join's last arrival), which this engine runs next, at the running context's next
  // suspension, without its scheduler (Go's runnext). A Context *, with kRunnextBound set if
  // it is bound to this engine. Written by the owner (exchange) and by thieves, which take an
  // unbound one (CAS) when the engine's deque is empty; see section 6 of doc/design.md.
  alignas(64) std::atomic<std::uintptr_t> runnext{0};
#ifdef MR_DEBUG
  // The liveness watchdog's record (watchdog.hpp): one past the newest spark the engine still
  // held when it last switched to a context (0: none), and since when. Owner-written, relaxed.
  std::atomic<std::int64_t> strand_end{0};
  std::atomic<std::uint64_t> strand_since{0};
#endif
};

// The whole engine: its shared part and what only its own thread touches. Only that thread's
// code is handed an Engine (t_engine, this_engine(), the scheduler's and the switches'
// parameters); other threads reach an engine through Runtime::engines, as a Shared, so the
// compiler refuses them the fields below. Those start on a line of their own, away from the
// words other threads write.
struct Engine : Shared {
  explicit Engine(int i) : Shared(i) {
    // Listed with its scheduler's stack, the engine's deque is a root range for a collector: a
    // spark's env may wait there with no other reference (mrengine_gc.h).
    sched_gc.owner = static_cast<const Shared *>(this);
    sched_gc.roots = deque_roots;
  }

  alignas(64) Context *current = nullptr;  // the context running on this engine
  Context *next_ctx = nullptr;  // run this before looking for work (a join that completed)
  unsigned handoffs = 0;        // direct switches to `runnext` since the scheduler last ran
  // timers.lowered() at the engine's last cover of its own timers (TM1): a context run without
  // the idle loop covers them again only if an arm made a new earliest since (timer_duty.cpp).
  std::uint64_t covered = 0;
  Search search;
  // The policy's state (policy.cpp): the level served now and since when (round-robin), and per
  // level the channel taken from last (channels of one level alternate).
  int rr_level = 0;
  std::uint64_t rr_since = 0;
  signed char last_channel[kLevels] = {};
  // Per-channel time: the channel of the context running now (-1: none) and since when.
  int run_channel = -1;
  std::uint64_t run_since = 0;
  boost::context::fiber sched;  // the scheduler's continuation while a context runs
  san::Fiber sched_san;         // the scheduler's stack, for the sanitizers (sanitizer.hpp)
  gc::Stack sched_gc;           // and for a collector (gc.hpp)
  boost::context::stack_context sched_stack{};  // engine 0 only: its scheduler fiber's stack
  Context *free_small[kCacheMax];               // the engine's free-context cache (cache.cpp)
  Context *free_regular[kCacheMax];
  int n_free_small = 0, n_free_regular = 0;
  bool start_asleep = false;    // lazy: the thread begins by consuming its wake-up (set at start)
  int planned_pu = -1;          // from the pinning plan; -1 for none
  overflow::AltStack altstack;  // the engine thread's alternate signal stack
};

// The whole record of engine s, for the code that makes, starts and frees engines
// (lifecycle.cpp) and drains their caches at the end (cache.cpp): only while no thread owns it,
// before its thread starts or after it has stopped, and by the thread body it is handed to.
inline Engine *unowned(Shared *s) { return static_cast<Engine *>(s); }

// The runtime of one MR_init: made by start(), freed by the shutdowns or by a start that fails
// (lifecycle.cpp).
struct Runtime {
  Params p;
  int n = 0;
  Shared **engines = nullptr;  // every engine's shared part (its owner has it whole)
  Channels channels;           // unbound runnable contexts, by channel (channel.hpp)
  Injector injector;           // sparks from threads that are not engines (P1 covers it)
  Census census;
  // Set once when engines are stopped (seq_cst store, proof P4); read by every idle loop, and at
  // the end of every task (MR_shutdown_now): on a line of its own, never written while the
  // runtime runs.
  alignas(64) std::atomic<bool> shutdown{false};
  // Set once when MR_shutdown begins (seq_cst store): from then on the contexts and sparks of
  // drop channels are dropped when they would next run (doc/design.md, "Closing"). Read
  // relaxed on the scheduler's paths; never written while the runtime runs before that.
  std::atomic<bool> closing{false};
  // The drop channels that MR_channel_close closed, a bit each (set once, fetch_or relaxed in
  // close.cpp): their spawned contexts are dropped when they would next run. Read relaxed.
  std::atomic<std::uint64_t> closed_drops{0};
  bool timing = false;  // per-channel time is measured (--stats, round-robin); frozen
#ifdef MR_DEBUG
  struct Watchdog *watchdog = nullptr;  // the debug build's liveness watchdog (watchdog.hpp)
#endif
  // Every spawned context arrives here; the primordial waits on it. Written at each spawn and
  // at each spawned context's end, so not on the shutdown flag's line.
  alignas(64) Join spawned{};
  // Threads that are not engines inside schedule() (wake.cpp): the shutdowns wait for none to
  // be left before they stop the engines and free the runtime (doc/design.md, "Closing").
  std::atomic<int> outside_posts{0};
  // Spawned contexts of drop channels arrive here instead: it keeps a unit of its own, so its
  // count never reaches zero and nobody waits on it.
  Join spawned_drop{};
  // What every context runs (join.cpp's context body) and every engine thread runs
  // (lifecycle.cpp's thread body): set by start(), so that the lower files that create contexts
  // and lazy engine threads need not call up.
  ContextBody context_body = nullptr;
  void *(*engine_thread)(void *engine) = nullptr;
  std::mutex free_lock;  // protects the global free caches (cache.cpp)
  Context *free_small = nullptr, *free_regular = nullptr;
  Context primordial;
  topo::Placement place;  // the pinning plan, victim orders, saved binding (topology.hpp)
  // relaxed fetch_add: only the order of stamps matters (sleep_stamp).
  std::atomic<std::uint64_t> sleep_clock{0};
  sem_t started;  // posted by each engine thread once it is bound and running
  bool started_init = false;
  // Blocking regions' backup threads (blocking.cpp).
  std::mutex backup_lock;  // protects the two fields below
  Backup *idle_backups = nullptr;
  std::vector<Backup *> backups;  // every backup thread created or being created, to join at stop
  PollEngine *polls = nullptr;    // one per engine: its polled waits (poll_wait.hpp)
  IoEngine *io = nullptr;         // MR_CONFIG_FD_WAITS: one per engine (io_wait.hpp), or none
  // The runtime's trace (trace.hpp): its buffers, its file, its markers; made by start() (before
  // any engine thread runs), freed with the runtime. The scheduler records through the hooks of
  // events.hpp.
  trace::Tracer *tracer = nullptr;
};

// The globals below are the library's own: hidden, so that code in the library reaches them
// directly rather than through the GOT (the per-spark paths read g_rt).
#pragma GCC visibility push(hidden)

// The running runtime, or nullptr. Written only by start() and when it is freed, on the
// primordial thread, while no other thread of the runtime reads it.
extern Runtime *g_rt;

// Is g_rt running? Stored (release) by start() and when it is freed; loaded (acquire) by
// running().
extern std::atomic<bool> g_running;

// Does a runtime exist or is one being built or freed? start() takes it (an exchange: of racing
// MR_inits one wins, the others see it taken and refuse with MR_EBUSY); it is given back only
// once the runtime is freed (destroy_runtime), so that no start overlaps a shutdown's last steps.
extern std::atomic<bool> g_claimed;

// The engine of the calling thread, nullptr on a thread that is not an engine. initial-exec: the
// stack overflow handler reads it and must not call __tls_get_addr; constinit: no dynamic
// initialisation, so no init-function check on each read. Code that may switch contexts between
// two uses reads it through this_engine() (a context may resume on another thread); code that
// does not switch may read it directly.
extern constinit thread_local Engine *t_engine __attribute__((tls_model("initial-exec")));

#pragma GCC visibility pop

// Called only by engine e's own thread: make e the current thread's engine (or none), and its
// view the one generated code reads (MR_engine_view).
void set_current(Engine *e);

// Why the inline fork and join of mrengine.h must call the library (MR_EngineView.slow).
enum class SlowReason : AO_t { SHUTDOWN = 1, TRACING = 2 };

// Set or clear one reason in every engine's view. Any thread while the runtime runs.
void set_inline_forks(SlowReason why, bool slow);

// The engine whose thread is running the caller, or nullptr. Never inlined, so that a context
// that migrated between threads re-reads the thread-local (a compiler may keep a thread-local's
// address across calls it can see into).
Engine *this_engine() __attribute__((noinline));

// Is the runtime running (between MR_init's start and the end of a shutdown)? Any thread.
bool running();

// The number of engines, or 0 when the runtime is not running. Any thread.
int num_engines();

// -1 for nullptr (a thread that is not an engine).
inline int engine_id(const Shared *e) { return e ? e->id : -1; }

// The OS index of the PU engine e is bound to, or -1. Any thread while running.
int engine_cpu(int e);

// Does channel ch exist? Does it order its contexts by deadline? Any thread while running.
inline bool channel_exists(int ch) { return g_rt->channels.exists(ch); }
inline bool channel_by_deadline(int ch) { return g_rt->channels[ch].kind == ChannelKind::DEADLINE; }

// Might there be a context in a channel or in e's bound queue (e may be nullptr), or a spark in
// the injector? Relaxed hints: a caller that needs the answer ordered puts a seq_cst fence
// before (P1, P3), and one that finds them stale looks again later.
inline bool queued_work_maybe(const Shared *e) {
  // relaxed runnext load: as the work word, a hint ordered by the caller's fence.
  return g_rt->channels.work() != 0 || g_rt->injector.maybe_nonempty() ||
         (e && (e->bound.maybe_nonempty() || e->runnext.load(std::memory_order_relaxed) != 0));
}

// The channel a context is queued in when it becomes runnable: its own when it starts, its
// own channel's followup after a suspension.
inline int queue_channel(const Context *c) {
  return c->suspended ? g_rt->channels.followup(c->channel) : c->channel;
}

// Is c a spawned context whose function has not returned, of a drop channel that
// MR_channel_close closed? Any thread that is about to run c. The paths that already know the
// runtime is not closing (a hand-off, a join's switch to its parent) ask only this.
inline bool dropped_by_close(const Context *c) {
  // relaxed: a context that misses the bit runs once more, to its next suspension.
  return c->spawned.fn &&
         ((g_rt->closed_drops.load(std::memory_order_relaxed) >> c->channel) & 1) != 0;
}

// Is c to be dropped rather than run? MR_shutdown has begun and c's channel drops, or
// dropped_by_close(c). Any thread that is about to run c.
inline bool dropping(const Context *c) {
  // relaxed: as above.
  return (g_rt->closing.load(std::memory_order_relaxed) &&
          g_rt->channels[c->channel].close == Close::DROP) ||
         dropped_by_close(c);
}
inline bool dropping(const Join *j) {
  return g_rt->closing.load(std::memory_order_relaxed) &&
         g_rt->channels[static_cast<int>(j->channel)].close == Close::DROP;
}

}  // namespace mr::engine

#endif
