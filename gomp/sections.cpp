// sections.cpp: the sections construct, a dynamic loop over 1..count handed out one section at
// a time (doc/gomp.md, "Work-sharing").
#include <cstdint>

#include "current.hpp"
#include "export.hpp"
#include "loop.hpp"
#include "parallel.hpp"
#include "records.hpp"
#include "reduction.hpp"
#include "workshare.hpp"

namespace mrg {
namespace {

unsigned next_section() {
  Task *self = current();
  std::uint64_t lo, hi;
  if (!take_chunk(self, &lo, &hi)) return 0;
  return static_cast<unsigned>(lo + 1);
}

}  // namespace
}  // namespace mrg

using namespace mrg;

MRG_EXPORT unsigned GOMP_sections_start(unsigned count) {
  ws_begin(current(), [&](WorkShare *w) { ws_init_loop(w, SCHED_DYNAMIC, 0, count, 1, 1); });
  return next_section();
}

MRG_EXPORT unsigned GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem) {
  Task *self = current();
  WorkShare *ws = ws_begin(self, [&](WorkShare *w) {
    ws_init_loop(w, SCHED_DYNAMIC, 0, count, 1, 1);
    if (mem) w->mem = ws_mem(reinterpret_cast<std::uintptr_t>(*mem));
  });
  if (mem) *mem = ws->mem;
  if (reductions) ws_reductions(self, ws, reductions);
  return next_section();
}

MRG_EXPORT unsigned GOMP_sections_next(void) { return next_section(); }

MRG_EXPORT void GOMP_sections_end(void) { GOMP_loop_end(); }
MRG_EXPORT void GOMP_sections_end_nowait(void) { GOMP_loop_end_nowait(); }

MRG_EXPORT void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned nthreads,
                                             unsigned count) {
  Preset spec(SCHED_DYNAMIC, 0, count, 1, 1);
  parallel_begin(fn, data, nthreads, &spec);
}

MRG_EXPORT void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned nthreads,
                                       unsigned count, unsigned flags) {
  Preset spec(SCHED_DYNAMIC, 0, count, 1, 1);
  parallel(fn, data, nthreads, &spec, flags & kProcBindMask);
}
