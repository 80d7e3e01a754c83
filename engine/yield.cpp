// yield.cpp: MR_yield (yield.hpp).
#include "config.h"

#include "yield.hpp"

#include "switch.hpp"
#include "wake.hpp"

namespace mr::engine {

int yield_now() {
  Engine *e = this_engine();
  if (!e || !e->current) return MR_ENOTENGINE;
  // A suspension like any other, so the context is queued in its followup channel (enqueue,
  // queue_channel) once its continuation is saved (J1); never through the hand-off slot, which
  // would run it again at once.
  suspend_self(e, "MR_yield outside a context", trace::Why::YIELD, [](Context *self) {
    enqueue(self);
    return false;
  });
  return 0;
}

}  // namespace mr::engine
