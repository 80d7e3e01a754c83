// workshare.cpp: making, resetting and ending a team's work-shares.
#include <stdlib.h>
#include <string.h>

#include <new>

#include "env.hpp"
#include "fatal.hpp"
#include "iter.hpp"
#include "ordered.hpp"
#include "records.hpp"
#include "workshare.hpp"

namespace mrg {

namespace {

// Nonmonotonic dynamic loops with fewer chunks than this split them into runs per member.
constexpr std::uint64_t kStealMaxChunks = std::uint64_t{1} << 30;

}  // namespace

void ws_init_loop(WorkShare *w, int kind, std::int64_t start, std::int64_t end, std::int64_t incr,
                  std::int64_t chunk) {
  w->kind = kind;
  w->start = start;
  w->end = end;
  w->incr = incr;
  w->n = trip_count(start, end, incr);
  w->chunk = static_cast<std::uint64_t>(chunk);
}

void ws_init_ull(WorkShare *w, int kind, bool up, std::uint64_t start, std::uint64_t end,
                 std::uint64_t incr, std::uint64_t chunk) {
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

void *ws_mem(std::uintptr_t bytes) {
  size_t size = (bytes + 63) / 64 * 64;
  void *p = aligned_alloc(64, size ? size : 64);
  if (!p) die("out of memory for a work-share's memory");
  memset(p, 0, size ? size : 64);
  return p;
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
