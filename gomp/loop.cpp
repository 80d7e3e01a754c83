// loop.cpp: work-sharing loops: handing out chunks of every schedule, the GOMP_loop_* entry
// points (ordered loops' too), the end of a loop, and the combined parallel loops.
//
// A loop is handed out in iteration numbers 0..n-1 (n computed once by the member that creates
// the work-share, iter.hpp) and turned back into the program's bounds for each chunk.
#include <algorithm>

#include "barrier.hpp"
#include "current.hpp"
#include "env.hpp"
#include "export.hpp"
#include "fatal.hpp"
#include "loop.hpp"
#include "ordered.hpp"
#include "parallel.hpp"
#include "records.hpp"
#include "reduction.hpp"
#include "runtime.hpp"
#include "task.hpp"
#include "workshare.hpp"

namespace mrg {

namespace {

constexpr unsigned kMonotonic = 0x80000000u;
// Ours, or'ed into the kind by the nonmonotonic dynamic entry points (the ABI's kinds use the
// low bits and kMonotonic).
constexpr int kNonmonotonic = 0x40000000;

// Dynamic loops whose iteration count and chunk are below these hand chunks out by fetch-add.
constexpr std::uint64_t kFetchAddMaxN = std::uint64_t{1} << 62,
                        kFetchAddMaxChunk = std::uint64_t{1} << 31;

// The next chunk number of a member of a nonmonotonic dynamic loop: the front of its own run,
// else the back half of the longest other run (the rest of it becomes the member's run).
// Every chunk number is in exactly one run until it is handed out, and a run's word says all
// of its state, so a compare-and-swap that succeeds on a word seen earlier is right even if
// the word changed and came back in between.
bool steal_chunk(WorkShare *w, int me, int nthreads, std::uint64_t *chunk) {
  WorkShare::Run *runs = w->runs.get();
  constexpr std::uint64_t kLow = 0xffffffffu;
  // relaxed: chunk numbers only; the loop's end orders the data. The first may pass the end
  // by one per call once the run is empty: below 2^32 for fewer than 2^30 chunks.
  std::uint64_t own = runs[me].span.fetch_add(std::uint64_t{1} << 32, std::memory_order_relaxed);
  if ((own >> 32) < (own & kLow)) {
    *chunk = own >> 32;
    return true;
  }
  for (;;) {
    int victim = -1;
    std::uint64_t seen = 0, most = 0;
    for (int k = 1; k < nthreads; k++) {
      int j = (me + k) % nthreads;
      // relaxed: as above.
      std::uint64_t v = runs[j].span.load(std::memory_order_relaxed);
      std::uint64_t first = v >> 32, end = v & kLow;
      if (first < end && end - first > most) victim = j, seen = v, most = end - first;
    }
    if (victim < 0) {
      // relaxed: as above; the exchange makes one member the taker (read first, so that the
      // members that find it taken do not write its line).
      if (w->last_taken.load(std::memory_order_relaxed) ||
          w->last_taken.exchange(true, std::memory_order_relaxed))
        return false;
      runs[me].took_last = true;
      *chunk = (w->n - 1) / w->chunk;
      return true;
    }
    std::uint64_t first = seen >> 32, end = seen & kLow, take = (most + 1) / 2;
    // relaxed: as above. Only the owner adds to a run's first, and only thieves lower its end.
    if (runs[victim].span.compare_exchange_weak(seen, first << 32 | (end - take),
                                                std::memory_order_relaxed)) {
      *chunk = end - take;
      // Our own run is empty, so no other member writes it (thieves skip empty runs).
      // relaxed: as above.
      if (take > 1) runs[me].span.store((end - take + 1) << 32 | end, std::memory_order_relaxed);
      return true;
    }
  }
}

// The next chunk [*lo, *hi) of the member's current work-share; false when none is left.
bool next_chunk(Task *self, std::uint64_t *lo, std::uint64_t *hi) {
  WorkShare *w = self->ws;
  if (!w) die("a loop's next chunk was asked for outside a work-share");
  // A cancelled loop or sections hands out nothing more. relaxed: the flag only stops the
  // hand-out; the loop's end orders the data.
  if (w->cancelled.load(std::memory_order_relaxed)) return false;
  std::uint64_t n = w->n;
  int nthreads = self->team->n;
  switch (w->kind) {
    case SCHED_STATIC: {
      std::uint64_t tid = static_cast<std::uint64_t>(self->thread_num);
      if (w->chunk == 0) {
        if (self->static_trip++ != 0) return false;
        std::uint64_t q = n / nthreads, r = n % nthreads;
        *lo = tid * q + std::min(tid, r);
        *hi = *lo + q + (tid < r ? 1 : 0);
        return *lo < *hi;
      }
      unsigned __int128 first =
          (static_cast<unsigned __int128>(self->static_trip) * nthreads + tid) * w->chunk;
      if (first >= n) return false;
      self->static_trip++;
      *lo = static_cast<std::uint64_t>(first);
      *hi = std::min<std::uint64_t>(n, *lo + w->chunk);
      return true;
    }
    case SCHED_DYNAMIC: {
      if (w->steal) {
        std::uint64_t c;
        if (w->runs[self->thread_num].took_last) return false;
        if (!steal_chunk(w, self->thread_num, nthreads, &c)) return false;
        *lo = c * w->chunk;
        *hi = n - *lo < w->chunk ? n : *lo + w->chunk;
        return true;
      }
      // One fetch-add per chunk, which never fails under contention as a compare-and-swap
      // may; it moves `next` past n by at most a chunk per call once the loop is exhausted, so
      // only where that cannot wrap (a member asks once more, not billions of times).
      if (n <= kFetchAddMaxN && w->chunk <= kFetchAddMaxChunk) {
        // relaxed: iteration numbers only; the loop's data is ordered by the barrier after it.
        std::uint64_t cur = w->next.fetch_add(w->chunk, std::memory_order_relaxed);
        if (cur >= n) return false;
        *lo = cur;
        *hi = n - cur < w->chunk ? n : cur + w->chunk;
        return true;
      }
      // relaxed: as above.
      std::uint64_t cur = w->next.load(std::memory_order_relaxed);
      for (;;) {
        if (cur >= n) return false;
        std::uint64_t end = n - cur < w->chunk ? n : cur + w->chunk;
        // relaxed: as above.
        if (w->next.compare_exchange_weak(cur, end, std::memory_order_relaxed)) {
          *lo = cur;
          *hi = end;
          return true;
        }
      }
    }
    default: {  // guided: a share of what is left, never below the chunk
      // relaxed: as for dynamic.
      std::uint64_t cur = w->next.load(std::memory_order_relaxed);
      for (;;) {
        if (cur >= n) return false;
        std::uint64_t left = n - cur;
        std::uint64_t q = (left + 2 * nthreads - 1) / (2 * nthreads);
        q = std::max(q, w->chunk);
        std::uint64_t end = left <= q ? n : cur + q;
        // relaxed: as above.
        if (w->next.compare_exchange_weak(cur, end, std::memory_order_relaxed)) {
          *lo = cur;
          *hi = end;
          return true;
        }
      }
    }
  }
}

}  // namespace

bool take_chunk(Task *self, std::uint64_t *lo, std::uint64_t *hi) {
  WorkShare *w = self->ws;
  if (w && w->ordered && self->ord_held) ordered_handover(self);
  if (!next_chunk(self, lo, hi)) return false;
  if (w->ordered) {
    self->ord_lo = *lo;
    self->ord_hi = *hi;
    self->ord_held = true;
  }
  return true;
}

namespace {

bool next_long(long *istart, long *iend) {
  Task *self = current();
  std::uint64_t lo, hi;
  if (!take_chunk(self, &lo, &hi)) return false;
  WorkShare *w = self->ws;
  *istart = static_cast<long>(w->start + static_cast<std::int64_t>(lo) * w->incr);
  *iend = hi == w->n ? static_cast<long>(w->end)
                     : static_cast<long>(w->start + static_cast<std::int64_t>(hi) * w->incr);
  return true;
}

bool next_ull(unsigned long long *istart, unsigned long long *iend) {
  Task *self = current();
  std::uint64_t lo, hi;
  if (!take_chunk(self, &lo, &hi)) return false;
  WorkShare *w = self->ws;
  auto start = static_cast<std::uint64_t>(w->start), incr = static_cast<std::uint64_t>(w->incr);
  *istart = start + lo * incr;
  *iend = hi == w->n ? static_cast<std::uint64_t>(w->end) : start + hi * incr;
  return true;
}

// Begin a loop work-share of schedule `kind` (chunk c): init(w, kind, c) fills in the bounds,
// of either type; next() then takes the caller's first chunk. Without bounds to hand out
// (istart null) a call only begins the work-share and hands out its memory: the compiler
// schedules the loop itself (scan, lastprivate conditional) and ends it with GOMP_loop_end.
template <class Init, class Next>
bool start_loop(int kind, std::int64_t c, bool ordered, void **mem, uintptr_t *reductions,
                Init init, Next next) {
  Task *self = current();
  bool nonmonotonic = (kind & kNonmonotonic) != 0;
  kind = resolve_kind(kind & ~kNonmonotonic, &c);
  WorkShare *ws = ws_begin(self, [&](WorkShare *w) {
    init(w, kind, c);
    w->ordered = ordered;
    if (nonmonotonic) ws_init_runs(w, self->team->n);
    if (mem) w->mem = ws_mem(reinterpret_cast<std::uintptr_t>(*mem));
  });
  if (mem) *mem = ws->mem;
  if (reductions) ws_reductions(self, ws, reductions);
  return next();
}

bool start_long(int kind, long start, long end, long incr, long chunk, long *istart, long *iend,
                bool ordered = false, void **mem = nullptr, uintptr_t *reductions = nullptr) {
  auto init = [&](WorkShare *w, int k, std::int64_t c) { ws_init_loop(w, k, start, end, incr, c); };
  return start_loop(kind, chunk, ordered, mem, reductions, init,
                    [&] { return !istart || next_long(istart, iend); });
}

bool start_ull(int kind, bool up, unsigned long long start, unsigned long long end,
               unsigned long long incr, unsigned long long chunk, unsigned long long *istart,
               unsigned long long *iend, bool ordered = false, void **mem = nullptr,
               uintptr_t *reductions = nullptr) {
  auto init = [&](WorkShare *w, int k, std::int64_t c) {
    ws_init_ull(w, k, up, start, end, incr, static_cast<std::uint64_t>(c));
  };
  return start_loop(kind, static_cast<std::int64_t>(chunk), ordered, mem, reductions, init,
                    [&] { return !istart || next_ull(istart, iend); });
}

}  // namespace

int resolve_kind(int kind, std::int64_t *chunk) {
  kind &= ~static_cast<int>(kMonotonic);
  // Kind 4 reaches here only from the entry points that take a kind (GOMP_loop_start,
  // GOMP_loop_ull_start, their ordered and doacross forms), where gcc passes it for
  // schedule(nonmonotonic: runtime), as libgomp reads it (schedule(auto) comes as static).
  if (kind == SCHED_RUNTIME || kind == SCHED_AUTO) {
    const Icv &icv = current()->icv;
    kind = icv.sched;
    *chunk = icv.chunk;
  }
  if (kind == SCHED_AUTO) kind = SCHED_STATIC, *chunk = 0;
  if (kind != SCHED_STATIC && *chunk < 1) *chunk = 1;
  if (*chunk < 0) *chunk = 0;
  return kind;
}

}  // namespace mrg

