// parallel.hpp: parallel regions (doc/gomp.md, "Which thread runs what").
#ifndef MR_GOMP_PARALLEL_HPP
#define MR_GOMP_PARALLEL_HPP

#include <cstdint>

#include "records.hpp"

namespace mrg {

// The proc_bind clause in the flags of GOMP_parallel and the combined constructs: its policy
// as omp_proc_bind_t numbers it, 0 when there is none.
constexpr unsigned kProcBindMask = 7;

// Run fn(data) as a parallel region of `nthreads` (0: the ICV) with a copy of `preset` the first
// work-share of every member (or nullptr), its members placed by `proc_bind` (the clause's
// policy, or 0: bind-var's).
void parallel(void (*fn)(void *), void *data, unsigned nthreads, const WorkShare *preset,
              unsigned proc_bind = 0);
// The first half of parallel: start a team (members 1..n-1 start running fn(data); the caller
// becomes member 0), with task reductions (reduction(task, ...)) when `reductions` is set. The
// GOMP_1.0 entry points run fn(data) themselves, then GOMP_parallel_end.
Team *parallel_begin(void (*fn)(void *), void *data, unsigned nthreads, const WorkShare *preset,
                     std::uintptr_t *reductions = nullptr, unsigned proc_bind = 0);

// The child of a fork() (fork.cpp): no team holds the slots and only the initial thread runs.
void forget_teams();

}  // namespace mrg

#endif
