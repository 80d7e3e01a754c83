// task.cpp: explicit tasks as mrengine sparks, taskwait and taskgroup.
//
// A deferred task is a spark with a sync term of two conjuncts of its own: the spark and the
// context that forked it, which alone may join it. A task completes when its code ends (and its
// event, if detached, is fulfilled), not when its children do (OpenMP 5.1): taskwait waits for
// the children's completion alone, and taskgroup ends and barriers for every descendant. So:
//
// - taskwait takes each child that has not started (one compare-and-swap on `runner`, against
//   its spark's) and runs it here, in the parent's context; its spark then finds it taken and
//   returns at once. For a child its spark runs, taskwait waits for `done`, the completion.
// - A task whose code ends with children not joined leaves them to the context that forked
//   them: its spark's context, which signals `done` first and joins them after (`lingers`);
//   or, for a task run in its parent's context (undeferred, or taken by the taskwait), the
//   parent's, whose owed tasks they become.
// - The parent joins a child whose spark lingers, and its owed tasks, later: at a taskgroup's
//   end (those since its start), at a barrier, at its own end (as above). Joining a spark that
//   lingers waits for its children, so these full joins cover every descendant.
//
// A task binds its context to the engine where it starts (MR_context_bind_here): a tied task
// never changes OS thread, as threadprivate variables, errno and gcc's caching of thread-local
// addresses require; one run by its parent's taskwait runs on the parent's thread.
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <new>

#include "current.hpp"
#include "depend.hpp"
#include "env.hpp"
#include "export.hpp"
#include "fatal.hpp"
#include "mrengine.h"
#include "omp.hpp"
#include "records.hpp"
#include "runtime.hpp"
#include "task.hpp"

