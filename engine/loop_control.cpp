// loop_control.cpp: loop control's slots, and the master that waits for one (loop_control.hpp).
// Slow paths only, so one mutex protects each loop.
#include "config.h"

#include "loop_control.hpp"

#include <cstddef>
#include <mutex>
#include <new>

#include "engine.hpp"
#include "fatal.hpp"
#include "gc.hpp"
#include "join.hpp"
#include "switch.hpp"
#include "wake.hpp"

namespace mr::engine {

struct LoopControl {
  struct Slot {
    LoopControl *lc;
    MR_TaskFn fn;
    void *env;
    Slot *next_free;
  };
  std::mutex lock;  // protects everything below
  Slot *free_slots = nullptr;
  Context *waiting = nullptr;  // the master, suspended until a slot is free
  unsigned slots = 0;
  Slot *all = nullptr;
  // With a collector's hooks the slots are a root range while the loop lives: a slot's env is
  // the program's only reference to it until its iteration has started.
  gc::Stack gc;
};

namespace {

// Take a free slot, or suspend the calling context (the master) until an iteration gives one
// back. Called only by the loop's master context.
LoopControl::Slot *lc_acquire(LoopControl *lc) {
  {
    std::lock_guard<std::mutex> lk(lc->lock);
    if (LoopControl::Slot *s = lc->free_slots) {
      lc->free_slots = s->next_free;
      return s;
    }
  }
  LoopControl::Slot *got = nullptr;
  // Publish the master only once it is saved; if a slot came free meanwhile, take it and run
  // the master again at once.
  suspend_self(this_engine(), "loop control outside a context", trace::Why::LOOP,
               [lc, &got](Context *self) {
                 std::lock_guard<std::mutex> lk(lc->lock);
                 if (LoopControl::Slot *s = lc->free_slots) {
                   lc->free_slots = s->next_free;
                   got = s;
                   return true;
                 }
                 lc->waiting = self;
                 return false;
               });
  if (!got) {
    // Resumed by lc_release, which handed its slot over in lc->waiting's place.
    std::lock_guard<std::mutex> lk(lc->lock);
    got = lc->free_slots;
    MR_CHECK(got != nullptr, "loop control master resumed without a slot");
    lc->free_slots = got->next_free;
  }
  return got;
}

// Give a slot back and resume the master if it waits for one. Any engine.
void lc_release(LoopControl::Slot *s) {
  LoopControl *lc = s->lc;
  Context *wake = nullptr;
  {
    std::lock_guard<std::mutex> lk(lc->lock);
    s->next_free = lc->free_slots;
    lc->free_slots = s;
    wake = lc->waiting;
    lc->waiting = nullptr;
  }
  if (wake) schedule(wake);
}

void lc_iteration(void *p) {
  auto *s = static_cast<LoopControl::Slot *>(p);
  s->fn(s->env);
  lc_release(s);
}

std::size_t lc_roots(const void *owner, MR_GcStackFn fn, void *arg) {
  const auto *lc = static_cast<const LoopControl *>(owner);
  fn(lc->all, lc->all + lc->slots, arg);
  return 1;
}

}  // namespace

LoopControl *lc_create(unsigned slots) {
  auto *lc = new (std::nothrow) LoopControl;
  if (!lc) return nullptr;
  lc->slots = slots;
  lc->all = new (std::nothrow) LoopControl::Slot[slots];
  if (!lc->all) {
    delete lc;
    return nullptr;
  }
  for (unsigned i = 0; i < slots; i++) {
    lc->all[i] = LoopControl::Slot{lc, nullptr, nullptr, lc->free_slots};
    lc->free_slots = &lc->all[i];
  }
  lc->gc.roots = lc_roots;
  lc->gc.owner = lc;
  gc::add_roots(&lc->gc);
  return lc;
}

int lc_spawn(LoopControl *lc, MR_TaskFn fn, void *env) {
  LoopControl::Slot *s = lc_acquire(lc);
  s->fn = fn;
  s->env = env;
  // The iterations are the master's work: of its channel (first in a deadline channel's order).
  int rc = spawn(lc_iteration, s, -1, current_channel(), 0);
  if (rc != 0) lc_release(s);
  return rc;
}

void lc_finish(LoopControl *lc) {
  // Every slot back in hand means every iteration has finished (lc_release is its last act on
  // the loop; the slot is not touched after the lock is dropped).
  for (unsigned i = 0; i < lc->slots; i++) (void)lc_acquire(lc);
  // Take and drop the lock so that the last lc_release has left its critical section.
  { std::lock_guard<std::mutex> lk(lc->lock); }
  gc::remove(&lc->gc);
  delete[] lc->all;
  delete lc;
}

unsigned lc_default_slots() {
  return g_rt->p.lc_contexts_per_engine * static_cast<unsigned>(g_rt->n);
}

}  // namespace mr::engine
