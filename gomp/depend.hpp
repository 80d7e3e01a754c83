// depend.hpp: dependences between sibling tasks (doc/gomp.md, "Waiting": Dependences).
//
// A parent keeps, per address, the last task with an out-type dependence and the in-type ones
// created since; a new task's predecessors are found there. A deferred task whose predecessors
// have not all completed is not forked when it is created: it registers with each of them
// (register_succ), and the last to complete forks it (complete, in task.cpp).
#ifndef MR_GOMP_DEPEND_HPP
#define MR_GOMP_DEPEND_HPP

#include <atomic>
#include <cstddef>
#include <memory>
#include <unordered_map>
#include <vector>

#include "mrengine.h"

namespace mrg {

struct Task;
struct DepNode;

// A task's registration with one of its predecessors: a link of the predecessor's list of
// successors, stored in the successor's node.
struct DepEdge {
  DepEdge *next;  // the successor registered before it
  DepNode *succ;
};

// An explicit task that others may depend on (or a detached task's event: `done` only).
struct DepNode {
  MR_Future done = MR_FUTURE_INIT;  // signalled once the task has completed
  // The successors to fork when the task completes: a list pushed by their creator, and
  // kCompleted once the task has completed (no successor registers after that).
  std::atomic<DepEdge *> succs{nullptr};
  // As a successor: its predecessors that have not completed, plus one while its creator
  // registers it; whoever brings it to zero forks the task.
  std::atomic<std::size_t> pending{0};
  Task *task = nullptr;        // the deferred task it is the node of (null: an undeferred one)
  std::vector<DepEdge> edges;  // its registrations, one per predecessor
};
using DepRef = std::shared_ptr<DepNode>;

// The sibling-dependence state of one parent task: for each address, the last task with an
// out-type dependence on it and the in-type ones created since.
struct DepEntry {
  DepRef last_out;
  std::vector<DepRef> ins;
};
using DepMap = std::unordered_map<void *, DepEntry>;

// The mark that ends a node's successor list once its task has completed.
inline DepEdge completed_mark;
constexpr DepEdge *kCompleted = &completed_mark;

// One dependence of a depend clause: its address, and whether it is out-type.
struct Dep {
  void *addr;
  bool out;
};

// The dependences of a depend array, in either of gcc's two layouts.
std::vector<Dep> parse_depend(void **depend);

// The predecessors among a parent's children of a task with these dependences, from the
// parent's map `*map` (made here on first use); with node set, record the task as the latest
// for its addresses. The nodes stay alive while the parent runs: they are its deferred
// children's, which only the parent frees, when it joins them.
std::vector<DepNode *> link_deps(std::unique_ptr<DepMap> *map, const std::vector<Dep> &deps,
                                 const DepRef &node);

// Wait for the completion of each of preds (the waiting context suspends).
void wait_preds(const std::vector<DepNode *> &preds);

// Register node (a deferred task's, its record and sync term ready) as a successor of each of
// preds. True if they have all completed by the end, and the caller forks the task; false if
// the last of them to complete forks it (complete).
bool register_succ(DepNode *node, const std::vector<DepNode *> &preds);

}  // namespace mrg

#endif
