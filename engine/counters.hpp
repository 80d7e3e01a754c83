// counters.hpp: one engine's counters (MR_ENGINE_STATS_MAP in mrengine.h is their one list);
// the scheduler counts its events through events.hpp's note(), stats.hpp reads them.
#ifndef MR_ENGINE_COUNTERS_HPP
#define MR_ENGINE_COUNTERS_HPP

#include <atomic>
#include <cstdint>

#include "mrengine.h"
#include "sleep.hpp"

namespace mr::engine {

// One engine's counters: written only by the owning engine (relaxed load + store, no RMW), read
// by anyone (relaxed). The figures are exact at a quiescent point. Each engine's counters are on
// their own cache lines, so counting costs no sharing.
struct alignas(64) Counters {
#define MR_COUNTER_(field, column) std::atomic<std::uint64_t> field{0};
#define MR_COUNTER_KINDS_(field, column) std::atomic<std::uint64_t> field[kNumActions]{};
  MR_ENGINE_STATS_MAP(MR_COUNTER_, MR_COUNTER_KINDS_)
#undef MR_COUNTER_
#undef MR_COUNTER_KINDS_
};

// Count one. Called only by the engine that owns the counter.
inline void bump(std::atomic<std::uint64_t> &c) {
  // relaxed load + store: one writer (the owner); readers only need an eventually-exact value.
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace mr::engine

#endif
