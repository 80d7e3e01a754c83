// taskloop.cpp: the taskloop construct. The iterations are split into tasks (by grainsize,
// strict or not, num_tasks, or one per team member); each task's bounds are written into the
// first two fields of its copy of the data, and the tasks are waited for in a taskgroup unless
// nogroup (doc/gomp.md, "Waiting").
#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "current.hpp"
#include "export.hpp"
#include "iter.hpp"
#include "records.hpp"
#include "reduction.hpp"
#include "runtime.hpp"
#include "task.hpp"

namespace mrg {
namespace {

// The number of tasks for n iterations: grainsize (strict: exactly that many iterations in
// every task but the last, *strict_grain), num_tasks, or one per team member.
std::uint64_t count_tasks(unsigned flags, unsigned long num_tasks, std::uint64_t n, int members,
                          std::uint64_t *strict_grain) {
  std::uint64_t ntasks;
  if (flags & kGrainsize) {
    std::uint64_t g = num_tasks ? num_tasks : 1;
    if (flags & kStrict) {
      *strict_grain = g;
      ntasks = (n + g - 1) / g;
    } else {
      ntasks = std::max<std::uint64_t>(1, n / g);
    }
  } else if (num_tasks) {
    ntasks = std::min<std::uint64_t>(num_tasks, n);
  } else {
    ntasks = std::min<std::uint64_t>(static_cast<std::uint64_t>(members), n);
  }
  if (n == 0) ntasks = 0;
  return ntasks;
}

// Split the iterations into tasks, inside a taskgroup unless nogroup.
template <class T>
void taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
              long arg_align, unsigned flags, unsigned long num_tasks, T start, T end, T step) {
  std::uint64_t n;
  if constexpr (std::is_signed_v<T>)
    n = trip_count(start, end, step);
  else
    n = trip_count_ull(flags & kUp, start, end, step);
  bool reduction = (flags & kReduction) != 0;
  // No iterations, no tasks; a reduction still registers its copies, which the caller combines.
  if (n == 0 && !reduction) return;
  ensure_runtime();
  Task *self = current();
  // grainsize(strict:) gives every task exactly that many iterations but the last.
  std::uint64_t strict_grain = 0;
  std::uint64_t ntasks = count_tasks(flags, num_tasks, n, self->team->n, &strict_grain);
  bool group = !(flags & kNogroup) || reduction;
  if (group) GOMP_taskgroup_start();
  if (reduction) {
    // The descriptor is the data's third field, after the bounds; the caller combines the
    // copies after we return and unregisters it.
    auto *rd = static_cast<std::uintptr_t **>(data)[2];
    red_allocate(rd, self->team->n);
    self->red_stack.back() = std::make_shared<RedScope>(RedScope{rd, red_visible(self)});
  }
  std::uint64_t q = ntasks ? n / ntasks : 0, r = ntasks ? n % ntasks : 0, lo = 0;
  unsigned task_flags = flags & (kUntied | kFinal);
  for (std::uint64_t k = 0; k < ntasks; k++) {
    std::uint64_t hi = strict_grain ? std::min(n, lo + strict_grain) : lo + q + (k < r ? 1 : 0);
    Bounds b;
    b.ull = !std::is_signed_v<T>;
    b.reduction = reduction;
    b.lo = static_cast<std::uint64_t>(start + static_cast<T>(lo) * step);
    b.hi = hi == n ? static_cast<std::uint64_t>(end)
                   : static_cast<std::uint64_t>(start + static_cast<T>(hi) * step);
    create_task(fn, data, cpyfn, arg_size, arg_align, (flags & kIf) != 0, task_flags, nullptr,
                nullptr, &b);
    lo = hi;
  }
  if (group) GOMP_taskgroup_end();
}

}  // namespace
}  // namespace mrg

using namespace mrg;

MRG_EXPORT void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                              long arg_size, long arg_align, unsigned flags,
                              unsigned long num_tasks, int priority, long start, long end,
                              long step) {
  (void)priority;
  taskloop<long>(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, start, end, step);
}

MRG_EXPORT void GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                                  long arg_size, long arg_align, unsigned flags,
                                  unsigned long num_tasks, int priority, unsigned long long start,
                                  unsigned long long end, unsigned long long step) {
  (void)priority;
  taskloop<unsigned long long>(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, start, end,
                               step);
}
