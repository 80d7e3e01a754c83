// blocking.hpp: blocking regions (doc/design.md, "Blocking regions"). begin: the calling context
// leaves its engine for a backup thread, so that the engine runs other work while the context
// blocks; end: the context is scheduled back onto an engine and the backup returns to the pool.
#ifndef MR_ENGINE_BLOCKING_HPP
#define MR_ENGINE_BLOCKING_HPP

#include "engine.hpp"

namespace mr::engine {

// With no backup to be had (--max-backup-threads reached) the region runs in place. Regions
// nest; only the outermost moves the context. A thread that is not an engine (and not a backup)
// may call both: nothing happens. Any thread while running.
void blocking_begin();
void blocking_end();

// The context running on the calling thread (an engine's current context, or a backup thread's),
// or nullptr. Async-signal-safe (initial-exec thread-local reads only): the stack overflow
// handler calls it.
const Context *context_on_this_thread();

// End every backup thread. Called only when engines are stopped, once no context can begin a
// region; a context still in a region (MR_shutdown_now) is dropped when the region ends.
void stop_backups();

// The child of a fork() (fork.cpp): the calling thread, the child's only one, is no backup thread
// even if it forked in a blocking region.
void blocking_forget_thread();

}  // namespace mr::engine

#endif
