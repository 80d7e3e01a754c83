// mrengine.hpp: the C++ API of mrengine, a thin layer over the C ABI in mrengine.h.
//
//   mr::runtime rt;                        // MR_init; the destructor calls MR_shutdown
//   mr::parallel_invoke([&]{ a = f(); },   // run the callables as one parallel conjunction:
//                       [&]{ b = g(); });  // the first here, the others as sparks
//
//   auto r = mr::spawn([] { return h(); });  // a new context; r->wait() is its result
//   mr::future<int> f;  f.signal(3);  f.wait();  // single-assignment, waits suspend contexts
//   n = mr::blocking([&] { return read(fd, buf, len); });  // off the engine while it blocks
//   mr::scope([&](auto &s) { for (auto &x : xs) s.spawn([&] { f(x); }); });  // all done here
//
// An exception thrown by a branch of parallel_invoke is carried to the caller and rethrown there
// after every branch has finished (the first one, in argument order, if several threw); one
// thrown by a spawned function is rethrown by wait() on its future. No engine dies and nothing
// crosses the C ABI as an exception. A context may wait inside a catch handler or while an
// exception unwinds: the exception state (std::current_exception, `throw;`,
// std::uncaught_exceptions) is the context's and goes with it to whatever thread resumes it.
#ifndef MRENGINE_HPP
#define MRENGINE_HPP

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "mrengine.h"

namespace mr {

// The error MR_init (or another call) reported, as an exception.
class error : public std::runtime_error {
 public:
  error(int code, const std::string &what) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// What wait() on the future of mr::spawn throws when the context was dropped before its
// function returned (MR_channel_close of a drop channel, MR_shutdown of one, MR_shutdown_now).
class dropped : public error {
 public:
  dropped() : error(MR_EDROPPED, MR_strerror(MR_EDROPPED)) {}
};

// Starts the runtime in the constructor (the calling thread becomes engine 0) and shuts it down
// in the destructor. Throws mr::error if MR_init fails.
class runtime {
 public:
  runtime() : runtime(nullptr) {}
  explicit runtime(const MR_Config *cfg) {
    int rc = MR_init(cfg);
    if (rc != 0) {
      std::string msg = MR_init_error_message();
      throw error(rc, msg.empty() ? std::string(MR_strerror(rc)) : msg);
    }
  }
  ~runtime() { (void)MR_shutdown(); }
  runtime(const runtime &) = delete;
  runtime &operator=(const runtime &) = delete;

  static int engines() noexcept { return MR_num_engines(); }
};

// The id of the engine running the caller, or -1.
inline int engine_id() noexcept { return MR_engine_id(); }
inline int num_engines() noexcept { return MR_num_engines(); }

// The OS index of the PU engine e is bound to, or -1 if it is not pinned. Throws mr::error
// (MR_ENOTINIT, MR_ERANGE).
inline int engine_cpu(int e) {
  int cpu = -1;
  int rc = MR_engine_cpu(e, &cpu);
  if (rc != 0) throw error(rc, MR_strerror(rc));
  return cpu;
}

// Every engine's counters, indexed by engine id (empty when the runtime is not running).
// Exact at a quiescent point.
inline std::vector<MR_EngineStats> stats() {
  std::vector<MR_EngineStats> out;
  int n = MR_num_engines();
  out.reserve(static_cast<std::size_t>(n));
  for (int e = 0; e < n; e++) {
    MR_EngineStats s;
    MR_engine_stats_init(&s);
    if (MR_stats_get(e, &s) != 0) break;
    out.push_back(s);
  }
  return out;
}

// Trace a region (MR_trace_start in the constructor, MR_trace_stop in the destructor) to
// `path`, a GHC eventlog (".eventlog") or Chrome trace-event JSON (".json"). Throws mr::error
// if the trace cannot start (MR_EBUSY: one is on; MR_EINVAL: bad suffix or cannot create).
class trace {
 public:
  explicit trace(const std::string &path) {
    int rc = MR_trace_start(path.c_str());
    if (rc != 0) throw error(rc, std::string("MR_trace_start: ") + MR_strerror(rc) + ": " + path);
  }
  ~trace() { (void)MR_trace_stop(); }
  trace(const trace &) = delete;
  trace &operator=(const trace &) = delete;

