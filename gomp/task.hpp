// task.hpp: explicit tasks as mrengine sparks, and joining them (doc/gomp.md, "Which thread runs
// what" and "Waiting").
#ifndef MR_GOMP_TASK_HPP
#define MR_GOMP_TASK_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "export.hpp"
#include "records.hpp"

namespace mrg {

// gcc's GOMP_task and GOMP_taskloop flags (the ABI). Untied tasks are run as tied ones
// (allowed: untied only permits migration).
constexpr unsigned kUntied = 1u << 0, kFinal = 1u << 1, kDepend = 1u << 3, kUp = 1u << 8,
                   kGrainsize = 1u << 9, kIf = 1u << 10, kNogroup = 1u << 11, kReduction = 1u << 12,
                   kDetach = 1u << 13, kStrict = 1u << 14;

// A taskloop task's bounds, written into the first two fields of its copy of the data (the
// ABI; with a reduction clause the descriptor follows them).
struct Bounds {
  bool ull;
  std::uint64_t lo, hi;
  bool reduction = false;  // the task indexes the reduction copies by omp_get_thread_num
};

// Create a child of the current task that runs fn on (a copy of) data: GOMP_task's arguments,
// and a taskloop task's bounds (or null).
void create_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                 long arg_align, bool if_clause, unsigned flags, void **depend, void *detach,
                 const Bounds *bounds);

// Join the sparks t's context forked and has not joined since `mark` (all by default: a
// barrier): its children beyond mark.children and its owed tasks numbered mark.owed or more. So
// every descendant of those has completed.
void join_children(Task *t, Task::GroupMark mark = {0, 0});

// taskwait: wait for the completion of t's children (not of their descendants).
void taskwait(Task *t);

// The innermost taskgroup's cancellation flag of task t, or nullptr.
std::atomic<bool> *group_flag(Task *t);

}  // namespace mrg

MRG_EXPORT void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                          long arg_size, long arg_align, bool if_clause, unsigned flags,
                          void **depend, int priority, void *detach);
MRG_EXPORT void GOMP_taskgroup_start(void);
MRG_EXPORT void GOMP_taskgroup_end(void);

#endif
