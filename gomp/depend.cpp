// depend.cpp: finding a new task's predecessors among its siblings, and registering with them.
#include <stdint.h>

#include "depend.hpp"

namespace mrg {

namespace {

// Dependence kinds of depobj entries.
constexpr uintptr_t kDepIn = 1;

bool completed(const DepNode *n) {
  // acquire: pairs with complete's exchange, so the task's effects are visible.
  return n->succs.load(std::memory_order_acquire) == kCompleted;
}

void add_pred(std::vector<DepNode *> *preds, const DepRef &d, const DepRef &self) {
  if (!d || d == self || completed(d.get())) return;
  for (DepNode *p : *preds)
    if (p == d.get()) return;
  preds->push_back(d.get());
}

}  // namespace

std::vector<Dep> parse_depend(void **depend) {
  std::vector<Dep> deps;
  auto count = [](void *p) { return static_cast<size_t>(reinterpret_cast<uintptr_t>(p)); };
  if (count(depend[0]) != 0) {
    // depend[0] total, depend[1] out/inout, then the addresses: out ones first.
    size_t n = count(depend[0]), nout = count(depend[1]);
    for (size_t i = 0; i < n; i++) deps.push_back({depend[2 + i], i < nout});
  } else {
    // depend[1] total, [2] out/inout, [3] mutexinoutset, [4] in, then addresses in that
    // order, then depobj entries (each a pointer to {address, kind}).
    size_t n = count(depend[1]), nout = count(depend[2]), nmutex = count(depend[3]),
           nin = count(depend[4]);
    size_t direct = nout + nmutex + nin;
    for (size_t i = 0; i < n; i++) {
      if (i < direct) {
        deps.push_back({depend[5 + i], i < nout + nmutex});  // mutexinoutset: as inout
      } else {
        auto **obj = static_cast<void **>(depend[5 + i]);
        deps.push_back({obj[0], reinterpret_cast<uintptr_t>(obj[1]) != kDepIn});
      }
    }
  }
  return deps;
}

std::vector<DepNode *> link_deps(std::unique_ptr<DepMap> *map, const std::vector<Dep> &deps,
                                 const DepRef &node) {
  std::vector<DepNode *> preds;
  if (!*map) *map = std::make_unique<DepMap>();
  for (const Dep &d : deps) {
    DepEntry &e = (**map)[d.addr];
    add_pred(&preds, e.last_out, node);
    if (d.out) {
      for (const auto &r : e.ins) add_pred(&preds, r, node);
      if (node) {
        e.last_out = node;
        e.ins.clear();
      }
    } else if (node) {
      // Forget readers that have finished, so a long run of them does not pile up.
      if (e.ins.size() >= 64)
        std::erase_if(e.ins, [](const DepRef &r) { return completed(r.get()); });
      e.ins.push_back(node);
    }
  }
  return preds;
}

void wait_preds(const std::vector<DepNode *> &preds) {
  for (DepNode *p : preds) MR_future_wait(&p->done);
}

bool register_succ(DepNode *node, const std::vector<DepNode *> &preds) {
  node->edges.resize(preds.size());
  // relaxed: a predecessor reads it only through an edge, published by the release CAS below.
  node->pending.store(preds.size() + 1, std::memory_order_relaxed);
  std::size_t gone = 1;  // the creator's own unit, and the predecessors found completed
  for (std::size_t i = 0; i < preds.size(); i++) {
    DepEdge *e = &node->edges[i];
    e->succ = node;
    // acquire: a predecessor found completed has its effects visible (pairs with complete).
    DepEdge *head = preds[i]->succs.load(std::memory_order_acquire);
    for (;;) {
      if (head == kCompleted) {
        gone++;
        break;
      }
      e->next = head;
      // CAS release: publishes the edge and the task's record to the predecessor's complete;
      // failure acquire: as the load above.
      if (preds[i]->succs.compare_exchange_weak(head, e, std::memory_order_release,
                                                std::memory_order_acquire))
        break;
    }
  }
  // acq_rel: release publishes the record to the predecessor that brings the count to zero;
  // acquire (if this brings it to zero) takes the effects of those that completed meanwhile.
  return node->pending.fetch_sub(gone, std::memory_order_acq_rel) == gone;
}

}  // namespace mrg
