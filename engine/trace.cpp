// trace.cpp: the trace buffers, the clock, the start/stop handshake and the recording
// functions (trace.hpp). doc/design.md, "Tracing", explains the design and proves TR1.
#include "config.h"

#include "trace.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include "clock.hpp"
#include "fatal.hpp"

namespace mr::engine::trace {

std::atomic<bool> g_on{false};

namespace {

// Events per buffer: 4096 x 32 bytes = 128 KiB per engine (and one more buffer for the threads
// that are not engines). A full buffer is written out as one block.
constexpr std::size_t kBlockEvents = 4096;
// How often an engine adds a spark-counter sample (ThreadScope's spark graphs), at most.
constexpr std::uint64_t kSampleNs = 100 * 1000;

struct Buffer {
  Event ev[kBlockEvents];
  std::size_t n = 0;
  std::uint64_t last = 0;         // the last timestamp written
  std::uint64_t next_sample = 0;  // when the next spark-counter sample is due
  std::uint32_t tasks = 0;        // thread ids handed out by this engine
  std::uint32_t running = 0;      // the thread id running on this engine, or 0
  std::uint64_t base_created = 0, base_run = 0;  // the engine's counters when the trace began
};

// One engine's entry of the handshake (TR1). `writing` is set by the engine around each record;
// `buf` is written by start and stop while no engine records (TR1) and read by the engine
// inside its record.
struct alignas(64) Slot {
  std::atomic<bool> writing{false};
  Buffer *buf = nullptr;
};

int g_n = 0;               // engines; set at MR_init, before any engine thread
Slot *g_slots = nullptr;   // g_n slots, from MR_init to the end of the runtime
// The number of the trace being recorded: a context's marks from an older trace are stale.
// Written by start before its seq_cst store of g_on, read by engines after seeing g_on.
std::uint32_t g_session = 0;
std::uint64_t g_t0 = 0;    // the clock at the start of the trace (same publication)

std::mutex g_control;      // start, stop, the end at exit: one at a time

// The open file. Written only under g_file_lock (and set up by start before g_on).
std::mutex g_file_lock;
int g_fd = -1;
std::unique_ptr<Writer> g_writer;
std::string g_out;         // the encoding of one block, reused
std::string g_path;
bool g_failed = false;     // a write failed: warned once, nothing more is written

// The buffer of threads that are not engines, under its lock.
std::mutex g_foreign_lock;
Buffer *g_foreign = nullptr;

// MR_trace_marker's texts, by index; appended under g_marker_lock, read by the writers under
// the same lock.
std::mutex g_marker_lock;
std::vector<std::string> g_markers;

// A trace file opened by MR_init's --trace, begun once engine 0 is set up.
int g_init_fd = -1;
std::unique_ptr<Writer> g_init_writer;
std::string g_init_path;

bool ends_with(const std::string &s, const char *suffix) {
  std::size_t n = std::strlen(suffix);
  return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

// The format of a path, by its suffix; nullptr with *err for any other.
Writer *writer_for(const std::string &path, std::string *err) {
  if (ends_with(path, ".eventlog")) return make_eventlog_writer();
  if (ends_with(path, ".json")) return make_json_writer();
  *err = "trace file '" + path + "' must end in .eventlog (GHC eventlog) or .json (Chrome trace)";
  return nullptr;
}

// Open (create or truncate) the trace file; -1 with *err.
int open_file(const std::string &path, std::string *err) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) *err = "cannot open trace file '" + path + "': " + std::strerror(errno);
  return fd;
}

// Under g_file_lock: write g_out to the file.
void write_out_locked() {
  const char *p = g_out.data();
  std::size_t left = g_out.size();
  while (left > 0 && !g_failed) {
    ssize_t k = ::write(g_fd, p, left);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      g_failed = true;
      warning(false, "writing trace file '%s' failed (%s): the trace stops here", g_path.c_str(),
              k < 0 ? std::strerror(errno) : "no progress");
      return;
    }
    p += k;
    left -= static_cast<std::size_t>(k);
  }
}

// Write buffer b (of engine `engine`, -1: the non-engine buffer) as one block and empty it.
// Called by the buffer's owner, or by stop after the handshake.
void flush(int engine, Buffer *b) {
  if (b->n == 0) return;
  {
    std::lock_guard<std::mutex> lk(g_file_lock);
    g_out.clear();
    {
      std::lock_guard<std::mutex> mk(g_marker_lock);
      g_writer->block(&g_out, engine, b->ev, b->n, g_markers);
    }
    write_out_locked();
  }
  b->n = 0;
}

