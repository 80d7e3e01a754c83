// team.hpp: a team's members and its life: their implicit tasks from start to end, the team's
// release, and the kept team (doc/gomp.md, "Which thread runs what": The team is kept).
#ifndef MR_GOMP_TEAM_HPP
#define MR_GOMP_TEAM_HPP

#include "records.hpp"

namespace mrg {

// Member i's implicit task as new for this region, made by the member itself on its own thread
// (so that its record's cache lines stay there from one region to the next), from what the
// creator wrote in the team.
void begin_member(Team *t, int i);
// Run member i of team t (1 <= i < n) on this thread: its implicit task from begin to end,
// then let go of the team. Called by the thread or resident context the member was posted to.
void run_member(Team *team, int i);
// The end of an implicit task: its tasks, then the region's barrier (or, with cancellation
// enabled, the count of members that have left).
void end_implicit(Task *self);
// Wait, holding the engine, until members 1..n-1 of t have all begun (regions whose implicit
// tasks initialise per-member copies that the team's tasks also use: start_together).
void wait_all_started(Team *t);

// Let go of team t: its last holder (a member or its creator) frees it.
void release_team(Team *t);
// Keep top-level team t for the next region (releasing a kept team of another region).
// Called by the creator that holds the slots (parallel.cpp's slots_busy), as is reuse_kept.
void keep_team(Team *t);
// The kept team, ready for a region of n members at `level` from engine `here`, or nullptr
// (a kept team of another shape is released).
Team *reuse_kept(int n, int here, int level);

// The child of a fork() (fork.cpp): its members ran on the parent's engines and threads; the
// kept team is forgotten (leaked), never waited for.
void forget_kept_team();

}  // namespace mrg

#endif