namespace mrg {

namespace {

// Deferred tasks' records with their data, in blocks of kBlock bytes when they fit: a parent
// allocates its children's blocks and frees them after joining them, always on its own thread
// (tied tasks), so each thread keeps a cache of free blocks without any synchronisation. Up
// to 1,024 of them (512 KB): a taskgroup of 1,000 tasks, all deferred while another engine
// steals them, then takes none from malloc (bench/omp/fanout, 2 threads: 103 ns a task against
// 129 with 256).
constexpr size_t kBlock = 512, kBlockAlign = 64, kCacheMax = 1024;
struct FreeBlock {
  FreeBlock *next;
};
__thread FreeBlock *block_cache __attribute__((tls_model("initial-exec"))) = nullptr;
__thread size_t block_cached __attribute__((tls_model("initial-exec"))) = 0;

void *block_alloc(size_t size, size_t align) {
  if (size <= kBlock && align <= kBlockAlign) {
    if (FreeBlock *b = block_cache) {
      block_cache = b->next;
      block_cached--;
      return b;
    }
    return aligned_alloc(kBlockAlign, kBlock);
  }
  return aligned_alloc(align, size);
}

void block_free(void *p, size_t size, size_t align) {
  if (size <= kBlock && align <= kBlockAlign && block_cached < kCacheMax) {
    auto *b = static_cast<FreeBlock *>(p);
    b->next = block_cache;
    block_cache = b;
    block_cached++;
    return;
  }
  free(p);
}

void run_spark(void *arg);

// Who runs a deferred task's code (Task::runner): nobody yet, its parent's taskwait, its spark.
constexpr int kNew = 0, kClaimed = 1, kStarted = 2;

// Take t's code for `who` (kClaimed or kStarted); false if the other took it first.
bool claim(Task *t, int who) {
  int expected = kNew;
  // relaxed: only which side wins matters. The spark sees the task's fields through its fork;
  // the parent sees what the spark did through `done` and the join.
  return std::atomic_ref<int>(t->runner).compare_exchange_strong(expected, who,
                                                                 std::memory_order_relaxed);
}

// The record of a deferred task whose spark has been joined goes back to this thread's blocks.
void free_task(Task *c) {
  size_t size = c->block_size, align = c->block_align;
  c->~Task();
  block_free(c, size, align);
}

// Task `to`'s context is to join task c later (Task::owed).
void push_owed(Task *to, Task *c) {
  c->owed_no = to->owed_next++;
  c->older = to->owed;
  to->owed = c;
}

// Task t, run in the context of task `to`, has ended with children or owed tasks not joined:
// that context forked their sparks, so `to` joins them.
void hand_over(Task *t, Task *to) {
  while (Task *c = t->newest_child) {
    t->newest_child = c->older;
    push_owed(to, c);
  }
  while (Task *o = t->owed) {
    t->owed = o->older;
    push_owed(to, o);
  }
  t->nchildren = 0;
  t->groups.clear();
}

// The task of node n has completed: fork each successor it was the last pending predecessor
// of, then signal n->done. Each successor registered before the exchange is in the list it
// returns, and each that comes later finds kCompleted: none is lost or counted twice.
void complete(DepNode *n) {
  // acq_rel: acquire takes the successors' edges (their release CAS); release publishes this
  // task's effects to a successor that finds it completed.
  DepEdge *e = n->succs.exchange(kCompleted, std::memory_order_acq_rel);
  while (e) {
    // Both read before the count drops: the edge is the successor's, which may then run,
    // complete and be freed.
    DepEdge *next = e->next;
    DepNode *s = e->succ;
    // acq_rel: release publishes this task's effects to whoever forks the successor; acquire
    // (for the last) takes the other predecessors' and the creator's.
    if (s->pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
      MR_fork_new_child(&s->task->st, run_spark, s->task);
    e = next;
  }
  MR_future_signal(&n->done, 1);
}

// The body of a task, on the thread that runs it, and everything after it: in its spark's
// context (`spark`), or in the context of task prev (an undeferred task's creator, or the
// parent whose taskwait took it), which then owes the joins of the children the task left.
// Inlined, as is inherit: in an undeferred task the calls were a fifth of the runtime's cost
// (bench/omp/fanout on one thread).
__attribute__((always_inline)) inline void run_body(Task *t, Task *prev, bool spark) {
  set_current(t);
  t->fn(t->data);
  set_current(t);
  bool left = t->nchildren != 0 || t->owed;  // (most tasks create none)
  if (!spark) {
    if (left) hand_over(t, prev);
    if (t->deps) t->deps->clear();  // (an undeferred task's record is kept for the next one)
  }
  if (t->event) {
    // A detached task completes when its event is fulfilled (omp_fulfill_event).
    MR_future_wait(&t->event->done);
    set_current(t);
    t->event.reset();
  }
  if (spark) t->lingers = left;  // published by the signal of done
  if (t->node) complete(t->node.get());
  if (spark) {
    MR_future_signal(&t->done, 1);
    // Completed: the children this spark forked are still its context's to join.
    if (left) join_children(t);
  }
  set_current(prev);
}

// A task that has not started is discarded when its region or taskgroup is cancelled.
bool discarded(const Task *t) {
  // acquire: as the cancellation points'.
  if (t->team->cancelled.load(std::memory_order_acquire)) return true;
  // acquire: as above.
  return t->in_group && t->in_group->load(std::memory_order_acquire);
}

// What a deferred task checks before its code runs: its thread number, and cancellation.
void prepare(Task *t) {
  if (t->needs_exact_tid && !t->thread_num_exact)
    unsupported("GOMP_taskloop", "a reduction task run on a thread that is no member of its team");
  if (G.cancel_var && discarded(t)) {
    if (t->event) t->event.reset();  // nothing will run to fulfil it
    t->fn = [](void *) {};
  }
}

// The spark of a deferred task: nothing to do if its parent's taskwait took the task but say so
// (done), for a parent that left the join of this spark for later (taskwait).
void run_spark(void *arg) {
  auto *t = static_cast<Task *>(arg);
  if (!claim(t, kStarted)) {
    MR_future_signal(&t->done, 1);
    return;
  }
  // From here on this context stays on this engine's thread (a tied task).
  int e = MR_context_bind_here();
  Task *prev = current();
  if (e >= 0 && static_cast<size_t>(e) < t->team->engine_member.size() &&
      t->team->engine_member[e] >= 0)
    t->thread_num = t->team->engine_member[e];
  else
    t->thread_num_exact = false;  // the creator's number, on a thread that is no member's
  prepare(t);
  run_body(t, prev, true);
}

// Child c of t, taken by t's taskwait: run here, on t's thread, as t's own number.
void run_claimed(Task *c, Task *t) {
  c->thread_num_exact = t->thread_num_exact;
  prepare(c);
  run_body(c, t, false);
}

}  // namespace

std::atomic<bool> *group_flag(Task *t) {
  if (!t->group_flags.empty()) return t->group_flags.back().get();
  return t->in_group.get();
}

namespace {

// The taskgroup a new child of parent belongs to (for cancellation).
std::shared_ptr<std::atomic<bool>> child_group(Task *parent) {
  if (!G.cancel_var) return nullptr;
  return parent->group_flags.empty() ? parent->in_group : parent->group_flags.back();
}

// What a new child t of parent inherits: its team, thread, ICVs, taskgroup (for cancellation)
// and the innermost task reduction scope; the shared_ptrs are copied only when set, which
// they seldom are.
__attribute__((always_inline)) inline void inherit(Task *t, Task *parent, bool final_) {
  t->team = parent->team;
  t->thread_num = parent->thread_num;
  t->final_ = final_;
  t->icv = parent->icv;
  if (G.cancel_var) t->in_group = child_group(parent);
  for (auto it = parent->red_stack.rbegin(); it != parent->red_stack.rend(); ++it) {
    if (*it) {
      t->red_in = *it;
      return;
    }
  }
  if (parent->red_in) t->red_in = parent->red_in;
}

// Undeferred tasks run in records that each thread keeps in their initial state, so that one
// costs no construction and destruction of a Task. Such a task runs on its creator's thread
// and ends before its creator goes on, so a thread holds about as many records as undeferred
// tasks are running there at once (nested, or in contexts suspended in one); only the thread
// itself takes and gives back records of its list (linked through `older`), so it needs no
// synchronisation.
__thread Task *included_free __attribute__((tls_model("initial-exec"))) = nullptr;

// Frees a thread's records when the thread exits.
struct IncludedRecords {
  ~IncludedRecords() {
    while (Task *t = included_free) {
      included_free = t->older;
      delete t;
    }
  }
};

Task *take_included() {
  if (Task *t = included_free) {
    included_free = t->older;
    t->older = nullptr;
    return t;
  }
  // Made by the thread's first new record (its destructor runs when the thread exits).
  static thread_local IncludedRecords records;
  (void)records;
  return new Task;
}

// Back to the initial state: the run handed over its children and owed tasks, its taskgroups
// are closed and its dependence map cleared (kept for the next task); what the creator set is
// reset.
void give_back_included(Task *t) {
  t->node.reset();
  t->event.reset();
  t->in_group.reset();
  t->red_in.reset();
  t->older = included_free;
  included_free = t;
}

// Run fn(data), a child of parent, undeferred: here and now, in a record of this thread's,
// with the dependence node and event given (if any).
void run_included(Task *parent, bool final_, void (*fn)(void *), void *data, DepRef *node,
                  DepRef *event) {
  Task *t = take_included();
  inherit(t, parent, final_);
  if (node) t->node = std::move(*node);
  if (event) t->event = std::move(*event);
  t->thread_num_exact = parent->thread_num_exact;  // it runs on the parent's thread
  t->fn = fn;
  t->data = data;
  run_body(t, parent, false);
  give_back_included(t);
}

// The cut-off (create_task): this thread is an engine whose deque holds enough sparks for the
// idle engines (mrengine's granularity test says "do not spark").
bool enough_sparks() { return MR_engine_view_v4 != nullptr && !MR_par_cond_local_wsdeque_length(); }

// A new child of parent would be discarded (its region or its taskgroup is cancelled).
bool created_cancelled(Task *parent) {
  // acquire: as the cancellation points'.
  if (parent->team->cancelled.load(std::memory_order_acquire)) return true;
  std::atomic<bool> *f = group_flag(parent);
  // acquire: as above.
  return f && f->load(std::memory_order_acquire);
}

// A new child of parent with dependences `depend` would have predecessors that have not
// completed. Only deferred children can be such predecessors: with none, there are none.
bool unfinished_preds(Task *parent, void **depend) {
  return parent->nchildren != 0 && !link_deps(&parent->deps, parse_depend(depend), nullptr).empty();
}

// A new task's data and how to copy it.
struct TaskData {
  void *data;
  void (*cpyfn)(void *, void *);
  long arg_size, arg_align;
  const Bounds *bounds;  // a taskloop task's bounds, or null
};

// Write a taskloop task's bounds into its copy of the data.
void patch_data(char *buf, const Bounds *b) {
  if (!b) return;
  if (b->ull) {
    auto *p = reinterpret_cast<unsigned long long *>(buf);
    p[0] = b->lo;
    p[1] = b->hi;
  } else {
    auto *p = reinterpret_cast<long *>(buf);
    p[0] = static_cast<long>(b->lo);
    p[1] = static_cast<long>(b->hi);
  }
}

// Copy the data for the task (its copy function, or its bytes), then its bounds. Inlined, as
// the copy was before it had a name: it is on the path of every deferred task.
__attribute__((always_inline)) inline void fill_data(char *buf, const TaskData &d) {
  if (d.cpyfn)
    d.cpyfn(buf, d.data);
  else if (d.arg_size > 0)
    memcpy(buf, d.data, static_cast<size_t>(d.arg_size));
  patch_data(buf, d.bounds);
}

// A detached task's event handle goes to the variable `detach` points to and to the first word
// of the data block, where gcc places the task's firstprivate copy of that variable (the ABI);
// both before the data is copied.
void set_event(void *detach, void *data, DepNode *ev) {
  auto handle = reinterpret_cast<uintptr_t>(ev);
  *static_cast<uintptr_t *>(detach) = handle;
  if (data) *static_cast<uintptr_t *>(data) = handle;
}

// Undeferred (if(0) or the cut-off), included (in a final task) or alone: run the task here
// and now, after its predecessors. A parent with no deferred child has none unfinished (every
// earlier child ran to its end), so then the task's dependences name no predecessor and need no
// record either: a later sibling that names the same storage needs nothing of a task that has
// completed. On one thread every task is such a task.
void run_undeferred(Task *parent, bool final_, void (*fn)(void *), const TaskData &d, void **depend,
                    DepRef *event) {
  DepRef node;
  if (depend && parent->nchildren != 0) {
    node = std::make_shared<DepNode>();
    wait_preds(link_deps(&parent->deps, parse_depend(depend), node));
    set_current(parent);
  }
  if (d.cpyfn || d.bounds) {
    size_t align = d.arg_align > 0 ? static_cast<size_t>(d.arg_align) : 1;
    size_t bytes =
        (static_cast<size_t>(d.arg_size > 0 ? d.arg_size : 0) + align - 1) / align * align;
    char *buf = static_cast<char *>(aligned_alloc(align, bytes + align));
    if (!buf) die("out of memory for a task's data");
    fill_data(buf, d);
    run_included(parent, final_, fn, buf, &node, event);
    free(buf);
  } else {
    run_included(parent, final_, fn, d.data, &node, event);
  }
}

// Deferred: one allocation for the record and a copy of the data after it, forked as a spark
// now, or by the last of its predecessors to complete.
void defer(Task *parent, bool final_, void (*fn)(void *), const TaskData &d, void **depend,
           DepRef *event) {
  size_t align = d.arg_align > 0 ? static_cast<size_t>(d.arg_align) : 1;
  align = std::max(align, alignof(Task));
  size_t head = (sizeof(Task) + align - 1) / align * align;
  size_t size = head + static_cast<size_t>(d.arg_size > 0 ? d.arg_size : 0);
  size = (size + align - 1) / align * align;
  void *mem = block_alloc(size, align);
  if (!mem) die("out of memory for a task");
  Task *t = new (mem) Task;
  t->block_size = size;
  t->block_align = align;
  char *buf = static_cast<char *>(mem) + head;
  fill_data(buf, d);
  inherit(t, parent, final_);
  t->fn = fn;
  t->data = buf;
  t->event = std::move(*event);
  t->needs_exact_tid = d.bounds && d.bounds->reduction;
  t->older = parent->newest_child;
  parent->newest_child = t;
  parent->nchildren++;
  MR_sync_term_init(&t->st, 2);
  if (depend) {
    t->node = std::make_shared<DepNode>();
    t->node->task = t;
    std::vector<DepNode *> preds = link_deps(&parent->deps, parse_depend(depend), t->node);
    // Predecessors still running: the last of them forks the task when it completes. (Only
    // the parent reads `held`, written after the task may have started.)
    if (!preds.empty() && !register_succ(t->node.get(), preds)) {
      t->held = true;
      return;
    }
  }
  MR_fork_new_child(&t->st, run_spark, t);
}

}  // namespace

namespace {

// While it lives, a member of t's team on a thread that is not an engine waits for a task's
// spark, which only an engine takes from the injector (Team::stranded). relaxed: a hint; the
// wait itself orders what matters.
class Stranded {
 public:
  explicit Stranded(Task *t) : team_(MR_engine_view_v4 ? nullptr : t->team) {
    if (team_) team_->stranded.fetch_add(1, std::memory_order_relaxed);
  }
  ~Stranded() {
    if (team_) team_->stranded.fetch_sub(1, std::memory_order_relaxed);
  }
  Stranded(const Stranded &) = delete;
  Stranded &operator=(const Stranded &) = delete;

