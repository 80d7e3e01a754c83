// trace.cpp: the trace buffers, the clock, the start/stop handshake and the recording
// functions (trace.hpp). doc/design.md, "Tracing", explains the design and proves TR1.
#include "config.h"

#include "trace.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include "clock.hpp"
#include "fatal.hpp"
#include "quote.hpp"

namespace mr::engine::trace {

std::atomic<bool> g_on{false};

namespace {

// Events per buffer: 4096 x 32 bytes = 128 KiB per engine (and one more buffer for the threads
// that are not engines). A full buffer is written out as one block.
constexpr std::size_t kBlockEvents = 4096;
// How often an engine adds a spark-counter sample (ThreadScope's spark graphs), at most.
constexpr std::uint64_t kSampleNs = 100 * 1000;

// The lock of the non-engine buffer (Tracer::foreign_). Not in the Tracer: a thread that is
// not an engine takes it before it knows that a runtime is still there (record_any); the end of
// a trace takes it after clearing g_on, so a holder that sees g_on set holds the runtime up.
std::mutex g_foreign_lock;

bool ends_with(const std::string &s, const char *suffix) {
  std::size_t n = std::strlen(suffix);
  return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

// The format of a path, by its suffix; nullptr with *err for any other.
Writer *writer_for(const std::string &path, std::string *err) {
  if (ends_with(path, ".eventlog")) return make_eventlog_writer();
  if (ends_with(path, ".json")) return make_json_writer();
  *err =
      "trace file " + quote(path) + " must end in .eventlog (GHC eventlog) or .json (Chrome trace)";
  return nullptr;
}

// A file, by device and inode.
struct FileId {
  dev_t dev;
  ino_t ino;
};

// The --trace file of this process's last MR_init, and those of its ancestors' runtimes (a
// fork child's: forget_after_fork adds its parent's). Written by MR_init (one at a time) and
// by the child's fork handler (the child's only thread); read by MR_init.
FileId g_init_file{};
bool g_have_init_file = false;
constexpr int kAncestorFiles = 16;
FileId g_ancestor_files[kAncestorFiles];
int g_ancestors = 0;

// Is path the --trace file of an ancestor's runtime, which may still be writing it?
bool an_ancestors_file(const std::string &path) {
  struct stat st;
  if (g_ancestors == 0 || ::stat(path.c_str(), &st) != 0) return false;
  for (int i = 0; i < g_ancestors; i++)
    if (g_ancestor_files[i].dev == st.st_dev && g_ancestor_files[i].ino == st.st_ino) return true;
  return false;
}

// Open (create or truncate) the trace file; -1 with *err.
int open_file(const std::string &path, std::string *err) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) *err = "cannot open trace file " + quote(path) + ": " + std::strerror(errno);
  return fd;
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

// Engines asleep, for the JSON counter: the census, and e itself when it is falling asleep (its
// CAS to SLEEPING comes first, then, under the same lock, its census update).
std::uint32_t asleep(State to) {
  return Census::sleeping(g_rt->census.load()) + (to == State::SLEEPING ? 1 : 0);
}

}  // namespace

struct Buffer {
  Record ev[kBlockEvents];
  std::size_t n = 0;
  std::uint64_t last = 0;                        // the last timestamp written
  std::uint64_t next_sample = 0;                 // when the next spark-counter sample is due
  std::uint32_t tasks = 0;                       // thread ids handed out by this engine
  std::uint32_t running = 0;                     // the thread id running on this engine, or 0
  std::uint64_t base_created = 0, base_run = 0;  // the engine's counters when the trace began
};

// Under file_lock_: write out_ to the file.
void Tracer::write_out_locked() {
  const char *p = out_.data();
  std::size_t left = out_.size();
  while (left > 0 && !failed_) {
    ssize_t k = ::write(fd_, p, left);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      failed_ = true;
      warning(false, "writing trace file '%s' failed (%s): the trace stops here", path_.c_str(),
              k < 0 ? std::strerror(errno) : "no progress");
      return;
    }
    p += k;
    left -= static_cast<std::size_t>(k);
  }
}

// Write buffer b (of engine `engine`, -1: the non-engine buffer) as one block and empty it.
// Called by the buffer's owner, or by stop after the handshake.
void Tracer::flush(int engine, Buffer *b) {
  if (b->n == 0) return;
  {
    std::lock_guard<std::mutex> lk(file_lock_);
    out_.clear();
    {
      std::lock_guard<std::mutex> mk(marker_lock_);
      writer_->block(&out_, engine, b->ev, b->n, markers_);
    }
    write_out_locked();
  }
  b->n = 0;
}

