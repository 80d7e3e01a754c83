// engine.hpp: engines, the idle loop, joins and the scheduler's entry points.
//
// The terms and the protocol are in doc/design.md; the step numbers in the comments of
// engine.cpp (P1..P4, D1, J1) name its proofs.
#ifndef MR_ENGINE_ENGINE_HPP
#define MR_ENGINE_ENGINE_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "mrengine.h"
#include "task.hpp"

namespace mr::engine {

struct Context;
struct Engine;

// --thread-pinning (doc/options.md): the order is the order of the option's choices.
enum class Pinning { NONE, CORES, PUS };

// What the scheduler needs from the options (runtime/options.cpp validates them).
struct Params {
  int engines = 1;
  int spin_rounds = 32;
  std::size_t stack_size = 1024 * 1024;
  std::size_t small_stack_size = 256 * 1024;
  unsigned poll_interval_us = 1000;
  Pinning pinning = Pinning::NONE;
  unsigned lc_contexts_per_engine = 4;  // loop control: default worker slots per engine
  unsigned granularity_factor = 8;  // MR_par_cond_local_wsdeque_length: spark below factor x engines
  unsigned max_backup_threads = 64;  // blocking regions: threads that run blocked contexts
  bool lazy_engines = false;  // start engines 1..N-1 only when work first needs them
  bool print_stats = false;  // --stats: a table per engine on stderr at shutdown
  bool quiet = false;        // MR_CONFIG_QUIET: no warnings on stderr
};

// The inside of an MR_SyncTerm: the number of arrivals still expected (every forked branch plus
// the parent's own), and the parent, set when it suspends.
//   count: decremented by each child (release; acq_rel for the one that may be last) and by the
//          parent only after it has finished suspending (J1 in doc/design.md): so whoever brings
//          it to zero knows the parent's continuation is saved and may resume it.
//   parent: written by the parent before its decrement; read by the last arrival after its.
struct Join {
  std::atomic<std::uint32_t> count;
  Context *parent;
};
static_assert(sizeof(Join) <= sizeof(MR_SyncTerm), "MR_SyncTerm too small for Join");
static_assert(alignof(Join) <= alignof(MR_SyncTerm), "MR_SyncTerm alignment too small for Join");

// The inside of an MR_Future (doc/design.md, "Futures"). A zeroed Future is unsignalled with no
// waiters.
//   state:   0 or the head of the waiter list (FutureWaiter *, each on its waiter's stack), or
//            kSignalled. Waiters push themselves by CAS (release, so their node is visible to
//            the signaller); the one signaller exchanges it for kSignalled (acq_rel) and so takes
//            the whole list at once. Readers that see kSignalled (acquire) see the value.
//   value:   written by the first signaller before its exchange (relaxed store, published by it).
//   signals: how many signal calls started (acq_rel RMW): only the first writes the value.
struct Future {
  static constexpr std::uintptr_t kSignalled = 1;
  std::atomic<std::uintptr_t> state;
  std::atomic<std::uintptr_t> value;
  std::atomic<std::uint32_t> signals;
};

// Make f signalled with `value` and resume every waiter. Any thread while running. A second
// signal with the same value returns; with a different value it stops the process.
void future_signal(Future *f, std::uintptr_t value);

// Is f signalled (future_wait would not wait)? Any thread.
bool future_is_signalled(const Future *f);

// The value of f, suspending the calling context (or blocking the calling thread, if it is not
// an engine) until f is signalled.
std::uintptr_t future_wait(Future *f);

// Loop control (Mercury's MR_lc_*): a parallel loop whose iterations run in at most `slots`
// worker contexts at once. Slow paths only, so one mutex protects it.
struct LoopControl;

// A loop control with `slots` worker slots (>= 1). nullptr if out of memory. Any thread.
LoopControl *lc_create(unsigned slots);
// Run fn(env) as the next iteration, in a new context, once a slot is free: the calling
// context suspends while every slot is busy. Context code only. Returns 0 or MR_ENOMEM /
// MR_ESHUTDOWN (the iteration did not start).
int lc_spawn(LoopControl *lc, MR_TaskFn fn, void *env);
// Wait until every iteration has finished, then free lc. Context code only.
void lc_finish(LoopControl *lc);
// The default number of slots: --lc-contexts-per-engine x engines.
unsigned lc_default_slots();

// Blocking regions (doc/design.md, "Blocking regions"). begin: the calling context leaves its
// engine for a backup thread, so that the engine runs other work while the context blocks;
// end: the context is scheduled back onto an engine and the backup returns to the pool. With no
// backup to be had (--max-backup-threads reached) the region runs in place. Regions nest; only
// the outermost moves the context. A thread that is not an engine (and not a backup) may call
// both: nothing happens. Any thread while running.
void blocking_begin();
void blocking_end();

// The number of processing units this process may run on (hwloc; at least 1). Any thread.
int allowed_pus();

// Start the engines with the calling thread as engine 0. Returns 0 or a negative MR_E* code, with
// a message in *err. Call from a thread that is not an engine, with the runtime stopped.
int start(const Params &p, std::string *err);

// Wait for every spawned context, stop every engine, free everything. Called only from the
// primordial context. Returns 0 or a negative MR_E* code.
int stop();

// Stop without waiting: every engine leaves once its running context reaches a suspension point
// (finishes, suspends, or ends a blocking region); queued and suspended contexts and pending
// sparks are dropped and counted in *dropped (its two counts; nullptr: not counted). Called only
// from the primordial context. Returns 0 or a negative MR_E* code.
int stop_now(MR_ShutdownReport *dropped);

bool running();
int num_engines();

// The engine whose thread is running the caller, or nullptr. Never inlined, so that a context
// that migrated between threads re-reads the thread-local (a compiler may keep a thread-local's
// address across calls it can see into).
Engine *current();
int engine_id(const Engine *e);

// Bind the calling context to the engine running it (as MR_spawn with an engine does), until it
// finishes its current task. Returns the engine id, or MR_ENOTENGINE on a thread that is not an
// engine.
int bind_here();

// Push a spark for `j` on the current engine's deque and wake an engine if the census says one
// should be woken (P1). Called only from a context.
void fork(Join *j, MR_TaskFn fn, void *env);

// The parent's join (J1): run own sparks inline while they are local, else suspend until the
// last child resumes this context. Called only from the context that initialised j.
void join_wait(Join *j);

// A new context running fn(arg), unbound (engine -1) or bound to `engine`. Any thread while
// running. Returns 0, MR_ENOMEM or MR_ESHUTDOWN.
int spawn(MR_TaskFn fn, void *arg, int engine);

// Copy engine e's counters. Any thread while running.
void stats_get(int e, MR_EngineStats *out);

// The OS index of the PU engine e is bound to, or -1. Any thread while running.
int engine_cpu(int e);

// Print every engine's counters and their totals as a table (the --stats table). Any thread
// while running; exact at a quiescent point.
void print_stats(FILE *out);

}  // namespace mr::engine

#endif
