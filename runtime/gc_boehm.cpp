// gc_boehm.cpp: MR_gc_use_boehm, the hooks of mrengine_gc.h for the Boehm-Demers-Weiser
// collector (bdwgc 8.2 or later; doc/gc.md). Without bdwgc at configure time, MR_ENOTSUP.
#include "config.h"

#include "gc_config.hpp"
#include "mrengine_gc.h"

#ifdef HAVE_BDWGC

#define GC_THREADS
#include <gc/gc.h>
#include <gc/gc_mark.h>

#include <mutex>

#include "engine/fatal.hpp"

namespace {

// The collector's handle of the calling thread (GC_get_my_stackbottom), for GC_set_stackbottom:
// fetched before the allocation lock is taken, since fetching takes it.
thread_local void *t_handle = nullptr;

// Each thread mrengine makes: registered with its own stack before it runs anything.
void thread_begin(void *) {
  GC_stack_base sb;
  if (GC_get_stack_base(&sb) != GC_SUCCESS)
    mr::engine::fatal("bdwgc cannot find the stack of a thread of mrengine's");
  (void)GC_register_my_thread(&sb);  // GC_SUCCESS, or GC_DUPLICATE if it already was
  t_handle = nullptr;
}

void thread_end(void *) {
  t_handle = nullptr;
  (void)GC_unregister_my_thread();
}

// A switch: the allocation lock is held from here to switch_end, so no collection stops the
// thread while its stack pointer and its stack bottom disagree (GC_set_stackbottom's contract),
// nor while the stack it left is not yet reported as suspended.
void switch_begin(void *) {
  if (!t_handle) {
    GC_stack_base sb;
    t_handle = GC_get_my_stackbottom(&sb);
  }
  GC_alloc_lock();
}

void switch_end(void *, void *, void *hi) {
  GC_stack_base sb{};
  sb.mem_base = hi;
  GC_set_stackbottom(t_handle, &sb);
  GC_alloc_unlock();
}

void push_stack(void *lo, void *hi, void *) { GC_push_all_eager(lo, hi); }

// The procedure set before ours, called first (gc_mark.h asks a client's to).
GC_push_other_roots_proc g_chained = nullptr;

// Called by the collector with every thread stopped: the suspended stacks, and the runtime's
// records that hold the program's pointers, are roots.
void push_other_roots() {
  if (g_chained) g_chained();
  (void)MR_gc_each_suspended_stack(push_stack, nullptr);
  (void)MR_gc_each_root_range(push_stack, nullptr);
}

const MR_GcHooks kHooks = {sizeof(MR_GcHooks), thread_begin, thread_end,
                           switch_begin,       switch_end,   nullptr};

std::once_flag g_wired;

}  // namespace

MR_EXTERN int MR_gc_use_boehm(MR_Config *cfg) {
  int rc = MR_gc_set_hooks(cfg, &kHooks);
  if (rc != 0) return rc;
  std::call_once(g_wired, [] {
    GC_allow_register_threads();  // the threads of thread_begin register themselves
    // The collector's setter and getter need outside synchronization (gc_mark.h): its lock.
    GC_alloc_lock();
    g_chained = GC_get_push_other_roots();
    GC_set_push_other_roots(push_other_roots);
    GC_alloc_unlock();
  });
  return 0;
}

#else

MR_EXTERN int MR_gc_use_boehm(MR_Config *cfg) {
  // A bad configuration is refused first, as in a build with bdwgc (MR_gc_set_hooks's check).
  return mr::runtime::gc_config_ok(cfg) ? MR_ENOTSUP : MR_EINVAL;
}

#endif
