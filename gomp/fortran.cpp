// fortran.cpp: the Fortran forms of the omp_* routines, the names gfortran's omp_lib calls
// (the C name and an underscore). Each takes its arguments by reference and calls the C
// routine. The _8_ forms are those a program built with -fdefault-integer-8 calls: their
// integer arguments are 8 bytes, clamped here to int's range (a logical stays non-zero).
// A character argument comes as its address and, after the other arguments, its length
// (neither terminated nor trimmed); a character result is padded with blanks.
// The routines gfortran declares bind(C) (omp_alloc, omp_target_*, ...) are called by their C
// names and need no form here.
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "export.hpp"
#include "fatal.hpp"
#include "omp.hpp"

namespace {

int clamp(int64_t v) { return static_cast<int>(std::clamp<int64_t>(v, INT_MIN, INT_MAX)); }

// The C routine's text into a Fortran character variable of `size` characters.
void blank_padded(char *dst, size_t size, const std::string &text) {
  size_t n = std::min(size, text.size());
  memcpy(dst, text.data(), n);
  memset(dst + n, ' ', size - n);
}

// omp_nest_lock_kind is 8 bytes, smaller than the C omp_nest_lock_t: the Fortran variable holds
// the address of one allocated by omp_init_nest_lock_.
void *nest_lock(const int64_t *var) {
  return reinterpret_cast<void *>(static_cast<intptr_t>(*var));
}
static_assert(sizeof(void *) == sizeof(int64_t), "a nest lock's address fits its variable");

}  // namespace

// Queries without arguments: an integer or a logical, both returned as a 4-byte integer.
#define MRG_FORTRAN_QUERY(name) \
  MRG_EXPORT int32_t name##_(void) { return name(); }
MRG_FORTRAN_QUERY(omp_get_thread_num)
MRG_FORTRAN_QUERY(omp_get_num_threads)
MRG_FORTRAN_QUERY(omp_get_max_threads)
MRG_FORTRAN_QUERY(omp_in_parallel)
MRG_FORTRAN_QUERY(omp_get_num_procs)
MRG_FORTRAN_QUERY(omp_get_dynamic)
MRG_FORTRAN_QUERY(omp_get_nested)
MRG_FORTRAN_QUERY(omp_get_max_active_levels)
MRG_FORTRAN_QUERY(omp_get_supported_active_levels)
MRG_FORTRAN_QUERY(omp_get_thread_limit)
MRG_FORTRAN_QUERY(omp_get_level)
MRG_FORTRAN_QUERY(omp_get_active_level)
MRG_FORTRAN_QUERY(omp_in_final)
MRG_FORTRAN_QUERY(omp_get_max_task_priority)
MRG_FORTRAN_QUERY(omp_get_cancellation)
MRG_FORTRAN_QUERY(omp_get_proc_bind)
MRG_FORTRAN_QUERY(omp_get_num_teams)
MRG_FORTRAN_QUERY(omp_get_team_num)
MRG_FORTRAN_QUERY(omp_get_max_teams)
MRG_FORTRAN_QUERY(omp_get_teams_thread_limit)
MRG_FORTRAN_QUERY(omp_get_num_devices)
MRG_FORTRAN_QUERY(omp_get_default_device)
MRG_FORTRAN_QUERY(omp_is_initial_device)
MRG_FORTRAN_QUERY(omp_get_initial_device)
MRG_FORTRAN_QUERY(omp_get_device_num)
MRG_FORTRAN_QUERY(omp_get_num_places)
MRG_FORTRAN_QUERY(omp_get_place_num)
MRG_FORTRAN_QUERY(omp_get_partition_num_places)

// Routines of one integer or logical argument, in both forms.
#define MRG_FORTRAN_SETTER(name)                          \
  MRG_EXPORT void name##_(const int32_t *v) { name(*v); } \
  MRG_EXPORT void name##_8_(const int64_t *v) { name(clamp(*v)); }
