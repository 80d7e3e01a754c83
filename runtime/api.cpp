// api.cpp: the C ABI entry points. Nothing crosses extern "C" as an exception.
#include "config.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "engine/blocking.hpp"
#include "engine/close.hpp"
#include "engine/deadline.hpp"
#include "engine/engine.hpp"
#include "engine/fatal.hpp"
#include "engine/future.hpp"
#include "engine/io_wait.hpp"
#include "engine/join.hpp"
#include "engine/lifecycle.hpp"
#include "engine/loop_control.hpp"
#include "engine/poll_wait.hpp"
#include "engine/scope.hpp"
#include "engine/stats.hpp"
#include "engine/trace.hpp"
#include "engine/wake.hpp"
#include "engine/yield.hpp"
#include "mrengine.h"
#include "options.hpp"

namespace {

// The message of the last MR_init failure. Written only by MR_init, under the lock: MR_inits may
// race (all but one refused).
char g_init_error[512] = "";
std::mutex g_init_error_lock;

void set_init_error(const std::string &msg, bool quiet) {
  std::lock_guard<std::mutex> hold(g_init_error_lock);
  std::snprintf(g_init_error, sizeof g_init_error, "%s", msg.c_str());
  if (!quiet && !msg.empty()) std::fprintf(stderr, "mrengine: %s\n", g_init_error);
}

mr::engine::Join *join_of(MR_SyncTerm *st) { return reinterpret_cast<mr::engine::Join *>(st); }

mr::engine::Future *future_of(MR_Future *f) { return reinterpret_cast<mr::engine::Future *>(f); }

// Is the caller running in a context (on an engine)?
bool in_context() { return mr::engine::running() && mr::engine::this_engine() != nullptr; }

}  // namespace

extern "C" {

MR_EXTERN const char *MR_strerror(int err) {
  switch (err) {
#define MR_ERR_TEXT_(name, value, text) \
  case MR_##name:                       \
    return text;
    MR_ERRNO_MAP(MR_ERR_TEXT_)
#undef MR_ERR_TEXT_
    case 0:
      return "success";
    default:
      return "unknown error";
  }
}

MR_EXTERN const char *MR_err_name(int err) {
  switch (err) {
#define MR_ERR_NAME_(name, value, text) \
  case MR_##name:                       \
    return "MR_" #name;
    MR_ERRNO_MAP(MR_ERR_NAME_)
#undef MR_ERR_NAME_
    case 0:
      return "0";
    default:
      return "MR_EUNKNOWN";
  }
}

MR_EXTERN void MR_config_default(MR_Config *cfg) {
  if (!cfg) return;
  std::memset(cfg, 0, sizeof *cfg);
  mr::engine::Params d;
  cfg->size = sizeof *cfg;
  cfg->engines = 0;
  cfg->spin_rounds = d.spin_rounds;
  cfg->stack_size = d.stack_size;
  cfg->small_stack_size = d.small_stack_size;
  cfg->poll_interval_us = d.poll_interval_us;
  cfg->options = nullptr;
}

MR_EXTERN int MR_init(const MR_Config *cfg) {
  bool quiet = cfg && cfg->size >= offsetof(MR_Config, engines) && (cfg->flags & MR_CONFIG_QUIET);
  // Refused before the options are read; start() refuses racing calls.
  if (mr::engine::running()) {
    set_init_error("MR_init called while the runtime is running", quiet);
    return MR_EBUSY;
  }
  mr::engine::Params p;
  std::string err;
  int rc = mr::runtime::make_params(cfg, &p, &err);
  if (rc == 0) {
    try {
      rc = mr::engine::start(p, &err);
    } catch (...) {
      rc = MR_ENOMEM;
      err = "out of memory while starting the runtime";
    }
  }
  set_init_error(rc ? err : std::string(), quiet);
  return rc;
}

MR_EXTERN const char *MR_init_error_message(void) { return g_init_error; }

MR_EXTERN int MR_shutdown(void) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  return mr::engine::stop(nullptr);
}

namespace {

// A report's size covers at least the totals (the per-channel arrays came later).
bool report_ok(const MR_ShutdownReport *r) {
  return !r || r->size >= offsetof(MR_ShutdownReport, channel_contexts_dropped);
}

}  // namespace

MR_EXTERN void MR_shutdown_report_init(MR_ShutdownReport *report) {
  if (!report) return;
  std::memset(report, 0, sizeof *report);
  report->size = sizeof *report;
}

MR_EXTERN int MR_shutdown_report(MR_ShutdownReport *report) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!report_ok(report)) return MR_EINVAL;
  return mr::engine::stop(report);
}

