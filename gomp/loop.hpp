// loop.hpp: what the other loop-like constructs (sections, doacross loops, cancellation) use of
// the work-sharing loops.
#ifndef MR_GOMP_LOOP_HPP
#define MR_GOMP_LOOP_HPP

#include <cstdint>

#include "export.hpp"
#include "records.hpp"

namespace mrg {

// The member's next chunk [*lo, *hi) of its current work-share, with the ordered-loop
// bookkeeping; false when none is left.
bool take_chunk(Task *self, std::uint64_t *lo, std::uint64_t *hi);

// The schedule kind a loop start asks for (omp_sched_t's numbers, maybe with the monotonic
// bit; runtime and 4, the ABI's runtime with the nonmonotonic modifier, read run-sched-var),
// resolved to static, dynamic or guided, and its chunk (*chunk: 0 for static's one block per
// member, else at least 1).
int resolve_kind(int kind, std::int64_t *chunk);

// The first work-share of a combined parallel loop's team (or sections'), as parallel_begin
// copies it.
struct Preset : WorkShare {
  Preset(int kind, long start, long end, long incr, long chunk);
};

}  // namespace mrg

MRG_EXPORT void GOMP_loop_end(void);
MRG_EXPORT void GOMP_loop_end_nowait(void);

#endif
