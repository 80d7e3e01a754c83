// trace.hpp: tracing the scheduler to a file (--trace=FILE, MR_trace_start): engine states,
// contexts, sparks, notifications, futures and user markers, as a GHC eventlog (ThreadScope,
// trace_eventlog.cpp) or Chrome trace-event JSON (Perfetto, trace_json.cpp). doc/design.md,
// "Tracing", has the buffers, the clock and the stop handshake (TR1).
//
// A runtime's trace is its Tracer (Runtime::tracer). Each engine records into a buffer of its
// own without locks; a full buffer is written out as one block by its engine, under the file
// lock. Threads that are not engines share one buffer under a mutex. The scheduler reaches the
// Tracer only through the hooks of events.hpp, one predictable branch on a relaxed flag when
// tracing is off (`tracing_on()`); the recording functions are out of line.
#ifndef MR_ENGINE_TRACE_HPP
#define MR_ENGINE_TRACE_HPP

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine.hpp"

namespace mr::engine::trace {

// Why a context stopped running on an engine; `status` is the GHC eventlog's stop status
// (ThreadScope's "thread stop" reasons), `name` what the JSON file shows.
#define MR_TRACE_STOP_MAP(XX)                                                         \
  XX(FINISHED, 5, "finished")        /* ThreadFinished */                             \
  XX(JOIN, 4, "join")                /* ThreadBlocked */                              \
  XX(FUTURE, 4, "future")            /* ThreadBlocked */                              \
  XX(LOOP, 4, "loop control")        /* ThreadBlocked */                              \
  XX(BLOCKING, 6, "blocking region") /* ForeignCall: it goes on on a backup thread */ \
  XX(SLEEP, 4, "sleep")              /* ThreadBlocked: MR_sleep_until, a ticker */    \
  XX(FD, 4, "fd wait")               /* ThreadBlocked: MR_wait_fd */                  \
  XX(POLL, 4, "polled wait")         /* ThreadBlocked: MR_poll_wait */                \
  XX(YIELD, 3, "yield")              /* ThreadYielding: MR_yield */                   \
  XX(TRACE_END, 3, "end of trace")   /* ThreadYielding: still running when the trace ends */

enum class Why : std::uint8_t {
#define MR_TRACE_WHY_(name, status, text) name,
  MR_TRACE_STOP_MAP(MR_TRACE_WHY_)
#undef MR_TRACE_WHY_
};

// What the buffers hold: one Record per event, written by the engine (or the non-engine
// buffer's lock holder) that saw it. The writers turn them into either format.
enum class Kind : std::uint16_t {
  ENGINE_START,  // the engine enters the trace (x: its state then)
  ENGINE_STOP,   // the trace ends for the engine
  STATE,         // x: the new State; y: engines asleep (the census) after it
  CTX_CREATE,    // y: thread id (a context starting a new task)
  CTX_RUN,       // y: thread id
  CTX_STOP,      // y: thread id, x: Why
  CTX_MIGRATE,   // y: thread id, x: the engine it last ran on
  SPARK_CREATE,
  SPARK_RUN,    // a spark of the engine's own deque or of the injector
  SPARK_STEAL,  // x: the victim
  COUNTERS,     // z: sparks created, w: sparks run, y: sparks queued (this engine, this trace)
  NOTIFY_SENT,  // x: Action, y: the target engine
  NOTIFY_RECV,  // x: Action, y: engines asleep after it
  FUT_WAIT,     // z: the future's address, x: 1 if the waiter suspended
  FUT_SIGNAL,   // z: the future's address
  MARKER,       // y: index of the text (MR_trace_marker)
};

struct Record {
  std::uint64_t ts;  // ns since the trace began, strictly increasing within one buffer
  Kind kind;
  std::uint16_t x;
  std::uint32_t y;
  std::uint64_t z, w;
};

#pragma GCC visibility push(hidden)
// Is a trace being recorded? Stored seq_cst by start and stop (TR1); read relaxed by every hook
// as a hint (the recording function re-reads it inside the handshake). Not in the Tracer: a
// hook is one load of it (through the Runtime it would be two), and a thread outside any
// runtime (one that signals a future) reads it, perhaps while the runtime is freed.
extern std::atomic<bool> g_on;
#pragma GCC visibility pop

// The cheap test of every hook (events.hpp).
inline bool tracing_on() { return g_on.load(std::memory_order_relaxed); }

// ---- the writers (trace_eventlog.cpp, trace_json.cpp) -------------------------------------
// One format: called only under the file lock, in this order: begin once, then blocks, then
// end once. `engine` is -1 for the buffer of threads that are not engines. `markers` resolves
// MARKER's index.
class Writer {
 public:
  virtual ~Writer() = default;
  virtual void begin(std::string *out, int engines) = 0;
  virtual void block(std::string *out, int engine, const Record *ev, std::size_t n,
                     const std::vector<std::string> &markers) = 0;
  virtual void end(std::string *out) = 0;
};
Writer *make_eventlog_writer();
Writer *make_json_writer();

// For the writers: the names of a stop reason and of a state.
const char *why_name(Why w);
int why_status(Why w);

struct Buffer;

// One engine's entry of the handshake (TR1). `writing` is set by the engine around each record;
// `buf` is written by start and stop while no engine records (TR1) and read by the engine
// inside its record.
struct alignas(64) Slot {
  std::atomic<bool> writing{false};
  Buffer *buf = nullptr;
};

// The trace of one runtime (Runtime::tracer): made at MR_init (open), before any engine thread
// runs; a trace begun by --trace or MR_trace_start, ended by MR_trace_stop or at the end of the
// runtime (finish), before the Tracer is freed with it.
class Tracer {
 public:
  Tracer() = default;
  Tracer(const Tracer &) = delete;
  Tracer &operator=(const Tracer &) = delete;
  ~Tracer();