using namespace mrg;

// ---- the long loops ---------------------------------------------------------------------------

#define MRG_LOOP_START(name, kind)                                                              \
  MRG_EXPORT bool name(long start, long end, long incr, long chunk, long *istart, long *iend) { \
    return start_long(kind, start, end, incr, chunk, istart, iend);                             \
  }
MRG_LOOP_START(GOMP_loop_static_start, SCHED_STATIC)
MRG_LOOP_START(GOMP_loop_dynamic_start, SCHED_DYNAMIC)
MRG_LOOP_START(GOMP_loop_guided_start, SCHED_GUIDED)
MRG_LOOP_START(GOMP_loop_nonmonotonic_dynamic_start, SCHED_DYNAMIC | kNonmonotonic)
MRG_LOOP_START(GOMP_loop_nonmonotonic_guided_start, SCHED_GUIDED)

#define MRG_LOOP_RUNTIME_START(name)                                                \
  MRG_EXPORT bool name(long start, long end, long incr, long *istart, long *iend) { \
    return start_long(SCHED_RUNTIME, start, end, incr, 0, istart, iend);            \
  }
MRG_LOOP_RUNTIME_START(GOMP_loop_runtime_start)
MRG_LOOP_RUNTIME_START(GOMP_loop_nonmonotonic_runtime_start)
MRG_LOOP_RUNTIME_START(GOMP_loop_maybe_nonmonotonic_runtime_start)

