// omp.hpp: the C signatures of the omp_* routines that other entry points call (the Fortran
// forms, fortran.cpp), declared once with the types this library gives the ABI's: an omp_lock_t
// is its 4-byte word, an omp_nest_lock_t 16 bytes, handles and events are uintptr_t. The files
// that define them include this, so a definition that drifts from it does not compile.
#ifndef MR_GOMP_OMP_HPP
#define MR_GOMP_OMP_HPP

#include <stddef.h>
#include <stdint.h>

#include "export.hpp"

namespace mrg {

// omp_alloctrait_t: a 4-byte key (an enum) and a pointer-sized value. The padding between them
// is whatever the program's storage held, so the key is read as the int it is.
struct AllocTrait {
  int key;
  uintptr_t value;
};
static_assert(sizeof(AllocTrait) == 2 * sizeof(uintptr_t), "omp_alloctrait_t: a key, a value");

// The size of an omp_nest_lock_t (lock.cpp).
constexpr size_t kNestLockBytes = 16;

}  // namespace mrg

// Teams, threads and ICVs (api.cpp, teams.cpp).
MRG_EXPORT int omp_get_thread_num(void);
MRG_EXPORT int omp_get_num_threads(void);
MRG_EXPORT int omp_get_max_threads(void);
MRG_EXPORT void omp_set_num_threads(int n);
MRG_EXPORT int omp_in_parallel(void);
MRG_EXPORT int omp_get_num_procs(void);
MRG_EXPORT void omp_set_dynamic(int d);
MRG_EXPORT int omp_get_dynamic(void);
MRG_EXPORT void omp_set_nested(int nested);
MRG_EXPORT int omp_get_nested(void);
MRG_EXPORT void omp_set_max_active_levels(int n);
MRG_EXPORT int omp_get_max_active_levels(void);
MRG_EXPORT int omp_get_supported_active_levels(void);
MRG_EXPORT int omp_get_thread_limit(void);
MRG_EXPORT int omp_get_level(void);
MRG_EXPORT int omp_get_active_level(void);
MRG_EXPORT int omp_get_ancestor_thread_num(int level);
MRG_EXPORT int omp_get_team_size(int level);
MRG_EXPORT void omp_set_schedule(int kind, int chunk);
MRG_EXPORT void omp_get_schedule(int *kind, int *chunk);
MRG_EXPORT int omp_in_final(void);
MRG_EXPORT int omp_get_max_task_priority(void);
MRG_EXPORT int omp_get_cancellation(void);
MRG_EXPORT int omp_get_proc_bind(void);
MRG_EXPORT double omp_get_wtime(void);
MRG_EXPORT double omp_get_wtick(void);
MRG_EXPORT int omp_get_num_teams(void);
MRG_EXPORT int omp_get_team_num(void);
MRG_EXPORT int omp_get_max_teams(void);
MRG_EXPORT void omp_set_num_teams(int n);
MRG_EXPORT int omp_get_teams_thread_limit(void);
MRG_EXPORT void omp_set_teams_thread_limit(int n);

// Devices and pausing (api.cpp), places and affinity (affinity.cpp), the environment
// (display_env.cpp).
MRG_EXPORT int omp_get_num_devices(void);
MRG_EXPORT int omp_get_default_device(void);
MRG_EXPORT void omp_set_default_device(int d);
MRG_EXPORT int omp_is_initial_device(void);
MRG_EXPORT int omp_get_initial_device(void);
MRG_EXPORT int omp_get_device_num(void);
MRG_EXPORT int omp_get_num_places(void);
MRG_EXPORT int omp_get_place_num(void);
MRG_EXPORT int omp_get_place_num_procs(int place);
MRG_EXPORT void omp_get_place_proc_ids(int place, int *ids);
MRG_EXPORT int omp_get_partition_num_places(void);
MRG_EXPORT void omp_get_partition_place_nums(int *nums);
MRG_EXPORT int omp_pause_resource(int kind, int device);
MRG_EXPORT int omp_pause_resource_all(int kind);
MRG_EXPORT void omp_display_env(int verbose);
MRG_EXPORT void omp_set_affinity_format(const char *format);
MRG_EXPORT size_t omp_get_affinity_format(char *buffer, size_t size);
MRG_EXPORT void omp_display_affinity(const char *format);
MRG_EXPORT size_t omp_capture_affinity(char *buffer, size_t size, const char *format);

// Locks (lock.cpp), events (task.cpp), allocators (alloc.cpp).
MRG_EXPORT void omp_init_lock(int *lock);
MRG_EXPORT void omp_destroy_lock(int *lock);
MRG_EXPORT void omp_set_lock(int *lock);
MRG_EXPORT void omp_unset_lock(int *lock);
MRG_EXPORT int omp_test_lock(int *lock);
MRG_EXPORT void omp_init_nest_lock(void *lock);
MRG_EXPORT void omp_destroy_nest_lock(void *lock);
MRG_EXPORT void omp_set_nest_lock(void *lock);
MRG_EXPORT void omp_unset_nest_lock(void *lock);
MRG_EXPORT int omp_test_nest_lock(void *lock);
MRG_EXPORT void omp_fulfill_event(uintptr_t event);
MRG_EXPORT uintptr_t omp_init_allocator(uintptr_t memspace, int ntraits,
                                        const mrg::AllocTrait *traits);
MRG_EXPORT void omp_destroy_allocator(uintptr_t handle);
MRG_EXPORT void omp_set_default_allocator(uintptr_t handle);
MRG_EXPORT uintptr_t omp_get_default_allocator(void);

#endif
