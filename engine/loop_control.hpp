// loop_control.hpp: Mercury's loop control (MR_lc_*): a parallel loop whose iterations run in at
// most `slots` worker contexts at once (doc/design.md, "Loop control").
#ifndef MR_ENGINE_LOOP_CONTROL_HPP
#define MR_ENGINE_LOOP_CONTROL_HPP

#include "mrengine.h"

namespace mr::engine {

struct LoopControl;

// A loop control with `slots` worker slots (>= 1). nullptr if out of memory. Any thread.
LoopControl *lc_create(unsigned slots);
// Run fn(env) as the next iteration, in a new context, once a slot is free: the calling
// context suspends while every slot is busy. Context code only. Returns 0 or MR_ENOMEM /
// MR_ESHUTDOWN (the iteration did not start).
int lc_spawn(LoopControl *lc, MR_TaskFn fn, void *env);
// Wait until every iteration has finished, then free lc. Context code only.
void lc_finish(LoopControl *lc);
// The default number of slots: --lc-contexts-per-engine x engines. Any thread while running.
unsigned lc_default_slots();

}  // namespace mr::engine

#endif