// Append an event to b, at the clock but after both b's last event and `after` (so that a
// context's run is never at or before its stop on another engine); its timestamp.
std::uint64_t Tracer::push(int engine, Buffer *b, Kind k, std::uint16_t x, std::uint32_t y,
                           std::uint64_t z, std::uint64_t w, std::uint64_t after) {
  std::uint64_t ts = now_ns() - t0_;
  if (ts <= b->last) ts = b->last + 1;
  if (ts <= after) ts = after + 1;
  b->ev[b->n++] = Record{ts, k, x, y, z, w};
  b->last = ts;
  if (b->n == kBlockEvents) flush(engine, b);
  return ts;
}

// A new thread id for a task starting on engine e: unique within the trace (ids are not
// reused), without a shared counter.
std::uint32_t Tracer::new_tid(const Engine *e, Buffer *b) {
  return ++b->tasks * static_cast<std::uint32_t>(n_) + static_cast<std::uint32_t>(e->id) + 1;
}

// A spark-counter sample of engine e into b: the counters since the trace began and the
// sparks on its deque. (Sparks injected by threads that are not engines count as created and
// run by the engine that ran them.)
void Tracer::sample(const Shared *e, Buffer *b) {
  std::uint64_t created = created_of(e), run = run_of(e);
  std::uint64_t c = created >= b->base_created ? created - b->base_created : 0;
  std::uint64_t r = run >= b->base_run ? run - b->base_run : 0;
  std::int64_t q = e->deque.size_estimate();
  push(e->id, b, Kind::COUNTERS, 0, static_cast<std::uint32_t>(q > 0 ? q : 0), c, r);
  b->next_sample = b->last + kSampleNs;
}

// The handshake, engine side (TR1): the buffer of engine e with its `writing` flag set, or
// nullptr (flag clear) when no trace is on.
Buffer *Tracer::enter(Engine *e) {
  Slot &s = slots_[static_cast<std::size_t>(e->id)];
  // seq_cst RMW and load: proof TR1 (the engine's flag, then g_on; stop's g_on, then the flag).
  s.writing.exchange(true, std::memory_order_seq_cst);
  if (!g_on.load(std::memory_order_seq_cst)) {
    s.writing.store(false, std::memory_order_release);
    return nullptr;
  }
  return s.buf;
}

void Tracer::leave(Engine *e, Buffer *b) {
  if (b->last >= b->next_sample) sample(e, b);
  // release: the buffer's writes happen before stop's acquire of the clear flag (TR1).
  slots_[static_cast<std::size_t>(e->id)].writing.store(false, std::memory_order_release);
}

// Record f(tracer, engine, buffer) from whatever thread calls: the engine's own buffer, or the
// non-engine one. A thread that is not an engine reads g_rt only once it holds the non-engine
// lock and has seen g_on set: the runtime may have ended since its hook looked.
template <class F>
void Tracer::record_any(F f) {
  if (Engine *e = t_engine) {
    Tracer &t = *g_rt->tracer;
    if (Buffer *b = t.enter(e)) {
      f(t, e->id, b);
      t.leave(e, b);
    }
    return;
  }
  std::lock_guard<std::mutex> lk(g_foreign_lock);
  // acquire: pairs with start's store of true (foreign_, t0_); stop takes this lock after
  // clearing g_on, so a record under it either sees false or ends before stop goes on.
  if (g_on.load(std::memory_order_acquire)) f(*g_rt->tracer, -1, g_rt->tracer->foreign_);
}

// Under control_, no trace on: begin one on the open file `fd` with writer w. Returns 0 or
// MR_ENOMEM.
int Tracer::begin_session(int fd, std::unique_ptr<Writer> w, const std::string &path) {
  auto bufs = std::make_unique<Buffer *[]>(static_cast<std::size_t>(n_) + 1);
  for (int i = 0; i <= n_; i++) {
    bufs[static_cast<std::size_t>(i)] = new (std::nothrow) Buffer;
    if (!bufs[static_cast<std::size_t>(i)]) {
      for (int k = 0; k < i; k++) delete bufs[static_cast<std::size_t>(k)];
      ::close(fd);
      return MR_ENOMEM;
    }
  }
  {
    std::lock_guard<std::mutex> lk(file_lock_);
    fd_ = fd;
    writer_ = std::move(w);
    path_ = path;
    failed_ = false;
    out_.clear();
    writer_->begin(&out_, n_);
    write_out_locked();
  }
  t0_ = now_ns();
  session_++;
  for (int i = 0; i < n_; i++) {
    Shared *e = g_rt->engines[i];
    Buffer *b = bufs[static_cast<std::size_t>(i)];
    b->base_created = created_of(e);
    b->base_run = run_of(e);
    // relaxed: a hint of the engine's state as the trace begins; its next transition is exact.
    State now = e->sleep.state.load(std::memory_order_relaxed);
    push(i, b, Kind::ENGINE_START, static_cast<std::uint16_t>(now), 0);
    push(i, b, Kind::COUNTERS, 0, 0, 0, 0);  // ThreadScope's spark graphs start from zero
    b->next_sample = b->last + kSampleNs;
    slots_[static_cast<std::size_t>(i)].buf = b;
  }
  foreign_ = bufs[static_cast<std::size_t>(n_)];
  if (Engine *e = t_engine; e && e->current) show_caller(e);
  // The inline fork and join of mrengine.h take the library's paths, which record the sparks.
  set_inline_forks(SlowReason::TRACING, true);
  // seq_cst store: publishes the buffers, session_ and t0_ to the engines' acquire (TR1).
  g_on.store(true, std::memory_order_seq_cst);
  return 0;
}

