// scope.cpp: the scope construct. Only one with task reductions needs the runtime: a
// work-share with no work whose reductions every member shares.
#include <cstdint>

#include "current.hpp"
#include "export.hpp"
#include "records.hpp"
#include "reduction.hpp"
#include "workshare.hpp"

using namespace mrg;

// The scope's work-share ends at GOMP_workshare_task_reduction_unregister.
MRG_EXPORT void GOMP_scope_start(uintptr_t *reductions) {
  if (!reductions) return;
  Task *self = current();
  WorkShare *ws = ws_begin(self, [&](WorkShare *w) { ws_init_loop(w, SCHED_STATIC, 0, 0, 1, 0); });
  ws_reductions(self, ws, reductions);
  // The scope's work-share ends when its reductions are unregistered (scopes may nest, so
  // the member's current work-share is not necessarily this one then).
  self->ws_reds.back().second = ws;
  self->ws = nullptr;
}
