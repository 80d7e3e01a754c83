// steal.hpp: taking work from other engines: which victims an engine tries and in what order
// (the advised victim, then tier by tier from a rotating offset), and one steal attempt with its
// counting and tracing. The idle loop's search (idle.cpp) and a context's drain of the fan-out
// it stole from (join.cpp) both steal through here; what to do with the loot is theirs.
#ifndef MR_ENGINE_STEAL_HPP
#define MR_ENGINE_STEAL_HPP

#include "close.hpp"
#include "engine.hpp"
#include "events.hpp"

namespace mr::engine {

// What a steal attempt got.
enum class Loot {
  NONE,     // nothing: the deque was empty (and the slot too, if looked at), or a race was lost
  SPARK,    // a spark to run
  DROPPED,  // a spark that MR_shutdown dropped instead (close.hpp): the victim may have more
  CONTEXT,  // the unbound context of the victim's hand-off slot
};

// What a steal round got, and from where.
struct Stolen {
  Loot got = Loot::NONE;
  Task spark;                  // SPARK
  Context *context = nullptr;  // CONTEXT
  Shared *victim = nullptr;    // the engine it came from (SPARK, CONTEXT)
};

// Called only by engine e: one steal attempt on engine v: the oldest spark of v's deque into t,
// or, when that deque is empty and `slot` is given, the unbound context in v's hand-off slot
// into *slot. Counted in e's counters: every attempt, and as a failure each one that got nothing
// to run. Inline: a context draining a fan-out (join.cpp) steals once per spark.
inline Loot steal_from(Engine *e, Shared *v, Task &t, Context **slot) {
  note(e, Event::steal_attempts);
  WsDeque::Steal r = v->deque.steal(t);
  if (r == WsDeque::Steal::EMPTY && slot) {
    // No spark there: the context v would run next, if it may run elsewhere (v is busy with
    // another one, and may be for long).
    if (steal_runnext(v->runnext, slot)) return Loot::CONTEXT;
  }
  if (r != WsDeque::Steal::TAKEN || !keep_spark(t)) {
    note(e, Event::steal_failures);
    return r == WsDeque::Steal::TAKEN ? Loot::DROPPED : Loot::NONE;
  }
  note(e, Event::sparks_stolen, v->id);
  return Loot::SPARK;
}

// Called only by engine e: one steal attempt on v that may take v's hand-off slot too.
inline Stolen steal_work(Engine *e, Shared *v) {
  Stolen s;
  s.victim = v;
  s.got = steal_from(e, v, s.spark, &s.context);
  return s;
}

// Called only by engine e: the victim named by its work-steal advice, which this uses up, or
// nullptr when it has none (the advice named no engine, or none came).
Shared *take_advised_victim(Engine *e);

// Called only by engine e in STEALING: one steal round: the advised victim first, then every
// victim tier by tier (topology.hpp), each tier from a rotating offset, taking hand-off slots
// too. Stops at the first attempt that got a spark or a context; after a round without either
// the offset moves on, so that engines searching at once do not all rob the same victim first.
Stolen steal_round(Engine *e);

}  // namespace mr::engine

#endif
