// target.cpp: target constructs on the host. There are no offload devices (omp_get_num_devices
// is 0), so a target region runs on the encountering thread with the host's memory, as the
// OpenMP host fallback does: mapping is the identity, except that firstprivate data gets a
// copy of its own. Data regions, updates and enter/exit data have nothing to move.
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "current.hpp"
#include "env.hpp"
#include "export.hpp"
#include "fatal.hpp"
#include "records.hpp"
#include "task.hpp"

namespace mrg {
namespace {

// Map kinds of the ABI: the low byte is the kind, the high byte log2 of the alignment.
constexpr unsigned kMapFirstprivate = 12;

struct TargetRun {
  void (*fn)(void *);
  int thread_limit;  // the construct's thread_limit clause, or 0
  size_t mapnum;
  void **hostaddrs;
  size_t *sizes;
  unsigned short *kinds;
};

void run_target(void *p) {
  auto *r = static_cast<TargetRun *>(p);
  // Firstprivate variables: the region works on copies. FIRSTPRIVATE_INT values (kind 13) are
  // passed in the address slot itself and need nothing.
  std::vector<void *> addrs(r->hostaddrs, r->hostaddrs + r->mapnum);
  std::vector<void *> copies;
  for (size_t i = 0; i < r->mapnum; i++) {
    unsigned kind = r->kinds[i] & 0xff;
    if (kind != kMapFirstprivate || !addrs[i]) continue;
    size_t align = static_cast<size_t>(1) << (r->kinds[i] >> 8);
    align = std::max(align, sizeof(void *));
    size_t bytes = (r->sizes[i] + align - 1) / align * align;
    void *copy = aligned_alloc(align, bytes ? bytes : align);
    if (!copy) die("out of memory for a target region's firstprivate copy");
    memcpy(copy, addrs[i], r->sizes[i]);
    addrs[i] = copy;
    copies.push_back(copy);
  }
  // The region is a new initial task, alone in its team, outside any parallel region (its
  // teams construct, if any, makes the league: GOMP_teams4).
  Task *self = current();
  Team team;
  team.ancestor_tid = {0};
  team.ancestor_size = {1};
  team.teams_thread_limit = r->thread_limit;
  Task initial;
  initial.team = &team;
  initial.implicit = true;
  initial.icv = G.initial;  // the device's own data environment starts from the defaults
  set_current(&initial);
  r->fn(addrs.data());
  set_current(&initial);
  join_children(&initial);
  set_current(self);
  for (void *c : copies) free(c);
}

}  // namespace
}  // namespace mrg

using namespace mrg;

namespace {
// The construct's dependences, as an undeferred task's (nowait may defer; it need not).
void run_with_depend(void (*fn)(void *), void *arg, void **depend) {
  GOMP_task(fn, arg, nullptr, 0, 1, false, depend ? kDepend : 0, depend, 0, nullptr);
}
void nothing(void *) {}
}  // namespace

MRG_EXPORT void GOMP_target_ext(int device, void (*fn)(void *), size_t mapnum, void **hostaddrs,
                                size_t *sizes, unsigned short *kinds, unsigned flags, void **depend,
                                void **args) {
  (void)device, (void)flags;  // every device is the host; nowait runs it now
  // args: a null-terminated list of {id | device | value << 16}, or of an id word with
  // SUBSEQUENT_PARAM (bit 7) followed by the value; only the thread limit matters here.
  constexpr uintptr_t kSubsequent = 1u << 7, kIdMask = 0xffu << 8, kThreadLimit = 2u << 8;
  int thread_limit = 0;
  for (void **a = args; a && *a; a++) {
    auto word = reinterpret_cast<uintptr_t>(*a);
    uintptr_t value;
    if (word & kSubsequent)
      value = reinterpret_cast<uintptr_t>(*++a);
    else
      value = word >> 16;
    if ((word & kIdMask) == kThreadLimit) thread_limit = static_cast<int>(value);
  }
  TargetRun r{fn, thread_limit, mapnum, hostaddrs, sizes, kinds};
  run_with_depend(run_target, &r, depend);
}

