// current.cpp: the initial task of a context, or of a thread outside contexts, that is in no
// parallel region (with its team of one), made on its first use of the runtime.
#include <unistd.h>

#include <memory>

#include "current.hpp"
#include "env.hpp"
#include "places.hpp"
#include "records.hpp"

namespace mrg {

namespace {

// An initial task with its team of one.
struct Initial {
  Team team;
  Task task;
};

// The initial task of a thread outside contexts that is in no parallel region.
thread_local std::unique_ptr<Initial> tl_initial;

void release_initial(void *owned) { delete static_cast<Initial *>(owned); }

// A new initial task and team of one, on the calling thread. `thread`: the thread's own (the
// initial thread of the process starts at place 0), not a context's.
Initial *make_initial(bool thread) {
  read_environment_once();
  auto *in = new Initial;
  Team *team = &in->team;
  team->n = 1;
  team->ancestor_tid = {0};
  team->ancestor_size = {1};
  in->task.team = team;
  in->task.implicit = true;
  in->task.icv = G.initial;
  // With places, the initial thread of the process starts at place 0, with every place its
  // partition (another thread that was in no region stays where it is, at no place, and so
  // does a context, which may run on any engine's thread).
  Placement at = initial_placement();
  if (at.place >= 0 && (!thread || gettid() != getpid())) at.place = -1;
  if (at.place >= 0) bind_to_place(at.place);
  if (at.len > 0) team->placement = {at};
  return in;
}

}  // namespace

__thread Task *tl_current = nullptr;

Task *initial_task() {
  // A context's initial task lives as long as its task (mrengine releases it when the task
  // ends): a context that is no member of a team (the program's own, spawned or a spark's)
  // starts OpenMP as an initial thread of its own.
  if (mr::engine::ContextLocal *l = mr::engine::context_local()) {
    if (!l->owned) {
      l->owned = make_initial(false);
      l->release = release_initial;
    }
    Task *t = &static_cast<Initial *>(l->owned)->task;
    l->value = t;
    return t;
  }
  if (!tl_initial) tl_initial.reset(make_initial(true));
  tl_current = &tl_initial->task;
  return tl_current;
}

}  // namespace mrg
