// alloc.cpp: the OpenMP memory allocators. Every memory space is ordinary memory; an allocator
// made by omp_init_allocator honours the alignment, pool_size and fallback traits (the others
// describe placement and access that ordinary memory already satisfies).
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>

#include "current.hpp"
#include "export.hpp"
#include "fatal.hpp"
#include "omp.hpp"
#include "records.hpp"

namespace mrg {
namespace {

// Trait keys and values of the ABI (omp_alloctrait_key_t, omp_alloctrait_value_t).
constexpr uintptr_t kAtkSyncHint = 1, kAtkAlignment = 2, kAtkAccess = 3, kAtkPoolSize = 4,
                    kAtkFallback = 5, kAtkFbData = 6, kAtkPinned = 7, kAtkPartition = 8;
constexpr uintptr_t kAtvDefault = ~static_cast<uintptr_t>(0), kAtvDefaultMemFb = 11,
                    kAtvNullFb = 12, kAtvAbortFb = 13, kAtvAllocatorFb = 14;
constexpr uintptr_t kPredefinedLast = 8;  // omp_default_mem_alloc (1) .. omp_thread_mem_alloc

struct Allocator {
  size_t alignment = 1;
  size_t pool_size = ~static_cast<size_t>(0);
  uintptr_t fallback = kAtvDefaultMemFb;
  uintptr_t fb_data = 0;
  std::atomic<size_t> used{0};
};

// In front of every block: where the allocation really starts, its size and its allocator.
struct Header {
  void *base;
  size_t size;
  uintptr_t allocator;
};

Allocator *custom(uintptr_t handle) {
  return handle > kPredefinedLast ? reinterpret_cast<Allocator *>(handle) : nullptr;
}

void *allocate(size_t align, size_t size, uintptr_t handle) {
  if (handle == 0) handle = current()->icv.def_allocator;
  for (;;) {
    Allocator *a = custom(handle);
    size_t alignment =
        std::max<size_t>({align, a ? a->alignment : size_t{1}, alignof(Header), size_t{16}});
    if (alignment & (alignment - 1)) return nullptr;
    bool fits = true;
    if (a) {
      // relaxed: a budget, with no data published through it.
      size_t used = a->used.load(std::memory_order_relaxed);
      do {
        if (size > a->pool_size || used > a->pool_size - size) {
          fits = false;
          break;
        }
      } while (!a->used.compare_exchange_weak(used, used + size, std::memory_order_relaxed));
    }
    if (fits) {
      // A total that wraps around (a size near SIZE_MAX) would get a small block: such a
      // request fails as malloc's would.
      size_t total;
      char *base = __builtin_add_overflow(sizeof(Header) + alignment, size, &total)
                       ? nullptr
                       : static_cast<char *>(malloc(total));
      if (base) {
        auto p =
            (reinterpret_cast<uintptr_t>(base) + sizeof(Header) + alignment - 1) & ~(alignment - 1);
        auto *h = reinterpret_cast<Header *>(p) - 1;
        h->base = base;
        h->size = size;
        h->allocator = handle;
        return reinterpret_cast<void *>(p);
      }
      // relaxed: as above.
      if (a) a->used.fetch_sub(size, std::memory_order_relaxed);
    }
    if (!a) return nullptr;
    switch (a->fallback) {
      case kAtvDefaultMemFb:
        handle = 1;
        break;
      case kAtvNullFb:
        return nullptr;
      case kAtvAllocatorFb:
        handle = a->fb_data;
        break;
      default:
        die("omp_alloc: out of memory (abort_fb) for %zu bytes", size);
    }
  }
}

void release(void *p) {
  if (!p) return;
  auto *h = static_cast<Header *>(p) - 1;
  // relaxed: as in allocate.
  if (Allocator *a = custom(h->allocator)) a->used.fetch_sub(h->size, std::memory_order_relaxed);
  free(h->base);
}

}  // namespace
}  // namespace mrg

using namespace mrg;

