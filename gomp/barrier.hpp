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
// Arrive at the barrier of team t without waiting for the others (a member that has nothing
// more to do in the region: team.cpp's end_implicit).
void team_arrive(Team *t);

}  // namespace mrg

#endif