// Append an event to b, at the clock but after both b's last event and `after` (so that a
// context's run is never at or before its stop on another engine); its timestamp.
std::uint64_t push(int engine, Buffer *b, Kind k, std::uint16_t x, std::uint32_t y,
                   std::uint64_t z = 0, std::uint64_t w = 0, std::uint64_t after = 0) {
  std::uint64_t ts = now_ns() - g_t0;
  if (ts <= b->last) ts = b->last + 1;
  if (ts <= after) ts = after + 1;
  b->ev[b->n++] = Event{ts, k, x, y, z, w};
  b->last = ts;
  if (b->n == kBlockEvents) flush(engine, b);
  return ts;
}

// A new thread id for a task starting on engine e: unique within the trace (ids are not
// reused), without a shared counter.
std::uint32_t new_tid(const Engine *e, Buffer *b) {
  return ++b->tasks * static_cast<std::uint32_t>(g_n) + static_cast<std::uint32_t>(e->id) + 1;
}

std::uint64_t created_of(const Shared *e) {
  return e->stats.sparks_pushed.load(std::memory_order_relaxed) +
         e->stats.sparks_injected.load(std::memory_order_relaxed);
}
std::uint64_t run_of(const Shared *e) {
  return e->stats.sparks_run_local.load(std::memory_order_relaxed) +
         e->stats.sparks_stolen.load(std::memory_order_relaxed) +
         e->stats.sparks_injected.load(std::memory_order_relaxed);
}

// A spark-counter sample of engine e into b: the counters since the trace began and the
// sparks on its deque. (Sparks injected by threads that are not engines count as created and
// run by the engine that ran them.)
void sample(const Shared *e, Buffer *b) {
  std::uint64_t created = created_of(e), run = run_of(e);
  std::uint64_t c = created >= b->base_created ? created - b->base_created : 0;
  std::uint64_t r = run >= b->base_run ? run - b->base_run : 0;
  std::int64_t q = e->deque.size_estimate();
  push(e->id, b, Kind::COUNTERS, 0, static_cast<std::uint32_t>(q > 0 ? q : 0), c, r);
  b->next_sample = b->last + kSampleNs;
}

// The handshake, engine side (TR1): the buffer of engine e with its `writing` flag set, or
// nullptr (flag clear) when no trace is on.
Buffer *enter(Engine *e) {
  Slot &s = g_slots[e->id];
  // seq_cst RMW and load: proof TR1 (the engine's flag, then g_on; stop's g_on, then the flag).
  s.writing.exchange(true, std::memory_order_seq_cst);
  if (!g_on.load(std::memory_order_seq_cst)) {
    s.writing.store(false, std::memory_order_release);
    return nullptr;
  }
  return s.buf;
}

void leave(Engine *e, Buffer *b) {
  if (b->last >= b->next_sample) sample(e, b);
  // release: the buffer's writes happen before stop's acquire of the clear flag (TR1).
  g_slots[e->id].writing.store(false, std::memory_order_release);
}

// Record from whatever thread calls: the engine's own buffer, or the non-engine one.
template <class F>
void record_any(F f) {
  if (Engine *e = t_engine) {
    if (Buffer *b = enter(e)) {
      f(e->id, b);
      leave(e, b);
    }
    return;
  }
  std::lock_guard<std::mutex> lk(g_foreign_lock);
  // acquire: pairs with start's store of true (g_foreign, g_t0); stop takes this lock after
  // clearing g_on, so a record under it either sees false or ends before stop goes on.
  if (g_on.load(std::memory_order_acquire)) f(-1, g_foreign);
}

