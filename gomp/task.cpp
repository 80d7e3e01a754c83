// task.cpp: explicit tasks as mrengine sparks, their dependences, taskwait and taskgroup.
//
// A deferred task is a spark with a sync term of two conjuncts of its own: the spark and its
// parent, which joins it at a taskwait, at the end of the taskgroup it was created in, at the
// end of the parent task, or at the barrier (implicit tasks). Joining its children before it
// ends makes a task complete only after its descendants, so a join of the children covers every
// descendant (taskgroup, barrier). A task binds its context to the engine where it starts
// (MR_context_bind_here): a tied task never changes OS thread, as threadprivate variables,
// errno and gcc's caching of thread-local addresses require.
#include <stdlib.h>
#include <string.h>

#include <new>
#include <type_traits>

#include "gomp.hpp"

MRG_EXPORT void GOMP_taskgroup_start(void);
MRG_EXPORT void GOMP_taskgroup_end(void);

namespace mrg {

namespace {

// gcc's GOMP_task flags (the ABI).
constexpr unsigned kUntied = 1u << 0, kFinal = 1u << 1, kDepend = 1u << 3, kUp = 1u << 8,
                   kGrainsize = 1u << 9, kIf = 1u << 10, kNogroup = 1u << 11,
                   kReduction = 1u << 12, kDetach = 1u << 13, kStrict = 1u << 14;
// Dependence kinds of depobj entries.
constexpr uintptr_t kDepIn = 1;

struct Dep {
  void *addr;
  bool out;
};

// The dependences of a depend array, in either of gcc's two layouts.
std::vector<Dep> parse_depend(void **depend) {
  std::vector<Dep> deps;
  auto count = [](void *p) { return static_cast<size_t>(reinterpret_cast<uintptr_t>(p)); };
  if (count(depend[0]) != 0) {
    // depend[0] total, depend[1] out/inout, then the addresses: out ones first.
    size_t n = count(depend[0]), nout = count(depend[1]);
    for (size_t i = 0; i < n; i++) deps.push_back({depend[2 + i], i < nout});
  } else {
    // depend[1] total, [2] out/inout, [3] mutexinoutset, [4] in, then addresses in that
    // order, then depobj entries (each a pointer to {address, kind}).
    size_t n = count(depend[1]), nout = count(depend[2]), nmutex = count(depend[3]),
           nin = count(depend[4]);
    size_t direct = nout + nmutex + nin;
    for (size_t i = 0; i < n; i++) {
      if (i < direct) {
        deps.push_back({depend[5 + i], i < nout + nmutex});  // mutexinoutset: as inout
      } else {
        auto **obj = static_cast<void **>(depend[5 + i]);
        deps.push_back({obj[0], reinterpret_cast<uintptr_t>(obj[1]) != kDepIn});
      }
    }
  }
  return deps;
}

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

// The mark that ends a node's successor list once its task has completed.
DepEdge completed_mark;
DepEdge *const kCompleted = &completed_mark;

bool completed(const DepNode *n) {
  // acquire: pairs with complete's exchange, so the task's effects are visible.
  return n->succs.load(std::memory_order_acquire) == kCompleted;
}

void add_pred(std::vector<DepNode *> *preds, const DepRef &d, const DepRef &self) {
  if (!d || d == self || completed(d.get())) return;
  for (DepNode *p : *preds)
    if (p == d.get()) return;
  preds->push_back(d.get());
}

// The predecessors among parent's children of a task with these dependences; with node set,
// record the task as the latest for its addresses. The nodes stay alive while parent runs:
// they are its deferred children's, which only parent frees, when it joins them.
std::vector<DepNode *> link_deps(Task *parent, const std::vector<Dep> &deps, const DepRef &node) {
  std::vector<DepNode *> preds;
  if (!parent->deps) parent->deps = std::make_unique<DepMap>();
  for (const Dep &d : deps) {
    DepEntry &e = (*parent->deps)[d.addr];
    add_pred(&preds, e.last_out, node);
    if (d.out) {
      for (const auto &r : e.ins) add_pred(&preds, r, node);
      if (node) {
        e.last_out = node;
        e.ins.clear();
      }
    } else if (node) {
      // Forget readers that have finished, so a long run of them does not pile up.
      if (e.ins.size() >= 64)
        std::erase_if(e.ins, [](const DepRef &r) { return completed(r.get()); });
      e.ins.push_back(node);
    }
  }
  return preds;
}

void wait_preds(const std::vector<DepNode *> &preds) {
  for (DepNode *p : preds) MR_future_wait(&p->done);
}

// Register node (a deferred task's, its record and sync term ready) as a successor of each of
// preds. True if they have all completed by the end, and the caller forks the task; false if
// the last of them to complete forks it (complete).
bool register_succ(DepNode *node, const std::vector<DepNode *> &preds) {
  node->edges.resize(preds.size());
  // relaxed: a predecessor reads it only through an edge, published by the release CAS below.
  node->pending.store(preds.size() + 1, std::memory_order_relaxed);
  std::size_t gone = 1;  // the creator's own unit, and the predecessors found completed
  for (std::size_t i = 0; i < preds.size(); i++) {
    DepEdge *e = &node->edges[i];
    e->succ = node;
    // acquire: a predecessor found completed has its effects visible (pairs with complete).
    DepEdge *head = preds[i]->succs.load(std::memory_order_acquire);
    for (;;) {
      if (head == kCompleted) {
        gone++;
        break;
      }
      e->next = head;
      // CAS release: publishes the edge and the task's record to the predecessor's complete;
      // failure acquire: as the load above.
      if (preds[i]->succs.compare_exchange_weak(head, e, std::memory_order_release,
                                                std::memory_order_acquire))
        break;
    }
  }
  // acq_rel: release publishes the record to the predecessor that brings the count to zero;
  // acquire (if this brings it to zero) takes the effects of those that completed meanwhile.
  return node->pending.fetch_sub(gone, std::memory_order_acq_rel) == gone;
}

void run_spark(void *arg);

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

// The body of a task, on the thread that runs it, and everything after it. Inlined, as is
// inherit: in an undeferred task the calls were a fifth of the runtime's cost (bench/omp/fanout
// on one thread).
__attribute__((always_inline)) inline void run_body(Task *t, Task *prev) {
  set_current(t);
  t->fn(t->data);
  set_current(t);
  if (t->nchildren != 0 || t->deps) join_children(t);  // (most tasks create none)
  if (t->event) {
    // A detached task completes when its event is fulfilled (omp_fulfill_event).
    MR_future_wait(&t->event->done);
    set_current(t);
    t->event.reset();
  }
  if (t->node) complete(t->node.get());
  set_current(prev);
}

// The spark of a deferred task.
// A task that has not started is discarded when its region or taskgroup is cancelled.
bool discarded(const Task *t) {
  // acquire: as the cancellation points'.
  if (t->team->cancelled.load(std::memory_order_acquire)) return true;
  // acquire: as above.
  return t->in_group && t->in_group->load(std::memory_order_acquire);
}

void run_spark(void *arg) {
  auto *t = static_cast<Task *>(arg);
  // From here on this context stays on this engine's thread (a tied task).
  int e = MR_context_bind_here();
  Task *prev = current();
  if (e >= 0 && static_cast<size_t>(e) < t->team->engine_member.size() &&
      t->team->engine_member[e] >= 0)
    t->thread_num = t->team->engine_member[e];
  else
    t->thread_num_exact = false;  // the creator's number, on a thread that is no member's
  if (t->needs_exact_tid && !t->thread_num_exact)
    unsupported("GOMP_taskloop", "a reduction task run on a thread that is no member of its team");
  if (G.cancel_var && discarded(t)) {
    if (t->event) t->event.reset();  // nothing will run to fulfil it
    t->fn = [](void *) {};
  }
  run_body(t, prev);
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

// Back to the initial state: the body has joined its children and closed its taskgroups and
// the run cleared its dependence map (kept for the next task); what the creator set is reset.
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
  run_body(t, parent);
  give_back_included(t);
}

// The cut-off (create_task): this thread is an engine whose deque holds enough sparks for the
// idle engines (mrengine's granularity test says "do not spark").
bool enough_sparks() {
  return MR_engine_view_v3 != nullptr && !MR_par_cond_local_wsdeque_length();
}

// A new child of parent would be discarded (its region or its taskgroup is cancelled).
bool created_cancelled(Task *parent) {
  // acquire: as the cancellation points'.
  if (parent->team->cancelled.load(std::memory_order_acquire)) return true;
  std::atomic<bool> *f = group_flag(parent);
  // acquire: as above.
  return f && f->load(std::memory_order_acquire);
}
}  // namespace

void join_children(Task *t, std::size_t mark) {
  while (t->nchildren > mark) {
    Task *c = t->newest_child;
    t->newest_child = c->older;
    t->nchildren--;
    // A held child is forked by its last predecessor, maybe not yet: its parent's arrival at
    // st must come after that fork, which done (signalled by the child's body) follows.
    if (c->held) MR_future_wait(&c->node->done);
    MR_join_and_continue(&c->st);
    // The join may have run other tasks on this thread.
    set_current(t);
    size_t size = c->block_size, align = c->block_align;
    c->~Task();
    block_free(c, size, align);
  }
  for (auto &g : t->groups) g = std::min(g, t->nchildren);
  if (mark == 0 && t->deps) t->deps->clear();
}

}  // namespace mrg

