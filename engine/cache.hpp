// cache.hpp: free contexts kept for reuse, each engine's own cache first, then one global cache
// (a context that finished its task waits at the top of its body holding nothing).
#ifndef MR_ENGINE_CACHE_HPP
#define MR_ENGINE_CACHE_HPP

#include "engine.hpp"

namespace mr::engine {

// A free context with a stack of kind k (REGULAR or SMALL): from e's cache, the global cache, or
// new; nullptr if no stack can be mapped. Called only by engine e's thread (e may be nullptr: a
// thread that is not an engine).
Context *get_context(Engine *e, ContextKind k);

// A small-stack context that will run spark t; stops the process if no stack can be mapped.
// Called only by engine e's thread.
Context *context_for_spark(Engine *e, const Task &t);

// Put c, which has finished its task, back in a cache. Called only by engine e's thread, from an
// ontop function: c has finished switching away.
void release_context(Engine *e, Context *c);

// Destroy every cached context. Called only when the runtime is freed (a shutdown, or a start
// that failed), once no engine runs.
void destroy_cached_contexts();

}  // namespace mr::engine

#endif
