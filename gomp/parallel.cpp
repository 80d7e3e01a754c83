// parallel.cpp: parallel regions: a team's start (its size, where its members run, the kept
// team or a new one, what each member starts with) and member 0's end of it.
#include <algorithm>
#include <atomic>
#include <memory>

#include "current.hpp"
#include "env.hpp"
#include "export.hpp"
#include "fatal.hpp"
#include "mrengine.h"
#include "parallel.hpp"
#include "places.hpp"
#include "pool.hpp"
#include "records.hpp"
#include "reduction.hpp"
#include "resident.hpp"
#include "runtime.hpp"
#include "team.hpp"
#include "workshare.hpp"

namespace mrg {

namespace {

// Held by the top-level team that uses the slots, so that two teams never queue members behind
// each other on the same slot thread.
std::atomic<bool> slots_busy{false};

// The size of the team that task enc asks for with `nthreads` (0: its ICV), within the ICVs and
// thread-limit-var; *reserved gets the members counted against thread-limit-var (given back by
// parallel_end).
int team_size(Task *enc, unsigned nthreads, int *reserved) {
  Team *outer = enc->team;
  int n = nthreads ? static_cast<int>(std::min(nthreads, 1u << 20)) : enc->icv.nthreads;
  if (outer->active_level >= enc->icv.max_active_levels) n = 1;
  if (enc->icv.dyn) n = std::min(n, G.engines);
  n = std::max(1, std::min(n, G.thread_limit));
  // thread-limit-var bounds the threads of the contention group at once: take the extra members
  // from what the group's other active teams leave (another initial thread's group counts its
  // own). Inside a teams construct its thread_limit bounds the team's contention group as well.
  int limit = outer->teams_thread_limit > 0 ? std::min(G.thread_limit, outer->teams_thread_limit)
                                            : G.thread_limit;
  int extra = n - 1;
  if (extra > 0 && limit < (1 << 20)) {
    std::atomic<int> &in_use = outer->group->group_threads;
    // relaxed: a count of its own, with no data published through it.
    int used = in_use.load(std::memory_order_relaxed);
    do {
      extra = std::max(0, std::min(n - 1, limit - used));
    } while (!in_use.compare_exchange_weak(used, used + extra, std::memory_order_relaxed));
    n = extra + 1;
  } else {
    extra = 0;
  }
  *reserved = extra;
  return n;
}

// Where members 1..n-1 run: on the other engines (their residents), for the outermost active
// team started on an engine; else (and beyond the engines) on threads of our own. True if the
// new team takes the slots for that.
bool take_slots(const Team *outer, int n, int here) {
  bool slots = false;
  if (n > 1 && here >= 0 && outer->active_level == 0) {
    bool expected = false;
    // acquire: pairs with the release of the previous top-level team's creator.
    slots = slots_busy.compare_exchange_strong(expected, true, std::memory_order_acquire);
  }
  return slots;
}

// A new team of n members at `level`, started on engine `here` (or -1), with the engines its
// members run on when it has the slots.
Team *new_team(int n, int level, int here, bool slots, int engines) {
  Team *t = new Team;
  t->n = n;
  t->level = level;
  t->members.resize(n);  // each made by begin_member
  t->engine_member.assign(engines, -1);
  if (here >= 0) t->engine_member[here] = 0;
  if (slots)
    for (int i = 1; i < n && i < engines; i++) t->engine_member[(here + i) % engines] = i;
  t->here = here;
  return t;
}

// What the region inherits from the encountering task enc: its nesting, its league, and the
// ICVs its members start with (OMP_NUM_THREADS' entry for the new level).
void inherit_region(Team *t, Task *enc, void (*fn)(void *), void *data, int n) {
  Team *outer = enc->team;
  t->active_level = outer->active_level + (n > 1);
  t->fn = fn;
  t->data = data;
  t->ancestor_tid = outer->ancestor_tid;
  t->ancestor_tid.back() = enc->thread_num;
  t->ancestor_tid.push_back(0);
  t->ancestor_size = outer->ancestor_size;
  t->ancestor_size.push_back(n);
  t->team_num = outer->team_num;
  t->num_teams = outer->num_teams;
  t->teams_thread_limit = outer->teams_thread_limit;
  t->group = outer->group;
  Icv icv = enc->icv;
  if (static_cast<size_t>(t->level) < G.nthreads_list.size())
    icv.nthreads = G.nthreads_list[t->level];
  if (static_cast<size_t>(t->level) < G.bind_list.size()) icv.bind = G.bind_list[t->level];
  t->icv = icv;
}

// Where the members go (places.hpp): the proc_bind clause's policy (`clause`, 0 when none),
// else the encountering task's bind-var; a team of one keeps its thread where it is.
void place_members(Team *t, Task *enc, int n, unsigned clause) {
  t->placement.clear();
  if (places().empty()) return;
  const Team *outer = enc->team;
  Placement parent = outer->placement.empty()
                         ? Placement{}
                         : outer->placement[static_cast<size_t>(enc->thread_num)];
  int bind = clause ? static_cast<int>(clause) : enc->icv.bind;
  // The members' bind-var: OMP_PROC_BIND's entry for their level, else the region's policy.
  if (static_cast<size_t>(t->level) >= G.bind_list.size()) t->icv.bind = bind;
  if (bind == BIND_FALSE) {
    // Not bound: the members keep the parent's partition, at no place.
    t->placement.assign(static_cast<size_t>(n), Placement{-1, parent.first, parent.len});
    return;
  }
  assign_places(bind, parent, n, &t->placement);
}

// The region's first work-share: a copy of `preset` (a combined parallel loop's), or none.
void set_first_ws(Team *t, int n, const WorkShare *preset) {
  t->first_ws = nullptr;
  if (preset) {
    WorkShare *w = ws_take(t);
    ws_copy_loop(w, *preset);
    w->seq = 1;
    if (w->nonmonotonic) ws_init_runs(w, n);
    // relaxed: the team is published to its members by their job's post.
    w->left.store(n, std::memory_order_relaxed);
    t->ws[1] = w;
    t->first_ws = w;
  }
}

// Post members 1..n-1 to where they run (take_slots): the residents of the other engines, and
// threads of our own.
void post_members(Team *t, int n, bool slots, int here, int engines) {
  for (int i = 1; i < n; i++) {
    // An engine left out for good (--lazy-engines) runs nothing: its member goes to its slot
    // thread, as a member beyond the engine count does.
    if (slots && i < engines && resident_post((here + i) % engines, t, i)) continue;
    pool_post(t, i, slots);
  }
}

// Member 0's end of the region: its tasks, the barrier, and back to the encountering task.
void parallel_end(Team *t) {
  Task *self = &t->members[0];
  set_current(self);
  end_implicit(self);
  set_current(t->encountering);
  // relaxed: as in team_size.
  if (t->reserved) t->group->group_threads.fetch_sub(t->reserved, std::memory_order_relaxed);
  if (!t->top_slots) {
    release_team(t);
    return;
  }
  // A top-level team without task reductions is kept for the next region (kept_team), while
  // this creator still holds the slots; while kept, its creator's reference stays, so that the
  // others' releases never free it. Not a cancelled one: its barrier was released out of turn.
  // relaxed: every member has left the region (end_implicit ordered their writes).
  if (!t->start_together && !t->cancelled.load(std::memory_order_relaxed))
    keep_team(t);
  else
    release_team(t);
  // release: the next holder of the slots sees this one's slot jobs queued first, and
  // kept_team as left here.
  slots_busy.store(false, std::memory_order_release);
}

}  // namespace

Team *parallel_begin(void (*fn)(void *), void *data, unsigned nthreads, const WorkShare *preset,
                     std::uintptr_t *reductions, unsigned proc_bind) {
  ensure_runtime();
  Task *enc = current();
  Team *outer = enc->team;
  int extra;
  int n = team_size(enc, nthreads, &extra);
  int engines = G.engines;
  // Member 0 is the calling context, bound to its engine as every member is (a context the
  // program spawned is not bound), so that it keeps its OS thread through the region's waits
  // and its thread-locals stay its own. mrengine has no unbinding: the binding lasts for the
  // rest of the context's task. Negative on a thread that is not an engine.
  int here = MR_context_bind_here();
  bool slots = take_slots(outer, n, here);
  // The holder of the slots reuses the last such team when it has the same shape (kept_team).
  Team *t = slots && !reductions ? reuse_kept(n, here, outer->level + 1) : nullptr;
  bool reused = t != nullptr;
  if (!t) t = new_team(n, outer->level + 1, here, slots, engines);
  inherit_region(t, enc, fn, data, n);
  place_members(t, enc, n, proc_bind);
  if (reductions) {
    // reduction(task, ...) on the region: every member's tasks reduce into per-member copies.
    t->start_together = true;
    red_allocate(reductions, n);
    auto scope = std::make_shared<RedScope>(RedScope{reductions, red_visible(enc)});
    t->red_scope = scope;
  }
  set_first_ws(t, n, preset);
  begin_member(t, 0);
  // A reused team may still be held by members of its last region that have not let go of it
  // yet (reuse_kept): the count goes on from theirs and the creator's kept reference, which
  // keeps it above zero. relaxed: the members see the team through their job's post.
  if (reused)
    t->refs.fetch_add(n - 1, std::memory_order_relaxed);
  else
    t->refs.store(n, std::memory_order_relaxed);  // relaxed: published with the team
  t->top_slots = slots;
  post_members(t, n, slots, here, engines);
  t->encountering = enc;
  t->reserved = extra;
  set_current(&t->members[0]);
  return t;
}

void parallel(void (*fn)(void *), void *data, unsigned nthreads, const WorkShare *preset,
              unsigned proc_bind) {
  Team *t = parallel_begin(fn, data, nthreads, preset, nullptr, proc_bind);
  fn(data);
  parallel_end(t);
}

void forget_teams() {
  // relaxed: the child has one thread.
  slots_busy.store(false, std::memory_order_relaxed);
}

}  // namespace mrg