#define MRG_LOOP_NEXT(name) \
  MRG_EXPORT bool name(long *istart, long *iend) { return next_long(istart, iend); }
MRG_LOOP_NEXT(GOMP_loop_static_next)
MRG_LOOP_NEXT(GOMP_loop_dynamic_next)
MRG_LOOP_NEXT(GOMP_loop_guided_next)
MRG_LOOP_NEXT(GOMP_loop_runtime_next)
MRG_LOOP_NEXT(GOMP_loop_nonmonotonic_dynamic_next)
MRG_LOOP_NEXT(GOMP_loop_nonmonotonic_guided_next)
MRG_LOOP_NEXT(GOMP_loop_nonmonotonic_runtime_next)
MRG_LOOP_NEXT(GOMP_loop_maybe_nonmonotonic_runtime_next)

MRG_EXPORT bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk,
                                long *istart, long *iend, uintptr_t *reductions, void **mem) {
  return start_long(static_cast<int>(sched), start, end, incr, chunk, istart, iend, false, mem,
                    reductions);
}

// ---- the unsigned long long loops -----------------------------------------------------------

#define MRG_ULL_START(name, kind)                                                 \
  MRG_EXPORT bool name(bool up, unsigned long long start, unsigned long long end, \
                       unsigned long long incr, unsigned long long chunk,         \
                       unsigned long long *istart, unsigned long long *iend) {    \
    return start_ull(kind, up, start, end, incr, chunk, istart, iend);            \
  }
