// runnext.cpp: the hand-off slot (doc/design.md section 6) under GenMC, with the engine's own
// steps (engine/runnext.hpp). The owner makes context c1 runnable, then c2 (which displaces c1,
// requeued), then takes the slot at its suspension; a thief, whose steal found the deque empty,
// tries to take the slot twice. Each context's saved continuation (a plain word, written before
// it is put in the slot) is read by whoever takes it; each is taken once. With BOUND, c2 is
// bound to the owner: the thief never takes it, and the owner takes it with a plain store
// (without BOUND, the exchange that takes an unbound c2 is needed: a plain store there lets the
// thief take it too).
#include "harness.hpp"

#include "engine/runnext.hpp"

// The context record, as far as the slot goes: the saved continuation.
struct mr::engine::Context {
  int fiber;
};

using namespace mr::engine;

namespace {

std::atomic<std::uintptr_t> slot;
Context c[2];
std::atomic<int> taken[2];  // by the owner (take or requeue) or the thief

void got(Context *x, bool thief) {
  int i = x == &c[0] ? 0 : 1;
  assert(x->fiber == i + 1);
#ifdef BOUND
  assert(!(thief && i == 1));
#endif
  (void)thief;
  taken[i].fetch_add(1, std::memory_order_relaxed);
}

std::uintptr_t word(int i) {
  std::uintptr_t x = reinterpret_cast<std::uintptr_t>(&c[i]);
#ifdef BOUND
  if (i == 1) x |= kRunnextBound;
#endif
  return x;
}

// The owner makes c[i] runnable (wake.cpp's schedule). No loops in the threads: GenMC 0.11's
// loop jump threading cannot compile a loop that tests a pointer.
void make_runnable(int i) {
  c[i].fiber = i + 1;  // saved before it is made runnable
  if (std::uintptr_t old = fill_runnext(slot, word(i)))
    got(reinterpret_cast<Context *>(old & ~kRunnextBound), false);  // requeued
}

void *owner(void *) {
  make_runnable(0);
  make_runnable(1);
  if (Context *x = take_runnext(slot)) got(x, false);  // the owner's context suspends
  return nullptr;
}

void steal_once() {
  Context *x;
  if (steal_runnext(slot, &x)) got(x, true);
}

void *thief(void *) {
  steal_once();
  steal_once();
  return nullptr;
}

}  // namespace

int main() {
  pthread_t to, tt;
  pthread_create(&to, nullptr, owner, nullptr);
  pthread_create(&tt, nullptr, thief, nullptr);
  pthread_join(to, nullptr);
  pthread_join(tt, nullptr);
  // The owner took the slot last: every context was taken, exactly once.
  assert(slot.load(std::memory_order_relaxed) == 0);
  assert(taken[0].load(std::memory_order_relaxed) == 1);
  assert(taken[1].load(std::memory_order_relaxed) == 1);
  return 0;
}