// Under g_control, no trace on: begin one on the open file `fd` with writer w. Returns 0 or
// MR_ENOMEM.
int begin_session(int fd, std::unique_ptr<Writer> w, const std::string &path) {
  auto bufs = std::make_unique<Buffer *[]>(static_cast<std::size_t>(g_n) + 1);
  for (int i = 0; i <= g_n; i++) {
    bufs[static_cast<std::size_t>(i)] = new (std::nothrow) Buffer;
    if (!bufs[static_cast<std::size_t>(i)]) {
      for (int k = 0; k < i; k++) delete bufs[static_cast<std::size_t>(k)];
      ::close(fd);
      return MR_ENOMEM;
    }
  }
  {
    std::lock_guard<std::mutex> lk(g_file_lock);
    g_fd = fd;
    g_writer = std::move(w);
    g_path = path;
    g_failed = false;
    g_out.clear();
    g_writer->begin(&g_out, g_n);
    write_out_locked();
  }
  g_t0 = now_ns();
  g_session++;
  for (int i = 0; i < g_n; i++) {
    Shared *e = g_rt->engines[i];
    Buffer *b = bufs[static_cast<std::size_t>(i)];
    b->base_created = created_of(e);
    b->base_run = run_of(e);
    // relaxed: a hint of the engine's state as the trace begins; its next transition is exact.
    State now = e->sleep.state.load(std::memory_order_relaxed);
    push(i, b, Kind::ENGINE_START, static_cast<std::uint16_t>(now), 0);
    push(i, b, Kind::COUNTERS, 0, 0, 0, 0);  // ThreadScope's spark graphs start from zero
    b->next_sample = b->last + kSampleNs;
    g_slots[i].buf = b;
  }
  g_foreign = bufs[static_cast<std::size_t>(g_n)];
  // The caller's own engine is not recording: show the context the caller runs in as running.
  if (Engine *e = t_engine; e && e->current) {
    Context *c = e->current;
    Buffer *b = g_slots[e->id].buf;
    c->trace = TraceMark{new_tid(e, b), g_session, e->id, true, 0};
    push(e->id, b, Kind::CTX_CREATE, 0, c->trace.tid);
    push(e->id, b, Kind::CTX_RUN, 0, c->trace.tid);
    b->running = c->trace.tid;
  }
  // The inline fork and join of mrengine.h take the library's paths, which record the sparks.
  set_inline_forks(SlowReason::TRACING, true);
  // seq_cst store: publishes the buffers, g_session and g_t0 to the engines' acquire (TR1).
  g_on.store(true, std::memory_order_seq_cst);
  return 0;
}

// Under g_control, a trace on: end it (TR1), write everything out and close the file.
void end_session() {
  // seq_cst store, then seq_cst loads of every flag: proof TR1.
  g_on.store(false, std::memory_order_seq_cst);
  set_inline_forks(SlowReason::TRACING, false);
  for (int i = 0; i < g_n; i++)
    while (g_slots[i].writing.load(std::memory_order_seq_cst)) sched_yield();
  std::lock_guard<std::mutex> fk(g_foreign_lock);  // no thread that is not an engine records
  // No engine records now, nor will before the next start (TR1): every buffer is ours. A last
  // spark-counter sample each, then every engine stops at one common time.
  for (int i = 0; i < g_n; i++) sample(g_rt->engines[i], g_slots[i].buf);
  std::uint64_t end = now_ns() - g_t0;
  for (int i = 0; i <= g_n; i++) {
    Buffer *b = i < g_n ? g_slots[i].buf : g_foreign;
    if (b->last + 1 >= end) end = b->last + 2;  // room for a last stop before it
  }
  for (int i = 0; i < g_n; i++) {
    Buffer *b = g_slots[i].buf;
    if (b->running != 0) {  // the readers want every thread stopped (its context runs on)
      b->ev[b->n++] = Event{end - 1, Kind::CTX_STOP, static_cast<std::uint16_t>(Why::TRACE_END),
                            b->running, 0, 0};
      if (b->n == kBlockEvents) flush(i, b);
    }
    b->ev[b->n++] = Event{end, Kind::ENGINE_STOP, 0, 0, 0, 0};  // push leaves room for one
    b->last = end;
    flush(i, b);
    delete b;
    g_slots[i].buf = nullptr;
  }
  flush(-1, g_foreign);
  delete g_foreign;
  g_foreign = nullptr;
  std::lock_guard<std::mutex> lk(g_file_lock);
  g_out.clear();
  g_writer->end(&g_out);
  write_out_locked();
  if (::close(g_fd) != 0 && !g_failed)
    warning(false, "closing trace file '%s' failed: %s", g_path.c_str(), std::strerror(errno));
  g_fd = -1;
  g_writer.reset();
  std::lock_guard<std::mutex> mk(g_marker_lock);
  g_markers.clear();
}

}  // namespace

const char *why_name(Why w) {
  switch (w) {
#define MR_TRACE_WHY_NAME_(name, status, text) \
  case Why::name:                              \
    return text;
    MR_TRACE_STOP_MAP(MR_TRACE_WHY_NAME_)
#undef MR_TRACE_WHY_NAME_
  }
  return "?";
}

int why_status(Why w) {
  switch (w) {
#define MR_TRACE_WHY_STATUS_(name, status, text) \
  case Why::name:                                \
    return status;
    MR_TRACE_STOP_MAP(MR_TRACE_WHY_STATUS_)
#undef MR_TRACE_WHY_STATUS_
  }
  return 0;
}

int open_at_init(int engines, const std::string &path, std::string *err) {
  g_slots = new (std::nothrow) Slot[static_cast<std::size_t>(engines)];
  if (!g_slots) return MR_ENOMEM;
  g_n = engines;
  if (path.empty()) return 0;
  std::unique_ptr<Writer> w(writer_for(path, err));
  int fd = w ? open_file(path, err) : -1;
  if (fd < 0) {
    *err = "--trace: " + *err;
    close_at_exit();
    return MR_EOPTION;
  }
  g_init_fd = fd;
  g_init_writer = std::move(w);
  g_init_path = path;
  return 0;
}