using namespace mrg;

namespace mrg {
namespace {

// Write a taskloop task's bounds into its copy of the data: the first two fields (the ABI; with
// a reduction clause the descriptor follows them).
struct Bounds {
  bool ull;
  std::uint64_t lo, hi;
  bool reduction = false;  // the task indexes the reduction copies by omp_get_thread_num
};

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

// A detached task's event handle goes to the variable `detach` points to and to the first word
// of the data block, where gcc places the task's firstprivate copy of that variable (the ABI);
// both before the data is copied.
void set_event(void *detach, void *data, DepNode *ev) {
  auto handle = reinterpret_cast<uintptr_t>(ev);
  *static_cast<uintptr_t *>(detach) = handle;
  if (data) *static_cast<uintptr_t *>(data) = handle;
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
      (!if_clause || parent->final_ || parent->team->n == 1 || enough_sparks())) {
    run_included(parent, final_, fn, data, nullptr, nullptr);
    return;
  }
  bool has_deps = (flags & kDepend) && depend;
  // Untied tasks are run as tied ones (allowed: untied only permits migration).
  (void)kUntied;
  DepRef event;
  if ((flags & kDetach) && detach) {
    event = std::make_shared<DepNode>();
    // Before the data is copied: the task reads the handle from its copy of the variable.
    set_event(detach, data, event.get());
  }

