// join.hpp: parallel conjunctions (fork a spark, join it: J1 in doc/design.md), spawned contexts
// and the body every context runs.
#ifndef MR_ENGINE_JOIN_HPP
#define MR_ENGINE_JOIN_HPP

#include "engine.hpp"

namespace mr::engine {

// Push a spark for `j` on the calling engine's deque and run the post-work check (P1); from a
// thread that is not an engine, into the injector. Any thread while running; stops the process
// otherwise. `term`: j is a sync term, joined by MR_join_and_continue, so a thread that is not
// an engine counts its branch in MR_shutdown's wait (join.cpp, fork_outside); a scope's tasks
// (false) are waited for by its end, not counted.
void fork(Join *j, MR_TaskFn fn, void *env, bool term = true);

// The parent's join (J1): run own sparks inline while they are local, else suspend until the
// last child resumes this context; a thread that is not an engine blocks. `ran`: branches the
// caller already ran in place without arriving (mrengine.h's inline join), arrived for here with
// the rest. Called only by the code that initialised j.
void join_wait(Join *j, std::uint32_t ran = 0);

// Run, here and newest first, the sparks of join j on the top of engine e's deque (a spark
// run here may fork more, which this takes too); stops at another join's spark, or when
// MR_shutdown_now has begun. Returns how many ran (the caller arrives for them), with e the
// engine the calling context runs on now (a spark may suspend and move it). Called only by
// a context on engine e.
std::uint32_t run_own_sparks(Engine *&e, Join *j);

// The parent's own arrival at j, after which it waits for the last child (J1 step 3): the context
// running on e suspends, or with e == nullptr the calling thread blocks.
void suspend_on_join(Engine *e, Join *j);

// A new context running fn(arg), unbound (engine -1) or bound to `engine`, of channel `channel`
// (an existing one; `deadline` its order if it is a deadline channel), counted in the spawn join
// that MR_shutdown waits on (or, for a drop channel, in the one nobody waits on). Any thread
// while running. With `root` (MR_spawn's contexts), it is counted in its channel until fn
// returns (MR_channel_close refuses it, and MR_channel_wait waits for it), and root->on_drop
// (may be null) is called with arg if it is dropped before fn returned, and root->on_free (may
// be null) when the runtime frees it after such a drop (close.hpp); without
// (loop control's iterations, timers' contexts: the work of something else), neither. Returns
// 0, MR_ENOMEM, MR_ECLOSED (a root in a closed channel) or MR_ESHUTDOWN.
struct Root {
  void (*on_drop)(void *);
  void (*on_free)(void *);
};
int spawn(MR_TaskFn fn, void *arg, int engine, int channel, std::uint64_t deadline,
          const Root *root = nullptr);

// The channel of the context running on the calling engine, or MR_CHANNEL_DEFAULT on a thread
// that is not an engine (or in a blocking region on a backup thread). Any thread.
int current_channel();

// Bind the context running on the calling engine to that engine until its task ends. Returns the
// engine's id, or MR_ENOTENGINE on a thread that is not an engine. Context code only.
int bind_here();

// The body of every context but the primordial (Runtime::context_body): run its task, arrive at
// the task's join, take the next task; never returns.
void context_body(Context *self);

}  // namespace mr::engine

#endif
