// sanitizer.hpp: telling ThreadSanitizer about fiber switches (./configure
// --enable-sanitizer=thread defines MR_TSAN). Without these, TSan would take every context switch
// for one thread's stack jumping about, and report the hand-over of a context between engines as
// races. Each context, engine 0's scheduler fiber and each thread's own stack has a TSan fiber;
// every switch names its destination just before resume_with (the ontop function then runs
// as the destination, which is where it runs). Outside a TSan build these are empty.
#ifndef MR_ENGINE_SANITIZER_HPP
#define MR_ENGINE_SANITIZER_HPP

#include "config.h"

#ifdef MR_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace mr::engine::san {

#ifdef MR_TSAN
inline void *fiber_create() { return __tsan_create_fiber(0); }
inline void fiber_destroy(void *f) {
  if (f) __tsan_destroy_fiber(f);
}
inline void *current_fiber() { return __tsan_get_current_fiber(); }
// flags 0: the switch orders what the source did before it with what the destination does next.
inline void switch_to(void *f) { __tsan_switch_to_fiber(f, 0); }
#else
inline void *fiber_create() { return nullptr; }
inline void fiber_destroy(void *) {}
inline void *current_fiber() { return nullptr; }
inline void switch_to(void *) {}
#endif

}  // namespace mr::engine::san

#endif