  // A team of one thread has nobody else to run a deferred task: OpenMP lets its thread run
  // it at once, as programs written for one thread expect (a detached task stays deferred:
  // what fulfils its event may come later in this thread).
  bool alone = parent->team->n == 1 && !event;
  // The cut-off: when this engine's deque already holds --granularity-factor x engines sparks
  // (the engine's own granularity test; it also says "do not spark" on a thread that is not an
  // engine, whose tasks stay deferred: they go to the injector), idle engines have enough to steal, and another spark would only cost its record and its join:
  // run the task undeferred instead. Not a task with dependences (its creator would wait for
  // the predecessors), a detached one (what fulfils its event may come later in its creator),
  // or a taskloop's (the split into tasks is the program's request).
  auto cutoff = [&] { return !has_deps && !event && !bounds && enough_sparks(); };
  if (!if_clause || parent->final_ || alone || cutoff()) {
    // Undeferred (if(0) or the cut-off), included (in a final task) or alone: run here and now,
    // after its predecessors. A parent with no deferred child has none unfinished (every
    // earlier child ran to its end), so then the task's dependences name no predecessor and
    // need no record either: a later sibling that names the same storage needs nothing of a
    // task that has completed. On one thread every task is such a task.
    DepRef node;
    if (has_deps && parent->nchildren != 0) {
      node = std::make_shared<DepNode>();
      wait_preds(link_deps(parent, parse_depend(depend), node));
      set_current(parent);
    }
    if (cpyfn || bounds) {
      size_t align = arg_align > 0 ? static_cast<size_t>(arg_align) : 1;
      size_t bytes = (static_cast<size_t>(arg_size > 0 ? arg_size : 0) + align - 1) / align * align;
      char *buf = static_cast<char *>(aligned_alloc(align, bytes + align));
      if (!buf) die("out of memory for a task's data");
      if (cpyfn) cpyfn(buf, data);
      else if (arg_size > 0) memcpy(buf, data, static_cast<size_t>(arg_size));
      patch_data(buf, bounds);
      run_included(parent, final_, fn, buf, &node, &event);
      free(buf);
    } else {
      run_included(parent, final_, fn, data, &node, &event);
    }
    return;
  }

