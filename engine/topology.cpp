// topology.cpp: pinning plans, victim tiers, thread binding and the placement of a runtime's
// engines (topology.hpp): all of mrengine's hwloc code.
#include "config.h"

#include "topology.hpp"

#include <cerrno>
#include <cstring>

#include "fatal.hpp"

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

// Does PU a's ancestor of type `type` (a core or a cache) also hold PU b? O(depth).
bool shared_by(hwloc_topology_t t, hwloc_obj_t a, hwloc_obj_type_t type, int b) {
  hwloc_obj_t anc = hwloc_get_ancestor_obj_by_type(t, type, a);
  return anc && anc->cpuset && hwloc_bitmap_isset(anc->cpuset, static_cast<unsigned>(b));
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
    hwloc_obj_type_t unit =
        hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
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

namespace {

// The tier of PU pb seen from PU pa (either nullptr: unknown place). O(depth).
int tier_of(hwloc_topology_t t, hwloc_obj_t pa, hwloc_obj_t pb) {
  if (!pa || !pb) return kTiers - 1;
  if (pa == pb) return 0;
  int b = static_cast<int>(pb->os_index);
  for (hwloc_obj_type_t ty : {HWLOC_OBJ_CORE, HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE})
    if (shared_by(t, pa, ty, b)) return 0;
  if (shared_by(t, pa, HWLOC_OBJ_L3CACHE, b)) return 1;
  // NUMA nodes are memory children, not ancestors: a PU's nodeset names its local nodes.
  if (hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE) > 1 && pa->nodeset && pb->nodeset &&
      hwloc_bitmap_intersects(pa->nodeset, pb->nodeset))
    return 1;
  return kTiers - 1;
}

hwloc_obj_t pu_obj(hwloc_topology_t t, int pu) {
  return pu < 0 || !t ? nullptr : hwloc_get_pu_obj_by_os_index(t, static_cast<unsigned>(pu));
}

}  // namespace

std::vector<Order> steal_orders(hwloc_topology_t t, const std::vector<int> &pu) {
  std::size_t n = pu.size();
  std::vector<hwloc_obj_t> obj(n);  // looked up once: the lookup by OS index is a scan
  for (std::size_t e = 0; e < n; e++) obj[e] = pu_obj(t, pu[e]);
  std::vector<Order> orders(n);
  std::vector<int> tier(n);
  for (std::size_t e = 0; e < n; e++) {
    for (std::size_t v = 0; v < n; v++) tier[v] = tier_of(t, obj[e], obj[v]);
    Order &o = orders[e];
    for (int k = 0; k < kTiers; k++) {
      for (std::size_t j = 1; j < n; j++)
        if (tier[(e + j) % n] == k) o.victims.push_back(static_cast<int>((e + j) % n));
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
      *why = err == ENOSYS  ? "binding is not supported here (ENOSYS)"
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

namespace {

// The PUs the process may run on: its binding within the topology's allowed set (the whole
// allowed set if the binding cannot be read). Returns a new bitmap or nullptr.
hwloc_bitmap_t process_cpuset(hwloc_topology_t topo) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (!set) return nullptr;
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0)
    hwloc_bitmap_and(set, set, hwloc_topology_get_allowed_cpuset(topo));
  if (hwloc_bitmap_iszero(set)) hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo));
  return set;
}

}  // namespace

int allowed_pus() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return 1;
  int n = 1;
  if (hwloc_topology_load(topo) == 0) {
    if (hwloc_bitmap_t set = process_cpuset(topo)) {
      int w = hwloc_bitmap_weight(set);
      if (w > 0) n = w;
      hwloc_bitmap_free(set);
    }
  }
  hwloc_topology_destroy(topo);
  return n;
}

void place(Placement *out, int engines, Pinning mode, bool quiet) {
  out->plan.assign(static_cast<std::size_t>(engines), -1);
  if (mode != Pinning::NONE) {
    if (hwloc_topology_init(&out->topo) != 0) {
      out->topo = nullptr;
    } else if (hwloc_topology_load(out->topo) != 0) {
      hwloc_topology_destroy(out->topo);
      out->topo = nullptr;
    }
    if (!out->topo) {
      warning(quiet, "cannot read the machine's topology (hwloc); engines run unpinned");
    } else {
      hwloc_bitmap_t allowed = process_cpuset(out->topo);
      std::string why;
      out->plan = plan_pinning(out->topo, allowed, engines, mode, &why);
      if (allowed) hwloc_bitmap_free(allowed);
      if (!why.empty()) warning(quiet, "%s", why.c_str());
      out->saved_binding = hwloc_bitmap_alloc();
      if (out->saved_binding &&
          hwloc_get_cpubind(out->topo, out->saved_binding, HWLOC_CPUBIND_THREAD) != 0) {
        hwloc_bitmap_free(out->saved_binding);
        out->saved_binding = nullptr;
      }
    }
  }
  out->orders = steal_orders(out->topo, out->plan);
  out->any = any_order(engines);
}

void restore_binding(const Placement &p) {
  if (p.saved_binding) (void)hwloc_set_cpubind(p.topo, p.saved_binding, HWLOC_CPUBIND_THREAD);
}

void release(Placement *p) {
  if (p->saved_binding) hwloc_bitmap_free(p->saved_binding);
  if (p->topo) hwloc_topology_destroy(p->topo);
  p->saved_binding = nullptr;
  p->topo = nullptr;
}

}  // namespace mr::engine::topo
