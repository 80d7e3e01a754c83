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
  // would run it again at once. The slot's context runs first only if it is of that level or
  // higher, as the scheduler would pick it.
  const int level = g_rt->channels.level(g_rt->channels.followup(e->current->channel));
  suspend_self(
      e, "MR_yield outside a context", trace::Why::YIELD,
      [](Context *self) {
        enqueue(self);
        return false;
      },
      level);
  return 0;
}

}  // namespace mr::engine
