// api.cpp: the omp_* routines: team and thread queries, ICVs, time, the host-only device
// queries and pausing. (The teams, locks, allocators, device memory, places, affinity and
// display routines are with their concepts.)
#include <time.h>

#include <algorithm>

#include "current.hpp"
#include "env.hpp"
#include "export.hpp"
#include "mrengine.h"
#include "omp.hpp"
#include "records.hpp"

using namespace mrg;

MRG_EXPORT int omp_get_thread_num(void) { return current()->thread_num; }
MRG_EXPORT int omp_get_num_threads(void) { return current()->team->n; }
MRG_EXPORT int omp_get_max_threads(void) { return current()->icv.nthreads; }
MRG_EXPORT void omp_set_num_threads(int n) { current()->icv.nthreads = std::max(1, n); }
MRG_EXPORT int omp_in_parallel(void) { return current()->team->active_level > 0; }
MRG_EXPORT int omp_get_num_procs(void) { return num_procs(); }
MRG_EXPORT void omp_set_dynamic(int d) { current()->icv.dyn = d != 0; }
MRG_EXPORT int omp_get_dynamic(void) { return current()->icv.dyn; }
MRG_EXPORT void omp_set_nested(int nested) { current()->icv.max_active_levels = nested ? 255 : 1; }
MRG_EXPORT int omp_get_nested(void) { return current()->icv.max_active_levels > 1; }
MRG_EXPORT void omp_set_max_active_levels(int n) {
  if (n >= 0) current()->icv.max_active_levels = std::min(n, 255);
}
MRG_EXPORT int omp_get_max_active_levels(void) { return current()->icv.max_active_levels; }
MRG_EXPORT int omp_get_supported_active_levels(void) { return 255; }
MRG_EXPORT int omp_get_thread_limit(void) {
  int limit = current()->team->teams_thread_limit;  // (the environment is read)
  return limit > 0 ? std::min(limit, G.thread_limit) : G.thread_limit;
}
MRG_EXPORT int omp_get_level(void) { return current()->team->level; }
MRG_EXPORT int omp_get_active_level(void) { return current()->team->active_level; }
MRG_EXPORT int omp_get_ancestor_thread_num(int level) {
  Task *self = current();
  Team *t = self->team;
  if (level < 0 || level > t->level) return -1;
  if (level == t->level) return self->thread_num;
  return t->ancestor_tid[level];
}
MRG_EXPORT int omp_get_team_size(int level) {
  Team *t = current()->team;
  if (level < 0 || level > t->level) return -1;
  return t->ancestor_size[level];
}
MRG_EXPORT void omp_set_schedule(int kind, int chunk) {
  Icv &icv = current()->icv;
  int k = kind & 0x7fffffff;
  if (k < SCHED_STATIC || k > SCHED_AUTO) return;
  icv.sched = k;
  icv.chunk = chunk > 0 ? chunk : 0;
}
MRG_EXPORT void omp_get_schedule(int *kind, int *chunk) {
  const Icv &icv = current()->icv;
  *kind = icv.sched;
  if (icv.sched == SCHED_AUTO)
    *chunk = 0;
  else if (icv.chunk > 0)
    *chunk = icv.chunk;
  else
    *chunk = icv.sched == SCHED_STATIC ? 0 : 1;
}
MRG_EXPORT int omp_in_final(void) { return current()->final_; }
MRG_EXPORT int omp_get_max_task_priority(void) {
  current();
  return G.max_task_priority;
}
MRG_EXPORT int omp_get_cancellation(void) {
  current();  // the environment is read
  return G.cancel_var;
}

// MR_now's clock, the library's one (engine/clock.hpp).
MRG_EXPORT double omp_get_wtime(void) { return static_cast<double>(MR_now()) * 1e-9; }
MRG_EXPORT double omp_get_wtick(void) {
  struct timespec ts;
  clock_getres(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ---- the host is the only device ------------------------------------------------------------

MRG_EXPORT int omp_get_num_devices(void) { return 0; }
MRG_EXPORT int omp_get_default_device(void) { return 0; }
MRG_EXPORT void omp_set_default_device(int d) { (void)d; }
MRG_EXPORT int omp_is_initial_device(void) { return 1; }
MRG_EXPORT int omp_get_initial_device(void) { return 0; }  // == omp_get_num_devices()
MRG_EXPORT int omp_get_device_num(void) { return 0; }

// Pausing may release the runtime's resources; keeping them is allowed (the next region finds
// them ready), so the request succeeds for the host and fails for any other device.
MRG_EXPORT int omp_pause_resource(int kind, int device) {
  (void)kind;
  return device == 0 ? 0 : -1;
}
MRG_EXPORT int omp_pause_resource_all(int kind) {
  (void)kind;
  return 0;
}
