// idle.hpp: the scheduler loop of an engine and its idle loop: find work (queues, own deque,
// injector), steal it (bounded, adaptive rounds), fall asleep and handle notifications
// (doc/design.md section 3).
#ifndef MR_ENGINE_IDLE_HPP
#define MR_ENGINE_IDLE_HPP

#include "engine.hpp"

namespace mr::engine {

// Run contexts until the runtime shuts down. Called only by engine e's scheduler (its thread's
// own stack, or engine 0's scheduler fiber).
void scheduler(Engine *e);

// --spin-rounds, where 0 behaves as 1: the steal rounds of a full search. Any thread while
// running.
int full_spin_rounds();

}  // namespace mr::engine

#endif
