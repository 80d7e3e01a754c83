// env.hpp: the ICVs and the environment, the one place that reads OMP_* (doc/gomp.md,
// "Environment").
#ifndef MR_GOMP_ENV_HPP
#define MR_GOMP_ENV_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mrg {

// Schedule kinds, as omp_sched_t numbers them (0 is "the run-sched-var ICV").
enum Sched : int {
  SCHED_RUNTIME = 0,
  SCHED_STATIC = 1,
  SCHED_DYNAMIC = 2,
  SCHED_GUIDED = 3,
  SCHED_AUTO = 4
};

// The ICVs a task carries (each task has its own copy of its parent's at creation).
struct Icv {
  int nthreads = 1;                  // nthreads-var
  bool dyn = false;                  // dyn-var
  int sched = SCHED_STATIC;          // run-sched-var kind
  int chunk = 0;                     // run-sched-var chunk (0: the kind's default)
  int max_active_levels = 1;         // max-active-levels-var
  std::uintptr_t def_allocator = 1;  // def-allocator-var (omp_default_mem_alloc)
};

// The process-wide settings read from the environment once (OMP_*).
struct Globals {
  std::vector<int> nthreads_list;  // OMP_NUM_THREADS, one entry per nesting level
  Icv initial;                     // the initial task's ICVs
  int thread_limit = 1 << 20;      // thread-limit-var
  int wait_policy = -1;            // OMP_WAIT_POLICY: -1 unset, 0 passive, 1 active
  int max_task_priority = 0;       // OMP_MAX_TASK_PRIORITY
  int engines = 0;                 // engines of the running runtime (written once: ensure_runtime)
  bool cancel_var = false;         // OMP_CANCELLATION
  bool defer_alone = false;  // MRGOMP_DEFER_ALONE: a team of one defers its tasks (doc/mpi.md)
};
extern Globals &G;

// Read the environment into G, once; every caller returns after the first has read it.
void read_environment_once();

// The processors this process may run on.
int num_procs();

// OMP_STACKSIZE in bytes, or 0 when unset.
std::size_t env_stacksize();

// nteams-var and teams-thread-limit-var (0: unset): the league size of a teams construct
// without num_teams, and what omp_get_teams_thread_limit reports; read from OMP_NUM_TEAMS and
// OMP_TEAMS_THREAD_LIMIT when the library is loaded, set by omp_set_num_teams and
// omp_set_teams_thread_limit. Loaded and stored relaxed: values of their own, with no data
// published through them.
extern std::atomic<int> nteams_var;
extern std::atomic<int> teams_thread_limit_var;

}  // namespace mrg

#endif