  // Deferred: one allocation for the record and a copy of the data after it.
  size_t align = arg_align > 0 ? static_cast<size_t>(arg_align) : 1;
  align = std::max(align, alignof(Task));
  size_t head = (sizeof(Task) + align - 1) / align * align;
  size_t size = head + static_cast<size_t>(arg_size > 0 ? arg_size : 0);
  size = (size + align - 1) / align * align;
  void *mem = block_alloc(size, align);
  if (!mem) die("out of memory for a task");
  Task *t = new (mem) Task;
  t->block_size = size;
  t->block_align = align;
  char *buf = static_cast<char *>(mem) + head;
  if (cpyfn) cpyfn(buf, data);
  else if (arg_size > 0) memcpy(buf, data, static_cast<size_t>(arg_size));
  patch_data(buf, bounds);
  inherit(t, parent, final_);
  t->fn = fn;
  t->data = buf;
  t->event = std::move(event);
  t->needs_exact_tid = bounds && bounds->reduction;
  t->older = parent->newest_child;
  parent->newest_child = t;
  parent->nchildren++;
  MR_sync_term_init(&t->st, 2);
  if (has_deps) {
    t->node = std::make_shared<DepNode>();
    t->node->task = t;
    std::vector<DepNode *> preds = link_deps(parent, parse_depend(depend), t->node);
    // Predecessors still running: the last of them forks the task when it completes. (Only
    // the parent reads `held`, written after the task may have started.)
    if (!preds.empty() && !register_succ(t->node.get(), preds)) {
      t->held = true;
      return;
    }
  }
  MR_fork_new_child(&t->st, run_spark, t);
}

// taskloop: split the iterations into tasks (grainsize, num_tasks, or one per team member),
// inside a taskgroup unless nogroup.
template <class T>
void taskloop(const char *symbol, void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
              long arg_size, long arg_align, unsigned flags, unsigned long num_tasks, T start,
              T end, T step) {
  std::uint64_t n;
  if constexpr (std::is_signed_v<T>) {
    __int128 s = start, e = end, i = step;
    n = i > 0 ? (s < e ? static_cast<std::uint64_t>((e - s + i - 1) / i) : 0)
              : (s > e ? static_cast<std::uint64_t>((s - e - i - 1) / -i) : 0);
  } else {
    unsigned __int128 s = start, e = end;
    if (flags & kUp) {
      n = s < e ? static_cast<std::uint64_t>((e - s + step - 1) / step) : 0;
    } else {
      unsigned __int128 k = static_cast<T>(-step);
      n = s > e ? static_cast<std::uint64_t>((s - e + k - 1) / k) : 0;
    }
  }
  bool reduction = (flags & kReduction) != 0;
  // No iterations, no tasks; a reduction still registers its copies, which the caller combines.
  if (n == 0 && !reduction) return;
  ensure_runtime();
  Task *self = current();
  std::uint64_t ntasks;
  // grainsize(strict:) gives every task exactly that many iterations but the last.
  std::uint64_t strict_grain = 0;
  if (flags & kGrainsize) {
    std::uint64_t g = num_tasks ? num_tasks : 1;
    if (flags & kStrict) {
      strict_grain = g;
      ntasks = (n + g - 1) / g;
    } else {
      ntasks = std::max<std::uint64_t>(1, n / g);
    }
  } else if (num_tasks) {
    ntasks = std::min<std::uint64_t>(num_tasks, n);
  } else {
    ntasks = std::min<std::uint64_t>(static_cast<std::uint64_t>(self->team->n), n);
  }
  if (n == 0) ntasks = 0;
  bool group = !(flags & kNogroup) || reduction;
  if (group) GOMP_taskgroup_start();
  if (reduction) {
    // The descriptor is the data's third field, after the bounds; the caller combines the
    // copies after we return and unregisters it.
    auto *rd = static_cast<std::uintptr_t **>(data)[2];
    red_allocate(rd, self->team->n);
    self->red_stack.back() = std::make_shared<RedScope>(RedScope{rd, red_visible(self)});
  }
  (void)symbol;
  std::uint64_t q = ntasks ? n / ntasks : 0, r = ntasks ? n % ntasks : 0, lo = 0;
  unsigned task_flags = flags & (kUntied | kFinal);
  for (std::uint64_t k = 0; k < ntasks; k++) {
    std::uint64_t hi = strict_grain ? std::min(n, lo + strict_grain) : lo + q + (k < r ? 1 : 0);
    Bounds b;
    b.ull = !std::is_signed_v<T>;
    b.reduction = reduction;
    b.lo = static_cast<std::uint64_t>(start + static_cast<T>(lo) * step);
    b.hi = hi == n ? static_cast<std::uint64_t>(end) : static_cast<std::uint64_t>(start + static_cast<T>(hi) * step);
    create_task(fn, data, cpyfn, arg_size, arg_align, (flags & kIf) != 0, task_flags, nullptr,
                nullptr, &b);
    lo = hi;
  }
  if (group) GOMP_taskgroup_end();
}

}  // namespace
}  // namespace mrg