// As a trace begins on engine e, which is not recording: show the context the caller runs in
// as running.
void Tracer::show_caller(Engine *e) {
  Context *c = e->current;
  Buffer *b = slots_[static_cast<std::size_t>(e->id)].buf;
  c->trace = TraceMark{new_tid(e, b), session_, e->id, true, 0};
  push(e->id, b, Kind::CTX_CREATE, 0, c->trace.tid);
  push(e->id, b, Kind::CTX_RUN, 0, c->trace.tid);
  b->running = c->trace.tid;
}

// Under control_, a trace on: end it (TR1), write everything out and close the file.
void Tracer::end_session() {
  // seq_cst store, then seq_cst loads of every flag: proof TR1.
  g_on.store(false, std::memory_order_seq_cst);
  set_inline_forks(SlowReason::TRACING, false);
  for (int i = 0; i < n_; i++)
    while (slots_[static_cast<std::size_t>(i)].writing.load(std::memory_order_seq_cst))
      sched_yield();
  std::lock_guard<std::mutex> fk(g_foreign_lock);  // no thread that is not an engine records
  // No engine records now, nor will before the next start (TR1): every buffer is ours. A last
  // spark-counter sample each, then every engine stops at one common time.
  for (int i = 0; i < n_; i++) sample(g_rt->engines[i], slots_[static_cast<std::size_t>(i)].buf);
  std::uint64_t end = now_ns() - t0_;
  for (int i = 0; i <= n_; i++) {
    Buffer *b = i < n_ ? slots_[static_cast<std::size_t>(i)].buf : foreign_;
    if (b->last + 1 >= end) end = b->last + 2;  // room for a last stop before it
  }
  for (int i = 0; i < n_; i++) {
    Buffer *b = slots_[static_cast<std::size_t>(i)].buf;
    if (b->running != 0) {  // the readers want every thread stopped (its context runs on)
      b->ev[b->n++] = Record{
          end - 1, Kind::CTX_STOP, static_cast<std::uint16_t>(Why::TRACE_END), b->running, 0, 0};
      if (b->n == kBlockEvents) flush(i, b);
    }
    b->ev[b->n++] = Record{end, Kind::ENGINE_STOP, 0, 0, 0, 0};  // push leaves room for one
    b->last = end;
    flush(i, b);
    delete b;
    slots_[static_cast<std::size_t>(i)].buf = nullptr;
  }
  flush(-1, foreign_);
  delete foreign_;
  foreign_ = nullptr;
  std::lock_guard<std::mutex> lk(file_lock_);
  out_.clear();
  writer_->end(&out_);
  write_out_locked();
  if (::close(fd_) != 0 && !failed_)
    warning(false, "closing trace file '%s' failed: %s", path_.c_str(), std::strerror(errno));
  fd_ = -1;
  writer_.reset();
  std::lock_guard<std::mutex> mk(marker_lock_);
  markers_.clear();
}

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

Tracer::~Tracer() {
  if (init_fd_ >= 0) ::close(init_fd_);  // --trace's file, when MR_init failed after open
}

int Tracer::open(int engines, const std::string &path, std::string *err) {
  slots_.reset(new (std::nothrow) Slot[static_cast<std::size_t>(engines)]);
  if (!slots_) return MR_ENOMEM;
  n_ = engines;
  g_have_init_file = false;
  if (path.empty()) return 0;
  std::unique_ptr<Writer> w(writer_for(path, err));
  // A fork child's MR_init given its parent's --trace (MRENGINE_OPTIONS read again) traces
  // nothing: truncating the file under the parent would spoil the parent's trace.
  if (w && an_ancestors_file(path)) return 0;
  int fd = w ? open_file(path, err) : -1;
  if (fd < 0) {
    *err = "--trace: " + *err;
    return MR_EOPTION;
  }
  struct stat st;
  g_have_init_file = ::fstat(fd, &st) == 0;
  if (g_have_init_file) g_init_file = FileId{st.st_dev, st.st_ino};
  init_fd_ = fd;
  init_writer_ = std::move(w);
  init_path_ = path;
  return 0;
}

