// places.cpp: the place list and thread binding. The abstract places of OMP_PLACES are the
// machine's hwloc objects of that kind (PUs, cores, last-level caches, NUMA nodes, packages),
// each the processors of the object the process may run on; explicit places keep those of
// their processors the process may run on. Places left empty are dropped.
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <mutex>

#include "env.hpp"
#include "places.hpp"

namespace mrg {

namespace {

std::vector<std::vector<int>> *place_list;
std::once_flag places_once;

// The processors this process may run on, as the initial thread found them.
std::vector<int> allowed_procs() {
  cpu_set_t set;
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

// The type of the objects an abstract name stands for, and for ll_caches the deepest-level
// cache that exists (the last level).
bool object_type(hwloc_topology_t t, PlacesSpec::Kind kind, hwloc_obj_type_t *type) {
  switch (kind) {
    case PlacesSpec::THREADS:
      *type = HWLOC_OBJ_PU;
      return true;
    case PlacesSpec::CORES:
      *type = HWLOC_OBJ_CORE;
      return true;
    case PlacesSpec::NUMA_DOMAINS:
      *type = HWLOC_OBJ_NUMANODE;
      return true;
    case PlacesSpec::SOCKETS:
      *type = HWLOC_OBJ_PACKAGE;
      return true;
    case PlacesSpec::LL_CACHES:
      for (hwloc_obj_type_t c : {HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L3CACHE,
                                 HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE}) {
        if (hwloc_get_nbobjs_by_type(t, c) > 0) {
          *type = c;
          return true;
        }
      }
      *type = HWLOC_OBJ_MACHINE;
      return true;
    default:
      return false;
  }
}

// The abstract places of `kind`: one per object, the allowed processors of each.
std::vector<std::vector<int>> abstract_places(PlacesSpec::Kind kind,
                                              const std::vector<int> &allowed) {
  std::vector<std::vector<int>> out;
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) != 0) return out;
  hwloc_obj_type_t type;
  if (hwloc_topology_load(t) == 0 && object_type(t, kind, &type)) {
    int n = hwloc_get_nbobjs_by_type(t, type);
    for (int i = 0; i < n; i++) {
      hwloc_obj_t o = hwloc_get_obj_by_type(t, type, static_cast<unsigned>(i));
      std::vector<int> p;
      for (int c : allowed)
        if (hwloc_bitmap_isset(o->cpuset, static_cast<unsigned>(c))) p.push_back(c);
      out.push_back(p);
    }
  }
  hwloc_topology_destroy(t);
  if (out.empty())  // no topology: a place per processor
    for (int c : allowed) out.push_back({c});
  return out;
}

void make_places() {
  read_environment_once();
  place_list = new std::vector<std::vector<int>>;  // never freed: any thread may read it
  if (G.initial.bind == BIND_FALSE) return;
  std::vector<int> allowed = allowed_procs();
  const PlacesSpec &spec = G.places;
  std::vector<std::vector<int>> list;
  if (spec.kind == PlacesSpec::EXPLICIT) {
    for (const auto &p : spec.explicit_) {
      std::vector<int> kept;
      for (int c : p)
        if (std::binary_search(allowed.begin(), allowed.end(), c)) kept.push_back(c);
      list.push_back(kept);
    }
  } else {
    // Threads bound without OMP_PLACES: a place per core.
    list = abstract_places(spec.kind == PlacesSpec::NONE ? PlacesSpec::CORES : spec.kind, allowed);
  }
  size_t written = list.size();
  std::erase_if(list, [](const std::vector<int> &p) { return p.empty(); });
  if (list.size() < written)
    fprintf(stderr,
            "mrengine-gomp: OMP_PLACES: %zu of %zu places hold no processor this "
            "process may run on, left out\n",
            written - list.size(), written);
  if (spec.count > 0 && list.size() > static_cast<size_t>(spec.count)) list.resize(spec.count);
  *place_list = list;
}

// The place of relative offset k in the partition of `len` places from `first`.
int in_partition(int first, int len, int k) {
  int np = static_cast<int>(places().size());
  return (first + k % len) % np;
}

// Close (and true, and spread with more members than places): member i of n goes to the
// place offset `off(i)` from the parent's in the partition: one member a place while there
// are enough, else consecutive members share a place, the first places taking one more.
int close_offset(int i, int n, int p) {
  if (n <= p) return i;
  int q = n / p, r = n % p;
  return i < r * (q + 1) ? i / (q + 1) : r + (i - r * (q + 1)) / q;
}

// Spread: the run (of n runs splitting p places, run k from k * p / n) holding offset r.
int spread_run(int r, int n, int p) {
  int k = 0;
  while (static_cast<long>(k + 1) * p / n <= r) k++;
  return k;
}

}  // namespace

const std::vector<std::vector<int>> &places() {
  std::call_once(places_once, make_places);
  return *place_list;
}

Placement initial_placement() {
  int np = static_cast<int>(places().size());
  return np ? Placement{0, 0, np} : Placement{};
}

void assign_places(int bind, const Placement &parent, int n, std::vector<Placement> *out) {
  int np = static_cast<int>(places().size());
  Placement from = parent.len > 0 ? parent : Placement{0, 0, np};
  if (from.place < 0) from.place = from.first;
  int p = from.len;
  int r = ((from.place - from.first) % np + np) % np;  // the parent's offset in its partition
  out->assign(static_cast<size_t>(n), from);
  if (bind == BIND_PRIMARY) return;
  for (int i = 0; i < n; i++) {
    Placement &m = (*out)[static_cast<size_t>(i)];
    if (bind == BIND_SPREAD && n <= p) {
      // The partition split into n runs of consecutive places; member 0 keeps the parent's
      // place in the run holding it, the others take the next runs, each at its first place.
      int k = (spread_run(r, n, p) + i) % n;
      int lo = static_cast<int>(static_cast<long>(k) * p / n);
      int hi = static_cast<int>(static_cast<long>(k + 1) * p / n);
      m.first = in_partition(from.first, p, lo);
      m.len = hi - lo;
      m.place = i == 0 ? from.place : m.first;
      continue;
    }
    m.place = in_partition(from.first, p, r + close_offset(i, n, p));
    if (bind == BIND_SPREAD) m.first = m.place, m.len = 1;  // more members than places
  }
}

namespace {

// The place this thread is bound to by bind_to_place (-1: none yet).
thread_local int bound_place = -1;

}  // namespace

void bind_to_place(int p) {
  if (bound_place == p) return;
  const std::vector<int> &procs = places()[static_cast<size_t>(p)];
  size_t ncpus = static_cast<size_t>(procs.back()) + 1;
  cpu_set_t *set = CPU_ALLOC(ncpus);
  if (!set) return;
  size_t bytes = CPU_ALLOC_SIZE(ncpus);
  CPU_ZERO_S(bytes, set);
  for (int c : procs) CPU_SET_S(static_cast<size_t>(c), bytes, set);
  int rc = pthread_setaffinity_np(pthread_self(), bytes, set);
  CPU_FREE(set);
  if (rc != 0) {
    fprintf(stderr, "mrengine-gomp: cannot bind a thread to place %d: %s\n", p, strerror(rc));
    return;
  }
  bound_place = p;
}

}  // namespace mrg
