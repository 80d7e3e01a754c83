// current.hpp: the task running on this thread.
#ifndef MR_GOMP_CURRENT_HPP
#define MR_GOMP_CURRENT_HPP

#include "records.hpp"

namespace mrg {

// The task running on this thread, or null before the thread's first use of the runtime.
// Initial-exec TLS (as libgomp's own): this library is loaded with the program, and each task
// creation reads and writes it, where the general model would call __tls_get_addr each time.
extern __thread Task *tl_current __attribute__((tls_model("initial-exec")));
// The initial task of this thread (made on first use), which becomes its current task.
Task *initial_task();

// The task running on this thread (the initial task of the thread if none).
inline Task *current() {
  if (Task *t = tl_current) return t;
  return initial_task();
}
inline void set_current(Task *t) { tl_current = t; }

}  // namespace mrg

#endif
