// scope.cpp: beginning, spawning into and ending scopes (scope.hpp).
#include "config.h"

#include "scope.hpp"

#include <new>

#include "engine.hpp"
#include "fatal.hpp"
#include "join.hpp"

namespace mr::engine {

void scope_begin(Scope *s) {
  Join *j = &s->join;
  // relaxed: the scope reaches other threads only through its sparks, whose push publishes it
  // (release, D1), or through whatever the owner publishes it by.
  new (&j->count) std::atomic<std::uint32_t>(1);
  j->channel = static_cast<std::uint32_t>(current_channel());
  j->parent = nullptr;
}

int scope_spawn(Scope *s, MR_TaskFn fn, void *env) {
  Join *j = &s->join;
  // relaxed: an RMW reads the latest count, so once the end has brought it to 0 every later
  // spawn sees 0. A spawn that succeeds is the owner's (before its end) or a task's of s (whose
  // own unit keeps the count above 0), so it never races the end for the last unit.
  std::uint32_t c = j->count.load(std::memory_order_relaxed);
  do {
    if (c == 0) return MR_ECLOSED;
    if (c == UINT32_MAX) fatal("MR_scope_spawn: 4294967295 tasks of one scope unfinished");
    // CAS relaxed: the task's arrival comes after this unit in the counter's order, since it
    // happens after the spark's push (release) and its take (acquire), both after this RMW.
  } while (!j->count.compare_exchange_weak(c, c + 1, std::memory_order_relaxed,
                                           std::memory_order_relaxed));
  fork(j, fn, env, /*term=*/false);
  return 0;
}

int scope_end(Scope *s) {
  Join *j = &s->join;
  // relaxed: only the owner ends s, and it wrote the count last or reads a task's unit, not 0.
  if (j->count.load(std::memory_order_relaxed) == 0) return MR_ECLOSED;
  Engine *e = this_engine();
  // The tasks still on this engine's deque, newest first, run here (a task run here may spawn
  // more, taken too); they arrive together below.
  std::uint32_t ran = e ? run_own_sparks(e, j) : 0;
  // Arrive for the tasks run here, and for the owner's unit too if nothing else is left: the
  // count then reaches 0 in this RMW and the scope ends without a suspension.
  std::uint32_t c = j->count.load(std::memory_order_relaxed);
  for (;;) {
    if (c < ran + 1) fatal("MR_scope_end: more tasks finished than were spawned into the scope");
    std::uint32_t to = c == ran + 1 ? 0 : c - ran;
    if (to == c) break;  // nothing run here and tasks left: the suspension's RMW arrives
    // CAS acquire: reaching 0 pairs with the release arrivals of the tasks that finished
    // elsewhere (their effects become visible); no release is needed, since nobody but the
    // owner acts on the tasks run here. Failure relaxed: the loop reads the count again.
    if (j->count.compare_exchange_weak(c, to, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      if (to == 0) return 0;
      break;
    }
  }
  // The owner's own unit, given back once its continuation is saved; the last task resumes it
  // (J1), or, if every task finished meanwhile, it goes on at once.
  suspend_on_join(e, j);
  return 0;
}

}  // namespace mr::engine