MR_EXTERN int MR_shutdown_now(MR_ShutdownReport *report) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!report_ok(report)) return MR_EINVAL;
  return mr::engine::stop_now(report);
}

MR_EXTERN int MR_engine_id(void) { return mr::engine::engine_id(mr::engine::this_engine()); }

MR_EXTERN int MR_num_engines(void) { return mr::engine::num_engines(); }

MR_EXTERN int MR_engine_cpu(int engine, int *cpu) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!cpu) return MR_EINVAL;
  if (engine < 0 || engine >= mr::engine::num_engines()) return MR_ERANGE;
  *cpu = mr::engine::engine_cpu(engine);
  return 0;
}

MR_EXTERN void MR_sync_term_init(MR_SyncTerm *st, unsigned conjuncts) {
  if (conjuncts == 0) mr::engine::fatal("MR_sync_term_init: a conjunction has at least 1 branch");
  mr::engine::Join *j = join_of(st);
  // relaxed: the sync term is published to other engines by the spark push (release).
  new (&j->count) std::atomic<std::uint32_t>(conjuncts);
  j->channel = static_cast<std::uint32_t>(mr::engine::current_channel());
  j->parent = nullptr;
}

MR_EXTERN void MR_fork_new_child(MR_SyncTerm *st, MR_TaskFn fn, void *env) {
  mr::engine::Join *j = join_of(st);
  // relaxed: the caller's own unit is still counted, so 1 means no branch is left to fork.
  if (j->count.load(std::memory_order_relaxed) <= 1)
    mr::engine::fatal(
        "MR_fork_new_child: more branches forked than MR_sync_term_init counted "
        "(its count includes the caller's own branch)");
  mr::engine::fork(j, fn, env);
}

MR_EXTERN void MR_join_and_continue(MR_SyncTerm *st) { mr::engine::join_wait(join_of(st)); }

MR_EXTERN void MR_publish_v4(void) { mr::engine::publish_some(mr::engine::this_engine()); }

MR_EXTERN void MR_join_slow_v2(MR_SyncTerm *st, unsigned ran) {
  mr::engine::join_wait(join_of(st), ran);
}

MR_EXTERN void MR_future_init(MR_Future *f) {
  if (!f) mr::engine::fatal("MR_future_init: NULL future");
  std::memset(f, 0, sizeof *f);
}

MR_EXTERN void MR_future_signal(MR_Future *f, uintptr_t value) {
  if (!f) mr::engine::fatal("MR_future_signal: NULL future");
  mr::engine::future_signal(future_of(f), value);
}

MR_EXTERN uintptr_t MR_future_wait(MR_Future *f) {
  if (!f) mr::engine::fatal("MR_future_wait: NULL future");
  return mr::engine::future_wait(future_of(f));
}

MR_EXTERN int MR_future_is_signalled(const MR_Future *f) {
  return f && mr::engine::future_is_signalled(reinterpret_cast<const mr::engine::Future *>(f));
}

MR_EXTERN uint64_t MR_now(void) { return mr::engine::now_ns(); }

MR_EXTERN int MR_sleep_until(uint64_t deadline) {
  // Not running: this_engine() is nullptr and the thread sleeps.
  return mr::engine::sleep_until(deadline);
}

MR_EXTERN int MR_sleep_for(uint64_t ns) {
  uint64_t now = mr::engine::now_ns();
  // kNever means "no deadline": a deadline must be below it.
  if (ns >= mr::engine::kNever - now) return MR_EOVERFLOW;
  return MR_sleep_until(now + ns);
}

MR_EXTERN int MR_timer_start(MR_Timer *t, uint64_t deadline, MR_TaskFn fn, void *env) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!t || !fn) return MR_EINVAL;
  return mr::engine::timer_start(reinterpret_cast<mr::engine::Timer *>(t), deadline, fn, env);
}

MR_EXTERN int MR_timer_cancel(MR_Timer *t) {
  if (!t) return MR_EINVAL;
  return mr::engine::timer_cancel(reinterpret_cast<mr::engine::Timer *>(t));
}

MR_EXTERN int MR_future_signal_at(MR_Future *f, uintptr_t value, uint64_t deadline, MR_Timer *t) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!f || !t) return MR_EINVAL;
  return mr::engine::future_signal_at(future_of(f), value, deadline,
                                      reinterpret_cast<mr::engine::Timer *>(t));
}

MR_EXTERN int MR_ticker_start(MR_Ticker *tk, uint64_t period) {
  if (!tk || period == 0) return MR_EINVAL;
  mr::engine::ticker_start(reinterpret_cast<mr::engine::Ticker *>(tk), period);
  return 0;
}

