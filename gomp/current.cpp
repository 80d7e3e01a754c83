// current.cpp: the current task of each thread, and the initial task of a thread that is in no
// parallel region (with its team of one), made on the thread's first use of the runtime.
#include <unistd.h>

#include <memory>

#include "current.hpp"
#include "env.hpp"
#include "places.hpp"
#include "records.hpp"

namespace mrg {

namespace {

// The initial task of a thread that is in no parallel region (and its team of one).
thread_local std::unique_ptr<Task> tl_initial;
thread_local std::unique_ptr<Team> tl_initial_team;

}  // namespace

__thread Task *tl_current = nullptr;

Task *initial_task() {
  if (!tl_initial) {
    read_environment_once();
    tl_initial_team = std::make_unique<Team>();
    Team *team = tl_initial_team.get();
    team->n = 1;
    team->ancestor_tid = {0};
    team->ancestor_size = {1};
    tl_initial = std::make_unique<Task>();
    tl_initial->team = team;
    tl_initial->implicit = true;
    tl_initial->icv = G.initial;
    // With places, the initial thread of the process starts at place 0, with every place its
    // partition (another thread that was in no region stays where it is, at no place).
    Placement at = initial_placement();
    if (at.place >= 0 && gettid() != getpid()) at.place = -1;
    if (at.place >= 0) bind_to_place(at.place);
    if (at.len > 0) team->placement = {at};
  }
  tl_current = tl_initial.get();
  return tl_current;
}

}  // namespace mrg