  // A user marker in the trace being written (nothing when none is).
  static void marker(const std::string &text) noexcept { (void)MR_trace_marker(text.c_str()); }
};

namespace detail {

template <class F>
struct branch {
  F *fn;
  std::exception_ptr error;
  static void run(void *self) noexcept {
    auto *b = static_cast<branch *>(self);
    try {
      (*b->fn)();
    } catch (...) {
      b->error = std::current_exception();
    }
  }
};

}  // namespace detail

// Run every callable (each invocable with no arguments) as one parallel conjunction: the first
// on the calling context, the others as sparks that idle engines may steal. Returns when all have
// finished; rethrows the first exception (in argument order) any of them threw. Any thread
// while the runtime runs: from a thread that is not an engine the others go to the injector and
// the caller blocks until they finish.
template <class F, class... Fs>
void parallel_invoke(F &&first, Fs &&...rest) {
  MR_SyncTerm st;
  MR_sync_term_init(&st, static_cast<unsigned>(1 + sizeof...(Fs)));
  std::tuple<detail::branch<std::remove_reference_t<Fs>>...> branches{
      detail::branch<std::remove_reference_t<Fs>>{&rest, nullptr}...};
  // Fork the others in argument order; a thief takes the oldest (the second callable) first.
  std::apply(
      [&](auto &...b) {
        auto fork_one = [&](auto &br) {
          MR_fork_new_child(&st, &std::remove_reference_t<decltype(br)>::run, &br);
        };
        (void)fork_one;
        int dummy[] = {0, (fork_one(b), 0)...};
        (void)dummy;
      },
      branches);
  std::exception_ptr first_error;
  try {
    std::forward<F>(first)();
  } catch (...) {
    first_error = std::current_exception();
  }
  MR_join_and_continue(&st);
  if (first_error) std::rethrow_exception(first_error);
  // The first in argument order, tested without copying an exception_ptr (a copy is an
  // atomic reference count, on the path of every conjunction).
  std::apply([](auto &...b) { ((b.error ? std::rethrow_exception(b.error) : void()), ...); },
             branches);
}

// A single-assignment value shared between contexts (a future of a dependent parallel
// conjunction): one signal, any number of waits. wait() suspends a context (or blocks a thread
// that is not an engine) until the value or an exception is there. Not copyable or movable:
// share it by reference or through a std::shared_ptr, and keep it alive until every waiter has
// returned.
template <class T>
class future {
 public:
  future() { MR_future_init(&f_); }
  future(const future &) = delete;
  future &operator=(const future &) = delete;

  // Give the future its value. Throws mr::error(MR_EBUSY) if it was already signalled. If
  // moving the value in throws, the waiters get that exception and signal rethrows it.
  void signal(T value) {
    claim();
    try {
      value_.emplace(std::move(value));
    } catch (...) {
      error_ = std::current_exception();
      MR_future_signal(&f_, 2);
      throw;
    }
    MR_future_signal(&f_, 1);
  }
  // Make every wait() throw `e`. Throws mr::error(MR_EBUSY) if it was already signalled.
  void signal_exception(std::exception_ptr e) {
    claim();
    error_ = std::move(e);
    MR_future_signal(&f_, 2);
  }
  // The value, once signalled; rethrows a signalled exception.
  const T &wait() {
    if (MR_future_wait(&f_) == 2) std::rethrow_exception(error_);
    return *value_;
  }
  bool ready() const noexcept { return MR_future_is_signalled(&f_) != 0; }