MRG_FORTRAN_SETTER(omp_set_num_threads)
MRG_FORTRAN_SETTER(omp_set_dynamic)
MRG_FORTRAN_SETTER(omp_set_nested)
MRG_FORTRAN_SETTER(omp_set_max_active_levels)
MRG_FORTRAN_SETTER(omp_set_default_device)
MRG_FORTRAN_SETTER(omp_set_num_teams)
MRG_FORTRAN_SETTER(omp_set_teams_thread_limit)
MRG_FORTRAN_SETTER(omp_display_env)

// Queries of one integer argument, in both forms.
#define MRG_FORTRAN_QUERY_OF(name)                                  \
  MRG_EXPORT int32_t name##_(const int32_t *v) { return name(*v); } \
  MRG_EXPORT int32_t name##_8_(const int64_t *v) { return name(clamp(*v)); }
MRG_FORTRAN_QUERY_OF(omp_get_ancestor_thread_num)
MRG_FORTRAN_QUERY_OF(omp_get_team_size)
MRG_FORTRAN_QUERY_OF(omp_get_place_num_procs)

MRG_EXPORT double omp_get_wtime_(void) { return omp_get_wtime(); }
MRG_EXPORT double omp_get_wtick_(void) { return omp_get_wtick(); }

// ---- schedules: the kind is omp_sched_kind (4 bytes) in both forms -----------------------------

// omp_sched_monotonic, masked off what omp_get_schedule_ returns: code written for OpenMP 4.5's
// kinds (1 to 4) compares the kind with them.
constexpr int32_t kMonotonic = INT32_MIN;

MRG_EXPORT void omp_set_schedule_(const int32_t *kind, const int32_t *chunk) {
  omp_set_schedule(*kind, *chunk);
}
MRG_EXPORT void omp_set_schedule_8_(const int32_t *kind, const int64_t *chunk) {
  omp_set_schedule(*kind, clamp(*chunk));
}
MRG_EXPORT void omp_get_schedule_(int32_t *kind, int32_t *chunk) {
  int k, c;
  omp_get_schedule(&k, &c);
  *kind = k & ~kMonotonic;
  *chunk = c;
}
MRG_EXPORT void omp_get_schedule_8_(int32_t *kind, int64_t *chunk) {
  int k, c;
  omp_get_schedule(&k, &c);
  *kind = k & ~kMonotonic;
  *chunk = c;
}

// ---- places: the 8-byte forms widen the C routine's ints ---------------------------------------

MRG_EXPORT void omp_get_place_proc_ids_(const int32_t *place, int32_t *ids) {
  omp_get_place_proc_ids(*place, ids);
}
MRG_EXPORT void omp_get_place_proc_ids_8_(const int64_t *place, int64_t *ids) {
  int p = clamp(*place);
  std::vector<int> c(static_cast<size_t>(std::max(0, omp_get_place_num_procs(p))));
  omp_get_place_proc_ids(p, c.data());
  std::copy(c.begin(), c.end(), ids);
}
MRG_EXPORT void omp_get_partition_place_nums_(int32_t *nums) { omp_get_partition_place_nums(nums); }
MRG_EXPORT void omp_get_partition_place_nums_8_(int64_t *nums) {
  std::vector<int> c(static_cast<size_t>(std::max(0, omp_get_partition_num_places())));
  omp_get_partition_place_nums(c.data());
  std::copy(c.begin(), c.end(), nums);
}

// ---- pausing, events ---------------------------------------------------------------------------

MRG_EXPORT int32_t omp_pause_resource_(const int32_t *kind, const int32_t *device) {
  return omp_pause_resource(*kind, *device);
}
MRG_EXPORT int32_t omp_pause_resource_all_(const int32_t *kind) {
  return omp_pause_resource_all(*kind);
}
// The event handle comes by value (omp_lib declares it so).
MRG_EXPORT void omp_fulfill_event_(intptr_t event) {
  omp_fulfill_event(static_cast<uintptr_t>(event));
}

// ---- locks: omp_lock_kind is the 4-byte word itself --------------------------------------------

