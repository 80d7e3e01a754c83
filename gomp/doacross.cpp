// doacross.cpp: doacross loops, ordered(n) with depend(sink) and depend(source).
//
// The outermost loop's logical iterations (0..counts[0]-1) are scheduled as an ordinary loop;
// post and wait name iterations of the whole nest by their logical numbers. The outermost
// loop is cut into ranges that one member runs from first to last, each iteration's inner
// loops in order, so its posts come in the nest's order: a range needs one counter, how far
// into it (in iterations of the nest) its member has posted, and an iteration has posted once
// its range's counter is past it. A range is a member's block (static), a chunk (static with a
// chunk, and dynamic, whose chunks are handed out from 0 in steps of the chunk), or one
// iteration (guided, whose chunks' bounds depend on the order members come in), as libgomp
// keeps them; a counter is as wide as its range's iterations need (1 to 8 bytes).
#include <stdarg.h>

#include <algorithm>
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

constexpr std::uint64_t kProgressMax = std::uint64_t(1) << 28;  // counters: 256 MiB at most

// The range of the outermost loop's iteration i0 (its number; *first: its first iteration),
// in a team of nthreads (the blocks of next_chunk's static schedule).
std::uint64_t range_of(const WorkShare *w, std::uint64_t nthreads, std::uint64_t i0,
                       std::uint64_t *first) {
  if (w->kind == SCHED_STATIC && w->chunk == 0) {
    std::uint64_t q = w->n / nthreads, r = w->n % nthreads;
    std::uint64_t k = i0 < r * (q + 1) ? i0 / (q + 1) : r + (i0 - r * (q + 1)) / q;
    *first = k * q + std::min(k, r);
    return k;
  }
  std::uint64_t g = w->kind == SCHED_GUIDED ? 1 : static_cast<std::uint64_t>(w->chunk);
  *first = i0 / g * g;
  return i0 / g;
}

// The loops of the nest inside the outermost: their iterations per outermost iteration.
std::uint64_t inner_total(const WorkShare *w) {
  std::uint64_t total = 1;
  for (size_t d = 1; d < w->doacross_counts.size(); d++) total *= w->doacross_counts[d];
  return total;
}

// The range counters and their width, for a team of nthreads; `symbol` names the entry point
// in the message of a nest too large.
void init_progress(const char *symbol, WorkShare *w, std::uint64_t nthreads) {
  std::uint64_t total = 1;
  for (std::uint64_t n : w->doacross_counts) {
    if (n && total > UINT64_MAX / n) unsupported(symbol, "2^64 iterations or more");
    total *= n;
  }
  if (total == 0) return;         // no iteration runs: nothing is posted or waited for
  std::uint64_t ranges, longest;  // the number of ranges, and the iterations of the longest
  if (w->kind == SCHED_STATIC && w->chunk == 0) {
    ranges = std::min<std::uint64_t>(nthreads, w->n);
    longest = (w->n + nthreads - 1) / nthreads;
  } else {
    longest = w->kind == SCHED_GUIDED ? 1 : static_cast<std::uint64_t>(w->chunk);
    ranges = (w->n + longest - 1) / longest;
    longest = std::min(longest, w->n);
  }
  // A counter goes up to the range's iterations of the nest (the outermost's times the inner
  // loops', at most total).
  std::uint64_t top = longest * inner_total(w);
  unsigned width = top < 0xffu ? 1 : top < 0xffffu ? 2 : top < 0xffffffffu ? 4 : 8;
  if (ranges > kProgressMax / width) unsupported(symbol, "more than 256 MiB of doacross counters");
  w->doacross_width = width;
  w->doacross_progress.reset(new unsigned char[ranges * width]());
}

template <class T>
std::atomic_ref<T> counter(const WorkShare *w, std::uint64_t range) {
  return std::atomic_ref<T>(reinterpret_cast<T *>(w->doacross_progress.get())[range]);
}