using namespace mrg;

// A region with reduction(task, ...): the descriptor is the first field of the region's data;
// returns the team size, over which the caller combines the per-member copies.
MRG_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned nthreads,
                                             unsigned flags) {
  auto *reductions = *static_cast<std::uintptr_t **>(data);
  Team *t = parallel_begin(fn, data, nthreads, nullptr, reductions, flags & kProcBindMask);
  unsigned n = static_cast<unsigned>(t->n);
  // Each implicit task begins by initialising its member's copies, and a task that runs on
  // an engine uses the copies of the member bound there: no task may run on an engine before
  // its member has begun. So no member goes on (and creates tasks) before every member has
  // begun, and none suspends meanwhile (an engine runs one context at a time, and a member
  // that has begun gives its engine up only at a later wait, after its initialisation).
  if (n > 1 && t->start_together) wait_all_started(t);
  fn(data);
  parallel_end(t);
  return n;
}

MRG_EXPORT void GOMP_parallel(void (*fn)(void *), void *data, unsigned nthreads, unsigned flags) {
  parallel(fn, data, nthreads, nullptr, flags & kProcBindMask);
}

// The GOMP_1.0 form: the caller runs fn(data) itself between the two calls.
MRG_EXPORT void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned nthreads) {
  parallel_begin(fn, data, nthreads, nullptr);
}

MRG_EXPORT void GOMP_parallel_end(void) {
  Task *self = current();
  if (!self->implicit || self->thread_num != 0 || !self->team->encountering)
    die("GOMP_parallel_end outside the region's member 0");
  parallel_end(self->team);
}
