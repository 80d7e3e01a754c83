// reduction.hpp: task reductions: the per-member copies and the scopes that name them.
#ifndef MR_GOMP_REDUCTION_HPP
#define MR_GOMP_REDUCTION_HPP

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "records.hpp"

namespace mrg {

// A work-sharing construct's task reductions (reduction(task, ...) on for, sections, scope):
// the per-thread arrays every member's descriptor points to, freed by the last member to
// unregister.
struct WsRed {
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> arrays;  // data[2], data[6] per descriptor
  std::atomic<int> left{0};
};

// A task reduction registered by a taskgroup or a parallel region (reduction(task, ...)): gcc's
// descriptor (data[0] items, data[1] bytes per thread, data[2] the per-thread array once
// registered, data[4] the next descriptor of the same construct, data[6] the array's end, then
// {address, offset, -} per item), and the scope outside it.
struct RedScope {
  std::uintptr_t *data;
  std::shared_ptr<RedScope> outer;
};

// The per-thread arrays of a descriptor chain for n threads.
void red_allocate(std::uintptr_t *data, int n);
// The innermost scope visible to task t.
std::shared_ptr<RedScope> red_visible_in_groups(Task *t);
inline std::shared_ptr<RedScope> red_visible(Task *t) {
  return t->red_stack.empty() ? t->red_in : red_visible_in_groups(t);
}
// A member's start of a work-share with task reductions (its own descriptor `data`).
void ws_reductions(Task *self, WorkShare *w, std::uintptr_t *data);

}  // namespace mrg

#endif
