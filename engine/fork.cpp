// fork.cpp: the fork handlers (fork.hpp). The child of a fork() has one thread, the one that
// forked; the parent's engine and backup threads are gone, with whatever they were doing and
// whatever locks they held. So the child abandons the parent's runtime: it never joins or
// touches those threads and frees nothing of the runtime (another thread may have been changing
// any record at the moment of the fork); the records, stacks and descriptors stay allocated in
// the child, which is a leak, and cheaper than a crash. What lives outside the runtime and the
// child may use again is made usable here: the context registry, the claims table of
// MR_wait_fd, the tracing flag and its lock, the stack overflow handler and the calling thread's
// own engine and backup pointers.
#include "config.h"

#include "fork.hpp"

#include <pthread.h>

#include "blocking.hpp"
#include "context.hpp"
#include "engine.hpp"
#include "fatal.hpp"
#include "fd_claims.hpp"
#include "gc.hpp"
#include "overflow.hpp"
#include "trace.hpp"

namespace mr::engine {

namespace {

void in_child() {
  fd_claims_fork_child();
  contexts_forget_after_fork();
  const Context *c = context_on_this_thread();  // before the engine and backup are forgotten
  gc::forget_after_fork(c ? &c->stack : nullptr);
  trace::forget_after_fork();
  overflow::uninstall();  // a later MR_init installs it again (and keeps the older action)
  blocking_forget_thread();
  set_current(nullptr);
  g_rt = nullptr;  // leaked (above)
  // relaxed: the child has one thread; the next MR_init publishes its runtime as usual.
  g_running.store(false, std::memory_order_relaxed);
  g_claimed.store(false, std::memory_order_relaxed);  // relaxed: as g_running's
}

}  // namespace

void watch_forks() {
  // A function-local static: registered once whichever thread starts a runtime first.
  static const int rc = pthread_atfork(nullptr, nullptr, in_child);
  MR_CHECK(rc == 0, "cannot register the fork handlers (pthread_atfork)");
}

}  // namespace mr::engine