  // ---- lifetime (lifecycle.cpp, runtime/api.cpp) ----
  // At MR_init, before any engine thread runs: make the per-engine slots, and with a path (not
  // empty) open the file. Returns 0, MR_ENOMEM, or MR_EOPTION (bad suffix, cannot create) with
  // *err.
  int open(int engines, const std::string &path, std::string *err);
  // At MR_init, once engine 0 is the caller's: begin the trace opened by open, if any.
  void begin_at_init();
  // Start a trace while the runtime runs. Returns 0, MR_EBUSY (a trace is on), MR_ENOMEM, or
  // MR_EINVAL (bad suffix, cannot create; *err says why). Any thread of the runtime.
  int start(const char *path, std::string *err);
  // End the trace: handshake (TR1), write every buffer, the end marker, close. Returns 0 or
  // MR_EINVAL (no trace on). Any thread of the runtime.
  int stop();
  // Record a user marker. Any thread of the runtime; nothing when no trace is on.
  void marker(const char *text);
  // With no engine thread left, the engines not yet freed: end a trace that is on.
  void finish();

  // ---- recording (through the hooks of events.hpp) ----
  void record_state(Engine *e, State to);
  void record_run(Engine *e, Context *c);
  void record_stop(Engine *e, Context *c, Why why);
  // A counted event traced as k (events.hpp, MR_TRACED_EVENTS_MAP): x is the victim of a steal,
  // the kind of a notification received, else 0.
  void record_noted(Engine *e, Kind k, int x);
  // From any thread, engine or not: a thread that is not an engine may call these while its
  // runtime ends, so they take the non-engine buffer's lock before they look for the Tracer.
  static void record_notify_sent(int target, Action a);
  static void record_future(Kind k, const void *f, bool suspended);

 private:
  Buffer *enter(Engine *e);
  void leave(Engine *e, Buffer *b);
  template <class F>
  static void record_any(F f);
  std::uint64_t push(int engine, Buffer *b, Kind k, std::uint16_t x, std::uint32_t y,
                     std::uint64_t z = 0, std::uint64_t w = 0, std::uint64_t after = 0);
  std::uint32_t new_tid(const Engine *e, Buffer *b);
  void sample(const Shared *e, Buffer *b);
  void flush(int engine, Buffer *b);
  void write_out_locked();
  int begin_session(int fd, std::unique_ptr<Writer> w, const std::string &path);
  void end_session();
  void show_caller(Engine *e);

  int n_ = 0;                      // engines; set at MR_init, before any engine thread
  std::unique_ptr<Slot[]> slots_;  // n_ slots, from MR_init to the end of the runtime
  // The number of the trace being recorded: a context's marks from an older trace are stale.
  // Written by start before its seq_cst store of g_on, read by engines after seeing g_on.
  std::uint32_t session_ = 0;
  std::uint64_t t0_ = 0;  // the clock at the start of the trace (same publication)

  std::mutex control_;  // start, stop, the end of the runtime: one at a time

  // The open file. Written only under file_lock_ (and set up by start before g_on).
  std::mutex file_lock_;
  int fd_ = -1;
  std::unique_ptr<Writer> writer_;
  std::string out_;  // the encoding of one block, reused
  std::string path_;
  bool failed_ = false;  // a write failed: warned once, nothing more is written

  // The buffer of threads that are not engines, under g_foreign_lock (trace.cpp).
  Buffer *foreign_ = nullptr;

  // MR_trace_marker's texts, by index; appended under marker_lock_, read by the writers under
  // the same lock.
  std::mutex marker_lock_;
  std::vector<std::string> markers_;

  // A trace file opened by MR_init's --trace, begun once engine 0 is set up.
  int init_fd_ = -1;
  std::unique_ptr<Writer> init_writer_;
  std::string init_path_;
};

// For runtime/api.cpp: the running runtime's Tracer::start, stop and marker.
int start(const char *path, std::string *err);
int stop();
void marker(const char *text);

// The child of a fork() (fork.cpp): no trace is recorded, the lock of the non-engine buffer is
// re-made (another thread may have held it), and the parent's --trace file is one the child's
// MR_init will not open. The parent's Tracer is leaked with its runtime.
void forget_after_fork();

}  // namespace mr::engine::trace

#endif