 private:
  void claim() {
    if (claimed_.exchange(true, std::memory_order_relaxed))
      throw error(MR_EBUSY, "mr::future signalled twice");
  }
  // relaxed: only one signaller may pass; what it writes is published by MR_future_signal.
  std::atomic<bool> claimed_{false};
  std::optional<T> value_;
  std::exception_ptr error_;
  MR_Future f_;
};

namespace detail {
template <class R>
struct result_of_spawn {
  using type = R;
};
template <>
struct result_of_spawn<void> {
  using type = std::monostate;
};
}  // namespace detail

// Run f() in a new context as `opts` say (MR_spawn: its engine, channel and deadline) and return
// the future of its result (std::monostate for void). An exception thrown by f is carried to
// whoever waits; if the context is dropped before f returned, wait() throws mr::dropped at once,
// and f is destroyed, without running on, when the runtime frees the dropped context (at
// MR_shutdown or MR_shutdown_now): until then the scope tasks, sparks and loop iterations it
// started, which are not dropped, may still use it. A context dropped after f returned (while
// f's captures are destroyed, if one of their destructors suspends) keeps f's result; the rest
// of those destructors never runs. opts.on_drop and opts.on_free are mr::spawn's own. Throws
// mr::error if the context cannot be made (MR_ENOCHANNEL, MR_EDEADLINE, MR_ECLOSED, ...). Any
// thread while the runtime runs.
template <class F>
auto spawn(F f, const MR_SpawnOptions &opts)
    -> std::shared_ptr<future<typename detail::result_of_spawn<std::invoke_result_t<F &>>::type>> {
  using R = std::invoke_result_t<F &>;
  using V = typename detail::result_of_spawn<R>::type;
  struct job {
    std::shared_ptr<future<V>> out;
    // Set by run once f returned and `out` has its result: from then on run ends the job, and a
    // drop while it does (a capture's destructor that suspends) leaves `out` and fn alone. Read
    // by drop and release after the context suspended (its suspension orders the write).
    bool returned = false;
    union {
      F fn;  // ended by run, or by release if f never returned; never by ~job
    };
    job(F &&f, std::shared_ptr<future<V>> o) : out(std::move(o)), fn(std::move(f)) {}
    ~job() {}
    job(const job &) = delete;
    job &operator=(const job &) = delete;
    static void run(void *p) noexcept {
      job *j = static_cast<job *>(p);
      std::optional<V> v;
      std::exception_ptr e;
      try {
        if constexpr (std::is_void_v<R>) {
          j->fn();
          v.emplace();
        } else {
          v.emplace(j->fn());
        }
      } catch (...) {
        e = std::current_exception();
      }
      // The future is this job's own, so it is signalled once: signal_exception cannot throw,
      // and if moving the value into it throws, signal has given the waiters that exception.
      try {
        if (e)
          j->out->signal_exception(std::move(e));
        else
          j->out->signal(std::move(*v));
      } catch (...) {}
      j->returned = true;
      j->fn.~F();  // may suspend, and be dropped there (see `returned`)
      delete j;
    }
    // MR_SpawnOptions.on_drop: run never returns, and its frame is never unwound. What f started
    // may still use fn: release frees it.
    static void drop(void *p) noexcept {
      job *j = static_cast<job *>(p);
      if (j->returned) return;  // out has f's result
      try {
        j->out->signal_exception(std::make_exception_ptr(dropped()));
      } catch (...) {}
    }
    // MR_SpawnOptions.on_free: nothing of the dropped context runs any more.
    static void release(void *p) noexcept {
      job *j = static_cast<job *>(p);
      if (!j->returned) j->fn.~F();
      delete j;
    }
  };
  auto out = std::make_shared<future<V>>();
  auto *j = new job(std::move(f), out);
  MR_SpawnOptions o = opts;
  o.on_drop = &job::drop;
  o.on_free = &job::release;
  int rc = MR_spawn(&job::run, j, &o);
  if (rc != 0) {
    delete j;
    throw error(rc, MR_strerror(rc));
  }
  return out;
}

// The same on engine `engine` (or any engine if -1), in the default channel.
template <class F>
auto spawn(F f, int engine = -1) {
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.engine = engine;
  return spawn(std::move(f), o);
}

// ---- Channels (mrengine.h, "Channels"; doc/api.md) ----
//
//   MR_ChannelOptions c = mr::channel_options();  c.level = 1;
//   int batch = mr::channel_create(c);
//   auto r = mr::spawn([] { crunch(); }, mr::spawn_options(batch));

// The default channel options (level 0, FIFO, complete, followup itself).
inline MR_ChannelOptions channel_options() noexcept {
  MR_ChannelOptions o;
  MR_channel_options_default(&o);
  return o;
}

// Spawn options for channel `channel` (with `deadline` for a deadline channel, MR_now's clock),
// any engine.
inline MR_SpawnOptions spawn_options(int channel, uint64_t deadline = 0) noexcept {
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.channel = channel;
  o.deadline = deadline;
  return o;
}

// Make a channel; returns its number. Throws mr::error (MR_ENOTINIT, MR_EINVAL, MR_ELEVEL,
// MR_ENOCHANNEL, MR_ECHANNELS, MR_ESHUTDOWN).
inline int channel_create(const MR_ChannelOptions &opts) {
  int rc = MR_channel_create(&opts);
  if (rc < 0) throw error(rc, MR_strerror(rc));
  return rc;
}

// Close channel ch (MR_channel_close: spawns are refused; a drop channel's spawned contexts are
// dropped) and return at once. Throws mr::error (MR_ENOTINIT, MR_EINVAL for the default channel,
// MR_ENOCHANNEL, MR_ECLOSED, MR_ESHUTDOWN).
inline void channel_close(int ch) {
  int rc = MR_channel_close(ch);
  if (rc != 0) throw error(rc, MR_strerror(rc));
}

// Wait until every context spawned into the closed channel ch has finished or been dropped
// (MR_channel_wait). Throws mr::error (MR_ENOTINIT, MR_ENOCHANNEL, MR_EINVAL if ch is open,
// MR_EDEADLK from a context of ch).
inline void channel_wait(int ch) {
  int rc = MR_channel_wait(ch);
  if (rc != 0) throw error(rc, MR_strerror(rc));
}

// The channel of the calling context. Throws mr::error (MR_ENOTINIT; MR_ENOTENGINE on a thread
// that is not an engine).
inline int channel_current() {
  int rc = MR_channel_current();
  if (rc < 0) throw error(rc, MR_strerror(rc));
  return rc;
}

// Give the engine to other work (MR_yield): the calling context runs again when its followup
// channel's turn comes. Throws mr::error (MR_ENOTINIT; MR_ENOTENGINE outside a context).
inline void yield() {
  int rc = MR_yield();
  if (rc != 0) throw error(rc, MR_strerror(rc));
}

// Channel ch's counters. Throws mr::error (MR_ENOTINIT, MR_ENOCHANNEL).
inline MR_ChannelStats channel_stats(int ch) {
  MR_ChannelStats s;
  MR_channel_stats_init(&s);
  int rc = MR_channel_stats(ch, &s);
  if (rc != 0) throw error(rc, MR_strerror(rc));
  return s;
}

// Run f() in a blocking region (MR_blocking_begin / MR_blocking_end): the calling context moves
// to a backup thread while f runs, so its engine goes on with other work. Returns f's result;
// an exception from f ends the region and propagates. Any thread while the runtime runs.
template <class F>
auto blocking(F &&f) -> std::invoke_result_t<F &> {
  struct region {
    region() { MR_blocking_begin(); }
    ~region() { MR_blocking_end(); }
    region(const region &) = delete;
    region &operator=(const region &) = delete;
  } r;
  return f();
}

// Run f(i) for every i in [begin, end) with loop control: at most `contexts` iterations at once
// (0: --lc-contexts-per-engine x engines), each in a context of its own. Returns when all have
// finished; then rethrows the first exception an iteration threw (the others are dropped).
// Context code only. Throws mr::error if the loop cannot be set up (MR_ENOTINIT; MR_ENOTENGINE
// outside a context: a thread that is not an engine, or a blocking region on a backup thread;
// MR_ENOMEM) or an iteration not started; if the index (its comparison or increment) or an
// allocation throws, no more iterations start and that exception is rethrown. Every way out
// comes only once the iterations started have finished, and frees the loop control.
template <class Index, class F>
void parallel_for(Index begin, Index end, F f, unsigned contexts = 0) {
  struct shared {
    F *fn;
    std::atomic<bool> failed{false};
    std::exception_ptr error;  // written by the iteration that set `failed` first
  } sh{&f, {}, {}};
  struct item {
    shared *sh;
    Index i;
    static void run(void *p) noexcept {
      std::unique_ptr<item> it(static_cast<item *>(p));
      try {
        (*it->sh->fn)(it->i);
      } catch (...) {
        // acq_rel: one writer of error; MR_lc_finish orders it before the rethrow.
        if (!it->sh->failed.exchange(true, std::memory_order_acq_rel))
          it->sh->error = std::current_exception();
      }
    }
  };
  // MR_lc_finish frees the loop control only in a context: outside one, make none.
  int rc = MR_engine_id() >= 0 ? 0 : MR_num_engines() == 0 ? MR_ENOTINIT : MR_ENOTENGINE;
  MR_LoopControl *lc = nullptr;
  if (rc == 0) rc = MR_lc_create(contexts, &lc);
  if (rc != 0) throw error(rc, MR_strerror(rc));
  std::exception_ptr setup;  // the index's or an allocation's: no more iterations start
  try {
    for (Index i = begin; i < end; ++i) {
      auto it = std::make_unique<item>(item{&sh, i});
      rc = MR_lc_spawn(lc, &item::run, it.get());
      if (rc != 0) break;
      (void)it.release();  // the iteration's now
    }
  } catch (...) {
    setup = std::current_exception();
  }
  // The iterations started use f and sh, in this frame: wait for them whatever happened.
  int frc = MR_lc_finish(lc);
  if (setup) std::rethrow_exception(setup);
  if (rc == 0) rc = frc;
  if (rc != 0) throw error(rc, MR_strerror(rc));
  if (sh.error) std::rethrow_exception(sh.error);
}

// ---- Scopes (mrengine.h, "Scopes") ----

// The scope that mr::scope hands its function: spawn(f) runs f() as a task of the scope, from
// the function or from any task of the scope, which may thus spawn more. Tasks may borrow what
// lives in the frame that called mr::scope (capture by reference): mr::scope returns only after
// every one has finished. Not copyable or movable.
class scope_handle {
 public:
  scope_handle(const scope_handle &) = delete;
  scope_handle &operator=(const scope_handle &) = delete;