 private:
  Team *team_;
};

// Join the spark of task c, forked by t's context: a held one is forked by its last
// predecessor, maybe not yet, and the arrival of t's context at st must come after that fork,
// which done (signalled by the spark) follows.
void join_spark(Task *t, Task *c) {
  {
    Stranded s(t);
    if (c->held) MR_future_wait(&c->done);
    MR_join_and_continue(&c->st);
  }
  // The join may have run other tasks on this thread.
  set_current(t);
  free_task(c);
}

// Child c of t has completed (done): join its spark now, or later if it still joins c's
// children (t's owed tasks).
void settle(Task *t, Task *c) {
  if (c->lingers)
    push_owed(t, c);
  else
    join_spark(t, c);  // (its spark returns without waiting for anything more)
}

// Join t's owed tasks that have completed and whose sparks wait for nothing more (or whose
// sparks found them taken), so that a taskwait after each of many tasks that leave children,
// or each of many taskwaits on a thread that is not an engine, does not keep all their records.
void join_finished_owed(Task *t) {
  Task **link = &t->owed;
  while (Task *o = *link) {
    if (MR_future_is_signalled(&o->done) && !o->lingers) {
      *link = o->older;
      MR_join_and_continue(&o->st);
      set_current(t);
      free_task(o);
    } else {
      link = &o->older;
    }
  }
}

// The children a join took were the newest: no taskgroup still open counts more than remain.
// (Owed tasks need no such care: a mark names a number, not a count, and taking finished ones
// from anywhere in the list leaves every later one at or above it.)
void clamp_marks(Task *t) {
  for (auto &g : t->groups) g.children = std::min(g.children, t->nchildren);
}

}  // namespace

void join_children(Task *t, Task::GroupMark mark) {
  for (;;) {
    if (t->nchildren > mark.children) {
      Task *c = t->newest_child;
      t->newest_child = c->older;
      t->nchildren--;
      join_spark(t, c);
    } else if (t->owed && t->owed->owed_no >= mark.owed) {
      Task *o = t->owed;
      t->owed = o->older;
      join_spark(t, o);
    } else {
      break;
    }
  }
  clamp_marks(t);
  if (mark.children == 0 && t->deps) t->deps->clear();
}

void taskwait(Task *t) {
  while (Task *c = t->newest_child) {
    t->newest_child = c->older;
    t->nchildren--;
    // A held child is never taken: its predecessors may not have completed.
    if (!c->held && claim(c, kClaimed)) {
      run_claimed(c, t);
      // The spark finds the task taken and returns. On an engine it is usually still on this
      // engine's deque, and its join runs it here at once. A thread that is not an engine
      // leaves the join for later (an owed task): the spark is in the injector, which only an
      // idle engine serves, and the members on the engines may be waiting for this one (in
      // ordered, a critical section) without running tasks.
      if (MR_engine_view_v4)
        join_spark(t, c);
      else
        push_owed(t, c);
      continue;
    }
    {
      Stranded s(t);
      MR_future_wait(&c->done);
    }
    set_current(t);
    settle(t, c);
  }
  if (t->owed) join_finished_owed(t);
  clamp_marks(t);
  if (t->deps) t->deps->clear();  // every child has completed
}

void create_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                 long arg_align, bool if_clause, unsigned flags, void **depend, void *detach,
                 const Bounds *bounds) {
  ensure_runtime();
  Task *parent = current();
  // A task created in a cancelled region or taskgroup is discarded at once: it would be
  // discarded before starting if deferred (run_spark), and one that the cut-off below (or an
  // if(0) clause) would run undeferred must not run either.
  if (G.cancel_var && created_cancelled(parent)) return;
  bool final_ = parent->final_ || (flags & kFinal);
  // The commonest undeferred task (the conditions below without dependences, an event or a
  // copy of the data): nothing to prepare but its record.
  if (!(flags & (kDepend | kDetach)) && !cpyfn && !bounds &&
      (!if_clause || parent->final_ || (parent->team->n == 1 && !G.defer_alone) ||
       enough_sparks())) {
    run_included(parent, final_, fn, data, nullptr, nullptr);
    return;
  }
  void **deps = (flags & kDepend) ? depend : nullptr;  // the depend array, if it has one
  DepRef event;
  if ((flags & kDetach) && detach) {
    event = std::make_shared<DepNode>();
    // Before the data is copied: the task reads the handle from its copy of the variable.
    set_event(detach, data, event.get());
  }

  // A team of one thread has nobody else to run a deferred task: OpenMP lets its thread run
  // it at once, as programs written for one thread expect, and a search then goes depth-first
  // (bench/omp/knapsack prunes by it). Not a detached task (what fulfils its event may come
  // later in this thread), nor one whose predecessors have not all completed (a detached
  // sibling's may wait for this thread too): those stay deferred, and run when their
  // predecessors have completed, at a join of this thread's (doc/gomp.md, "Waiting"). Nor any
  // task when MRGOMP_DEFER_ALONE asks for sparks, which the thread runs when its code waits (a
  // blocking MPI call suspends it: doc/mpi.md).
  bool alone =
      parent->team->n == 1 && !event && !G.defer_alone && !(deps && unfinished_preds(parent, deps));
  // The cut-off: when this engine's deque already holds --granularity-factor x engines sparks
  // (the engine's own granularity test; it also says "do not spark" on a thread that is not an
  // engine, whose tasks stay deferred: they go to the injector), idle engines have enough to
  // steal, and another spark would only cost its record and its join: run the task undeferred
  // instead. Not a task with dependences (its creator would wait for the predecessors), a
  // detached one (what fulfils its event may come later in its creator), or a taskloop's (the
  // split into tasks is the program's request).
  auto cutoff = [&] { return !deps && !event && !bounds && enough_sparks(); };
  TaskData d{data, cpyfn, arg_size, arg_align, bounds};
  if (!if_clause || parent->final_ || alone || cutoff())
    run_undeferred(parent, final_, fn, d, deps, &event);
  else
    defer(parent, final_, fn, d, deps, &event);
}

}  // namespace mrg