MRG_ULL_START(GOMP_loop_ull_static_start, SCHED_STATIC)
MRG_ULL_START(GOMP_loop_ull_dynamic_start, SCHED_DYNAMIC)
MRG_ULL_START(GOMP_loop_ull_guided_start, SCHED_GUIDED)
MRG_ULL_START(GOMP_loop_ull_nonmonotonic_dynamic_start, SCHED_DYNAMIC | kNonmonotonic)
MRG_ULL_START(GOMP_loop_ull_nonmonotonic_guided_start, SCHED_GUIDED)

#define MRG_ULL_RUNTIME_START(name)                                               \
  MRG_EXPORT bool name(bool up, unsigned long long start, unsigned long long end, \
                       unsigned long long incr, unsigned long long *istart,       \
                       unsigned long long *iend) {                                \
    return start_ull(SCHED_RUNTIME, up, start, end, incr, 0, istart, iend);       \
  }
MRG_ULL_RUNTIME_START(GOMP_loop_ull_runtime_start)
MRG_ULL_RUNTIME_START(GOMP_loop_ull_nonmonotonic_runtime_start)
MRG_ULL_RUNTIME_START(GOMP_loop_ull_maybe_nonmonotonic_runtime_start)

#define MRG_ULL_NEXT(name)                                                     \
  MRG_EXPORT bool name(unsigned long long *istart, unsigned long long *iend) { \
    return next_ull(istart, iend);                                             \
  }
