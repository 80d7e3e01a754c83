// loop.cpp: work-sharing loops and sections.
//
// A loop is handed out in iteration numbers 0..n-1 (n computed once by the member that creates
// the work-share) and turned back into the program's bounds for each chunk. Members meet
// work-shares in the same order, so the k-th work-share a member begins is the team's k-th: the
// team keeps the live ones by that number, and the last member to end one resets it and gives
// it back to the team for a later one.
#include <stdarg.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <type_traits>

#include "gomp.hpp"

namespace mrg {

namespace {

// Begin the member's next work-share: the team's, made and initialised by init(w) under
// ws_lock if this member is the first to reach it.
template <class Init>
WorkShare *ws_begin(Task *self, Init init) {
  Team *t = self->team;
  unsigned seq = ++self->ws_seq;
  self->static_trip = 0;
  std::lock_guard<std::mutex> lk(t->ws_lock);
  WorkShare *&w = t->ws[seq];
  if (!w) {
    w = ws_take(t);
    w->seq = seq;
    // relaxed: published by ws_lock.
    w->left.store(t->n, std::memory_order_relaxed);
    init(w);
  }
  self->ws = w;
  return w;
}

constexpr unsigned kMonotonic = 0x80000000u;
// Ours, or'ed into the kind by the nonmonotonic dynamic entry points (the ABI's kinds use the
// low bits and kMonotonic).
constexpr int kNonmonotonic = 0x40000000;

std::uint64_t trip_count(std::int64_t start, std::int64_t end, std::int64_t incr) {
  __int128 s = start, e = end, i = incr;
  if (i > 0) return s < e ? static_cast<std::uint64_t>((e - s + i - 1) / i) : 0;
  if (i < 0) return s > e ? static_cast<std::uint64_t>((s - e - i - 1) / -i) : 0;
  return 0;
}

std::uint64_t trip_count_ull(bool up, std::uint64_t start, std::uint64_t end, std::uint64_t incr) {
  unsigned __int128 s = start, e = end;
  if (up) return s < e ? static_cast<std::uint64_t>((e - s + incr - 1) / incr) : 0;
  unsigned __int128 step = static_cast<std::uint64_t>(-incr);  // incr is negative as bits
  return s > e ? static_cast<std::uint64_t>((s - e + step - 1) / step) : 0;
}

// Dynamic loops whose iteration count and chunk are below these hand chunks out by fetch-add.
constexpr std::uint64_t kFetchAddMaxN = std::uint64_t{1} << 62, kFetchAddMaxChunk = std::uint64_t{1} << 31;

// Nonmonotonic dynamic loops with fewer chunks than this split them into runs per member.
constexpr std::uint64_t kStealMaxChunks = std::uint64_t{1} << 30;

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

// Ordered loops: once every earlier chunk has been handed over, hand over the member's chunk.
void ordered_handover(Task *self) {
  WorkShare *w = self->ws;
  unsigned round = 0;
  // acquire: the ordered regions of earlier chunks happen before ours.
  while (w->ordered_next.load(std::memory_order_acquire) != self->ord_lo) backoff(&round);
  // release: ours happen before the next chunk's.
  w->ordered_next.store(self->ord_hi, std::memory_order_release);
  self->ord_held = false;
}

// The member's next chunk, with the ordered-loop bookkeeping.
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

// The team-shared memory of a work-share: *mem holds the bytes wanted, and gets the block.
void *ws_mem(std::uintptr_t bytes) {
  size_t size = (bytes + 63) / 64 * 64;
  void *p = aligned_alloc(64, size ? size : 64);
  if (!p) die("out of memory for a work-share's memory");
  memset(p, 0, size ? size : 64);
  return p;
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
  auto init = [&](WorkShare *w, int k, std::int64_t c) {
    ws_init_loop(w, k, start, end, incr, c, 0);
  };
  return start_loop(kind, chunk, ordered, mem, reductions, init,
                    [&] { return !istart || next_long(istart, iend); });
}

bool start_ull(int kind, bool up, unsigned long long start, unsigned long long end,
               unsigned long long incr, unsigned long long chunk, unsigned long long *istart,
               unsigned long long *iend, bool ordered = false, void **mem = nullptr,
               uintptr_t *reductions = nullptr) {
  auto init = [&](WorkShare *w, int k, std::int64_t c) {
    ws_init_ull(w, k, up, start, end, incr, static_cast<std::uint64_t>(c), 0);
  };
  return start_loop(kind, static_cast<std::int64_t>(chunk), ordered, mem, reductions, init,
                    [&] { return !istart || next_ull(istart, iend); });
}

}  // namespace

int resolve_kind(int kind, std::int64_t *chunk) {
  kind &= ~static_cast<int>(kMonotonic);
  if (kind == SCHED_RUNTIME) {
    const Icv &icv = current()->icv;
    kind = icv.sched;
    *chunk = icv.chunk;
  }
  if (kind == SCHED_AUTO) kind = SCHED_STATIC, *chunk = 0;
  if (kind != SCHED_STATIC && *chunk < 1) *chunk = 1;
  if (*chunk < 0) *chunk = 0;
  return kind;
}

// Called by the member that creates the work-share, under ws_lock, whose release publishes the
// fields to the other members.
void ws_init_loop(WorkShare *w, int kind, std::int64_t start, std::int64_t end, std::int64_t incr,
                  std::int64_t chunk, int nthreads) {
  (void)nthreads;
  w->kind = kind;
  w->start = start;
  w->end = end;
  w->incr = incr;
  w->n = trip_count(start, end, incr);
  w->chunk = static_cast<std::uint64_t>(chunk);
}

void ws_init_ull(WorkShare *w, int kind, bool up, std::uint64_t start, std::uint64_t end,
                 std::uint64_t incr, std::uint64_t chunk, int nthreads) {
  (void)nthreads;
  w->kind = kind;
  w->ull = true;
  w->up = up;
  w->start = static_cast<std::int64_t>(start);
  w->end = static_cast<std::int64_t>(end);
  w->incr = static_cast<std::int64_t>(incr);
  w->n = trip_count_ull(up, start, end, incr);
  w->chunk = chunk;
}

void ws_init_runs(WorkShare *w, int nthreads) {
  if (w->kind != SCHED_DYNAMIC || nthreads < 2) return;
  std::uint64_t chunks = w->n / w->chunk + (w->n % w->chunk != 0);
  if (chunks >= kStealMaxChunks) return;
  auto members = static_cast<std::uint64_t>(nthreads);
  if (w->runs_size != members) {
    w->runs.reset(new WorkShare::Run[members]);
    w->runs_size = members;
  }
  // The runs share every chunk but the last (WorkShare::Run).
  std::uint64_t shared = chunks ? chunks - 1 : 0;
  for (std::uint64_t i = 0; i < members; i++) {
    std::uint64_t first = shared * i / members, end = shared * (i + 1) / members;
    // relaxed: published with the work-share (ws_lock, or the team's start).
    w->runs[i].span.store(first << 32 | end, std::memory_order_relaxed);
    w->runs[i].took_last = false;
  }
  // relaxed: as above.
  w->last_taken.store(chunks == 0, std::memory_order_relaxed);
  w->steal = true;
}

WorkShare *ws_take(Team *t) {
  if (t->ws_free.empty()) return new WorkShare;
  WorkShare *w = t->ws_free.back();
  t->ws_free.pop_back();
  return w;
}

void ws_copy_loop(WorkShare *w, const WorkShare &spec) {
  w->kind = spec.kind;
  w->ull = spec.ull;
  w->up = spec.up;
  w->n = spec.n;
  w->chunk = spec.chunk;
  w->start = spec.start;
  w->incr = spec.incr;
  w->end = spec.end;
  w->nonmonotonic = spec.nonmonotonic;
}

void ws_release(Team *t, WorkShare *w) {
  // acq_rel: the last member sees every other member done with it before reusing it.
  if (w->left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // Back to a new work-share's state, keeping the runs' memory (the team's size is fixed).
    unsigned seq = w->seq;
    std::unique_ptr<WorkShare::Run[]> runs = std::move(w->runs);
    std::size_t runs_size = w->runs_size;
    w->~WorkShare();
    new (w) WorkShare;
    w->runs = std::move(runs);
    w->runs_size = runs_size;
    std::lock_guard<std::mutex> lk(t->ws_lock);
    t->ws.erase(seq);
    t->ws_free.push_back(w);
  }
}

void ws_end(Task *self) {
  WorkShare *w = self->ws;
  if (!w) return;
  if (self->ord_held) ordered_handover(self);
  self->ws = nullptr;
  ws_release(self->team, w);
}

}  // namespace mrg