MR_EXTERN int MR_ticker_wait(MR_Ticker *tk, uint64_t *ticks) {
  if (!tk || !ticks || reinterpret_cast<mr::engine::Ticker *>(tk)->period == 0) return MR_EINVAL;
  return mr::engine::ticker_wait(reinterpret_cast<mr::engine::Ticker *>(tk), ticks);
}

MR_EXTERN int MR_wait_fd(int fd, int events, int64_t timeout_ns) {
  // Not running: this_engine() is nullptr and the thread polls.
  return mr::engine::wait_fd(fd, events, timeout_ns);
}

MR_EXTERN int MR_poll_wait(const MR_PollSource *src, void *item) {
  // Not running: this_engine() is nullptr, MR_ENOTENGINE.
  return mr::engine::poll_wait(src, item);
}

MR_EXTERN int MR_lc_create(unsigned contexts, MR_LoopControl **out) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!out || contexts > 65536) return MR_EINVAL;
  unsigned n = contexts ? contexts : mr::engine::lc_default_slots();
  mr::engine::LoopControl *lc = mr::engine::lc_create(n);
  if (!lc) return MR_ENOMEM;
  *out = reinterpret_cast<MR_LoopControl *>(lc);
  return 0;
}

MR_EXTERN int MR_lc_spawn(MR_LoopControl *lc, MR_TaskFn fn, void *env) {
  if (!lc || !fn) return MR_EINVAL;
  if (!in_context()) return MR_ENOTENGINE;
  return mr::engine::lc_spawn(reinterpret_cast<mr::engine::LoopControl *>(lc), fn, env);
}

MR_EXTERN int MR_lc_finish(MR_LoopControl *lc) {
  if (!lc) return MR_EINVAL;
  if (!in_context()) return MR_ENOTENGINE;
  mr::engine::lc_finish(reinterpret_cast<mr::engine::LoopControl *>(lc));
  return 0;
}

// ---- Scopes ----

namespace {

mr::engine::Scope *scope_of(MR_Scope *s) { return reinterpret_cast<mr::engine::Scope *>(s); }

}  // namespace

MR_EXTERN int MR_scope_begin(MR_Scope *s) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!s) return MR_EINVAL;
  mr::engine::scope_begin(scope_of(s));
  return 0;
}

MR_EXTERN int MR_scope_spawn(MR_Scope *s, MR_TaskFn fn, void *env) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!s || !fn) return MR_EINVAL;
  return mr::engine::scope_spawn(scope_of(s), fn, env);
}

MR_EXTERN int MR_scope_end(MR_Scope *s) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!s) return MR_EINVAL;
  return mr::engine::scope_end(scope_of(s));
}

MR_EXTERN int MR_scope(MR_ScopeFn fn, void *env) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!fn) return MR_EINVAL;
  MR_Scope s;
  mr::engine::scope_begin(scope_of(&s));
  fn(&s, env);
  return mr::engine::scope_end(scope_of(&s));
}

MR_EXTERN void MR_spawn_options_default(MR_SpawnOptions *opts) {
  if (!opts) return;
  std::memset(opts, 0, sizeof *opts);
  opts->size = sizeof *opts;
  opts->engine = -1;
  opts->channel = MR_CHANNEL_DEFAULT;
}

namespace {

// Does an options record of `size` bytes hold the field that ends at `end`?
constexpr bool has_field(std::size_t size, std::size_t end) { return size >= end; }

}  // namespace

MR_EXTERN int MR_spawn(MR_TaskFn fn, void *arg, const MR_SpawnOptions *opts) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!fn) return MR_EINVAL;
  int engine = -1, channel = MR_CHANNEL_DEFAULT;
  std::uint64_t deadline = 0;
  void (*on_drop)(void *) = nullptr;
  void (*on_free)(void *) = nullptr;
  if (opts) {
    if (!has_field(opts->size, offsetof(MR_SpawnOptions, engine) + sizeof(int)) ||
        opts->size > 4096)
      return MR_EINVAL;
    if (opts->flags != 0) return MR_EINVAL;  // reserved (mrengine.h)
    engine = opts->engine;
    if (engine < -1 || engine >= mr::engine::num_engines()) return MR_ERANGE;
    if (has_field(opts->size, offsetof(MR_SpawnOptions, channel) + sizeof(int))) {
      channel = opts->channel;
      if (!mr::engine::channel_exists(channel)) return MR_ENOCHANNEL;
    }
    if (has_field(opts->size, offsetof(MR_SpawnOptions, deadline) + sizeof(std::uint64_t)))
      deadline = opts->deadline;
    if (has_field(opts->size, offsetof(MR_SpawnOptions, on_drop) + sizeof opts->on_drop))
      on_drop = opts->on_drop;
    if (has_field(opts->size, offsetof(MR_SpawnOptions, on_free) + sizeof opts->on_free))
      on_free = opts->on_free;
  }
  if (mr::engine::channel_by_deadline(channel) != (deadline != 0)) return MR_EDEADLINE;
  try {
    mr::engine::Root root{on_drop, on_free};
    return mr::engine::spawn(fn, arg, engine, channel, deadline, &root);
  } catch (...) {
    return MR_ENOMEM;
  }
}

