// lifecycle.hpp: starting and stopping the runtime: engine threads (eager or lazy), engine 0's
// scheduler fiber, and the two shutdowns (doc/design.md sections 15 and 16).
#ifndef MR_ENGINE_LIFECYCLE_HPP
#define MR_ENGINE_LIFECYCLE_HPP

#include <string>

#include "mrengine.h"
#include "params.hpp"

namespace mr::engine {

// Start the engines with the calling thread as engine 0. Returns 0 or a negative MR_E* code, with
// a message in *err; MR_EBUSY while another runtime exists, is being started or is being freed
// (any thread may call: one start at a time wins).
int start(const Params &p, std::string *err);

// Wait for every spawned context of a complete channel (dropping drop channels' work meanwhile,
// close.hpp), stop every engine, free everything; what was dropped goes into *dropped if it is
// not null. Called only from the primordial context. Returns 0 or a negative MR_E* code.
int stop(MR_ShutdownReport *dropped);

// Stop without waiting: every engine leaves once its running context reaches a suspension point
// (finishes, suspends, or ends a blocking region); queued and suspended contexts and pending
// sparks are dropped and counted in *dropped (nullptr: not counted). Called only from the
// primordial context. Returns 0 or a negative MR_E* code.
int stop_now(MR_ShutdownReport *dropped);

}  // namespace mr::engine

#endif