MRG_EXPORT void GOMP_target_data_ext(int device, size_t mapnum, void **hostaddrs, size_t *sizes,
                                     unsigned short *kinds) {
  (void)device, (void)mapnum, (void)hostaddrs, (void)sizes, (void)kinds;
}

MRG_EXPORT void GOMP_target_end_data(void) {}

MRG_EXPORT void GOMP_target_update_ext(int device, size_t mapnum, void **hostaddrs, size_t *sizes,
                                       unsigned short *kinds, unsigned flags, void **depend) {
  (void)device, (void)mapnum, (void)hostaddrs, (void)sizes, (void)kinds, (void)flags;
  if (depend) run_with_depend(nothing, nullptr, depend);
}

MRG_EXPORT void GOMP_target_enter_exit_data(int device, size_t mapnum, void **hostaddrs,
                                            size_t *sizes, unsigned short *kinds, unsigned flags,
                                            void **depend) {
  (void)device, (void)mapnum, (void)hostaddrs, (void)sizes, (void)kinds, (void)flags;
  if (depend) run_with_depend(nothing, nullptr, depend);
}

// ---- device memory routines: the host is the only device (number 0) --------------------------

MRG_EXPORT void *omp_target_alloc(size_t size, int device) {
  return device == 0 ? malloc(size) : nullptr;
}
MRG_EXPORT void omp_target_free(void *p, int device) {
  if (device == 0) free(p);
}
MRG_EXPORT int omp_target_is_present(const void *p, int device) {
  (void)p;
  return device == 0;
}
MRG_EXPORT int omp_target_memcpy(void *dst, const void *src, size_t length, size_t dst_offset,
                                 size_t src_offset, int dst_device, int src_device) {
  if (dst_device != 0 || src_device != 0) return 22;  // EINVAL: no such device
  memcpy(static_cast<char *>(dst) + dst_offset, static_cast<const char *>(src) + src_offset,
         length);
  return 0;
}

namespace {

// One dimension of omp_target_memcpy_rect at a time: element_size is the bytes of one element
// of the innermost dimension, each outer step moves by the product of the inner dimensions.
void copy_rect(char *dst, const char *src, size_t element_size, int num_dims, const size_t *volume,
               const size_t *dst_offsets, const size_t *src_offsets, const size_t *dst_dimensions,
               const size_t *src_dimensions) {
  if (num_dims == 1) {
    memcpy(dst + dst_offsets[0] * element_size, src + src_offsets[0] * element_size,
           volume[0] * element_size);
    return;
  }
  size_t dst_stride = element_size, src_stride = element_size;
  for (int d = 1; d < num_dims; d++) {
    dst_stride *= dst_dimensions[d];
    src_stride *= src_dimensions[d];
  }
  for (size_t i = 0; i < volume[0]; i++)
    copy_rect(dst + (dst_offsets[0] + i) * dst_stride, src + (src_offsets[0] + i) * src_stride,
              element_size, num_dims - 1, volume + 1, dst_offsets + 1, src_offsets + 1,
              dst_dimensions + 1, src_dimensions + 1);
}

}  // namespace

MRG_EXPORT int omp_target_memcpy_rect(void *dst, const void *src, size_t element_size, int num_dims,
                                      const size_t *volume, const size_t *dst_offsets,
                                      const size_t *src_offsets, const size_t *dst_dimensions,
                                      const size_t *src_dimensions, int dst_device,
                                      int src_device) {
  if (!dst && !src) return 0x7fffffff;  // the number of dimensions supported: any
  if (dst_device != 0 || src_device != 0 || num_dims < 1 || !dst || !src) return 22;  // EINVAL
  copy_rect(static_cast<char *>(dst), static_cast<const char *>(src), element_size, num_dims,
            volume, dst_offsets, src_offsets, dst_dimensions, src_dimensions);
  return 0;
}

// The host's memory needs no association with itself: there is no device memory to associate.
MRG_EXPORT int omp_target_associate_ptr(const void *host, const void *device_ptr, size_t size,
                                        size_t device_offset, int device) {
  (void)host, (void)device_ptr, (void)size, (void)device_offset, (void)device;
  return 22;  // EINVAL
}
MRG_EXPORT int omp_target_disassociate_ptr(const void *p, int device) {
  (void)p, (void)device;
  return 22;  // EINVAL
}