void begin_at_init() {
  if (g_init_fd < 0) return;
  std::lock_guard<std::mutex> lk(g_control);
  int fd = g_init_fd;
  g_init_fd = -1;
  if (begin_session(fd, std::move(g_init_writer), g_init_path) != 0)
    warning(g_rt->p.quiet, "--trace: out of memory for the trace buffers; no trace is written");
}

int start(const char *path, std::string *err) {
  std::lock_guard<std::mutex> lk(g_control);
  if (g_on.load(std::memory_order_relaxed)) return MR_EBUSY;
  std::string p(path);
  std::unique_ptr<Writer> w(writer_for(p, err));
  if (!w) return MR_EINVAL;
  int fd = open_file(p, err);
  if (fd < 0) return MR_EINVAL;
  return begin_session(fd, std::move(w), p);
}

int stop() {
  std::lock_guard<std::mutex> lk(g_control);
  if (!g_on.load(std::memory_order_relaxed)) return MR_EINVAL;
  end_session();
  return 0;
}

void close_at_exit() {
  {
    std::lock_guard<std::mutex> lk(g_control);
    if (g_on.load(std::memory_order_relaxed)) end_session();
  }
  if (g_init_fd >= 0) ::close(g_init_fd);
  g_init_fd = -1;
  g_init_writer.reset();
  delete[] g_slots;
  g_slots = nullptr;
  g_n = 0;
}

void marker(const char *text) {
  if (!tracing_on()) return;
  std::uint32_t idx;
  {
    std::lock_guard<std::mutex> mk(g_marker_lock);
    g_markers.emplace_back(text);
    idx = static_cast<std::uint32_t>(g_markers.size() - 1);
  }
  record_any([idx](int engine, Buffer *b) { push(engine, b, Kind::MARKER, 0, idx); });
}

// Engines asleep, for the JSON counter: the census, and e itself when it is falling asleep (its
// CAS to SLEEPING comes first, then, under the same lock, its census update).
std::uint32_t asleep(State to) {
  return Census::sleeping(g_rt->census.load()) + (to == State::SLEEPING ? 1 : 0);
}

void record_state(Engine *e, State to) {
  if (Buffer *b = enter(e)) {
    push(e->id, b, Kind::STATE, static_cast<std::uint16_t>(to), asleep(to));
    leave(e, b);
  }
}

void record_run(Engine *e, Context *c) {
  Buffer *b = enter(e);
  if (!b) return;
  TraceMark &m = c->trace;
  if (m.session != g_session || m.tid == 0) {
    m = TraceMark{new_tid(e, b), g_session, -1, false, 0};
    push(e->id, b, Kind::CTX_CREATE, 0, m.tid);
  }
  if (m.engine >= 0 && m.engine != e->id)
    push(e->id, b, Kind::CTX_MIGRATE, static_cast<std::uint16_t>(m.engine), m.tid);
  push(e->id, b, Kind::CTX_RUN, 0, m.tid, 0, 0, m.ts);
  b->running = m.tid;
  m.engine = e->id;
  m.running = true;
  leave(e, b);
}

void record_stop(Engine *e, Context *c, Why why) {
  Buffer *b = enter(e);
  if (!b) return;
  TraceMark &m = c->trace;
  if (m.session == g_session && m.running) {
    m.ts = push(e->id, b, Kind::CTX_STOP, static_cast<std::uint16_t>(why), m.tid);
    b->running = 0;
    m.running = false;
    if (why == Why::FINISHED) m.tid = 0;
  }
  leave(e, b);
}

void record_spark(Engine *e, Kind k, int victim) {
  if (Buffer *b = enter(e)) {
    push(e->id, b, k, static_cast<std::uint16_t>(victim < 0 ? 0 : victim), 0);
    leave(e, b);
  }
}

void record_notify_sent(int target, Action a) {
  record_any([target, a](int engine, Buffer *b) {
    push(engine, b, Kind::NOTIFY_SENT, static_cast<std::uint16_t>(a),
         static_cast<std::uint32_t>(target));
  });
}

void record_notify_recv(Engine *e, Action a) {
  if (Buffer *b = enter(e)) {
    push(e->id, b, Kind::NOTIFY_RECV, static_cast<std::uint16_t>(a), asleep(State::NOTIFIED));
    leave(e, b);
  }
}

void record_future(Kind k, const void *f, bool suspended) {
  record_any([k, f, suspended](int engine, Buffer *b) {
    push(engine, b, k, suspended ? 1 : 0, 0, reinterpret_cast<std::uintptr_t>(f));
  });
}

}  // namespace mr::engine::trace
