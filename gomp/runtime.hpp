// runtime.hpp: starting mrengine for OpenMP (doc/gomp.md, "Which thread runs what").
#ifndef MR_GOMP_RUNTIME_HPP
#define MR_GOMP_RUNTIME_HPP

namespace mrg {

// Start mrengine if it is not running (the caller becomes engine 0), and set G.engines.
void ensure_runtime();

// The child of a fork() (fork.cpp): mrengine is not running there, so the next construct that
// needs engines starts it again. The lock is re-made (another thread may have held it).
void forget_runtime();

}  // namespace mrg

#endif
