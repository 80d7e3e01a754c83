// engine.cpp: the shared records' globals, and which engine the calling thread is (engine.hpp).
#include "config.h"

#include "engine.hpp"

namespace mr::engine {

Runtime *g_rt = nullptr;

std::atomic<bool> g_running{false};
std::atomic<bool> g_claimed{false};

constinit thread_local Engine *t_engine __attribute__((tls_model("initial-exec"))) = nullptr;

void set_current(Engine *e) {
  t_engine = e;
  MR_engine_view = e ? &e->view : nullptr;
  MR_engine_view_v4 = MR_engine_view;
}

void set_inline_forks(SlowReason why, bool slow) {
  for (int i = 0; i < g_rt->n; i++) {
    if (!g_rt->engines[i]) continue;  // a runtime that failed to start half way
    volatile AO_t *w = &g_rt->engines[i]->view.slow;
    // relaxed RMW: the inline fork and join read the word relaxed; taking the library's path a
    // little late is correct (it is only slower), and the reasons are set and cleared apart.
    if (slow)
      __atomic_fetch_or(w, static_cast<AO_t>(why), __ATOMIC_RELAXED);
    else
      __atomic_fetch_and(w, ~static_cast<AO_t>(why), __ATOMIC_RELAXED);
  }
}

Engine *this_engine() {
  // A compiler barrier so the thread-local's address is computed afresh after a switch.
  __asm__ __volatile__("" ::: "memory");
  return t_engine;
}

bool running() { return g_running.load(std::memory_order_acquire); }

int num_engines() { return running() ? g_rt->n : 0; }

int engine_cpu(int e) { return g_rt->engines[e]->pu.load(std::memory_order_acquire); }

std::size_t deque_roots(const void *owner, MR_GcStackFn fn, void *arg) {
  void *lo, *hi;
  static_cast<const Shared *>(owner)->deque.slots_range(&lo, &hi);
  fn(lo, hi, arg);
  return 1;
}

}  // namespace mr::engine

// The exported thread-local of mrengine.h. Written only through set_current.
extern "C" {
MR_EXTERN __thread const MR_EngineView *MR_engine_view = nullptr;
MR_EXTERN __thread const MR_EngineView *MR_engine_view_v4 = nullptr;
}
