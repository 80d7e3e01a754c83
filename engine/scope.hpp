// scope.hpp: scopes, fork-join regions whose tasks borrow the caller's stack and whose number is
// not known in advance (doc/design.md, "Scopes").
#ifndef MR_ENGINE_SCOPE_HPP
#define MR_ENGINE_SCOPE_HPP

#include "mrengine.h"
#include "task.hpp"

namespace mr::engine {

// The inside of an MR_Scope: a join (task.hpp) whose count is not fixed when it begins. Its
// count is 1 (the owner's unit, given back at the end) plus the tasks spawned and not finished
// while the scope is open, and 0 once it has ended: a spawn adds a unit only to a count that is
// not 0 (a CAS), so 0 is final and the one RMW that reaches it is the end's. Its tasks are sparks
// of this join, so they are run, stolen and counted like the branches of a conjunction (join.cpp).
struct Scope {
  Join join;
};
static_assert(sizeof(Scope) <= sizeof(MR_Scope), "MR_Scope too small for Scope");
static_assert(alignof(Scope) <= alignof(MR_Scope), "MR_Scope alignment too small for Scope");

// Open s: no task, the owner's unit, the calling context's channel (the channel its tasks
// belong to), no parent. Any thread while running; the caller is s's owner.
void scope_begin(Scope *s);

// Add fn(env) to s as a spark on the calling engine's deque (from a thread that is not an
// engine, into the injector). Returns 0, or MR_ECLOSED if s has ended (or was never begun: a
// zeroed scope). Any thread while running; one that may race with s's end gets either.
int scope_spawn(Scope *s, MR_TaskFn fn, void *env);

// Wait until every task of s has finished, then end s: run the tasks still on the calling
// engine's deque here, then suspend until the last one finishes (a thread that is not an engine
// blocks). Returns 0, or MR_ECLOSED if s had already ended. Called only by s's owner.
int scope_end(Scope *s);

}  // namespace mr::engine

#endif