MRG_EXPORT uintptr_t omp_init_allocator(uintptr_t memspace, int ntraits, const AllocTrait *traits) {
  if (memspace > 4) return 0;  // not a memory space of the ABI
  auto *a = new Allocator;
  for (int i = 0; i < ntraits; i++) {
    // The key as the 4-byte enum it is (AllocTrait): the padding after it is not read.
    uintptr_t key = static_cast<unsigned>(traits[i].key), value = traits[i].value;
    switch (key) {
      case kAtkAlignment:
        if (value == kAtvDefault) break;
        if (value == 0 || (value & (value - 1))) goto bad;
        a->alignment = value;
        break;
      case kAtkPoolSize:
        if (value != kAtvDefault) a->pool_size = value;
        break;
      case kAtkFallback:
        if (value == kAtvDefault) break;
        if (value < kAtvDefaultMemFb || value > kAtvAllocatorFb) goto bad;
        a->fallback = value;
        break;
      case kAtkFbData:
        a->fb_data = value;
        break;
      case kAtkSyncHint:
      case kAtkAccess:
      case kAtkPinned:
      case kAtkPartition:
        break;  // ordinary memory satisfies every placement and access trait
      default:
        goto bad;
    }
  }
  if (a->fallback == kAtvAllocatorFb && a->fb_data == 0) goto bad;
  return reinterpret_cast<uintptr_t>(a);
bad:
  delete a;
  return 0;  // omp_null_allocator: the traits cannot be honoured
}

MRG_EXPORT void omp_destroy_allocator(uintptr_t handle) { delete custom(handle); }
MRG_EXPORT void omp_set_default_allocator(uintptr_t handle) {
  current()->icv.def_allocator = handle ? handle : 1;
}
MRG_EXPORT uintptr_t omp_get_default_allocator(void) { return current()->icv.def_allocator; }

MRG_EXPORT void *omp_alloc(size_t size, uintptr_t allocator) {
  return size ? allocate(1, size, allocator) : nullptr;
}
MRG_EXPORT void *omp_aligned_alloc(size_t align, size_t size, uintptr_t allocator) {
  return size ? allocate(align, size, allocator) : nullptr;
}
MRG_EXPORT void *omp_calloc(size_t n, size_t size, uintptr_t allocator) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes) || bytes == 0) return nullptr;
  void *p = allocate(1, bytes, allocator);
  if (p) memset(p, 0, bytes);
  return p;
}
MRG_EXPORT void *omp_aligned_calloc(size_t align, size_t n, size_t size, uintptr_t allocator) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes) || bytes == 0) return nullptr;
  void *p = allocate(align, bytes, allocator);
  if (p) memset(p, 0, bytes);
  return p;
}
MRG_EXPORT void omp_free(void *p, uintptr_t allocator) {
  (void)allocator;  // the block's header knows its allocator
  release(p);
}
MRG_EXPORT void *omp_realloc(void *p, size_t size, uintptr_t allocator, uintptr_t free_allocator) {
  (void)free_allocator;
  if (!p) return size ? allocate(1, size, allocator) : nullptr;
  if (size == 0) {
    release(p);
    return nullptr;
  }
  auto *h = static_cast<Header *>(p) - 1;
  uintptr_t target = allocator ? allocator : h->allocator;
  // The old block's share of the same pool is free for the new one.
  Allocator *shared = custom(target) == custom(h->allocator) ? custom(target) : nullptr;
  // relaxed: as in allocate.
  if (shared) shared->used.fetch_sub(h->size, std::memory_order_relaxed);
  void *q = allocate(1, size, target);
  if (!q) {
    // relaxed: as in allocate.
    if (shared) shared->used.fetch_add(h->size, std::memory_order_relaxed);
    return nullptr;  // p stays valid, as for realloc
  }
  memcpy(q, p, std::min(size, h->size));
  if (shared) h->allocator = 1;  // its share is already returned
  release(p);
  return q;
}

// The allocate directive and clause (gcc's own entry points).
MRG_EXPORT void *GOMP_alloc(size_t align, size_t size, uintptr_t allocator) {
  void *p = allocate(align, size ? size : 1, allocator);
  if (!p) die("GOMP_alloc: out of memory for %zu bytes", size);
  return p;
}
MRG_EXPORT void GOMP_free(void *p, uintptr_t allocator) {
  (void)allocator;
  release(p);
}
