// context_local.hpp: one word of library data per context, kept on the Context record, so that
// it travels with the context across every suspension and migration, whoever's wait it is.
// Internal, not installed: libmrgomp keeps its current task here (gomp/current.hpp). This header
// includes nothing of the engine's, so that a library built beside it needs only its path.
#ifndef MR_ENGINE_CONTEXT_LOCAL_HPP
#define MR_ENGINE_CONTEXT_LOCAL_HPP

namespace mr::engine {

// Read and written only by the context that holds it (it is handed over with the context like
// its fiber, so plain fields). `value` is the library's word; if `release` is set, the context
// itself clears all three when its task ends (its function returned, or its spark ran) and then
// calls release(owned), so a context taken from a free cache starts with none. A library that
// sets `value` without `release` restores it before the task ends.
struct ContextLocal {
  void *value = nullptr;
  void *owned = nullptr;
  void (*release)(void *owned) = nullptr;
};

// The calling context's record, or nullptr on a thread that is running no context of ours (not
// an engine, nor a backup thread running a context) and in the primordial context, whose thread
// is its own for its whole life, so its thread-locals already travel with it. Exported from
// libmrengine (not declared in a public header) for libmrgomp. Any thread.
__attribute__((visibility("default"))) ContextLocal *context_local();

}  // namespace mr::engine

#endif
