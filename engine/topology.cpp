// topology.cpp: pinning plans, victim tiers and thread binding (topology.hpp).
#include "config.h"

#include "topology.hpp"

#include <cerrno>
#include <cstring>

#include "engine.hpp"

namespace mr::engine::topo {

namespace {

// The allowed PUs inside `set`, in logical (topology) order, as OS indices.
std::vector<int> allowed_pus_in(hwloc_topology_t t, hwloc_const_cpuset_t set,
                                hwloc_const_cpuset_t allowed) {
  std::vector<int> out;
  hwloc_obj_t pu = nullptr;
  while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(t, set, HWLOC_OBJ_PU, pu)) != nullptr)
    if (hwloc_bitmap_isset(allowed, pu->os_index)) out.push_back(static_cast<int>(pu->os_index));
  return out;
}

// Is there an object of type `type` whose cpuset holds both PUs?
bool shared_by(hwloc_topology_t t, hwloc_obj_type_t type, int a, int b) {
  int n = hwloc_get_nbobjs_by_type(t, type);
  for (int i = 0; i < n; i++) {
    hwloc_obj_t o = hwloc_get_obj_by_type(t, type, static_cast<unsigned>(i));
    if (o && o->cpuset && hwloc_bitmap_isset(o->cpuset, static_cast<unsigned>(a)) &&
        hwloc_bitmap_isset(o->cpuset, static_cast<unsigned>(b)))
      return true;
  }
  return false;
}

}  // namespace

std::vector<int> plan_pinning(hwloc_topology_t t, hwloc_const_cpuset_t allowed, int engines,
                              Pinning mode, std::string *warning) {
  std::vector<int> none(static_cast<std::size_t>(engines), -1);
  if (mode == Pinning::NONE) return none;
  if (!allowed) allowed = hwloc_topology_get_allowed_cpuset(t);
  const char *name = mode == Pinning::CORES ? "cores" : "pus";
  std::vector<int> plan;
  if (mode == Pinning::PUS) {
    std::vector<int> pus = allowed_pus_in(t, hwloc_topology_get_topology_cpuset(t), allowed);
    for (int pu : pus) {
      if (static_cast<int>(plan.size()) == engines) break;
      plan.push_back(pu);
    }
  } else {
    // The allowed PUs of each core (or of each PU, on a topology without cores).
    hwloc_obj_type_t unit = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE
                                                                             : HWLOC_OBJ_PU;
    std::vector<std::vector<int>> cores;
    int n = hwloc_get_nbobjs_by_type(t, unit);
    for (int i = 0; i < n; i++) {
      hwloc_obj_t c = hwloc_get_obj_by_type(t, unit, static_cast<unsigned>(i));
      std::vector<int> pus = allowed_pus_in(t, c->cpuset, allowed);
      if (!pus.empty()) cores.push_back(std::move(pus));
    }
    // Round r takes the r-th allowed PU of every core that has one.
    for (std::size_t r = 0; static_cast<int>(plan.size()) < engines; r++) {
      bool any = false;
      for (const std::vector<int> &c : cores) {
        if (r >= c.size()) continue;
        any = true;
        plan.push_back(c[r]);
        if (static_cast<int>(plan.size()) == engines) break;
      }
      if (!any) break;
    }
  }
  if (static_cast<int>(plan.size()) < engines) {
    if (warning)
      *warning = std::string("--thread-pinning=") + name + ": " + std::to_string(engines) +
                 " engines but only " + std::to_string(plan.size()) +
                 " processing units allowed; engines run unpinned";
    return none;
  }
  return plan;
}

int tier_between(hwloc_topology_t t, int a, int b) {
  if (a < 0 || b < 0 || !t) return kTiers - 1;
  if (a == b) return 0;
  for (hwloc_obj_type_t ty : {HWLOC_OBJ_CORE, HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE})
    if (shared_by(t, ty, a, b)) return 0;
  if (shared_by(t, HWLOC_OBJ_L3CACHE, a, b)) return 1;
  if (hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE) > 1 &&
      shared_by(t, HWLOC_OBJ_NUMANODE, a, b))
    return 1;
  return kTiers - 1;
}

std::vector<Order> steal_orders(hwloc_topology_t t, const std::vector<int> &pu) {
  int n = static_cast<int>(pu.size());
  std::vector<Order> orders(static_cast<std::size_t>(n));
  for (int e = 0; e < n; e++) {
    Order &o = orders[static_cast<std::size_t>(e)];
    for (int k = 0; k < kTiers; k++) {
      for (int j = 1; j < n; j++) {
        int v = (e + j) % n;
        if (tier_between(t, pu[static_cast<std::size_t>(e)], pu[static_cast<std::size_t>(v)]) == k)
          o.victims.push_back(v);
      }
      o.tier_end[k] = static_cast<int>(o.victims.size());
    }
  }
  return orders;
}

Order any_order(int engines) {
  Order o;
  for (int v = 0; v < engines; v++) o.victims.push_back(v);
  for (int &end : o.tier_end) end = engines;
  return o;
}

bool bind_thread(hwloc_topology_t t, int pu, std::string *why) {
  hwloc_obj_t obj = hwloc_get_pu_obj_by_os_index(t, static_cast<unsigned>(pu));
  if (!obj) {
    *why = "no such processing unit";
    return false;
  }
  hwloc_bitmap_t set = hwloc_bitmap_dup(obj->cpuset);
  hwloc_bitmap_t now = hwloc_bitmap_alloc();
  bool ok = false;
  if (!set || !now) {
    *why = "out of memory";
  } else {
    hwloc_bitmap_singlify(set);
    if (hwloc_set_cpubind(t, set, HWLOC_CPUBIND_THREAD) != 0) {
      int err = errno;
      *why = err == ENOSYS ? "binding is not supported here (ENOSYS)"
             : err == EXDEV ? "the binding cannot be enforced (EXDEV)"
                            : std::string("hwloc_set_cpubind: ") + std::strerror(err);
    } else if (hwloc_get_cpubind(t, now, HWLOC_CPUBIND_THREAD) != 0 ||
               !hwloc_bitmap_isequal(now, set)) {
      *why = "the binding did not take effect";
    } else {
      ok = true;
    }
  }
  if (set) hwloc_bitmap_free(set);
  if (now) hwloc_bitmap_free(now);
  return ok;
}

}  // namespace mr::engine::topo
