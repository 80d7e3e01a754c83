// fork.hpp: what the child of a fork() keeps of the runtime: nothing. It starts with no runtime,
// as a program that never called MR_init (doc/api.md "fork()", doc/design.md section 16).
#ifndef MR_ENGINE_FORK_HPP
#define MR_ENGINE_FORK_HPP

namespace mr::engine {

// Register the fork handlers with pthread_atfork, the first time only. Called by every start.
void watch_forks();

}  // namespace mr::engine

#endif
