// events.hpp: the scheduler's one events layer, over the counters (counters.hpp) and the
// runtime's trace (Runtime::tracer, trace.hpp). An event that is counted is noted with
// note(e, Event::X): it bumps engine e's counter X and, if X is one of MR_TRACED_EVENTS_MAP,
// records it in the trace. The events that are only traced (states, context runs and stops,
// notifications sent, futures) have the hooks of trace:: below. When tracing is off every hook
// costs what a bare counter costs plus one relaxed load of trace::g_on and a predictable branch.
#ifndef MR_ENGINE_EVENTS_HPP
#define MR_ENGINE_EVENTS_HPP

#include <atomic>
#include <cstdint>

#include "counters.hpp"
#include "engine.hpp"
#include "trace.hpp"

namespace mr::engine {

// The counted events: one per counter of MR_ENGINE_STATS_MAP (mrengine.h), named as its field.
// A counter per notification kind (`wakeups`) is one event; note()'s `arg` is the kind.
enum class Event {
#define MR_EVENT_(field, column) field,
  MR_ENGINE_STATS_MAP(MR_EVENT_, MR_EVENT_)
#undef MR_EVENT_
};

// The counted events that are traced too, and as which record (trace::Kind); note()'s `arg` is
// the record's x.
#define MR_TRACED_EVENTS_MAP(XX)                                          \
  XX(sparks_pushed, SPARK_CREATE)                                         \
  XX(sparks_run_local, SPARK_RUN) /* a spark of the engine's own deque */ \
  XX(sparks_injected, SPARK_RUN)  /* a spark of the injector */           \
  XX(sparks_stolen, SPARK_STEAL)  /* arg: the victim */                   \
  XX(wakeups, NOTIFY_RECV)        /* arg: the notification's kind (Action) */

// Whether ev is traced, and as what.
struct Traced {
  bool on;
  trace::Kind kind;
};
constexpr Traced traced(Event ev) {
  switch (ev) {
#define MR_TRACED_(event, kind) \
  case Event::event:            \
    return Traced{true, trace::Kind::kind};
    MR_TRACED_EVENTS_MAP(MR_TRACED_)
#undef MR_TRACED_
    default:
      return Traced{false, trace::Kind::MARKER};
  }
}

// The counter of ev in c (of notification kind `kind` for `wakeups`).
[[gnu::always_inline]] inline std::atomic<std::uint64_t> &counter(Counters &c, Event ev, int kind) {
  switch (ev) {
#define MR_EVENT_ONE_(field, column) \
  case Event::field:                 \
    return c.field;
#define MR_EVENT_KINDS_(field, column) \
  case Event::field:                   \
    return c.field[kind];
    MR_ENGINE_STATS_MAP(MR_EVENT_ONE_, MR_EVENT_KINDS_)
#undef MR_EVENT_ONE_
#undef MR_EVENT_KINDS_
  }
  __builtin_unreachable();
}

// Engine e saw event ev: count it, and trace it if it is traced and a trace is on. Called only
// by engine e (the counters have one writer). Always inlined, and every caller names its event:
// it compiles to the bump, and for a traced event the flag's test, that a hand-written pair was.
[[gnu::always_inline]] inline void note(Engine *e, Event ev, int arg = 0) {
  bump(counter(e->stats, ev, arg));
  if (traced(ev).on && trace::tracing_on()) [[unlikely]]
    g_rt->tracer->record_noted(e, traced(ev).kind, arg);
}

// ---- the events that are only traced ------------------------------------------------------
namespace trace {

// Engine e (its own thread) moved to state `to`.
inline void on_state(Engine *e, State to) {
  if (tracing_on()) [[unlikely]]
    g_rt->tracer->record_state(e, to);
}
// Context c starts running on engine e (a new task of c gets a new thread id).
inline void on_run(Engine *e, Context *c) {
  if (tracing_on()) [[unlikely]]
    g_rt->tracer->record_run(e, c);
}
// Context c, running on engine e, stops.
inline void on_stop(Engine *e, Context *c, Why why) {
  if (tracing_on()) [[unlikely]]
    g_rt->tracer->record_stop(e, c, why);
}
// The calling thread (any) delivered action a to engine `target`.
inline void on_notify_sent(int target, Action a) {
  if (tracing_on()) [[unlikely]]
    Tracer::record_notify_sent(target, a);
}
// Any thread, even one outside the runtime: it waited for future f, or signalled it.
inline void on_future_wait(const void *f, bool suspended) {
  if (tracing_on()) [[unlikely]]
    Tracer::record_future(Kind::FUT_WAIT, f, suspended);
}
inline void on_future_signal(const void *f) {
  if (tracing_on()) [[unlikely]]
    Tracer::record_future(Kind::FUT_SIGNAL, f, false);
}

}  // namespace trace

}  // namespace mr::engine

#endif
