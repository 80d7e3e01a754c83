// workshare.hpp: a team's work-shares (loops, sections, scope), from their start to their end.
//
// Members meet work-shares in the same order, so the k-th work-share a member begins is the
// team's k-th: the team keeps the live ones by that number, and the last member to end one
// resets it and gives it back to the team for a later one (doc/gomp.md, "Work-sharing").
#ifndef MR_GOMP_WORKSHARE_HPP
#define MR_GOMP_WORKSHARE_HPP

#include <cstdint>
#include <mutex>

#include "records.hpp"

namespace mrg {

// A work-share of team t for its next construct: a reused one, or a new one. Under ws_lock, or
// before the team's members start.
WorkShare *ws_take(Team *t);

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

// Make w the loop of `kind` (resolved: static, dynamic or guided) over these bounds. Called by
// the member that creates the work-share, under ws_lock, whose release publishes the fields to
// the other members (or before the team starts).
void ws_init_loop(WorkShare *w, int kind, std::int64_t start, std::int64_t end, std::int64_t incr,
                  std::int64_t chunk);
void ws_init_ull(WorkShare *w, int kind, bool up, std::uint64_t start, std::uint64_t end,
                 std::uint64_t incr, std::uint64_t chunk);
// A dynamic loop of nthreads members that allows nonmonotonic order: hand it out as runs per
// member (WorkShare::runs), unless it has one member or too many chunks.
void ws_init_runs(WorkShare *w, int nthreads);
// Make w, taken for a combined parallel loop, the loop `spec` describes.
void ws_copy_loop(WorkShare *w, const WorkShare &spec);
// The team-shared memory of a work-share (lastprivate conditional, scan): `bytes` zeroed bytes
// (rounded up to whole cache lines), freed with the work-share.
void *ws_mem(std::uintptr_t bytes);

// One member is done with work-share w of team t (the last keeps it for reuse).
void ws_release(Team *t, WorkShare *w);
// The member's end of its current work-share (handing its ordered chunk over first).
void ws_end(Task *self);

}  // namespace mrg

#endif