MRG_EXPORT void omp_init_lock_(int32_t *lock) { omp_init_lock(lock); }
MRG_EXPORT void omp_destroy_lock_(int32_t *lock) { omp_destroy_lock(lock); }
MRG_EXPORT void omp_set_lock_(int32_t *lock) { omp_set_lock(lock); }
MRG_EXPORT void omp_unset_lock_(int32_t *lock) { omp_unset_lock(lock); }
MRG_EXPORT int32_t omp_test_lock_(int32_t *lock) { return omp_test_lock(lock); }

MRG_EXPORT void omp_init_nest_lock_(int64_t *var) {
  void *lock = malloc(mrg::kNestLockBytes);
  if (!lock) mrg::die("omp_init_nest_lock: out of memory");
  omp_init_nest_lock(lock);
  *var = static_cast<int64_t>(reinterpret_cast<intptr_t>(lock));
}
MRG_EXPORT void omp_destroy_nest_lock_(int64_t *var) {
  omp_destroy_nest_lock(nest_lock(var));
  free(nest_lock(var));
  *var = 0;
}
MRG_EXPORT void omp_set_nest_lock_(int64_t *var) { omp_set_nest_lock(nest_lock(var)); }
MRG_EXPORT void omp_unset_nest_lock_(int64_t *var) { omp_unset_nest_lock(nest_lock(var)); }
MRG_EXPORT int32_t omp_test_nest_lock_(int64_t *var) { return omp_test_nest_lock(nest_lock(var)); }

// ---- allocators: handles and memory spaces are omp_allocator_handle_kind (8 bytes) -------------

MRG_EXPORT intptr_t omp_init_allocator_(const intptr_t *memspace, const int32_t *ntraits,
                                        const mrg::AllocTrait *traits) {
  return static_cast<intptr_t>(
      omp_init_allocator(static_cast<uintptr_t>(*memspace), *ntraits, traits));
}
MRG_EXPORT intptr_t omp_init_allocator_8_(const intptr_t *memspace, const int64_t *ntraits,
                                          const mrg::AllocTrait *traits) {
  return static_cast<intptr_t>(
      omp_init_allocator(static_cast<uintptr_t>(*memspace), clamp(*ntraits), traits));
}
MRG_EXPORT void omp_destroy_allocator_(const intptr_t *allocator) {
  omp_destroy_allocator(static_cast<uintptr_t>(*allocator));
}
MRG_EXPORT void omp_set_default_allocator_(const intptr_t *allocator) {
  omp_set_default_allocator(static_cast<uintptr_t>(*allocator));
}
MRG_EXPORT intptr_t omp_get_default_allocator_(void) {
  return static_cast<intptr_t>(omp_get_default_allocator());
}

// ---- affinity formats: character arguments ------------------------------------------------------

MRG_EXPORT void omp_set_affinity_format_(const char *format, size_t len) {
  omp_set_affinity_format(std::string(format, len).c_str());
}
MRG_EXPORT int32_t omp_get_affinity_format_(char *buffer, size_t size) {
  std::string text(omp_get_affinity_format(nullptr, 0), '\0');
  omp_get_affinity_format(text.data(), text.size() + 1);
  blank_padded(buffer, size, text);
  return static_cast<int32_t>(text.size());
}
MRG_EXPORT void omp_display_affinity_(const char *format, size_t len) {
  std::string f(format, len);  // an empty format is the C routine's null one
  omp_display_affinity(len ? f.c_str() : nullptr);
}
MRG_EXPORT int32_t omp_capture_affinity_(char *buffer, const char *format, size_t size,
                                         size_t format_len) {
  std::string f(format, format_len);
  const char *fmt = format_len ? f.c_str() : nullptr;
  std::string text(omp_capture_affinity(nullptr, 0, fmt), '\0');
  omp_capture_affinity(text.data(), text.size() + 1, fmt);
  blank_padded(buffer, size, text);
  return static_cast<int32_t>(text.size());
}
