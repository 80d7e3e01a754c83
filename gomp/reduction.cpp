// reduction.cpp: task reductions (reduction(task, ...) on a region or a work-share,
// task_reduction on a taskgroup, in_reduction on a task). The runtime allocates one copy per team
// member (gcc's descriptor gives the size), and a task reduces into the copy of the member whose
// thread runs it; gcc's code then combines the copies (doc/gomp.md, "What is supported").
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "barrier.hpp"
#include "current.hpp"
#include "export.hpp"
#include "fatal.hpp"
#include "records.hpp"
#include "reduction.hpp"
#include "workshare.hpp"

namespace mrg {

void red_allocate(std::uintptr_t *data, int n) {
  for (std::uintptr_t *d = data; d; d = reinterpret_cast<std::uintptr_t *>(d[4])) {
    size_t size = d[1], align = std::max<size_t>(d[2], sizeof(void *));
    size_t bytes = (size * static_cast<size_t>(n) + align - 1) / align * align;
    void *array = aligned_alloc(align, bytes ? bytes : align);
    if (!array) die("out of memory for a task reduction");
    memset(array, 0, bytes);  // each copy's "initialised" flag starts clear
    d[2] = reinterpret_cast<std::uintptr_t>(array);
    d[6] = d[2] + size * static_cast<size_t>(n);
  }
}

std::shared_ptr<RedScope> red_visible_in_groups(Task *t) {
  for (auto it = t->red_stack.rbegin(); it != t->red_stack.rend(); ++it)
    if (*it) return *it;
  return t->red_in;
}

void ws_reductions(Task *self, WorkShare *w, std::uintptr_t *data) {
  int n = self->team->n;
  std::call_once(w->red_once, [&] {
    auto r = std::make_shared<WsRed>();
    red_allocate(data, n);
    for (std::uintptr_t *d = data; d; d = reinterpret_cast<std::uintptr_t *>(d[4]))
      r->arrays.emplace_back(d[2], d[6]);
    // relaxed: published by call_once.
    r->left.store(n, std::memory_order_relaxed);
    w->red = r;
  });
  // Every member's descriptor (on its own stack) points at the same arrays.
  size_t k = 0;
  for (std::uintptr_t *d = data; d && k < w->red->arrays.size();
       d = reinterpret_cast<std::uintptr_t *>(d[4]), k++) {
    d[2] = w->red->arrays[k].first;
    d[6] = w->red->arrays[k].second;
  }
  self->red_stack.push_back(std::make_shared<RedScope>(RedScope{data, red_visible(self)}));
  self->ws_reds.emplace_back(w->red, nullptr);
}

}  // namespace mrg

using namespace mrg;

MRG_EXPORT void GOMP_workshare_task_reduction_unregister(bool cancelled) {
  (void)cancelled;
  Task *self = current();
  if (self->ws_reds.empty()) die("GOMP_workshare_task_reduction_unregister without a reduction");
  // Constructs with task reductions nest (scope in scope), and each unregisters at its end:
  // the innermost is the latest.
  std::shared_ptr<WsRed> r = self->ws_reds.back().first;
  WorkShare *scope_ws = self->ws_reds.back().second;
  self->ws_reds.pop_back();
  if (!self->red_stack.empty()) self->red_stack.pop_back();
  // A scope construct's work-share ends here (a loop's or sections' ended at its end call).
  if (scope_ws) ws_release(self->team, scope_ws);
  // Member 0 combines the copies into the list items before it unregisters; the others call
  // this at once: the barrier keeps them from reading the items before the combination.
  team_barrier(self->team);
  // acq_rel: the last member sees every other member done with the arrays.
  if (r->left.fetch_sub(1, std::memory_order_acq_rel) == 1)
    for (auto &a : r->arrays) free(reinterpret_cast<void *>(a.first));
}

MRG_EXPORT void GOMP_taskgroup_reduction_register(uintptr_t *data) {
  Task *self = current();
  if (self->red_stack.empty()) die("GOMP_taskgroup_reduction_register outside a taskgroup");
  red_allocate(data, self->team->n);
  self->red_stack.back() = std::make_shared<RedScope>(RedScope{data, red_visible(self)});
}

MRG_EXPORT void GOMP_taskgroup_reduction_unregister(uintptr_t *data) {
  for (uintptr_t *d = data; d; d = reinterpret_cast<uintptr_t *>(d[4]))
    free(reinterpret_cast<void *>(d[2]));
}

// Map each of ptrs[0..cnt-1] (an original list item, or a copy of one) to the running thread's
// copy; for i < cntorig, also give the original's address in ptrs[cnt + i].
MRG_EXPORT void GOMP_task_reduction_remap(size_t cnt, size_t cntorig, void **ptrs) {
  Task *self = current();
  if (!self->thread_num_exact)
    unsupported("GOMP_task_reduction_remap",
                "an in_reduction task run on a thread that is no member of its team");
  auto tid = static_cast<uintptr_t>(self->thread_num);
  std::shared_ptr<RedScope> scope = red_visible(self);
  for (size_t i = 0; i < cnt; i++) {
    auto p = reinterpret_cast<uintptr_t>(ptrs[i]);
    bool found = false;
    for (RedScope *s = scope.get(); s && !found; s = s->outer.get()) {
      for (uintptr_t *d = s->data; d && !found; d = reinterpret_cast<uintptr_t *>(d[4])) {
        uintptr_t offset = 0, orig = 0;
        for (uintptr_t j = 0; j < d[0]; j++) {
          uintptr_t *ent = d + 7 + 3 * j;
          if (ent[0] == p) {
            offset = ent[1], orig = p, found = true;
            break;
          }
        }
        if (!found && p >= d[2] && p < d[6]) {
          uintptr_t off = (p - d[2]) % d[1];
          for (uintptr_t j = 0; j < d[0]; j++) {
            uintptr_t *ent = d + 7 + 3 * j;
            if (ent[1] == off) {
              offset = off, orig = ent[0], found = true;
              break;
            }
          }
        }
        if (found) {
          ptrs[i] = reinterpret_cast<void *>(d[2] + tid * d[1] + offset);
          if (i < cntorig) ptrs[cnt + i] = reinterpret_cast<void *>(orig);
        }
      }
    }
    if (!found)
      die("GOMP_task_reduction_remap: %p is in no task reduction", reinterpret_cast<void *>(p));
  }
}
