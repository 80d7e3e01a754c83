// team.cpp: a team's members from begin to end, and the team's release and reuse.
#include <atomic>

#include "affinity.hpp"
#include "backoff.hpp"
#include "barrier.hpp"
#include "current.hpp"
#include "env.hpp"
#include "mrengine.h"
#include "places.hpp"
#include "records.hpp"
#include "task.hpp"
#include "team.hpp"

namespace mrg {

namespace {

// The last top-level team, kept by the creator that held the slots: the next region of the
// same size started on the same engine reuses it, with its members, work-shares and barrier,
// instead of allocating them again (and freeing them on whichever thread leaves last). Only
// the holder of the slots touches it, before it releases them (slots_busy orders the holders).
Team *kept_team = nullptr;

// Wait until members 1..n-1 have let go of kept team t (they are past its end barrier, and
// released it just after): only the kept reference is left.
void wait_members_gone(Team *t) {
  unsigned round = 0;
  // acquire: pairs with the members' acq_rel release, so their last writes are seen.
  while (t->refs.load(std::memory_order_acquire) != 1) backoff(&round);
}

}  // namespace

void release_team(Team *t) {
  // acq_rel: the last releaser sees every member's last writes before deleting.
  if (t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete t;
  }
}

// A kept team no longer kept is released like any team: its last member to let go frees it.
// (Never waited for here: a member may be a context bound to the caller's own engine, which
// could not run while the caller waits.)
void keep_team(Team *t) {
  if (kept_team && kept_team != t) release_team(kept_team);
  kept_team = t;
}

// The kept team, ready for a region of n members at `level` from engine `here`, or nullptr
// (a kept team of another shape is released). Members of the last region may still hold it:
// past the end barrier, a member touches nothing of the team but its count of references
// (parallel_begin adds the new members to theirs) and the barrier future it was woken from
// (reset only when every member has arrived at the next barrier, which this member does after
// letting go of this region: its next job waits behind it). With cancellation enabled a member
// may still be in its wait on exit_done, which is reset here: then they are waited for (they
// are on the other engines and slot threads, never on the caller's).
Team *reuse_kept(int n, int here, int level) {
  Team *t = kept_team;
  if (!t) return nullptr;
  kept_team = nullptr;
  if (t->n != n || t->here != here || t->level != level) {
    release_team(t);
    return nullptr;
  }
  if (G.cancel_var) wait_members_gone(t);
  // Every member has ended the last region's work-shares and met its single constructs, so
  // their numbering starts again (each member's record is made new by begin_member); the
  // barrier goes on from its generation.
  // relaxed: published with the team (the members' job posts).
  t->single_count.store(0, std::memory_order_relaxed);
  t->cancelled.store(false, std::memory_order_relaxed);  // relaxed: as above
  t->exited.store(0, std::memory_order_relaxed);         // relaxed: as above
  t->started.store(0, std::memory_order_relaxed);        // relaxed: as above
  MR_future_init(&t->exit_done);
  return t;
}

// The end of an implicit task: its tasks, then the region's barrier. With cancellation enabled
// the members count themselves out instead: a cancelled member skips barriers the others may
// be in, so barrier generations no longer line up.
void end_implicit(Task *self) {
  join_children(self);
  Team *t = self->team;
  if (!G.cancel_var || t->n == 1) {
    // A member on a thread of our own has nothing more to do in the region (its tasks are
    // complete, and the thread runs no others): it arrives and goes on to its next job, one
    // sleep a region instead of two. A member on an engine waits, and its engine runs the
    // team's tasks meanwhile; member 0 waits for them all.
    if (self->thread_num != 0 && MR_engine_id() < 0)
      team_arrive(t);
    else
      team_barrier(t);
    return;
  }
  // acq_rel: release publishes this member's work; acquire (last one) sees everyone's.
  if (t->exited.fetch_add(1, std::memory_order_acq_rel) + 1 == t->n)
    MR_future_signal(&t->exit_done, 1);
  else
    MR_future_wait(&t->exit_done);
  set_current(self);
}

// Member i's implicit task as new for this region, made by the member itself on its own thread
// (so that its record's cache lines stay there from one region to the next), from what the
// creator wrote in the team.
void begin_member(Team *t, int i) {
  Task &m = t->members[i];
  m = Task();
  m.team = t;
  m.thread_num = i;
  m.implicit = true;
  m.icv = t->icv;
  m.red_in = t->red_scope;
  if (!t->placement.empty() && t->placement[static_cast<size_t>(i)].place >= 0)
    bind_to_place(t->placement[static_cast<size_t>(i)].place);
  if (G.display_affinity && t->n > 1) display_member_affinity(&m);  // (one thread: no team)
  if (t->first_ws) {
    m.ws_seq = 1;
    m.ws = t->first_ws;
  }
}

void run_member(Team *team, int i) {
  begin_member(team, i);
  Task *self = &team->members[i];
  set_current(self);
  if (team->start_together) {
    // release: publishes this member's start (its engine is held from here on).
    team->started.fetch_add(1, std::memory_order_release);
    wait_all_started(team);
  }
  team->fn(team->data);
  set_current(self);
  end_implicit(self);
  // Nothing of ours runs on this thread or context until the next task sets its own.
  set_current(nullptr);
  release_team(team);
}

// Wait, holding the engine (a suspension would let the engine run the team's tasks before this
// member's implicit task has initialised its copies), until members 1..n-1 have all begun.
void wait_all_started(Team *t) {
  unsigned round = 0;
  // acquire: pairs with the members' release increments.
  while (t->started.load(std::memory_order_acquire) < t->n - 1) backoff(&round);
}

void forget_kept_team() { kept_team = nullptr; }

}  // namespace mrg