void Tracer::begin_at_init() {
  if (init_fd_ < 0) return;
  std::lock_guard<std::mutex> lk(control_);
  int fd = init_fd_;
  init_fd_ = -1;
  if (begin_session(fd, std::move(init_writer_), init_path_) != 0)
    warning(g_rt->p.quiet, "--trace: out of memory for the trace buffers; no trace is written");
}

int Tracer::start(const char *path, std::string *err) {
  std::lock_guard<std::mutex> lk(control_);
  if (g_on.load(std::memory_order_relaxed)) return MR_EBUSY;
  std::string p(path);
  std::unique_ptr<Writer> w(writer_for(p, err));
  if (!w) return MR_EINVAL;
  int fd = open_file(p, err);
  if (fd < 0) return MR_EINVAL;
  return begin_session(fd, std::move(w), p);
}

int Tracer::stop() {
  std::lock_guard<std::mutex> lk(control_);
  if (!g_on.load(std::memory_order_relaxed)) return MR_EINVAL;
  end_session();
  return 0;
}

void Tracer::finish() {
  std::lock_guard<std::mutex> lk(control_);
  if (g_on.load(std::memory_order_relaxed)) end_session();
}

void Tracer::marker(const char *text) {
  if (!tracing_on()) return;
  std::uint32_t idx;
  {
    std::lock_guard<std::mutex> mk(marker_lock_);
    markers_.emplace_back(text);
    idx = static_cast<std::uint32_t>(markers_.size() - 1);
  }
  record_any([idx](Tracer &t, int engine, Buffer *b) { t.push(engine, b, Kind::MARKER, 0, idx); });
}

void Tracer::record_state(Engine *e, State to) {
  if (Buffer *b = enter(e)) {
    push(e->id, b, Kind::STATE, static_cast<std::uint16_t>(to), asleep(to));
    leave(e, b);
  }
}

void Tracer::record_run(Engine *e, Context *c) {
  Buffer *b = enter(e);
  if (!b) return;
  TraceMark &m = c->trace;
  if (m.session != session_ || m.tid == 0) {
    m = TraceMark{new_tid(e, b), session_, -1, false, 0};
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

void Tracer::record_stop(Engine *e, Context *c, Why why) {
  Buffer *b = enter(e);
  if (!b) return;
  TraceMark &m = c->trace;
  if (m.session == session_ && m.running) {
    m.ts = push(e->id, b, Kind::CTX_STOP, static_cast<std::uint16_t>(why), m.tid);
    b->running = 0;
    m.running = false;
    if (why == Why::FINISHED) m.tid = 0;
  }
  leave(e, b);
}

void Tracer::record_noted(Engine *e, Kind k, int x) {
  if (Buffer *b = enter(e)) {
    // A notification received also samples the census (the JSON counter), as a state does.
    std::uint32_t y = k == Kind::NOTIFY_RECV ? asleep(State::NOTIFIED) : 0;
    push(e->id, b, k, static_cast<std::uint16_t>(x), y);
    leave(e, b);
  }
}

void Tracer::record_notify_sent(int target, Action a) {
  record_any([target, a](Tracer &t, int engine, Buffer *b) {
    t.push(engine, b, Kind::NOTIFY_SENT, static_cast<std::uint16_t>(a),
           static_cast<std::uint32_t>(target));
  });
}

void Tracer::record_future(Kind k, const void *f, bool suspended) {
  record_any([k, f, suspended](Tracer &t, int engine, Buffer *b) {
    t.push(engine, b, k, suspended ? 1 : 0, 0, reinterpret_cast<std::uintptr_t>(f));
  });
}

int start(const char *path, std::string *err) { return g_rt->tracer->start(path, err); }

int stop() { return g_rt->tracer->stop(); }

void marker(const char *text) { g_rt->tracer->marker(text); }

void forget_after_fork() {
  // The parent's --trace file is an ancestor's for this child and its own children (beyond 16
  // generations of traced runtimes, the later ones are not kept).
  if (g_have_init_file && g_ancestors < kAncestorFiles)
    g_ancestor_files[g_ancestors++] = g_init_file;
  g_have_init_file = false;
  // relaxed: the child has one thread.
  g_on.store(false, std::memory_order_relaxed);
  new (&g_foreign_lock) std::mutex;
}

}  // namespace mr::engine::trace
