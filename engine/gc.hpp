// gc.hpp: what a garbage collector is told of mrengine's threads and stacks (mrengine_gc.h).
//
// With no collector's hooks installed at MR_init, a switch costs one predicted branch more
// (switch_stacks) and nothing else runs. With hooks, every stack of ours (each context's, engine
// 0's scheduler fiber's) and every thread's own stack that runs contexts (the primordial
// thread's, each engine's, each backup thread's) has a Stack record in one list, which a
// collector that has stopped the threads walks without a lock (each_suspended); each switch
// records, on the stack arrived at, where the stack left was saved, and calls the collector's
// switch hooks around it (doc/gc.md).
#ifndef MR_ENGINE_GC_HPP
#define MR_ENGINE_GC_HPP

#include <signal.h>

#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>

#include <atomic>
#include <cstddef>
#include <cstring>

#include "mrengine_gc.h"

namespace mr::engine::gc {

// One stack that a thread may leave for another. Its bounds are fixed when it is listed; `saved`
// is written only by the thread that leaves the stack or arrives on it, between the collector's
// switch_begin and switch_end on that thread, which the collector never stops (mrengine_gc.h),
// and read by the collector with that thread stopped: relaxed, the stop orders them.
struct Stack {
  void *lo = nullptr;  // lowest address
  void *hi = nullptr;  // base (stacks grow down)
  // relaxed (above): where the registers of the stack left were saved; nullptr while a thread
  // runs on it or before it was ever left.
  std::atomic<void *> saved{nullptr};
  // The list of every listed stack: `next` is read without a lock by the collector (acquire,
  // pairs with the release stores of add and remove), `prev` only under the list's lock.
  std::atomic<Stack *> next{nullptr};
  Stack *prev = nullptr;
  bool listed = false;  // under the list's lock
  // The records of its owner's that hold pointers the program handed to the runtime (a context's
  // task and spawned function's argument), which a collector scans whether or
  // not a thread runs on the stack: roots(owner, fn, arg) calls fn on each range and returns how
  // many. Set before the stack is listed (link's release publishes them); null: none.
  std::size_t (*roots)(const void *owner, MR_GcStackFn fn, void *arg) = nullptr;
  const void *owner = nullptr;
};

// The hooks of the running runtime: set by install() before its first thread or context is made,
// cleared by uninstall() after its last is gone, so every reader runs in between.
struct Hooks {
  bool on = false;  // any hook set
  MR_GcHooks h{};
};
extern Hooks g_hooks;

// Called only by MR_init's start, before any engine thread or context exists.
void install(const MR_GcHooks *hooks);
// Called only when the runtime is freed, once every thread it made has ended.
void uninstall();

// Called by each thread mrengine makes: first of all, and last of all.
void thread_begin();
void thread_end();

// List a stack of ours (its bounds from the stack allocator), or the calling thread's own
// stack; unlist it before the stack is unmapped or its thread ends. No-ops without hooks.
void add(Stack *s, const boost::context::stack_context &sc);
void add_own(Stack *s);
// List a record of roots that is not a stack (its roots and owner set before: a collector walks
// only its roots); unlist it with remove before the memory its roots name is freed. No-op without
// hooks.
void add_roots(Stack *s);
void remove(Stack *s);

// What the ontop function of a switch calls right after it arrived on `dest`'s stack, with the
// continuation `back` of the stack `from` it left, before it publishes `from` to anyone else.
inline void arrived(Stack &from, Stack &dest, const boost::context::fiber &back) {
  // A Boost.Context fiber is exactly the stack pointer its jump saved, where the registers of the
  // stack left lie (its one member, fcontext_t).
  static_assert(sizeof(boost::context::fiber) == sizeof(void *), "a fiber is its fcontext");
  void *sp;
  std::memcpy(&sp, static_cast<const void *>(&back), sizeof sp);
  from.saved.store(sp, std::memory_order_relaxed);  // relaxed: see Stack
  dest.saved.store(nullptr, std::memory_order_relaxed);
  if (g_hooks.h.switch_end) g_hooks.h.switch_end(g_hooks.h.data, dest.lo, dest.hi);
}

// Switch from the stack `from` to the continuation `to` on the stack `dest`: `leave()` runs last
// before the jump (the sanitizers' part), and `ontop(back, arrive)` is the switch's ontop
// function, which must call arrive(back) once it is on dest's stack, before it publishes the
// stack it left. Without hooks `arrive` does nothing, and the only cost is the branch here.
template <class Leave, class Ontop>
void switch_stacks(boost::context::fiber &&to, Stack &from, Stack &dest, Leave leave, Ontop ontop) {
  if (!g_hooks.on) [[likely]] {
    leave();
    (void)std::move(to).resume_with([ontop](boost::context::fiber &&back) mutable {
      return ontop(std::move(back), [](const boost::context::fiber &) {});
    });
    return;
  }
  if (g_hooks.h.switch_begin) g_hooks.h.switch_begin(g_hooks.h.data);
  leave();
  (void)std::move(to).resume_with([ontop, &from, &dest](boost::context::fiber &&back) mutable {
    return ontop(std::move(back),
                 [&from, &dest](const boost::context::fiber &b) { arrived(from, dest, b); });
  });
}

// Boost.Context's fiber constructor jumps to the new stack and back, to place its record there:
// a switch that does not come through switch_stacks, so the collector's hooks never see it. A
// thread stopped in between has its stack pointer on the new stack, which is not listed yet, while
// the collector still has the stack it left as the thread's: it would scan from one to the other's
// base, across whatever lies between (unmapped memory: a fault in the marker). With hooks, the
// thread making a fiber holds this around the constructor: every asynchronous signal is blocked,
// so a collector that stops threads with a signal stops this one before or after the jump, on its
// own stack (the stop is only delayed: nothing in the window waits for anything, the stack being
// mapped before). A collector that stops threads at safepoints of its own has none in there.
class DeferStops {
 public:
  DeferStops();
  ~DeferStops();
  DeferStops(const DeferStops &) = delete;
  DeferStops &operator=(const DeferStops &) = delete;

 private:
  sigset_t old_;
  bool blocked_ = false;
};

// MR_gc_each_suspended_stack (mrengine_gc.h): no lock, no allocation.
std::size_t each_suspended(MR_GcStackFn fn, void *arg);
// MR_gc_each_root_range (mrengine_gc.h): no lock, no allocation.
std::size_t each_root_range(MR_GcStackFn fn, void *arg);

// The child of a fork() (fork.cpp): the list, which a thread that no longer exists may have been
// changing, starts empty with a fresh lock; the hooks stay off until a runtime of its own starts.
// running_on: the stack of the context that forked (nullptr if it ran on its thread's own), which
// is the child's thread's stack from now on: add_own gives its bounds, not the thread's.
void forget_after_fork(const boost::context::stack_context *running_on);

}  // namespace mr::engine::gc

#endif
