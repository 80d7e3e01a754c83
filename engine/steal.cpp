// steal.cpp: the victim order of a search (steal.hpp).
#include "config.h"

#include "steal.hpp"

namespace mr::engine {

Shared *take_advised_victim(Engine *e) {
  int v = e->search.advised_victim;
  if (v < 0) return nullptr;
  e->search.advised_victim = -1;
  return g_rt->engines[v];
}

Stolen steal_round(Engine *e) {
  if (Shared *first = take_advised_victim(e)) {
    Stolen s = steal_work(e, first);
    if (s.got == Loot::SPARK || s.got == Loot::CONTEXT) return s;
  }
  const topo::Order &o = e->order;
  for (int k = 0; k < topo::kTiers; k++) {
    int b = o.tier_begin(k);
    unsigned size = static_cast<unsigned>(o.tier_end[k] - b);
    for (unsigned j = 0; j < size; j++) {
      int v = o.victims[static_cast<std::size_t>(b) + (e->search.steal_offset + j) % size];
      Stolen s = steal_work(e, g_rt->engines[v]);
      if (s.got == Loot::SPARK || s.got == Loot::CONTEXT) return s;
    }
  }
  e->search.steal_offset++;
  return Stolen{};
}

}  // namespace mr::engine
