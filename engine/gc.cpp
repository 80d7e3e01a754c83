// gc.cpp: the collector's hooks and the list of stacks it walks (gc.hpp).
#include "config.h"

#include "gc.hpp"

#include <pthread.h>

#include <mutex>
#include <new>

#include "fatal.hpp"

namespace mr::engine::gc {

Hooks g_hooks;

namespace {

// Every listed stack. Changed under g_list_lock; walked without it by a collector that stopped
// the threads (each_suspended), which may have stopped one in the middle of add or remove: each
// changes the list with one release store of a `next` (or of g_head), after the record it links
// is complete and before the stack it unlinks is unmapped, so a walk sees the list before or
// after the change, never a record half made or a stack gone.
std::mutex g_list_lock;
std::atomic<Stack *> g_head{nullptr};  // release stores under the lock, acquire loads in walks

// In the child of a fork() made on a context's stack: that stack, on which the child's thread runs
// (fork.cpp). Written only there, with one thread.
struct Bounds {
  void *lo = nullptr, *hi = nullptr;
};
Bounds g_forked_on;

bool on_forked_stack(const char *p) {
  return p >= static_cast<char *>(g_forked_on.lo) && p < static_cast<char *>(g_forked_on.hi);
}

void link(Stack *s) {
  std::lock_guard<std::mutex> lk(g_list_lock);
  Stack *h = g_head.load(std::memory_order_relaxed);  // relaxed: written only under the lock
  s->prev = nullptr;
  s->next.store(h, std::memory_order_relaxed);  // relaxed: published by the store below
  if (h) h->prev = s;
  g_head.store(s, std::memory_order_release);  // release: a walk that reads s sees it whole
  s->listed = true;
}

}  // namespace

void install(const MR_GcHooks *hooks) {
  g_hooks = Hooks{};
  if (!hooks) return;
  g_hooks.h = *hooks;
  g_hooks.on = hooks->thread_begin || hooks->thread_end || hooks->switch_begin || hooks->switch_end;
}

void uninstall() {
  // What is still listed is a record the runtime could not unlist itself: the roots of a loop
  // control whose master was dropped before MR_lc_finish (the loop is never freed). Unlisted
  // here, so that nothing is listed without a runtime (mrengine_gc.h).
  std::lock_guard<std::mutex> lk(g_list_lock);
  for (Stack *s = g_head.load(std::memory_order_relaxed); s;) {  // relaxed: under the lock
    Stack *n = s->next.load(std::memory_order_relaxed);
    s->listed = false;
    s->prev = nullptr;
    s = n;
  }
  g_head.store(nullptr, std::memory_order_release);  // release: as remove's
  g_hooks = Hooks{};
}

void thread_begin() {
  if (g_hooks.h.thread_begin) g_hooks.h.thread_begin(g_hooks.h.data);
}

void thread_end() {
  if (g_hooks.h.thread_end) g_hooks.h.thread_end(g_hooks.h.data);
}

void add(Stack *s, const boost::context::stack_context &sc) {
  if (!g_hooks.on) return;
  s->hi = sc.sp;  // Boost.Context's sp is the top of the stack
  s->lo = static_cast<char *>(sc.sp) - sc.size;
  s->saved.store(nullptr, std::memory_order_relaxed);  // relaxed: published by link's release
  link(s);
}

void add_own(Stack *s) {
  if (!g_hooks.on) return;
  pthread_attr_t a;
  void *addr = nullptr;
  std::size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &a) == 0) {
    if (pthread_attr_getstack(&a, &addr, &size) != 0) addr = nullptr;
    pthread_attr_destroy(&a);
  }
  // Without its bounds the collector could not be told where this stack is: never on Linux.
  if (!addr) fatal("cannot find the bounds of a thread's stack for the collector's hooks");
  s->lo = addr;
  s->hi = static_cast<char *>(addr) + size;
  // The frame's address, not a local's: a sanitizer may keep locals on a stack of its own.
  const char *here = static_cast<const char *>(__builtin_frame_address(0));
  if (on_forked_stack(here)) {
    // The child of a fork() made on a context: its thread runs on that context's stack.
    s->lo = g_forked_on.lo;
    s->hi = g_forked_on.hi;
  } else if (here < static_cast<char *>(s->lo) || here >= static_cast<char *>(s->hi)) {
    // A stack of the program's own (a coroutine's): its bounds are not to be had.
    fatal("a runtime with a collector's hooks started on a stack that is not its thread's own");
  }
  s->saved.store(nullptr, std::memory_order_relaxed);  // relaxed: published by link's release
  link(s);
}

void add_roots(Stack *s) {
  if (!g_hooks.on) return;
  s->lo = s->hi = nullptr;
  s->saved.store(nullptr, std::memory_order_relaxed);  // relaxed: never left, so never walked
  link(s);
}

void remove(Stack *s) {
  std::lock_guard<std::mutex> lk(g_list_lock);
  if (!s->listed) return;
  Stack *n = s->next.load(std::memory_order_relaxed);  // relaxed: written only under the lock
  if (s->prev)
    s->prev->next.store(n, std::memory_order_release);  // release: as link's
  else
    g_head.store(n, std::memory_order_release);
  if (n) n->prev = s->prev;
  s->listed = false;
  s->prev = nullptr;
}

DeferStops::DeferStops() {
  if (!g_hooks.on) return;
  sigset_t s;
  sigfillset(&s);
  // The synchronous ones stay: a fault in the window must still be reported as one.
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP}) sigdelset(&s, sig);
  blocked_ = pthread_sigmask(SIG_BLOCK, &s, &old_) == 0;
}

DeferStops::~DeferStops() {
  if (blocked_) pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

std::size_t each_suspended(MR_GcStackFn fn, void *arg) {
  std::size_t n = 0;
  // acquire: pairs with the release stores of link and remove.
  for (Stack *s = g_head.load(std::memory_order_acquire); s;
       s = s->next.load(std::memory_order_acquire)) {
    void *sp = s->saved.load(std::memory_order_relaxed);  // relaxed: see Stack
    if (!sp) continue;
    fn(sp, s->hi, arg);
    n++;
  }
  return n;
}

std::size_t each_root_range(MR_GcStackFn fn, void *arg) {
  std::size_t n = 0;
  // acquire: pairs with the release stores of link and remove (and so publishes roots, owner).
  for (Stack *s = g_head.load(std::memory_order_acquire); s;
       s = s->next.load(std::memory_order_acquire))
    if (s->roots) n += s->roots(s->owner, fn, arg);
  return n;
}

void forget_after_fork(const boost::context::stack_context *running_on) {
  if (running_on && running_on->sp) {
    g_forked_on.hi = running_on->sp;  // Boost.Context's sp is the top of the stack
    g_forked_on.lo = static_cast<char *>(running_on->sp) - running_on->size;
  } else if (!on_forked_stack(static_cast<const char *>(__builtin_frame_address(0)))) {
    // Forked on the thread's own stack. Else (a fork with no context, or from a primordial that
    // runs on the stack an earlier fork left it) that stack is still this thread's: kept.
    g_forked_on = Bounds{};
  }
  new (&g_list_lock) std::mutex;  // re-made, not unlocked: another thread may have held it
  g_head.store(nullptr, std::memory_order_relaxed);  // relaxed: the child has one thread
  g_hooks = Hooks{};
}

}  // namespace mr::engine::gc
