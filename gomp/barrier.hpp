// barrier.hpp: a team's barrier (doc/gomp.md, "Waiting": Barrier).
#ifndef MR_GOMP_BARRIER_HPP
#define MR_GOMP_BARRIER_HPP

#include "records.hpp"

namespace mrg {

// Barrier of team t without the task part (all members arrive, then all leave). Called by each
// member of t, from its implicit task.
void team_barrier(Team *t);
// The same in a cancellable region: true if the region is cancelled (then it may return before
// the others arrive).
bool team_barrier_cancellable(Team *t);

}  // namespace mrg

#endif