  // Add f() (invocable with no arguments; moved or copied into the task) to the scope. Throws
  // std::bad_alloc, or mr::error(MR_ECLOSED) if the scope has ended (only a thread outside the
  // scope that races mr::scope's return can see that); f then never runs.
  template <class F>
  void spawn(F &&f) {
    using Fn = std::decay_t<F>;
    struct task {
      Fn fn;
      scope_handle *h;
      static void run(void *p) noexcept {
        std::unique_ptr<task> t(static_cast<task *>(p));
        try {
          t->fn();
        } catch (...) {
          t->h->fail(std::current_exception());
        }
      }
    };
    auto *t = new task{Fn(std::forward<F>(f)), this};
    int rc = MR_scope_spawn(&s_, &task::run, t);
    if (rc != 0) {
      delete t;
      throw error(rc, std::string("mr::scope spawn: ") + MR_strerror(rc));
    }
  }

 private:
  template <class B>
  friend auto scope(B &&body) -> std::invoke_result_t<B &, scope_handle &>;
  scope_handle() {
    int rc = MR_scope_begin(&s_);
    if (rc != 0) throw error(rc, std::string("mr::scope: ") + MR_strerror(rc));
  }
  // Keep e if it is the first exception of the scope (the body's or a task's).
  void fail(std::exception_ptr e) noexcept {
    // acq_rel: one writer of error_; MR_scope_end orders its write before the rethrow.
    if (!failed_.exchange(true, std::memory_order_acq_rel)) error_ = std::move(e);
  }
  MR_Scope s_;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

// Run body(s) with a new scope s, then wait until every task spawned into s (by body or by
// its tasks) has finished, and return body's result. If body or a task threw, the first
// exception thrown (in time) is rethrown once all have finished; later ones are dropped. Any
// thread while the runtime runs: a context runs its own remaining tasks at the end, then
// suspends until the last one finishes (its engine does other work); a thread that is not an
// engine blocks. Throws mr::error (MR_ENOTINIT) if the runtime is not running.
template <class B>
auto scope(B &&body) -> std::invoke_result_t<B &, scope_handle &> {
  using R = std::invoke_result_t<B &, scope_handle &>;
  scope_handle h;
  std::optional<std::conditional_t<std::is_void_v<R>, std::monostate, R>> result;
  try {
    if constexpr (std::is_void_v<R>) {
      body(h);
    } else {
      result.emplace(body(h));
    }
  } catch (...) {
    h.fail(std::current_exception());
  }
  int rc = MR_scope_end(&h.s_);
  if (h.error_) std::rethrow_exception(h.error_);
  if (rc != 0) throw error(rc, std::string("mr::scope: ") + MR_strerror(rc));
  if constexpr (!std::is_void_v<R>) return std::move(*result);
}

}  // namespace mr

// Time: sleeps, timers, tickers.
#include "mrengine_time.hpp"

#endif