MRG_ULL_NEXT(GOMP_loop_ull_static_next)
MRG_ULL_NEXT(GOMP_loop_ull_dynamic_next)
MRG_ULL_NEXT(GOMP_loop_ull_guided_next)
MRG_ULL_NEXT(GOMP_loop_ull_runtime_next)
MRG_ULL_NEXT(GOMP_loop_ull_nonmonotonic_dynamic_next)
MRG_ULL_NEXT(GOMP_loop_ull_nonmonotonic_guided_next)
MRG_ULL_NEXT(GOMP_loop_ull_nonmonotonic_runtime_next)
MRG_ULL_NEXT(GOMP_loop_ull_maybe_nonmonotonic_runtime_next)

MRG_EXPORT bool GOMP_loop_ull_start(bool up, unsigned long long start, unsigned long long end,
                                    unsigned long long incr, long sched, unsigned long long chunk,
                                    unsigned long long *istart, unsigned long long *iend,
                                    uintptr_t *reductions, void **mem) {
  return start_ull(static_cast<int>(sched), up, start, end, incr, chunk, istart, iend, false, mem,
                   reductions);
}

// ---- ordered loops ----------------------------------------------------------------------------

#define MRG_ORDERED_START(name, kind)                                                           \
  MRG_EXPORT bool name(long start, long end, long incr, long chunk, long *istart, long *iend) { \
    return start_long(kind, start, end, incr, chunk, istart, iend, true);                       \
  }
MRG_ORDERED_START(GOMP_loop_ordered_static_start, SCHED_STATIC)
MRG_ORDERED_START(GOMP_loop_ordered_dynamic_start, SCHED_DYNAMIC)
MRG_ORDERED_START(GOMP_loop_ordered_guided_start, SCHED_GUIDED)
MRG_EXPORT bool GOMP_loop_ordered_runtime_start(long start, long end, long incr, long *istart,
                                                long *iend) {
  return start_long(SCHED_RUNTIME, start, end, incr, 0, istart, iend, true);
}
MRG_EXPORT bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk,
                                        long *istart, long *iend, uintptr_t *reductions,
                                        void **mem) {
  return start_long(static_cast<int>(sched), start, end, incr, chunk, istart, iend, true, mem,
                    reductions);
}
MRG_LOOP_NEXT(GOMP_loop_ordered_static_next)
MRG_LOOP_NEXT(GOMP_loop_ordered_dynamic_next)
MRG_LOOP_NEXT(GOMP_loop_ordered_guided_next)
MRG_LOOP_NEXT(GOMP_loop_ordered_runtime_next)

#define MRG_ULL_ORDERED_START(name, kind)                                         \
  MRG_EXPORT bool name(bool up, unsigned long long start, unsigned long long end, \
                       unsigned long long incr, unsigned long long chunk,         \
                       unsigned long long *istart, unsigned long long *iend) {    \
    return start_ull(kind, up, start, end, incr, chunk, istart, iend, true);      \
  }
MRG_ULL_ORDERED_START(GOMP_loop_ull_ordered_static_start, SCHED_STATIC)
MRG_ULL_ORDERED_START(GOMP_loop_ull_ordered_dynamic_start, SCHED_DYNAMIC)
MRG_ULL_ORDERED_START(GOMP_loop_ull_ordered_guided_start, SCHED_GUIDED)
MRG_EXPORT bool GOMP_loop_ull_ordered_runtime_start(bool up, unsigned long long start,
                                                    unsigned long long end, unsigned long long incr,
                                                    unsigned long long *istart,
                                                    unsigned long long *iend) {
  return start_ull(SCHED_RUNTIME, up, start, end, incr, 0, istart, iend, true);
}
MRG_EXPORT bool GOMP_loop_ull_ordered_start(bool up, unsigned long long start,
                                            unsigned long long end, unsigned long long incr,
                                            long sched, unsigned long long chunk,
                                            unsigned long long *istart, unsigned long long *iend,
                                            uintptr_t *reductions, void **mem) {
  return start_ull(static_cast<int>(sched), up, start, end, incr, chunk, istart, iend, true, mem,
                   reductions);
}
MRG_ULL_NEXT(GOMP_loop_ull_ordered_static_next)
MRG_ULL_NEXT(GOMP_loop_ull_ordered_dynamic_next)
MRG_ULL_NEXT(GOMP_loop_ull_ordered_guided_next)
MRG_ULL_NEXT(GOMP_loop_ull_ordered_runtime_next)

