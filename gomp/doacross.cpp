// doacross.cpp: doacross loops, ordered(n) with depend(sink) and depend(source).
//
// The outermost loop's logical iterations (0..counts[0]-1) are scheduled as an ordinary loop;
// post and wait name iterations of the whole nest by their logical numbers, one flag per
// iteration of the nest, set by depend(source); depend(sink) waits for it.
#include <stdarg.h>

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "backoff.hpp"
#include "current.hpp"
#include "export.hpp"
#include "fatal.hpp"
#include "loop.hpp"
#include "records.hpp"
#include "reduction.hpp"
#include "workshare.hpp"

namespace mrg {
namespace {

constexpr std::uint64_t kDoacrossMax = std::uint64_t(1) << 28;  // flags: 256 MiB at most

// Begin the loop; with reductions (GOMP_loop_doacross_start's task reductions, as a work-sharing
// loop's) the member registers its descriptor, and mem is the work-share memory for the
// compiler's lastprivate(conditional:) and scan.
template <class T>
bool doacross_start(const char *symbol, int kind, unsigned ncounts, const T *counts, long chunk,
                    T *istart, T *iend, std::uintptr_t *reductions = nullptr,
                    void **mem = nullptr) {
  Task *self = current();
  std::int64_t c = chunk;
  kind = resolve_kind(kind, &c);
  WorkShare *ws = ws_begin(self, [&](WorkShare *w) {
    ws_init_loop(w, kind, 0, static_cast<std::int64_t>(counts[0]), 1, c);
    std::uint64_t total = 1;
    for (unsigned d = 0; d < ncounts; d++) {
      std::uint64_t n = static_cast<std::uint64_t>(counts[d]);
      w->doacross_counts.push_back(n);
      if (n && total > kDoacrossMax / n) unsupported(symbol, "more than 2^28 iterations");
      total *= n;
    }
    w->doacross_done.reset(new std::atomic<unsigned char>[total ? total : 1]());
    if (mem) w->mem = ws_mem(reinterpret_cast<std::uintptr_t>(*mem));
  });
  if (mem) *mem = ws->mem;
  if (reductions) ws_reductions(self, ws, reductions);
  std::uint64_t lo, hi;
  if (!take_chunk(self, &lo, &hi)) return false;
  *istart = static_cast<T>(lo);
  *iend = static_cast<T>(hi);
  return true;
}

// The flag of iteration `iter` of the nest, or nullptr if it is outside the iteration space
// (a sink outside it names no iteration: nothing to wait for).
template <class T>
std::atomic<unsigned char> *doacross_flag(const WorkShare *w, const T *iter) {
  std::uint64_t index = 0;
  for (size_t d = 0; d < w->doacross_counts.size(); d++) {
    if constexpr (std::is_signed_v<T>)
      if (iter[d] < 0) return nullptr;
    auto v = static_cast<std::uint64_t>(iter[d]);
    if (v >= w->doacross_counts[d]) return nullptr;
    index = index * w->doacross_counts[d] + v;
  }
  return &w->doacross_done[index];
}

template <class T>
void doacross_post(const T *iter) {
  WorkShare *w = current()->ws;
  if (!w || !w->doacross_done) return;
  // release: the iteration's work happens before a waiter's (depend(source)).
  if (auto *f = doacross_flag(w, iter)) f->store(1, std::memory_order_release);
}

template <class T>
void doacross_wait(const T *iter) {
  WorkShare *w = current()->ws;
  if (!w || !w->doacross_done) return;
  auto *f = doacross_flag(w, iter);
  if (!f) return;
  unsigned round = 0;
  // acquire: pairs with the post's release.
  while (f->load(std::memory_order_acquire) == 0) backoff(&round);
}

}  // namespace
}  // namespace mrg

using namespace mrg;

