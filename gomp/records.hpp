// records.hpp: the records the constructs share (libgomp.h's structs): a task, a work-share,
// a team. Each construct's operations on them are in the file named after it; doc/gomp.md
// ("The map of the code") lists the files.
#ifndef MR_GOMP_RECORDS_HPP
#define MR_GOMP_RECORDS_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "depend.hpp"
#include "env.hpp"
#include "mrengine.h"

namespace mrg {

struct Team;
struct WorkShare;
struct RedScope;  // reduction.hpp
struct WsRed;     // reduction.hpp

// A task: the implicit task of a team member, the initial task of a thread, or an explicit task.
struct Task {
  Team *team = nullptr;
  int thread_num = 0;   // omp_get_thread_num while it runs
  bool final_ = false;  // in a final task: every task it creates is included
  bool implicit = false;
  Icv icv;
  // Explicit children forked as sparks and not waited for yet: a list from the newest (linked
  // through each child's `older`), so that forking and joining one allocates nothing.
  Task *newest_child = nullptr;
  Task *older = nullptr;  // as a child: the sibling forked before it (or the next owed task)
  std::size_t nchildren = 0;
  // Tasks whose sparks this task's context forked and must still join, though its taskwait no
  // longer waits for them (task.cpp): children that completed while their sparks still join
  // their own children, and the children that a task run here left at its end. A list from
  // the newest, through `older`. Each owed task is numbered in the order it became owed
  // (owed_no, from owed_next), so the list runs in decreasing numbers even when taskwait
  // takes finished ones out of its middle.
  Task *owed = nullptr;
  std::uint64_t owed_next = 0;  // the number the next owed task gets
  std::uint64_t owed_no = 0;    // as an owed task: its number in its owner's sequence
  // Taskgroup marks, at each taskgroup_start: how many children there were, and the number the
  // first owed task since would get (its end joins every owed task from that number on).
  struct GroupMark {
    std::size_t children;
    std::uint64_t owed;
  };
  std::vector<GroupMark> groups;
  // Cancellation of taskgroups: one flag per taskgroup this task opened (innermost last), and
  // the flag of the taskgroup the task was created in (shared with its siblings there).
  std::vector<std::shared_ptr<std::atomic<bool>>> group_flags;
  std::shared_ptr<std::atomic<bool>> in_group;
  // Task reductions: one scope per taskgroup this task opened (null until it registers one),
  // and the innermost scope where the task was created.
  std::vector<std::shared_ptr<RedScope>> red_stack;
  std::shared_ptr<RedScope> red_in;
  // Work-share reductions not unregistered yet, with the scope construct's work-share (which
  // ends then; null for loops and sections, which end at their own end call).
  std::vector<std::pair<std::shared_ptr<WsRed>, WorkShare *>> ws_reds;
  bool thread_num_exact = true;  // thread_num is the member whose thread runs the task
  bool needs_exact_tid = false;  // taskloop reduction: indexes the copies by thread number
  std::unique_ptr<DepMap> deps;  // dependences among its children (made on first use)
  // Implicit tasks only: this member's work-share progress.
  unsigned ws_seq = 0;            // work-shares this member has begun
  unsigned single_seq = 0;        // single constructs this member has met
  WorkShare *ws = nullptr;        // the work-share it is in
  std::uint64_t static_trip = 0;  // static schedule: the next chunk round
  // Ordered loops: the chunk [ord_lo, ord_hi) this member holds, if ord_held.
  std::uint64_t ord_lo = 0, ord_hi = 0;
  bool ord_held = false;
  // Explicit tasks only.
  void (*fn)(void *) = nullptr;
  void *data = nullptr;
  MR_SyncTerm st;  // the spark's join, initialised by the parent
  // Deferred tasks: who runs the body, the parent at its taskwait (kClaimed) or the spark
  // (kStarted), decided by one compare-and-swap from kNew (task.cpp), through std::atomic_ref
  // (a plain int keeps Task movable: team.cpp makes members' records anew by assignment).
  alignas(std::atomic_ref<int>::required_alignment) int runner = 0;
  // Deferred tasks run by their spark: signalled when the task completes (its code has ended
  // and its event, if detached, is fulfilled), after `lingers` is written.
  MR_Future done = MR_FUTURE_INIT;
  // The spark goes on after the completion, to join the children the task left (read by the
  // parent after `done`, whose signal publishes it).
  bool lingers = false;
  // Forked by its last predecessor to complete rather than by its parent, maybe after the
  // parent's join began: the parent waits for `done` before it joins st.
  bool held = false;
  DepRef node;   // this task's completion, if it has dependences
  DepRef event;  // detach: the event that completes it (omp_fulfill_event)
  std::size_t block_size = 0, block_align = 0;  // the allocation holding a deferred task
};

// A loop or sections construct shared by the members of a team.
//
// `next`, which every member writes on every chunk, has a cache line to itself: the fields
// read on every chunk (up to `end`, written when the work-share begins, and `cancelled`, by a
// cancel) and those written at a member's end of the work-share then stay cached on each
// member's processor, and a chunk moves one line between processors, not two. Padding rather
// than alignment does it (an over-aligned allocation cost far more than the bytes when each
// loop allocated its work-share; teams now keep theirs for reuse).
struct WorkShare {
  unsigned seq = 0;
  int kind = SCHED_STATIC;  // resolved: static, dynamic or guided
  bool ull = false;
  bool up = true;  // ull loops: counting up
  // Ordered loops: chunks are handed over in iteration order (ordered_next below).
  bool ordered = false;
  std::atomic<bool> cancelled{false};  // cancel for / cancel sections
  std::uint64_t n = 0;                 // iterations
  std::uint64_t chunk = 0;             // chunk size (0: static's one block per member)
  std::int64_t start = 0, incr = 1;    // long loops (ull ones keep the bits in the same fields)
  std::int64_t end = 0;
  char before_next[64];                // (no other field in next's line)
  std::atomic<std::uint64_t> next{0};  // dynamic and guided: the next iteration index
  char after_next[64];                 // (as before_next)
  std::atomic<int> left{0};            // members that have not ended it yet
  // Nonmonotonic dynamic loops (when `steal`): each member's run of chunk numbers, its first
  // << 32 | its end, on a cache line of its own. The member takes chunks from the front of its
  // own run and, once that is empty, steals the back half of the longest other run
  // (steal_chunk in loop.cpp), so that a member works on the same iterations in every loop
  // over the same bounds, in its own cache, and members meet only to balance the load.
  // The loop's last chunk is in no run: it is handed out once every run is empty, and the
  // member that takes it gets nothing more. gcc's code for lastprivate and linear copies out
  // the values of the member whose last chunk ends the loop, so that member must not go on to
  // an earlier chunk.
  struct alignas(64) Run {
    std::atomic<std::uint64_t> span{0};
    bool took_last = false;  // the member took the loop's last chunk (only it reads and writes it)
  };
  std::unique_ptr<Run[]> runs;
  std::size_t runs_size = 0;  // members `runs` has room for (kept when the work-share is reused)
  bool steal = false;         // chunks are handed out from `runs`
  std::atomic<bool> last_taken{false};  // the loop's last chunk has been handed out
  bool nonmonotonic = false;  // a combined parallel loop's: make its runs when the team starts
  // Ordered loops: the first iteration of the chunk whose ordered regions may run now.
  std::atomic<std::uint64_t> ordered_next{0};
  // Memory the compiler asked for (lastprivate conditional, scan): zeroed, shared by the team's
  // members for this work-share, freed with it.
  void *mem = nullptr;
  std::once_flag red_once;  // task reductions: made by the first member to need them
  std::shared_ptr<WsRed> red;
  // Doacross loops (doacross.cpp): the iteration counts of each loop of the nest, and for each
  // range of the outermost loop that one member runs in order, how far into it that member has
  // posted (depend(source)): elements of doacross_width bytes (1, 2, 4 or 8; 0 in any other
  // work-share) in doacross_progress, accessed atomically.
  std::vector<std::uint64_t> doacross_counts;
  std::unique_ptr<unsigned char[]> doacross_progress;
  unsigned doacross_width = 0;
  ~WorkShare() { free(mem); }
};

// A team: one parallel region.
struct Team {
  int n = 1;
  int level = 0;                   // omp_get_level inside it
  int active_level = 0;            // omp_get_active_level inside it
  std::vector<int> ancestor_tid;   // thread number at each level 0..level (this one: the member's)
  std::vector<int> ancestor_size;  // team size at each level
  void (*fn)(void *) = nullptr;
  void *data = nullptr;
  // The barrier: arrivals of the current generation and one future per generation parity.
  std::atomic<unsigned> arrived{0};
  std::atomic<unsigned> generation{0};
  MR_Future bar[2] = {MR_FUTURE_INIT, MR_FUTURE_INIT};
  std::atomic<unsigned> single_count{0};
  void *copy_ptr = nullptr;  // single copyprivate: the winner's data
  std::mutex ws_lock;
  std::unordered_map<unsigned, WorkShare *> ws;  // live work-shares by sequence number
  // Ended work-shares, reset, for the next ones to reuse (under ws_lock): a loop then costs no
  // allocation, and no member frees memory another member's thread allocated.
  std::vector<WorkShare *> ws_free;
  std::vector<int> engine_member;  // member bound on each engine, or -1
  // Each member's place and place partition (places.hpp), or empty: no places (every member
  // then reports place -1 and an empty partition).
  std::vector<Placement> placement;
  int here = -1;  // the engine that started it (its member 0's), or -1
  // More members than processors: its waits spin briefly, then yield, since a spinning member
  // holds a processor that a preempted one needs (doc/gomp.md, "Waiting": Oversubscription).
  // n is fixed for the team's life (a reused team has the same size), so any member may ask.
  bool oversubscribed() const { return n > G.procs; }
  std::vector<Task> members;  // the implicit tasks
  // What each member's implicit task starts the region with (begin_member): the ICVs, the
  // first work-share of a combined parallel loop or sections (or null), and the task
  // reductions of a region with reduction(task, ...) (or null).
  Icv icv;
  WorkShare *first_ws = nullptr;
  std::shared_ptr<RedScope> red_scope;
  std::atomic<int> refs{0};  // members still using the team, and its creator
  bool top_slots = false;    // members beyond the engines use the top-level pool slots
  // The host teams construct the team is in (inherited from the encountering team): team
  // number, league size and the teams' thread_limit (0: none).
  int team_num = 0, num_teams = 1, teams_thread_limit = 0;
  Task *encountering = nullptr;  // the task that started the region (member 0 returns to it)
  int reserved = 0;              // members counted against thread-limit-var
  // thread-limit-var bounds a contention group: an initial thread and the threads of every team
  // it starts, nested ones too (each initial thread has a group of its own). Its initial team
  // (`group`, inherited by the group's teams; itself there) counts the group's threads in use.
  Team *group = this;
  std::atomic<int> group_threads{1};  // in a group's initial team: the initial thread, and more
  // Cancellation (OMP_CANCELLATION=true): the region is cancelled; with cancellation enabled
  // the region's end is a count of members that have left (exited, then exit_done) rather
  // than a barrier generation, since cancelled members skip the barriers in between.
  std::atomic<bool> cancelled{false};
  std::atomic<int> exited{0};
  // Members on threads that are not engines (slot, pool, program threads) waiting in the join of
  // a task's spark, which waits in the injector until an engine takes it: members on the
  // engines stop looking at a barrier and suspend, so that their engines take it (task.cpp's
  // join_spark, barrier.cpp). relaxed: a hint to stop looking.
  std::atomic<int> stranded{0};
  // Members 1..n-1 that have begun their implicit task, for regions whose implicit tasks
  // initialise per-member copies that the team's tasks also use (start_together).
  bool start_together = false;
  std::atomic<int> started{0};
  MR_Future exit_done = MR_FUTURE_INIT;
  // Its work-shares, live or kept for reuse, go with it (a thread's initial team too, when the
  // thread exits).
  ~Team() {
    for (auto &kv : ws) delete kv.second;
    for (WorkShare *w : ws_free) delete w;
  }
};

}  // namespace mrg

#endif
