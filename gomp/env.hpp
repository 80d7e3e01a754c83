// env.hpp: the ICVs and the environment, the one place that reads OMP_* (doc/gomp.md,
// "Environment").
#ifndef MR_GOMP_ENV_HPP
#define MR_GOMP_ENV_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
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

// Thread affinity policies, as omp_proc_bind_t numbers them (and the proc_bind clause in
// GOMP_parallel's flags: 0 there means "no clause").
enum Bind : int {
  BIND_FALSE = 0,
  BIND_TRUE = 1,
  BIND_PRIMARY = 2,
  BIND_CLOSE = 3,
  BIND_SPREAD = 4
};

// The ICVs a task carries (each task has its own copy of its parent's at creation).
struct Icv {
  int nthreads = 1;                  // nthreads-var
  bool dyn = false;                  // dyn-var
  int sched = SCHED_STATIC;          // run-sched-var kind
  int chunk = 0;                     // run-sched-var chunk (0: the kind's default)
  int max_active_levels = 1;         // max-active-levels-var
  int bind = BIND_FALSE;             // bind-var: the policy of the next region (a Bind)
  std::uintptr_t def_allocator = 1;  // def-allocator-var (omp_default_mem_alloc)
};

// place-partition-var and the place of an implicit task: place numbers index the place list
// (places.hpp); the partition is `len` places from `first`, counted modulo the list's length.
// place -1: the thread is bound to no place (bind-var false, or no places).
struct Placement {
  int place = -1;
  int first = 0, len = 0;
};

// OMP_PLACES as written: an abstract name with an optional count, or explicit places (OS
// processor numbers, as in /proc/cpuinfo), resolved against the machine by places.cpp.
struct PlacesSpec {
  enum Kind { NONE, THREADS, CORES, LL_CACHES, NUMA_DOMAINS, SOCKETS, EXPLICIT } kind = NONE;
  int count = 0;                            // abstract names: at most this many (0: all)
  std::vector<std::vector<int>> explicit_;  // EXPLICIT: each place's processors
};

// The process-wide settings read from the environment once (OMP_*).
struct Globals {
  std::vector<int> nthreads_list;  // OMP_NUM_THREADS, one entry per nesting level
  Icv initial;                     // the initial task's ICVs
  int thread_limit = 1 << 20;      // thread-limit-var
  int wait_policy = -1;            // OMP_WAIT_POLICY: -1 unset, 0 passive, 1 active
  int max_task_priority = 0;       // OMP_MAX_TASK_PRIORITY
  int engines = 0;                 // engines of the running runtime (written once: ensure_runtime)
  int procs = 1;                   // the processors this process may run on, at start-up
  bool cancel_var = false;         // OMP_CANCELLATION
  // Affinity: OMP_PROC_BIND (one policy per nesting level; empty when unset, and then
  // BIND_TRUE when OMP_PLACES is set), OMP_PLACES, OMP_DISPLAY_ENV (0 false, 1 true, 2
  // verbose), OMP_DISPLAY_AFFINITY and OMP_AFFINITY_FORMAT (the initial affinity-format-var).
  std::vector<int> bind_list;
  PlacesSpec places;
  int display_env = 0;
  bool display_affinity = false;
  std::string affinity_format = "level %L thread %i affinity %A";
  bool defer_alone = false;  // a team of one defers its tasks (libmrmpi, MRGOMP_DEFER_ALONE)
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
