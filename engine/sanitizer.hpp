// sanitizer.hpp: telling ThreadSanitizer and AddressSanitizer about fiber switches.
//
// ./configure --enable-sanitizer=thread defines MR_TSAN; =address defines MR_ASAN. Without these
// annotations TSan would take every context switch for one thread's stack jumping about (and
// report the hand-over of a context between engines as a race), and ASan would check accesses
// against the wrong stack's bounds. Everything that runs on a stack of its own (a context, engine
// 0's scheduler fiber, each thread's own stack) has a Fiber record. Every switch calls
// leave(from, to) just before resume_with, and the ontop function, which is the first code to
// run on the destination's stack, calls arrive(to). Outside a sanitizer build these are empty.
#ifndef MR_ENGINE_SANITIZER_HPP
#define MR_ENGINE_SANITIZER_HPP

#include "config.h"

#include <pthread.h>

#include <boost/context/stack_context.hpp>

#include <cstddef>

#ifdef MR_TSAN
#include <sanitizer/tsan_interface.h>
#endif
#ifdef MR_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace mr::engine::san {

struct Fiber {
  void *tsan = nullptr;          // TSan's fiber
  bool tsan_owned = false;       // created by us (a thread's own fiber is TSan's)
  void *asan_fake = nullptr;     // ASan's fake stack, saved while this fiber is switched away
  const void *bottom = nullptr;  // the stack's lowest address and size, for ASan
  std::size_t size = 0;
};

// The calling thread's own stack. Called by the thread itself.
inline void init_thread(Fiber &f) {
#ifdef MR_TSAN
  f.tsan = __tsan_get_current_fiber();
#endif
#ifdef MR_ASAN
  pthread_attr_t a;
  if (pthread_getattr_np(pthread_self(), &a) == 0) {
    void *addr = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&a, &addr, &size) == 0) {
      f.bottom = addr;
      f.size = size;
    }
    pthread_attr_destroy(&a);
  }
#endif
  (void)f;
}

// A fiber on a stack we allocated. Any thread.
inline void init_stack(Fiber &f, const boost::context::stack_context &s) {
#ifdef MR_TSAN
  f.tsan = __tsan_create_fiber(0);
  f.tsan_owned = true;
#endif
  f.bottom = static_cast<const char *>(s.sp) - s.size;
  f.size = s.size;
}

// The fiber will never run again; its stack is about to be unmapped without unwinding, so its
// frames' ASan poisoning is cleared first (the address range may be mapped again).
inline void forget(Fiber &f) {
#ifdef MR_TSAN
  if (f.tsan_owned) __tsan_destroy_fiber(f.tsan);
#endif
#ifdef MR_ASAN
  if (f.bottom) __asan_unpoison_memory_region(f.bottom, f.size);
#endif
  f = Fiber{};
}

// Right before resume_with from `from` to `to`.
inline void leave(Fiber &from, const Fiber &to) {
#ifdef MR_TSAN
  // flags 0: the switch orders what `from` did before it with what `to` does next.
  __tsan_switch_to_fiber(to.tsan, 0);
#endif
#ifdef MR_ASAN
  __sanitizer_start_switch_fiber(&from.asan_fake, to.bottom, to.size);
#endif
  (void)from;
  (void)to;
}

// First thing on `self`'s stack after a switch to it (in the ontop function).
inline void arrive(Fiber &self) {
#ifdef MR_ASAN
  __sanitizer_finish_switch_fiber(self.asan_fake, nullptr, nullptr);
#endif
  (void)self;
}

}  // namespace mr::engine::san

#endif
