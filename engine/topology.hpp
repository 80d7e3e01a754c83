// topology.hpp: where engines run and in which order they look at each other (hwloc).
//
// Everything here is a pure computation on an hwloc topology, so that tests can run it on
// synthetic topologies (hwloc_topology_set_synthetic) that this machine does not have. The rules
// are in doc/design.md, "Topology"; in short:
//   pinning  --thread-pinning=cores spreads engines over distinct cores before it uses a second
//            PU of any core; =pus packs them onto consecutive PUs (SMT siblings together). Both
//            bind each engine to exactly one PU inside the cpuset the process inherited.
//   tiers    for each engine, every other engine is in tier 0 (shares a core or an L1/L2 cache),
//            tier 1 (shares an L3 cache, or a NUMA node on a machine with several), or tier 2
//            (the rest, and every engine whose place is unknown because it is not pinned).
//            Within a tier engines are in id order, starting after the engine itself.
#ifndef MR_ENGINE_TOPOLOGY_HPP
#define MR_ENGINE_TOPOLOGY_HPP

#include <hwloc.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mr::engine {

enum class Pinning;

namespace topo {

inline constexpr int kTiers = 3;

// The PU (its OS index, as in /proc/cpuinfo and sched_getcpu) each engine is to be bound to, or
// all -1 (unpinned) with the reason in *warning when the plan cannot be made.
// `allowed` is the cpuset the process may run on; nullptr means the topology's allowed set.
std::vector<int> plan_pinning(hwloc_topology_t t, hwloc_const_cpuset_t allowed, int engines,
                              Pinning mode, std::string *warning);

// The tier (0..kTiers-1) of PU b as seen from PU a; kTiers-1 if either is -1.
int tier_between(hwloc_topology_t t, int pu_a, int pu_b);

// The order in which an engine tries the others as victims (and as engines to wake).
struct Order {
  std::vector<int> victims;  // engine ids, tier by tier
  int tier_end[kTiers] = {0, 0, 0};  // tier k is victims[k ? tier_end[k-1] : 0, tier_end[k])
  int tier_begin(int k) const { return k ? tier_end[k - 1] : 0; }
};

// One Order per engine, from where each engine is bound (pu[i] or -1). t may be nullptr when
// every pu is -1.
std::vector<Order> steal_orders(hwloc_topology_t t, const std::vector<int> &pu);

// The order of a thread that is not an engine: every engine, in one tier.
Order any_order(int engines);

// Among o.victims[begin, end), the engine v for which sleeping(v) holds and stamp(v) is the
// greatest below `below`; -1 if none. Stamps grow each time an engine falls asleep, so repeated
// calls with below = the last stamp returned walk the sleepers from the latest to sleep (LIFO).
template <class Sleeping, class Stamp>
int latest_sleeper(const Order &o, int begin, int end, std::uint64_t below, Sleeping sleeping,
                   Stamp stamp) {
  int best = -1;
  std::uint64_t best_stamp = 0;
  for (int i = begin; i < end; i++) {
    int v = o.victims[static_cast<std::size_t>(i)];
    if (!sleeping(v)) continue;
    std::uint64_t s = stamp(v);
    if (s < below && (best < 0 || s > best_stamp)) {
      best = v;
      best_stamp = s;
    }
  }
  return best;
}

// Bind the calling thread to PU `pu` and confirm it by reading the binding back. Returns true,
// or false with the reason in *why. Any thread.
bool bind_thread(hwloc_topology_t t, int pu, std::string *why);

}  // namespace topo
}  // namespace mr::engine

#endif