// ---- the end of a loop ----------------------------------------------------------------------

MRG_EXPORT void GOMP_loop_end(void) {
  Task *self = current();
  ws_end(self);
  join_children(self);
  team_barrier(self->team);
}

MRG_EXPORT void GOMP_loop_end_nowait(void) { ws_end(current()); }

// ---- combined parallel loops ------------------------------------------------------------------

namespace mrg {

Preset::Preset(int kind, long start, long end, long incr, long chunk) {
  ensure_runtime();
  std::int64_t c = chunk;
  nonmonotonic = (kind & kNonmonotonic) != 0;  // its runs are made once the team's size is known
  kind = resolve_kind(kind & ~kNonmonotonic, &c);
  ws_init_loop(this, kind, start, end, incr, c);
}

}  // namespace mrg

namespace {

void parallel_loop(void (*fn)(void *), void *data, unsigned nthreads, int kind, long start,
                   long end, long incr, long chunk, unsigned flags) {
  Preset spec(kind, start, end, incr, chunk);
  parallel(fn, data, nthreads, &spec, flags & kProcBindMask);
}

}  // namespace

#define MRG_PARALLEL_LOOP(name, kind)                                                           \
  MRG_EXPORT void name(void (*fn)(void *), void *data, unsigned nthreads, long start, long end, \
                       long incr, long chunk, unsigned flags) {                                 \
    parallel_loop(fn, data, nthreads, kind, start, end, incr, chunk, flags);                    \
  }
MRG_PARALLEL_LOOP(GOMP_parallel_loop_static, SCHED_STATIC)
MRG_PARALLEL_LOOP(GOMP_parallel_loop_dynamic, SCHED_DYNAMIC)
MRG_PARALLEL_LOOP(GOMP_parallel_loop_guided, SCHED_GUIDED)
MRG_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic, SCHED_DYNAMIC | kNonmonotonic)
MRG_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided, SCHED_GUIDED)

#define MRG_PARALLEL_LOOP_RUNTIME(name)                                                         \
  MRG_EXPORT void name(void (*fn)(void *), void *data, unsigned nthreads, long start, long end, \
                       long incr, unsigned flags) {                                             \
    parallel_loop(fn, data, nthreads, SCHED_RUNTIME, start, end, incr, 0, flags);               \
  }
MRG_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
MRG_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
MRG_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

// The GOMP_1.0 forms: the caller runs fn(data) itself, then calls GOMP_parallel_end.
#define MRG_PARALLEL_LOOP_START(name, kind)                                                     \
  MRG_EXPORT void name(void (*fn)(void *), void *data, unsigned nthreads, long start, long end, \
                       long incr, long chunk) {                                                 \
    Preset spec(kind, start, end, incr, chunk);                                                 \
    parallel_begin(fn, data, nthreads, &spec);                                                  \
  }
MRG_PARALLEL_LOOP_START(GOMP_parallel_loop_static_start, SCHED_STATIC)
MRG_PARALLEL_LOOP_START(GOMP_parallel_loop_dynamic_start, SCHED_DYNAMIC)
MRG_PARALLEL_LOOP_START(GOMP_parallel_loop_guided_start, SCHED_GUIDED)
MRG_EXPORT void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data, unsigned nthreads,
                                                 long start, long end, long incr) {
  Preset spec(SCHED_RUNTIME, start, end, incr, 0);
  parallel_begin(fn, data, nthreads, &spec);
}
