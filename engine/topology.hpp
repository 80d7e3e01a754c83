// topology.hpp: where engines run and in which order they look at each other (hwloc).
//
// The plans and orders are pure computations on an hwloc topology, so that tests can run them on
// synthetic topologies (hwloc_topology_set_synthetic) that this machine does not have; place()
// applies them to the machine's own topology for MR_init. The rules
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

#include "params.hpp"

namespace mr::engine::topo {

inline constexpr int kTiers = 3;

// The PU (its OS index, as in /proc/cpuinfo and sched_getcpu) each engine is to be bound to, or
// all -1 (unpinned) with the reason in *warning when the plan cannot be made.
// `allowed` is the cpuset the process may run on; nullptr means the topology's allowed set.
std::vector<int> plan_pinning(hwloc_topology_t t, hwloc_const_cpuset_t allowed, int engines,
                              Pinning mode, std::string *warning);

// The order in which an engine tries the others as victims (and as engines to wake).
struct Order {
  std::vector<int> victims;          // engine ids, tier by tier
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

// The number of processing units this process may run on (at least 1). Any thread.
int allowed_pus();

// Where the engines of one runtime run and whom each robs.
struct Placement {
  hwloc_topology_t topo = nullptr;         // loaded only when engines are pinned (and readable)
  hwloc_bitmap_t saved_binding = nullptr;  // the planning thread's binding before it was pinned
  std::vector<int> plan;                   // the PU each engine is to be bound to, or -1
  std::vector<Order> orders;               // each engine's victims, tier by tier (start moves them)
  Order any;                               // the order of threads that are not engines
};

// Plan `engines` engines for `mode`: load the topology if pinning, and warn (unless `quiet`)
// and leave them unpinned when it cannot be read or the plan cannot be made. Called by MR_init's
// thread, which becomes engine 0. Throws std::bad_alloc.
void place(Placement *out, int engines, Pinning mode, bool quiet);

// Bind the calling thread back to the binding it had before place(), if it was saved. Called by
// engine 0's thread at shutdown.
void restore_binding(const Placement &p);

// Free what place() loaded. Any thread, once no engine uses it.
void release(Placement *p);

}  // namespace mr::engine::topo

#endif
