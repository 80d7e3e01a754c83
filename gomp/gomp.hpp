// gomp.hpp: the internals of libmrgomp, the OpenMP runtime (libgomp's ABI) on mrengine.
//
// Teams, implicit and explicit tasks, work-shares and the ICVs; doc/gomp.md describes the
// design and which OS thread runs what.
#ifndef MR_GOMP_HPP
#define MR_GOMP_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "mrengine.h"

#define MRG_EXPORT extern "C" __attribute__((visibility("default")))

namespace mrg {

// Stop the program: an entry point (or a variant of one) this runtime does not implement.
[[noreturn]] void unsupported(const char *symbol, const char *detail = nullptr);
// Stop the program: a misuse or an internal failure.
[[noreturn]] void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Schedule kinds, as omp_sched_t numbers them (0 is "the run-sched-var ICV").
enum Sched : int { SCHED_RUNTIME = 0, SCHED_STATIC = 1, SCHED_DYNAMIC = 2, SCHED_GUIDED = 3,
                   SCHED_AUTO = 4 };

// The ICVs a task carries (each task has its own copy of its parent's at creation).
struct Icv {
  int nthreads = 1;   // nthreads-var
  bool dyn = false;   // dyn-var
  int sched = SCHED_STATIC;  // run-sched-var kind
  int chunk = 0;             // run-sched-var chunk (0: the kind's default)
  int max_active_levels = 1; // max-active-levels-var
  std::uintptr_t def_allocator = 1;  // def-allocator-var (omp_default_mem_alloc)
};

// The process-wide settings read from the environment once (OMP_*).
struct Globals {
  std::vector<int> nthreads_list;  // OMP_NUM_THREADS, one entry per nesting level
  Icv initial;                     // the initial task's ICVs
  int thread_limit = 1 << 20;      // thread-limit-var
  int wait_policy = -1;            // OMP_WAIT_POLICY: -1 unset, 0 passive, 1 active
  int max_task_priority = 0;       // OMP_MAX_TASK_PRIORITY
  int engines = 0;                 // engines of the running runtime (written once: ensure_runtime)
  bool cancel_var = false;         // OMP_CANCELLATION
};
extern Globals &G;


struct Task;
struct DepNode;

// A task's registration with one of its predecessors: a link of the predecessor's list of
// successors, stored in the successor's node.
struct DepEdge {
  DepEdge *next;   // the successor registered before it
  DepNode *succ;
};

// An explicit task that others may depend on (or a detached task's event: `done` only).
//
// A deferred task whose predecessors have not all completed is not forked when it is created:
// it registers with each of them, and the last to complete forks it (task.cpp, register_succ
// and complete).
struct DepNode {
  MR_Future done = MR_FUTURE_INIT;  // signalled once the task has completed
  // The successors to fork when the task completes: a list pushed by their creator, and
  // task.cpp's kCompleted once the task has completed (no successor registers after that).
  std::atomic<DepEdge *> succs{nullptr};
  // As a successor: its predecessors that have not completed, plus one while its creator
  // registers it; whoever brings it to zero forks the task.
  std::atomic<std::size_t> pending{0};
  Task *task = nullptr;        // the deferred task it is the node of (null: an undeferred one)
  std::vector<DepEdge> edges;  // its registrations, one per predecessor
};
using DepRef = std::shared_ptr<DepNode>;

// The sibling-dependence state of one parent task: for each address, the last task with an
// out-type dependence on it and the in-type ones created since.
struct DepEntry {
  DepRef last_out;
  std::vector<DepRef> ins;
};
using DepMap = std::unordered_map<void *, DepEntry>;

struct Team;
struct WorkShare;

// A work-sharing construct's task reductions (reduction(task, ...) on for, sections, scope):
// the per-thread arrays every member's descriptor points to, freed by the last member to
// unregister.
struct WsRed {
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> arrays;  // data[2], data[6] per descriptor
  std::atomic<int> left{0};
};

// A task reduction registered by a taskgroup or a parallel region (reduction(task, ...)): gcc's
// descriptor (data[0] items, data[1] bytes per thread, data[2] the per-thread array once
// registered, data[4] the next descriptor of the same construct, data[6] the array's end, then
// {address, offset, -} per item), and the scope outside it.
struct RedScope {
  std::uintptr_t *data;
  std::shared_ptr<RedScope> outer;
};

// A task: the implicit task of a team member, the initial task of a thread, or an explicit task.
struct Task {
  Team *team = nullptr;
  int thread_num = 0;      // omp_get_thread_num while it runs
  bool final_ = false;     // in a final task: every task it creates is included
  bool implicit = false;
  Icv icv;
  // Explicit children forked as sparks and not joined yet: a list from the newest (linked
  // through each child's `older`), so that forking and joining one allocates nothing.
  Task *newest_child = nullptr;
  Task *older = nullptr;            // as a child: the sibling forked before it
  std::size_t nchildren = 0;
  std::vector<std::size_t> groups;  // taskgroup marks: nchildren at each taskgroup_start
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
  std::unique_ptr<DepMap> deps;     // dependences among its children (made on first use)
  // Implicit tasks only: this member's work-share progress.
  unsigned ws_seq = 0;              // work-shares this member has begun
  unsigned single_seq = 0;          // single constructs this member has met
  WorkShare *ws = nullptr;          // the work-share it is in
  std::uint64_t static_trip = 0;    // static schedule: the next chunk round
  // Ordered loops: the chunk [ord_lo, ord_hi) this member holds, if ord_held.
  std::uint64_t ord_lo = 0, ord_hi = 0;
  bool ord_held = false;
  // Explicit tasks only.
  void (*fn)(void *) = nullptr;
  void *data = nullptr;
  MR_SyncTerm st;                   // the spark's join, initialised by the parent
  // Forked by its last predecessor to complete rather than by its parent, maybe after the
  // parent's join began: the parent waits for node->done before it joins st.
  bool held = false;
  DepRef node;                      // this task's completion, if it has dependences
  DepRef event;                     // detach: the event that completes it (omp_fulfill_event)
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
  int kind = SCHED_STATIC;          // resolved: static, dynamic or guided
  bool ull = false;
  bool up = true;                   // ull loops: counting up
  // Ordered loops: chunks are handed over in iteration order (ordered_next below).
  bool ordered = false;
  std::atomic<bool> cancelled{false};  // cancel for / cancel sections
  std::uint64_t n = 0;              // iterations
  std::uint64_t chunk = 0;          // chunk size (0: static's one block per member)
  std::int64_t start = 0, incr = 1; // long loops (ull ones keep the bits in the same fields)
  std::int64_t end = 0;
  char before_next[64];                            // (no other field in next's line)
  std::atomic<std::uint64_t> next{0};              // dynamic and guided: the next iteration index
  char after_next[64];                             // (as before_next)
  std::atomic<int> left{0};                        // members that have not ended it yet
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
  std::once_flag red_once;             // task reductions: made by the first member to need them
  std::shared_ptr<WsRed> red;
  // Doacross loops: the iteration counts of each loop of the nest, and one flag per iteration
  // of the nest (in row-major order), set when the iteration posts (depend(source)).
  std::vector<std::uint64_t> doacross_counts;
  std::unique_ptr<std::atomic<unsigned char>[]> doacross_done;
  ~WorkShare() { free(mem); }
};

// A team: one parallel region.
struct Team {
  int n = 1;
  int level = 0;          // omp_get_level inside it
  int active_level = 0;   // omp_get_active_level inside it
  std::vector<int> ancestor_tid;   // thread number at each level 0..level (this one: the member's)
  std::vector<int> ancestor_size;  // team size at each level
  void (*fn)(void *) = nullptr;
  void *data = nullptr;
  // The barrier: arrivals of the current generation and one future per generation parity.
  std::atomic<unsigned> arrived{0};
  std::atomic<unsigned> generation{0};
  MR_Future bar[2] = {MR_FUTURE_INIT, MR_FUTURE_INIT};
  std::atomic<unsigned> single_count{0};
  void *copy_ptr = nullptr;         // single copyprivate: the winner's data
  std::mutex ws_lock;
  std::unordered_map<unsigned, WorkShare *> ws;  // live work-shares by sequence number
  // Ended work-shares, reset, for the next ones to reuse (under ws_lock): a loop then costs no
  // allocation, and no member frees memory another member's thread allocated.
  std::vector<WorkShare *> ws_free;
  std::vector<int> engine_member;   // member bound on each engine, or -1
  int here = -1;                    // the engine that started it (its member 0's), or -1
  std::vector<Task> members;        // the implicit tasks
  // What each member's implicit task starts the region with (begin_member): the ICVs, the
  // first work-share of a combined parallel loop or sections (or null), and the task
  // reductions of a region with reduction(task, ...) (or null).
  Icv icv;
  WorkShare *first_ws = nullptr;
  std::shared_ptr<RedScope> red_scope;
  std::atomic<int> refs{0};         // members still using the team, and its creator
  bool top_slots = false;           // members beyond the engines use the top-level pool slots
  // The host teams construct the team is in (inherited from the encountering team): team
  // number, league size and the teams' thread_limit (0: none).
  int team_num = 0, num_teams = 1, teams_thread_limit = 0;
  Task *encountering = nullptr;     // the task that started the region (member 0 returns to it)
  int reserved = 0;                 // members counted against thread-limit-var
  // Cancellation (OMP_CANCELLATION=true): the region is cancelled; with cancellation enabled
  // the region's end is a count of members that have left (exited, then exit_done) rather
  // than a barrier generation, since cancelled members skip the barriers in between.
  std::atomic<bool> cancelled{false};
  std::atomic<int> exited{0};
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

// The task running on this thread, or null before the thread's first use of the runtime.
// Initial-exec TLS (as libgomp's own): this library is loaded with the program, and each task
// creation reads and writes it, where the general model would call __tls_get_addr each time.
extern __thread Task *tl_current __attribute__((tls_model("initial-exec")));
// The initial task of this thread (made on first use), which becomes its current task.
Task *initial_task();

// The task running on this thread (the initial task of the thread if none).
inline Task *current() {
  if (Task *t = tl_current) return t;
  return initial_task();
}
inline void set_current(Task *t) { tl_current = t; }

// Wait politely for another thread (sync.cpp): spin, then yield, then sleep in short spells.
void backoff(unsigned *round);

// Start mrengine if it is not running (the caller becomes engine 0).
void ensure_runtime();

// Barrier of the current team without the task part (all members arrive, then all leave).
void team_barrier(Team *t);
// The same in a cancellable region: true if the region is cancelled (then it may return before
// the others arrive).
bool team_barrier_cancellable(Team *t);
// The innermost taskgroup's cancellation flag of task t, or nullptr.
std::atomic<bool> *group_flag(Task *t);

// Join every child of t (taskwait).
void join_children(Task *t, std::size_t mark = 0);

// Work-shares (loop.cpp).
void ws_end(Task *self);
// One member is done with work-share w of team t (the last keeps it for reuse).
void ws_release(Team *t, WorkShare *w);
// A work-share of team t for its next construct: a reused one, or a new one. Under ws_lock, or
// before the team's members start.
WorkShare *ws_take(Team *t);
// Make w, taken for a combined parallel loop, the loop `spec` describes.
void ws_copy_loop(WorkShare *w, const WorkShare &spec);
void ws_init_loop(WorkShare *w, int kind, std::int64_t start, std::int64_t end, std::int64_t incr,
                  std::int64_t chunk, int nthreads);
void ws_init_ull(WorkShare *w, int kind, bool up, std::uint64_t start, std::uint64_t end,
                 std::uint64_t incr, std::uint64_t chunk, int nthreads);
int resolve_kind(int kind, std::int64_t *chunk);
// A dynamic loop of nthreads members that allows nonmonotonic order: hand it out as runs per
// member (WorkShare::runs), unless it has one member or too many chunks.
void ws_init_runs(WorkShare *w, int nthreads);

// Run fn(data) as a parallel region of `nthreads` (0: the ICV) with a copy of `preset` the first
// work-share of every member (or nullptr).
void parallel(void (*fn)(void *), void *data, unsigned nthreads, const WorkShare *preset);
// The two halves of parallel (the GOMP_1.0 entry points run fn(data) in between themselves).
Team *parallel_begin(void (*fn)(void *), void *data, unsigned nthreads, const WorkShare *preset,
                     std::uintptr_t *reductions = nullptr);
// Task reductions (task.cpp): the per-thread arrays of a descriptor chain for n threads, and
// the innermost scope visible to task t.
void red_allocate(std::uintptr_t *data, int n);
std::shared_ptr<RedScope> red_visible_in_groups(Task *t);
inline std::shared_ptr<RedScope> red_visible(Task *t) {
  return t->red_stack.empty() ? t->red_in : red_visible_in_groups(t);
}
// A member's start of a work-share with task reductions (its own descriptor `data`).
void ws_reductions(Task *self, WorkShare *w, std::uintptr_t *data);

}  // namespace mrg

#endif