using namespace mrg;

// ---- the long loops ---------------------------------------------------------------------------

#define MRG_LOOP_START(name, kind)                                                              \
  MRG_EXPORT bool name(long start, long end, long incr, long chunk, long *istart, long *iend) { \
    return start_long(kind, start, end, incr, chunk, istart, iend);                              \
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

#define MRG_ULL_START(name, kind)                                                        \
  MRG_EXPORT bool name(bool up, unsigned long long start, unsigned long long end,        \
                       unsigned long long incr, unsigned long long chunk,                \
                       unsigned long long *istart, unsigned long long *iend) {           \
    return start_ull(kind, up, start, end, incr, chunk, istart, iend);                   \
  }
MRG_ULL_START(GOMP_loop_ull_static_start, SCHED_STATIC)
MRG_ULL_START(GOMP_loop_ull_dynamic_start, SCHED_DYNAMIC)
MRG_ULL_START(GOMP_loop_ull_guided_start, SCHED_GUIDED)
MRG_ULL_START(GOMP_loop_ull_nonmonotonic_dynamic_start, SCHED_DYNAMIC | kNonmonotonic)
MRG_ULL_START(GOMP_loop_ull_nonmonotonic_guided_start, SCHED_GUIDED)

#define MRG_ULL_RUNTIME_START(name)                                                       \
  MRG_EXPORT bool name(bool up, unsigned long long start, unsigned long long end,         \
                       unsigned long long incr, unsigned long long *istart,               \
                       unsigned long long *iend) {                                        \
    return start_ull(SCHED_RUNTIME, up, start, end, incr, 0, istart, iend);               \
  }
MRG_ULL_RUNTIME_START(GOMP_loop_ull_runtime_start)
MRG_ULL_RUNTIME_START(GOMP_loop_ull_nonmonotonic_runtime_start)
MRG_ULL_RUNTIME_START(GOMP_loop_ull_maybe_nonmonotonic_runtime_start)

#define MRG_ULL_NEXT(name)                                                               \
  MRG_EXPORT bool name(unsigned long long *istart, unsigned long long *iend) {           \
    return next_ull(istart, iend);                                                       \
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
    return start_long(kind, start, end, incr, chunk, istart, iend, true);                        \
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

#define MRG_ULL_ORDERED_START(name, kind)                                                \
  MRG_EXPORT bool name(bool up, unsigned long long start, unsigned long long end,        \
                       unsigned long long incr, unsigned long long chunk,                \
                       unsigned long long *istart, unsigned long long *iend) {           \
    return start_ull(kind, up, start, end, incr, chunk, istart, iend, true);             \
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

// The ordered region of the member's current iteration runs once every earlier chunk has been
// handed over; iterations within a chunk are in order on the member itself.
MRG_EXPORT void GOMP_ordered_start(void) {
  Task *self = current();
  WorkShare *w = self->ws;
  if (!w || !w->ordered || !self->ord_held) return;  // not in an ordered loop: nothing to order
  unsigned round = 0;
  // acquire: as ordered_handover.
  while (w->ordered_next.load(std::memory_order_acquire) != self->ord_lo) backoff(&round);
}

MRG_EXPORT void GOMP_ordered_end(void) {}

// ---- doacross loops: ordered(n) with depend(sink) and depend(source) -------------------------
//
// The outermost loop's logical iterations (0..counts[0]-1) are scheduled as an ordinary loop;
// post and wait name iterations of the whole nest by their logical numbers.

namespace {

constexpr std::uint64_t kDoacrossMax = std::uint64_t(1) << 28;  // flags: 256 MiB at most

template <class T>
bool doacross_start(const char *symbol, int kind, unsigned ncounts, const T *counts, long chunk,
                    T *istart, T *iend) {
  Task *self = current();
  std::int64_t c = chunk;
  kind = resolve_kind(kind, &c);
  ws_begin(self, [&](WorkShare *w) {
    ws_init_loop(w, kind, 0, static_cast<std::int64_t>(counts[0]), 1, c, 0);
    std::uint64_t total = 1;
    for (unsigned d = 0; d < ncounts; d++) {
      std::uint64_t n = static_cast<std::uint64_t>(counts[d]);
      w->doacross_counts.push_back(n);
      if (n && total > kDoacrossMax / n) unsupported(symbol, "more than 2^28 iterations");
      total *= n;
    }
    w->doacross_done.reset(new std::atomic<unsigned char>[total ? total : 1]());
  });
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

#define MRG_DOACROSS_START(name, kind)                                                        \
  MRG_EXPORT bool name(unsigned ncounts, long *counts, long chunk, long *istart, long *iend) { \
    return doacross_start<long>(#name, kind, ncounts, counts, chunk, istart, iend);            \
  }
MRG_DOACROSS_START(GOMP_loop_doacross_static_start, SCHED_STATIC)
MRG_DOACROSS_START(GOMP_loop_doacross_dynamic_start, SCHED_DYNAMIC)
MRG_DOACROSS_START(GOMP_loop_doacross_guided_start, SCHED_GUIDED)
MRG_EXPORT bool GOMP_loop_doacross_runtime_start(unsigned ncounts, long *counts, long *istart,
                                                 long *iend) {
  return doacross_start<long>("GOMP_loop_doacross_runtime_start", SCHED_RUNTIME, ncounts, counts,
                              0, istart, iend);
}
MRG_EXPORT bool GOMP_loop_doacross_start(unsigned ncounts, long *counts, long sched, long chunk,
                                         long *istart, long *iend, uintptr_t *reductions,
                                         void **mem) {
  if (reductions) unsupported("GOMP_loop_doacross_start", "task reductions");
  if (mem) unsupported("GOMP_loop_doacross_start", "work-share memory");
  return doacross_start<long>("GOMP_loop_doacross_start", static_cast<int>(sched), ncounts,
                              counts, chunk, istart, iend);
}

#define MRG_ULL_DOACROSS_START(name, kind)                                                 \
  MRG_EXPORT bool name(unsigned ncounts, unsigned long long *counts,                       \
                       unsigned long long chunk, unsigned long long *istart,               \
                       unsigned long long *iend) {                                         \
    return doacross_start<unsigned long long>(#name, kind, ncounts, counts,                \
                                              static_cast<long>(chunk), istart, iend);     \
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
  if (reductions) unsupported("GOMP_loop_ull_doacross_start", "task reductions");
  if (mem) unsupported("GOMP_loop_ull_doacross_start", "work-share memory");
  return doacross_start<unsigned long long>("GOMP_loop_ull_doacross_start",
                                            static_cast<int>(sched), ncounts, counts,
                                            static_cast<long>(chunk), istart, iend);
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

// ---- the end of a loop ----------------------------------------------------------------------

MRG_EXPORT void GOMP_loop_end(void) {
  Task *self = current();
  ws_end(self);
  join_children(self);
  team_barrier(self->team);
}

MRG_EXPORT void GOMP_loop_end_nowait(void) { ws_end(current()); }

// ---- combined parallel loops ------------------------------------------------------------------

namespace {

// The first work-share of a combined parallel loop's team, as parallel_begin copies it.
struct Preset : WorkShare {
  Preset(int kind, long start, long end, long incr, long chunk) {
    ensure_runtime();
    std::int64_t c = chunk;
    nonmonotonic = (kind & kNonmonotonic) != 0;  // its runs are made once the team's size is known
    kind = resolve_kind(kind & ~kNonmonotonic, &c);
    ws_init_loop(this, kind, start, end, incr, c, 0);
  }
};

void parallel_loop(void (*fn)(void *), void *data, unsigned nthreads, int kind, long start,
                   long end, long incr, long chunk) {
  Preset spec(kind, start, end, incr, chunk);
  parallel(fn, data, nthreads, &spec);
}

}  // namespace

#define MRG_PARALLEL_LOOP(name, kind)                                                       \
  MRG_EXPORT void name(void (*fn)(void *), void *data, unsigned nthreads, long start,       \
                       long end, long incr, long chunk, unsigned flags) {                   \
    (void)flags;                                                                            \
    parallel_loop(fn, data, nthreads, kind, start, end, incr, chunk);                       \
  }
MRG_PARALLEL_LOOP(GOMP_parallel_loop_static, SCHED_STATIC)
MRG_PARALLEL_LOOP(GOMP_parallel_loop_dynamic, SCHED_DYNAMIC)
MRG_PARALLEL_LOOP(GOMP_parallel_loop_guided, SCHED_GUIDED)
MRG_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic, SCHED_DYNAMIC | kNonmonotonic)
MRG_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided, SCHED_GUIDED)

#define MRG_PARALLEL_LOOP_RUNTIME(name)                                                     \
  MRG_EXPORT void name(void (*fn)(void *), void *data, unsigned nthreads, long start,       \
                       long end, long incr, unsigned flags) {                               \
    (void)flags;                                                                            \
    parallel_loop(fn, data, nthreads, SCHED_RUNTIME, start, end, incr, 0);                  \
  }
MRG_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
MRG_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
MRG_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

// The GOMP_1.0 forms: the caller runs fn(data) itself, then calls GOMP_parallel_end.
#define MRG_PARALLEL_LOOP_START(name, kind)                                                 \
  MRG_EXPORT void name(void (*fn)(void *), void *data, unsigned nthreads, long start,       \
                       long end, long incr, long chunk) {                                   \
    Preset spec(kind, start, end, incr, chunk);                                             \
    parallel_begin(fn, data, nthreads, &spec);                                              \
  }
MRG_PARALLEL_LOOP_START(GOMP_parallel_loop_static_start, SCHED_STATIC)
MRG_PARALLEL_LOOP_START(GOMP_parallel_loop_dynamic_start, SCHED_DYNAMIC)
MRG_PARALLEL_LOOP_START(GOMP_parallel_loop_guided_start, SCHED_GUIDED)
MRG_EXPORT void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data, unsigned nthreads,
                                                 long start, long end, long incr) {
  Preset spec(SCHED_RUNTIME, start, end, incr, 0);
  parallel_begin(fn, data, nthreads, &spec);
}

// ---- sections: a dynamic loop over 1..count, one section at a time ---------------------------

namespace {

unsigned next_section() {
  Task *self = current();
  std::uint64_t lo, hi;
  if (!take_chunk(self, &lo, &hi)) return 0;
  return static_cast<unsigned>(lo + 1);
}

}  // namespace

MRG_EXPORT unsigned GOMP_sections_start(unsigned count) {
  ws_begin(current(), [&](WorkShare *w) { ws_init_loop(w, SCHED_DYNAMIC, 0, count, 1, 1, 0); });
  return next_section();
}

MRG_EXPORT unsigned GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem) {
  Task *self = current();
  WorkShare *ws = ws_begin(self, [&](WorkShare *w) {
    ws_init_loop(w, SCHED_DYNAMIC, 0, count, 1, 1, 0);
    if (mem) w->mem = ws_mem(reinterpret_cast<std::uintptr_t>(*mem));
  });
  if (mem) *mem = ws->mem;
  if (reductions) ws_reductions(self, ws, reductions);
  return next_section();
}

// The scope construct with task reductions: a work-share with no work whose reductions every
// member shares; it ends at GOMP_workshare_task_reduction_unregister.
MRG_EXPORT void GOMP_scope_start(uintptr_t *reductions) {
  if (!reductions) return;
  Task *self = current();
  WorkShare *ws = ws_begin(self, [&](WorkShare *w) { ws_init_loop(w, SCHED_STATIC, 0, 0, 1, 0, 0); });
  ws_reductions(self, ws, reductions);
  // The scope's work-share ends when its reductions are unregistered (scopes may nest, so
  // the member's current work-share is not necessarily this one then).
  self->ws_reds.back().second = ws;
  self->ws = nullptr;
}

MRG_EXPORT unsigned GOMP_sections_next(void) { return next_section(); }

MRG_EXPORT void GOMP_sections_end(void) { GOMP_loop_end(); }
MRG_EXPORT void GOMP_sections_end_nowait(void) { GOMP_loop_end_nowait(); }

MRG_EXPORT void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned nthreads,
                                             unsigned count) {
  Preset spec(SCHED_DYNAMIC, 0, count, 1, 1);
  parallel_begin(fn, data, nthreads, &spec);
}

MRG_EXPORT void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned nthreads,
                                       unsigned count, unsigned flags) {
  (void)flags;
  Preset spec(SCHED_DYNAMIC, 0, count, 1, 1);
  parallel(fn, data, nthreads, &spec);
}