#define MRG_DOACROSS_START(name, kind)                                                         \
  MRG_EXPORT bool name(unsigned ncounts, long *counts, long chunk, long *istart, long *iend) { \
    return doacross_start<long>(#name, kind, ncounts, counts, chunk, istart, iend);            \
  }
MRG_DOACROSS_START(GOMP_loop_doacross_static_start, SCHED_STATIC)
MRG_DOACROSS_START(GOMP_loop_doacross_dynamic_start, SCHED_DYNAMIC)
MRG_DOACROSS_START(GOMP_loop_doacross_guided_start, SCHED_GUIDED)
MRG_EXPORT bool GOMP_loop_doacross_runtime_start(unsigned ncounts, long *counts, long *istart,
                                                 long *iend) {
  return doacross_start<long>("GOMP_loop_doacross_runtime_start", SCHED_RUNTIME, ncounts, counts, 0,
                              istart, iend);
}
MRG_EXPORT bool GOMP_loop_doacross_start(unsigned ncounts, long *counts, long sched, long chunk,
                                         long *istart, long *iend, uintptr_t *reductions,
                                         void **mem) {
  return doacross_start<long>("GOMP_loop_doacross_start", static_cast<int>(sched), ncounts, counts,
                              chunk, istart, iend, reductions, mem);
}

#define MRG_ULL_DOACROSS_START(name, kind)                                                     \
  MRG_EXPORT bool name(unsigned ncounts, unsigned long long *counts, unsigned long long chunk, \
                       unsigned long long *istart, unsigned long long *iend) {                 \
    return doacross_start<unsigned long long>(#name, kind, ncounts, counts,                    \
                                              static_cast<long>(chunk), istart, iend);         \
  }
MRG_ULL_DOACROSS_START(GOMP_loop_ull_doacross_static_start, SCHED_STATIC)
MRG_ULL_DOACROSS_START(GOMP_loop_ull_doacross_dynamic_start, SCHED_DYNAMIC)
MRG_ULL_DOACROSS_START(GOMP_loop_ull_doacross_guided_start, SCHED_GUIDED)
MRG_EXPORT bool GOMP_loop_ull_doacross_runtime_start(unsigned ncounts, unsigned long long *counts,
                                                     unsigned long long *istart,
                                                     unsigned long long *iend) {
  return doacross_start<unsigned long long>("GOMP_loop_ull_doacross_runtime_start", SCHED_RUNTIME,
                                            ncounts, counts, 0, istart, iend);
}
MRG_EXPORT bool GOMP_loop_ull_doacross_start(unsigned ncounts, unsigned long long *counts,
                                             long sched, unsigned long long chunk,
                                             unsigned long long *istart, unsigned long long *iend,
                                             uintptr_t *reductions, void **mem) {
  return doacross_start<unsigned long long>("GOMP_loop_ull_doacross_start", static_cast<int>(sched),
                                            ncounts, counts, static_cast<long>(chunk), istart, iend,
                                            reductions, mem);
}

MRG_EXPORT void GOMP_doacross_post(long *counts) { doacross_post(counts); }
MRG_EXPORT void GOMP_doacross_ull_post(unsigned long long *counts) { doacross_post(counts); }

// The sink iteration comes as variadic arguments, one per loop of the nest.
MRG_EXPORT void GOMP_doacross_wait(long first, ...) {
  WorkShare *w = current()->ws;
  if (!w || !w->doacross_done) return;
  std::vector<long> iter{first};
  va_list ap;
  va_start(ap, first);
  for (size_t d = 1; d < w->doacross_counts.size(); d++) iter.push_back(va_arg(ap, long));
  va_end(ap);
  doacross_wait(iter.data());
}

MRG_EXPORT void GOMP_doacross_ull_wait(unsigned long long first, ...) {
  WorkShare *w = current()->ws;
  if (!w || !w->doacross_done) return;
  std::vector<unsigned long long> iter{first};
  va_list ap;
  va_start(ap, first);
  for (size_t d = 1; d < w->doacross_counts.size(); d++)
    iter.push_back(va_arg(ap, unsigned long long));
  va_end(ap);
  doacross_wait(iter.data());
}
