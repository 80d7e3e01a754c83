// join_count.hpp: the steps of the join hand-over on a join's count (J1 in doc/design.md): the
// arrivals, the parent's look and the parent's own arrival as it suspends. Dependency-free, so
// that tests/weak/join.cpp checks these very steps under GenMC (engine/mutant.hpp).
#ifndef MR_ENGINE_JOIN_COUNT_HPP
#define MR_ENGINE_JOIN_COUNT_HPP

#include <atomic>
#include <cstdint>

#include "mutant.hpp"
#include "task.hpp"

namespace mr::engine {

// Branches' arrival at j (n of them at once, a run of sparks). Returns the count before; the last
// arrival saw n. acq_rel: release publishes the branches' results to the parent; acquire (for
// the last arrival) pairs with the parent's release in its suspend, so j->parent and its saved
// continuation are visible (J1).
inline std::uint32_t arrive_at_join(Join *j, std::uint32_t n) {
  return j->count.fetch_sub(n, MR_WEAK_MUTANT(JOIN_ARRIVE, std::memory_order_acq_rel));
}

// The parent's look at j: how many arrivals are still expected, its own included. acquire:
// pairs with the branches' release arrivals (their results become visible).
inline std::uint32_t join_pending(const Join *j) {
  return j->count.load(MR_WEAK_MUTANT(JOIN_LOAD, std::memory_order_acquire));
}

// The parent's arrival for the n branches it ran inline, before it suspends. Returns the count
// before. release: publishes the inline branches' results; acquire: as join_pending's, if this
// was the last.
inline std::uint32_t arrive_inline(Join *j, std::uint32_t n) {
  return j->count.fetch_sub(n, MR_WEAK_MUTANT(JOIN_INLINE, std::memory_order_acq_rel));
}

// The parent's own arrival, once its continuation is saved (J1 step 3): returns true when every
// branch had arrived (the parent resumes at once). acq_rel: release publishes self's saved
// continuation and j->parent to the last branch; acquire pairs with the branches that arrived
// meanwhile.
inline bool parent_arrives(Join *j, Context *self) {
  j->parent = self;
  return j->count.fetch_sub(1, MR_WEAK_MUTANT(JOIN_SUSPEND, std::memory_order_acq_rel)) == 1;
}

}  // namespace mr::engine

#endif
