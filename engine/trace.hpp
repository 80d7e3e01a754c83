// trace.hpp: tracing the scheduler to a file (--trace=FILE, MR_trace_start): engine states,
// contexts, sparks, notifications, futures and user markers, as a GHC eventlog (ThreadScope,
// trace_eventlog.cpp) or Chrome trace-event JSON (Perfetto, trace_json.cpp). doc/design.md,
// "Tracing", has the buffers, the clock and the stop handshake (TR1).
//
// Each engine records into a buffer of its own without locks; a full buffer is written out as
// one block by its engine, under the file lock. Threads that are not engines share one buffer
// under a mutex. Every hook below is one predictable branch on a relaxed flag when tracing is
// off (`on()`); the recording functions are out of line.
#ifndef MR_ENGINE_TRACE_HPP
#define MR_ENGINE_TRACE_HPP

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "engine.hpp"

namespace mr::engine::trace {

// Why a context stopped running on an engine; `status` is the GHC eventlog's stop status
// (ThreadScope's "thread stop" reasons), `name` what the JSON file shows.
#define MR_TRACE_STOP_MAP(XX)                          \
  XX(FINISHED, 5, "finished")    /* ThreadFinished */ \
  XX(JOIN, 4, "join")            /* ThreadBlocked */  \
  XX(FUTURE, 4, "future")        /* ThreadBlocked */  \
  XX(LOOP, 4, "loop control")    /* ThreadBlocked */  \
  XX(BLOCKING, 6, "blocking region") /* ForeignCall: it goes on on a backup thread */ \
  XX(SLEEP, 4, "sleep")          /* ThreadBlocked: MR_sleep_until, a ticker */        \
  XX(FD, 4, "fd wait")           /* ThreadBlocked: MR_wait_fd */                      \
  XX(YIELD, 3, "yield")          /* ThreadYielding: MR_yield */                       \
  XX(TRACE_END, 3, "end of trace")   /* ThreadYielding: still running when the trace ends */

enum class Why : std::uint8_t {
#define MR_TRACE_WHY_(name, status, text) name,
  MR_TRACE_STOP_MAP(MR_TRACE_WHY_)
#undef MR_TRACE_WHY_
};

// What the buffers hold: one record per event, written by the engine (or the non-engine
// buffer's lock holder) that saw it. The writers turn them into either format.
enum class Kind : std::uint16_t {
  ENGINE_START,   // the engine enters the trace (x: its state then)
  ENGINE_STOP,    // the trace ends for the engine
  STATE,          // x: the new State; y: engines asleep (the census) after it
  CTX_CREATE,     // y: thread id (a context starting a new task)
  CTX_RUN,        // y: thread id
  CTX_STOP,       // y: thread id, x: Why
  CTX_MIGRATE,    // y: thread id, x: the engine it last ran on
  SPARK_CREATE,
  SPARK_RUN,      // a spark of the engine's own deque or of the injector
  SPARK_STEAL,    // x: the victim
  COUNTERS,       // z: sparks created, w: sparks run, y: sparks queued (this engine, this trace)
  NOTIFY_SENT,    // x: Action, y: the target engine
  NOTIFY_RECV,    // x: Action, y: engines asleep after it
  FUT_WAIT,       // z: the future's address, x: 1 if the waiter suspended
  FUT_SIGNAL,     // z: the future's address
  MARKER,         // y: index of the text (MR_trace_marker)
};

struct Event {
  std::uint64_t ts;  // ns since the trace began, strictly increasing within one buffer
  Kind kind;
  std::uint16_t x;
  std::uint32_t y;
  std::uint64_t z, w;
};

#pragma GCC visibility push(hidden)
// Is a trace being recorded? Stored seq_cst by start and stop (TR1); read relaxed by every hook
// as a hint (the recording function re-reads it inside the handshake).
extern std::atomic<bool> g_on;
#pragma GCC visibility pop

// The cheap test for generated code's inline fast paths (MR_fork_new_child and
// MR_join_and_continue take the library's fork()/join_wait() while it is true).
inline bool tracing_on() { return g_on.load(std::memory_order_relaxed); }

// ---- lifetime (lifecycle.cpp, runtime/api.cpp) --------------------------------------------

// At MR_init, before any engine thread runs: make the per-engine slots, and with a path (not
// empty) open the file. Returns 0, or MR_EOPTION (bad suffix, cannot create) with *err.
int open_at_init(int engines, const std::string &path, std::string *err);
// At MR_init, once engine 0 is the caller's: begin the trace opened by open_at_init, if any.
void begin_at_init();
// Start a trace while the runtime runs. Returns 0, MR_EBUSY (a trace is on) or MR_EINVAL (bad
// suffix, cannot create; *err says why). Any thread of the runtime.
int start(const char *path, std::string *err);
// End the trace: handshake (TR1), write every buffer, the end marker, close. Returns 0 or
// MR_EINVAL (no trace on). Any thread of the runtime.
int stop();
// Record a user marker. Any thread; nothing when no trace is on.
void marker(const char *text);
// With no engine thread left: end a trace that is on and free the slots.
void close_at_exit();

// ---- recording (out of line; call through the hooks below) --------------------------------
void record_state(Engine *e, State to);
void record_run(Engine *e, Context *c);
void record_stop(Engine *e, Context *c, Why why);
void record_spark(Engine *e, Kind k, int victim);
void record_notify_sent(int target, Action a);
void record_notify_recv(Engine *e, Action a);
void record_future(Kind k, const void *f, bool suspended);

// ---- hooks: one branch when tracing is off ------------------------------------------------
// Engine e (its own thread) moved to state `to`.
inline void on_state(Engine *e, State to) {
  if (tracing_on()) [[unlikely]] record_state(e, to);
}
// Context c starts running on engine e (a new task of c gets a new thread id).
inline void on_run(Engine *e, Context *c) {
  if (tracing_on()) [[unlikely]] record_run(e, c);
}
// Context c, running on engine e, stops.
inline void on_stop(Engine *e, Context *c, Why why) {
  if (tracing_on()) [[unlikely]] record_stop(e, c, why);
}
inline void on_spark_create(Engine *e) {
  if (tracing_on()) [[unlikely]] record_spark(e, Kind::SPARK_CREATE, -1);
}
inline void on_spark_run(Engine *e) {
  if (tracing_on()) [[unlikely]] record_spark(e, Kind::SPARK_RUN, -1);
}
inline void on_spark_steal(Engine *e, int victim) {
  if (tracing_on()) [[unlikely]] record_spark(e, Kind::SPARK_STEAL, victim);
}
// The calling thread delivered action a to engine `target`.
inline void on_notify_sent(int target, Action a) {
  if (tracing_on()) [[unlikely]] record_notify_sent(target, a);
}
// Engine e (its own thread) found a notification of kind a.
inline void on_notify_recv(Engine *e, Action a) {
  if (tracing_on()) [[unlikely]] record_notify_recv(e, a);
}
inline void on_future_wait(const void *f, bool suspended) {
  if (tracing_on()) [[unlikely]] record_future(Kind::FUT_WAIT, f, suspended);
}
inline void on_future_signal(const void *f) {
  if (tracing_on()) [[unlikely]] record_future(Kind::FUT_SIGNAL, f, false);
}

// ---- the writers (trace_eventlog.cpp, trace_json.cpp) -------------------------------------
// One format: called only under the file lock, in this order: begin once, then blocks, then
// end once. `engine` is -1 for the buffer of threads that are not engines. `markers` resolves
// MARKER's index.
class Writer {
 public:
  virtual ~Writer() = default;
  virtual void begin(std::string *out, int engines) = 0;
  virtual void block(std::string *out, int engine, const Event *ev, std::size_t n,
                     const std::vector<std::string> &markers) = 0;
  virtual void end(std::string *out) = 0;
};
Writer *make_eventlog_writer();
Writer *make_json_writer();

// For the writers: the names of a stop reason and of a state.
const char *why_name(Why w);
int why_status(Why w);

}  // namespace mr::engine::trace

#endif
