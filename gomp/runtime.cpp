// runtime.cpp: the lazy start of mrengine. The first construct that needs engines starts it,
// unless the program started it itself; it never stops (doc/gomp.md), but the child of a fork()
// has none and starts its own (fork.cpp).
#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>

#include "env.hpp"
#include "fatal.hpp"
#include "mrengine.h"
#include "runtime.hpp"

namespace mrg {

namespace {

std::mutex init_lock;
// Set once the runtime is known to run and G.engines holds its engine count (the program's own
// mrengine, or the one started here); it never stops (doc/gomp.md).
std::atomic<bool> runtime_known{false};

}  // namespace

void ensure_runtime() {
  // acquire: pairs with the release store below, so G.engines (written before it) is visible.
  if (runtime_known.load(std::memory_order_acquire)) return;
  read_environment_once();
  std::lock_guard<std::mutex> lk(init_lock);
  if (runtime_known.load(std::memory_order_relaxed)) return;  // under the lock: ordered by it
  if (MR_num_engines() == 0) {
    MR_Config cfg;
    MR_config_default(&cfg);
    // One engine per thread the first team asks for, at most one per processor; more threads
    // than that are threads of our own (doc/gomp.md). MRENGINE_OPTIONS, applied after these
    // fields by MR_init, overrides every choice made here.
    int procs = num_procs();
    cfg.engines = std::max(1, std::min(procs, G.initial.nthreads));
    if (G.wait_policy == 1)
      cfg.spin_rounds = 10000;  // active: search long before sleeping
    else if (G.wait_policy == 0)
      cfg.spin_rounds = 0;  // passive: sleep at once
    size_t stack = env_stacksize();
    // Implicit tasks run on spawned contexts and explicit ones on spark contexts: both get the
    // size a thread's stack would have (OMP_STACKSIZE, or a generous default; only touched
    // pages cost memory).
    cfg.stack_size = stack ? stack : (size_t)8 << 20;
    cfg.small_stack_size = stack ? stack : (size_t)2 << 20;
    // The task cut-off (task.cpp) is mrengine's granularity test: 64 sparks per engine on the
    // creator's deque before tasks run undeferred, libgomp's 64 queued tasks per thread (on UTS
    // T3, 2 engines, the default 8 left the thieves too little to take).
    cfg.options = "--granularity-factor=64";
    int rc = MR_init(&cfg);
    if (rc != 0 && rc != MR_EBUSY)
      die("cannot start mrengine: %s (%s)", MR_strerror(rc), MR_init_error_message());
  }
  // Written once, here, before the release store that lets every other caller skip the lock.
  G.engines = MR_num_engines();
  runtime_known.store(true, std::memory_order_release);
}

void forget_runtime() {
  new (&init_lock) std::mutex;
  // relaxed: the child has one thread.
  runtime_known.store(false, std::memory_order_relaxed);
}

}  // namespace mrg