MR_EXTERN void MR_channel_options_default(MR_ChannelOptions *opts) {
  if (!opts) return;
  std::memset(opts, 0, sizeof *opts);
  opts->size = sizeof *opts;
  opts->level = 0;
  opts->kind = MR_CHANNEL_FIFO;
  opts->close = MR_CLOSE_COMPLETE;
  opts->followup = -1;
}

MR_EXTERN int MR_channel_create(const MR_ChannelOptions *opts) {
  using namespace mr::engine;
  if (!running()) return MR_ENOTINIT;
  if (!opts || opts->size < sizeof *opts || opts->size > 4096) return MR_EINVAL;
  if (opts->kind != MR_CHANNEL_FIFO && opts->kind != MR_CHANNEL_DEADLINE) return MR_EINVAL;
  if (opts->close != MR_CLOSE_COMPLETE && opts->close != MR_CLOSE_DROP) return MR_EINVAL;
  if (opts->level < 0 || opts->level >= kLevels) return MR_ELEVEL;
  if (opts->followup < -1) return MR_ENOCHANNEL;
  return create_channel(opts->level, static_cast<ChannelKind>(opts->kind),
                        static_cast<Close>(opts->close), opts->followup);
}

MR_EXTERN int MR_channel_close(int ch) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (ch == MR_CHANNEL_DEFAULT) return MR_EINVAL;
  if (!mr::engine::channel_exists(ch)) return MR_ENOCHANNEL;
  return mr::engine::close_channel(ch);
}

MR_EXTERN int MR_channel_wait(int ch) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!mr::engine::channel_exists(ch)) return MR_ENOCHANNEL;
  return mr::engine::wait_channel(ch);
}

MR_EXTERN int MR_channel_current(void) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!mr::engine::this_engine()) return MR_ENOTENGINE;
  return mr::engine::current_channel();
}

MR_EXTERN int MR_yield(void) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  return mr::engine::yield_now();
}

MR_EXTERN void MR_channel_stats_init(MR_ChannelStats *out) {
  if (!out) return;
  std::memset(out, 0, sizeof *out);
  out->size = sizeof *out;
}

MR_EXTERN int MR_channel_stats(int ch, MR_ChannelStats *out) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!out || out->size < sizeof *out) return MR_EINVAL;
  if (!mr::engine::channel_exists(ch)) return MR_ENOCHANNEL;
  mr::engine::channel_stats_get(ch, out);
  return 0;
}

MR_EXTERN int MR_context_bind_here(void) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  return mr::engine::bind_here();
}

MR_EXTERN void MR_blocking_begin(void) {
  if (!mr::engine::running()) return;
  mr::engine::blocking_begin();
}

MR_EXTERN void MR_blocking_end(void) {
  if (!mr::engine::running()) return;
  mr::engine::blocking_end();
}

MR_EXTERN void MR_engine_stats_init(MR_EngineStats *out) {
  if (!out) return;
  std::memset(out, 0, sizeof *out);
  out->size = sizeof *out;
}

MR_EXTERN int MR_stats_get(int engine, MR_EngineStats *out) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!out || out->size < offsetof(MR_EngineStats, sparks_pushed) + sizeof(uint64_t))
    return MR_EINVAL;
  if (engine < 0 || engine >= mr::engine::num_engines()) return MR_ERANGE;
  mr::engine::stats_get(engine, out);
  return 0;
}

MR_EXTERN int MR_stats_print(FILE *out) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!out) return MR_EINVAL;
  mr::engine::print_stats(out);
  return 0;
}

MR_EXTERN int MR_trace_start(const char *path) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!path) return MR_EINVAL;
  std::string err;
  try {
    return mr::engine::trace::start(path, &err);
  } catch (const std::bad_alloc &) {
    return MR_ENOMEM;
  }
}

MR_EXTERN int MR_trace_stop(void) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  return mr::engine::trace::stop();
}

MR_EXTERN int MR_trace_marker(const char *text) {
  if (!mr::engine::running()) return MR_ENOTINIT;
  if (!text) return MR_EINVAL;
  try {
    mr::engine::trace::marker(text);
  } catch (const std::bad_alloc &) {
    return MR_ENOMEM;
  }
  return 0;
}

}  // extern "C"