MRG_EXPORT void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                          long arg_size, long arg_align, bool if_clause, unsigned flags,
                          void **depend, int priority, void *detach) {
  (void)priority;  // no priorities: every task is a spark in creation order
  create_task(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, detach, nullptr);
}

MRG_EXPORT void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                              long arg_size, long arg_align, unsigned flags,
                              unsigned long num_tasks, int priority, long start, long end,
                              long step) {
  (void)priority;
  taskloop<long>("GOMP_taskloop", fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, start,
                 end, step);
}

MRG_EXPORT void GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                                  long arg_size, long arg_align, unsigned flags,
                                  unsigned long num_tasks, int priority,
                                  unsigned long long start, unsigned long long end,
                                  unsigned long long step) {
  (void)priority;
  taskloop<unsigned long long>("GOMP_taskloop_ull", fn, data, cpyfn, arg_size, arg_align, flags,
                               num_tasks, start, end, step);
}

MRG_EXPORT void omp_fulfill_event(uintptr_t event) {
  auto *ev = reinterpret_cast<DepNode *>(event);
  if (!ev) die("omp_fulfill_event: no such event");
  MR_future_signal(&ev->done, 1);
}

MRG_EXPORT void GOMP_taskwait(void) {
  Task *self = current();
  join_children(self);
}

MRG_EXPORT void GOMP_taskwait_depend(void **depend) {
  Task *self = current();
  if (!depend) return;
  std::vector<Dep> deps = parse_depend(depend);
  wait_preds(link_deps(self, deps, nullptr));
  set_current(self);
}

MRG_EXPORT void GOMP_taskyield(void) {
  // A tied task may only be resumed on its own thread, and this runtime does not interleave
  // tasks on one thread except at joins: nothing to do.
}

MRG_EXPORT void GOMP_taskgroup_start(void) {
  Task *self = current();
  self->groups.push_back(self->nchildren);
  self->red_stack.push_back(nullptr);
  if (G.cancel_var) self->group_flags.push_back(std::make_shared<std::atomic<bool>>(false));
}

MRG_EXPORT void GOMP_taskgroup_end(void) {
  Task *self = current();
  if (self->groups.empty()) die("GOMP_taskgroup_end without GOMP_taskgroup_start");
  size_t mark = self->groups.back();
  self->groups.pop_back();
  join_children(self, mark);
  if (!self->group_flags.empty()) self->group_flags.pop_back();
  if (!self->red_stack.empty()) self->red_stack.pop_back();
}

// ---- task reductions --------------------------------------------------------------------------

namespace mrg {

void red_allocate(std::uintptr_t *data, int n) {
  for (std::uintptr_t *d = data; d; d = reinterpret_cast<std::uintptr_t *>(d[4])) {
    size_t size = d[1], align = std::max<size_t>(d[2], sizeof(void *));
    size_t bytes = (size * static_cast<size_t>(n) + align - 1) / align * align;
    void *array = aligned_alloc(align, bytes ? bytes : align);
    if (!array) die("out of memory for a task reduction");
    memset(array, 0, bytes);  // each copy's "initialised" flag starts clear
    d[2] = reinterpret_cast<std::uintptr_t>(array);
    d[6] = d[2] + size * static_cast<size_t>(n);
  }
}

std::shared_ptr<RedScope> red_visible_in_groups(Task *t) {
  for (auto it = t->red_stack.rbegin(); it != t->red_stack.rend(); ++it)
    if (*it) return *it;
  return t->red_in;
}

void ws_reductions(Task *self, WorkShare *w, std::uintptr_t *data) {
  int n = self->team->n;
  std::call_once(w->red_once, [&] {
    auto r = std::make_shared<WsRed>();
    red_allocate(data, n);
    for (std::uintptr_t *d = data; d; d = reinterpret_cast<std::uintptr_t *>(d[4]))
      r->arrays.emplace_back(d[2], d[6]);
    // relaxed: published by call_once.
    r->left.store(n, std::memory_order_relaxed);
    w->red = r;
  });
  // Every member's descriptor (on its own stack) points at the same arrays.
  size_t k = 0;
  for (std::uintptr_t *d = data; d && k < w->red->arrays.size();
       d = reinterpret_cast<std::uintptr_t *>(d[4]), k++) {
    d[2] = w->red->arrays[k].first;
    d[6] = w->red->arrays[k].second;
  }
  self->red_stack.push_back(std::make_shared<RedScope>(RedScope{data, red_visible(self)}));
  self->ws_reds.emplace_back(w->red, nullptr);
}

}  // namespace mrg

