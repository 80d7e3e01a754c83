// task.hpp: the unit of work that a context runs, and the join its arrival goes to.
#ifndef MR_ENGINE_TASK_HPP
#define MR_ENGINE_TASK_HPP

#include <atomic>
#include <cstdint>

#include "mrengine.h"

namespace mr::engine {

struct Context;

// The inside of an MR_SyncTerm: the number of arrivals still expected (every forked branch plus
// the parent's own), and the parent, set when it suspends. The same record is the spawn join
// that MR_shutdown waits on (Runtime::spawned).
//   count: decremented by each child (release; acq_rel for the one that may be last) and by the
//          parent only after it has finished suspending (J1 in doc/design.md): so whoever brings
//          it to zero knows the parent's continuation is saved and may resume it.
//   parent: written by the parent before its decrement; read by the last arrival after its.
//   channel: the channel of the context that initialised it, which its sparks belong to (a
//          thief's context for one of them is of that channel). Written at initialisation and
//          published with the sparks (D1); the inline MR_sync_term_init writes it too
//          (mrengine_view.h, MR_ST_CHANNEL_).
struct Join {
  std::atomic<std::uint32_t> count;
  std::uint32_t channel;
  Context *parent;
};
static_assert(sizeof(Join) <= sizeof(MR_SyncTerm), "MR_SyncTerm too small for Join");
static_assert(alignof(Join) <= alignof(MR_SyncTerm), "MR_SyncTerm alignment too small for Join");

// A spark or a spawned context's body: fn(env), then one arrival at join. Three words, copied by
// value. Must be executed exactly once.
struct Task {
  MR_TaskFn fn;
  void *env;
  Join *join;
};

}  // namespace mr::engine

#endif