std::uint64_t load_progress(const WorkShare *w, std::uint64_t range) {
  // acquire: pairs with store_progress's release.
  switch (w->doacross_width) {
    case 1:
      return counter<std::uint8_t>(w, range).load(std::memory_order_acquire);
    case 2:
      return counter<std::uint16_t>(w, range).load(std::memory_order_acquire);
    case 4:
      return counter<std::uint32_t>(w, range).load(std::memory_order_acquire);
    default:
      return counter<std::uint64_t>(w, range).load(std::memory_order_acquire);
  }
}

void store_progress(const WorkShare *w, std::uint64_t range, std::uint64_t v) {
  // release: the iteration's work happens before a waiter's (depend(source)). Only the range's
  // member stores, in increasing order: a plain store.
  switch (w->doacross_width) {
    case 1:
      counter<std::uint8_t>(w, range).store(static_cast<std::uint8_t>(v),
                                            std::memory_order_release);
      return;
    case 2:
      counter<std::uint16_t>(w, range).store(static_cast<std::uint16_t>(v),
                                             std::memory_order_release);
      return;
    case 4:
      counter<std::uint32_t>(w, range).store(static_cast<std::uint32_t>(v),
                                             std::memory_order_release);
      return;
    default:
      counter<std::uint64_t>(w, range).store(v, std::memory_order_release);
  }
}

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
    for (unsigned d = 0; d < ncounts; d++)
      w->doacross_counts.push_back(static_cast<std::uint64_t>(counts[d]));
    init_progress(symbol, w, static_cast<std::uint64_t>(self->team->n));
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

// Iteration `iter` of the nest as its range (*range) and the counter value that says it has
// posted (*mark); false if it is outside the iteration space (a sink outside it names no
// iteration: nothing to wait for).
template <class T>
bool locate(const WorkShare *w, const T *iter, std::uint64_t *range, std::uint64_t *mark) {
  std::uint64_t inner = 0;
  for (size_t d = 0; d < w->doacross_counts.size(); d++) {
    if constexpr (std::is_signed_v<T>)
      if (iter[d] < 0) return false;
    auto v = static_cast<std::uint64_t>(iter[d]);
    if (v >= w->doacross_counts[d]) return false;
    if (d > 0) inner = inner * w->doacross_counts[d] + v;
  }
  std::uint64_t first;
  auto i0 = static_cast<std::uint64_t>(iter[0]);
  *range = range_of(w, static_cast<std::uint64_t>(current()->team->n), i0, &first);
  *mark = (i0 - first) * inner_total(w) + inner + 1;
  return true;
}

template <class T>
void doacross_post(const T *iter) {
  WorkShare *w = current()->ws;
  if (!w || !w->doacross_width) return;
  std::uint64_t range, mark;
  if (locate(w, iter, &range, &mark)) store_progress(w, range, mark);
}

template <class T>
void doacross_wait(const T *iter) {
  WorkShare *w = current()->ws;
  if (!w || !w->doacross_width) return;
  std::uint64_t range, mark;
  if (!locate(w, iter, &range, &mark)) return;
  unsigned round = 0;
  while (load_progress(w, range) < mark) backoff(&round);
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
  if (!w || !w->doacross_width) return;
  std::vector<long> iter{first};
  va_list ap;
  va_start(ap, first);
  for (size_t d = 1; d < w->doacross_counts.size(); d++) iter.push_back(va_arg(ap, long));
  va_end(ap);
  doacross_wait(iter.data());
}

MRG_EXPORT void GOMP_doacross_ull_wait(unsigned long long first, ...) {
  WorkShare *w = current()->ws;
  if (!w || !w->doacross_width) return;
  std::vector<unsigned long long> iter{first};
  va_list ap;
  va_start(ap, first);
  for (size_t d = 1; d < w->doacross_counts.size(); d++)
    iter.push_back(va_arg(ap, unsigned long long));
  va_end(ap);
  doacross_wait(iter.data());
}