MRG_EXPORT void GOMP_workshare_task_reduction_unregister(bool cancelled) {
  (void)cancelled;
  Task *self = current();
  if (self->ws_reds.empty()) die("GOMP_workshare_task_reduction_unregister without a reduction");
  // Constructs with task reductions nest (scope in scope), and each unregisters at its end:
  // the innermost is the latest.
  std::shared_ptr<WsRed> r = self->ws_reds.back().first;
  WorkShare *scope_ws = self->ws_reds.back().second;
  self->ws_reds.pop_back();
  if (!self->red_stack.empty()) self->red_stack.pop_back();
  // A scope construct's work-share ends here (a loop's or sections' ended at its end call).
  if (scope_ws) ws_release(self->team, scope_ws);
  // Member 0 combines the copies into the list items before it unregisters; the others call
  // this at once: the barrier keeps them from reading the items before the combination.
  team_barrier(self->team);
  // acq_rel: the last member sees every other member done with the arrays.
  if (r->left.fetch_sub(1, std::memory_order_acq_rel) == 1)
    for (auto &a : r->arrays) free(reinterpret_cast<void *>(a.first));
}

MRG_EXPORT void GOMP_taskgroup_reduction_register(uintptr_t *data) {
  Task *self = current();
  if (self->red_stack.empty()) die("GOMP_taskgroup_reduction_register outside a taskgroup");
  red_allocate(data, self->team->n);
  self->red_stack.back() = std::make_shared<RedScope>(RedScope{data, red_visible(self)});
}

MRG_EXPORT void GOMP_taskgroup_reduction_unregister(uintptr_t *data) {
  for (uintptr_t *d = data; d; d = reinterpret_cast<uintptr_t *>(d[4]))
    free(reinterpret_cast<void *>(d[2]));
}

// Map each of ptrs[0..cnt-1] (an original list item, or a copy of one) to the running thread's
// copy; for i < cntorig, also give the original's address in ptrs[cnt + i].
MRG_EXPORT void GOMP_task_reduction_remap(size_t cnt, size_t cntorig, void **ptrs) {
  Task *self = current();
  if (!self->thread_num_exact)
    unsupported("GOMP_task_reduction_remap", "an in_reduction task run on a thread that is no member of its team");
  auto tid = static_cast<uintptr_t>(self->thread_num);
  std::shared_ptr<RedScope> scope = red_visible(self);
  for (size_t i = 0; i < cnt; i++) {
    auto p = reinterpret_cast<uintptr_t>(ptrs[i]);
    bool found = false;
    for (RedScope *s = scope.get(); s && !found; s = s->outer.get()) {
      for (uintptr_t *d = s->data; d && !found; d = reinterpret_cast<uintptr_t *>(d[4])) {
        uintptr_t offset = 0, orig = 0;
        for (uintptr_t j = 0; j < d[0]; j++) {
          uintptr_t *ent = d + 7 + 3 * j;
          if (ent[0] == p) {
            offset = ent[1], orig = p, found = true;
            break;
          }
        }
        if (!found && p >= d[2] && p < d[6]) {
          uintptr_t off = (p - d[2]) % d[1];
          for (uintptr_t j = 0; j < d[0]; j++) {
            uintptr_t *ent = d + 7 + 3 * j;
            if (ent[1] == off) {
              offset = off, orig = ent[0], found = true;
              break;
            }
          }
        }
        if (found) {
          ptrs[i] = reinterpret_cast<void *>(d[2] + tid * d[1] + offset);
          if (i < cntorig) ptrs[cnt + i] = reinterpret_cast<void *>(orig);
        }
      }
    }
    if (!found) die("GOMP_task_reduction_remap: %p is in no task reduction", reinterpret_cast<void *>(p));
  }
}
