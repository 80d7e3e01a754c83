// pool.hpp: threads of our own that run team members: the slot threads (member i of top-level
// teams beyond the engines) and the generic pool (nested teams, and teams started by threads
// that are not engines); doc/gomp.md, "Which thread runs what".
#ifndef MR_GOMP_POOL_HPP
#define MR_GOMP_POOL_HPP

#include "records.hpp"

namespace mrg {

// Run member i of team t on a thread of our own: slot thread i (made on first use) when `slot`,
// else an idle generic thread, or a new one. Only the holder of the slots posts with `slot`.
void pool_post(Team *t, int i, bool slot);

// The child of a fork() (fork.cpp): the pool's threads are gone; the lists start empty (the old
// ones, which a thread that no longer exists may have been changing, are leaked) with a fresh
// lock.
void forget_pool();

}  // namespace mrg

#endif
