// cancel.cpp: cancellation (doc/gomp.md, "What is supported").
//
// With OMP_CANCELLATION=true (cancel-var), `cancel` sets the flag of the construct it names and
// cancellation points report it: a cancelled parallel region's waiters at a barrier are
// released, its tasks that have not started are discarded, a cancelled loop or sections hands
// out no more work, and a cancelled taskgroup's tasks that have not started are discarded.
// With cancel-var false, cancel does nothing (OpenMP) and every cancellation point says no.
#include <atomic>

#include "barrier.hpp"
#include "current.hpp"
#include "env.hpp"
#include "export.hpp"
#include "loop.hpp"
#include "mrengine.h"
#include "records.hpp"
#include "task.hpp"

namespace mrg {
namespace {

constexpr int kCancelParallel = 1, kCancelLoop = 2, kCancelSections = 4, kCancelTaskgroup = 8;

bool is_cancelled(int which) {
  Task *self = current();
  switch (which) {
    case kCancelParallel:
      // acquire: as team_barrier_cancellable.
      return self->team->cancelled.load(std::memory_order_acquire);
    case kCancelLoop:
    case kCancelSections:
      // acquire: as above.
      return self->ws && self->ws->cancelled.load(std::memory_order_acquire);
    case kCancelTaskgroup:
      // acquire: as above.
      if (std::atomic<bool> *f = group_flag(self)) return f->load(std::memory_order_acquire);
      return false;
    default:
      return false;
  }
}

}  // namespace
}  // namespace mrg

using namespace mrg;

MRG_EXPORT bool GOMP_cancellation_point(int which) {
  if (!G.cancel_var) return false;
  return is_cancelled(which);
}

MRG_EXPORT bool GOMP_cancel(int which, bool do_cancel) {
  if (!G.cancel_var) return false;
  if (!do_cancel) return is_cancelled(which);
  Task *self = current();
  Team *t = self->team;
  switch (which) {
    case kCancelParallel: {
      // release: pairs with the acquire loads of the cancellation points.
      t->cancelled.store(true, std::memory_order_release);
      // Release the members waiting at the current barrier generation (signalling it again
      // when its last member also arrives is allowed: the same value).
      // acquire: the generation whose future we signal is one its waiters use.
      unsigned g = t->generation.load(std::memory_order_acquire);
      if (t->n > 1) MR_future_signal(&t->bar[g & 1], 1);
      set_current(self);
      return true;
    }
    case kCancelLoop:
    case kCancelSections:
      // release: as above.
      if (self->ws) self->ws->cancelled.store(true, std::memory_order_release);
      return true;
    case kCancelTaskgroup:
      // release: as above.
      if (std::atomic<bool> *f = group_flag(self)) f->store(true, std::memory_order_release);
      return true;
    default:
      return false;
  }
}

MRG_EXPORT bool GOMP_barrier_cancel(void) {
  Task *self = current();
  join_children(self);
  return team_barrier_cancellable(self->team);
}

MRG_EXPORT bool GOMP_loop_end_cancel(void) {
  Task *self = current();
  GOMP_loop_end_nowait();
  join_children(self);
  return team_barrier_cancellable(self->team);
}

MRG_EXPORT bool GOMP_sections_end_cancel(void) { return GOMP_loop_end_cancel(); }
