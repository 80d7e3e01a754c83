// current.hpp: the task running in this context, or on this thread outside contexts.
#ifndef MR_GOMP_CURRENT_HPP
#define MR_GOMP_CURRENT_HPP

#include "engine/context_local.hpp"
#include "records.hpp"

namespace mrg {

// The current task of a thread that runs no context of mrengine's (a slot, pool or program
// thread), and of the primordial context (its thread is its own); null before the thread's first
// use of the runtime. A context of mrengine's keeps its current task in its own record instead
// (mr::engine::context_local), so that a task that suspends in any wait and resumes after other
// tasks ran on its thread, or on another thread, still finds its own.
// Initial-exec TLS (as libgomp's own): this library is loaded with the program, and each task
// creation reads and writes it, where the general model would call __tls_get_addr each time.
extern __thread Task *tl_current __attribute__((tls_model("initial-exec")));
// The initial task of this context, or of this thread outside contexts (made on first use),
// which becomes its current task.
Task *initial_task();

// The task running here (the initial task if none).
inline Task *current() {
  mr::engine::ContextLocal *l = mr::engine::context_local();
  if (Task *t = l ? static_cast<Task *>(l->value) : tl_current) return t;
  return initial_task();
}
inline void set_current(Task *t) {
  if (mr::engine::ContextLocal *l = mr::engine::context_local())
    l->value = t;
  else
    tl_current = t;
}

}  // namespace mrg

#endif
