// ordered.cpp: the ordered construct in an ordered loop. A member's ordered region waits until
// every earlier chunk has been handed over, and a member hands its chunk over when it takes the
// next one or ends the loop; iterations within a chunk are in order on the member itself.
#include "ordered.hpp"
#include "backoff.hpp"
#include "current.hpp"
#include "export.hpp"
#include "records.hpp"

namespace mrg {

void ordered_handover(Task *self) {
  WorkShare *w = self->ws;
  unsigned round = 0;
  // acquire: the ordered regions of earlier chunks happen before ours.
  while (w->ordered_next.load(std::memory_order_acquire) != self->ord_lo) backoff(&round);
  // release: ours happen before the next chunk's.
  w->ordered_next.store(self->ord_hi, std::memory_order_release);
  self->ord_held = false;
}

}  // namespace mrg

using namespace mrg;

// The ordered region of the member's current iteration runs once every earlier chunk has been
// handed over; iterations within a chunk are in order on the member itself.
MRG_EXPORT void GOMP_ordered_start(void) {
  Task *self = current();
  WorkShare *w = self->ws;
  if (!w || !w->ordered || !self->ord_held) return;  // not in an ordered loop: nothing to order
  unsigned round = 0;
  // acquire: as ordered_handover.
  while (w->ordered_next.load(std::memory_order_acquire) != self->ord_lo) backoff(&round);
}

MRG_EXPORT void GOMP_ordered_end(void) {}