using namespace mrg;

MRG_EXPORT void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                          long arg_size, long arg_align, bool if_clause, unsigned flags,
                          void **depend, int priority, void *detach) {
  (void)priority;  // no priorities: every task is a spark in creation order
  create_task(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, detach, nullptr);
}

MRG_EXPORT void omp_fulfill_event(uintptr_t event) {
  auto *ev = reinterpret_cast<DepNode *>(event);
  if (!ev) die("omp_fulfill_event: no such event");
  MR_future_signal(&ev->done, 1);
}

MRG_EXPORT void GOMP_taskwait(void) { taskwait(current()); }

MRG_EXPORT void GOMP_taskwait_depend(void **depend) {
  Task *self = current();
  if (!depend) return;
  std::vector<Dep> deps = parse_depend(depend);
  wait_preds(link_deps(&self->deps, deps, nullptr));
  set_current(self);
}

MRG_EXPORT void GOMP_taskyield(void) {
  // A tied task may only be resumed on its own thread, and this runtime does not interleave
  // tasks on one thread except at joins: nothing to do.
}

MRG_EXPORT void GOMP_taskgroup_start(void) {
  Task *self = current();
  self->groups.push_back({self->nchildren, self->owed_next});
  self->red_stack.push_back(nullptr);
  if (G.cancel_var) self->group_flags.push_back(std::make_shared<std::atomic<bool>>(false));
}

MRG_EXPORT void GOMP_taskgroup_end(void) {
  Task *self = current();
  if (self->groups.empty()) die("GOMP_taskgroup_end without GOMP_taskgroup_start");
  Task::GroupMark mark = self->groups.back();
  self->groups.pop_back();
  join_children(self, mark);
  if (!self->group_flags.empty()) self->group_flags.pop_back();
  if (!self->red_stack.empty()) self->red_stack.pop_back();
}
