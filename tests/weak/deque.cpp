// deque.cpp: the work-stealing deque (engine/wsdeque.*, proof D1 of doc/design.md) under GenMC.
// The owner pushes ITEMS sparks and THIEVES threads steal STEALS times each; every spark must be
// taken exactly once, with the three words the owner pushed. Scenarios:
//   SCENARIO_LAST   the owner pops until its deque is empty while the thieves steal, which start
//                   once every push is done (D1: the last element, the fences and the CASes);
//   SCENARIO_PUBLISH  the thieves steal while the owner pushes, and the owner pops only after
//                   they are done (the push's release of bottom, the steal's acquire); with
//                   LOG_CAPACITY=1 (a deque of 2) the third push grows the array under them;
//   SCENARIO_RACE   push, pop and steal all at once (doc/design.md, D1: a thief that reads
//                   bottom from pop's store is ordered after the pushes by that store's release).
//   SCENARIO_ASK    (H1's request) PUBLISH_BELOW=1: the owner pushes two sparks, the first
//                   published, while a thief steals once; then the owner reads top with acquire,
//                   as MR_par_cond_local_wsdeque_length does, and if nothing published is left
//                   by that read, its next push must publish: the thief that took the last
//                   published spark asked before its CAS.
//   SCENARIO_WRAP   (H1's slot reuse) the owner fills the array (1 << LOG_CAPACITY sparks), pops
//                   one, and pushes the rest, which wrap around to the slots the thieves took
//                   while the thieves steal: the owner writes a slot again only after an acquire
//                   read of a top past it (its pop's read or failed CAS, or push's refresh), so a
//                   thief's read of the slot before its CAS never sees the later spark.
//   SCENARIO_SWITCH (H1's bound for a lost request) PUBLISH_BELOW=1: the owner pushes, pops one
//                   spark and publishes as the engine does after a pop, pushes the rest, then
//                   switches (publish_all, as enter_context does) while the thief steals and
//                   asks; after the switch the thief alone must find every spark the owner did
//                   not pop: a request the owner's rewrite of `wanted` lost waits at most for
//                   that switch. SWITCH_PUBLISH=1 switches with publish() instead (only what a
//                   request or SHORT asks): GenMC must find a spark left held.
// PUBLISH_BELOW=N  keeps only N sparks published and holds the rest (H1); the owner publishes
//                   again after each pop, as the engine does, so a thief may take a spark that
//                   was held when it was pushed. By default every push publishes.
#if !defined(SCENARIO_PUBLISH) && !defined(SCENARIO_RACE) && !defined(SCENARIO_ASK) && \
    !defined(SCENARIO_WRAP) && !defined(SCENARIO_SWITCH)
#define SCENARIO_LAST
#endif
#include "harness.hpp"

#include "engine/wsdeque.cpp"

#ifndef ITEMS
#define ITEMS 2
#endif
#ifndef THIEVES
#define THIEVES 1
#endif
#ifndef STEALS
#define STEALS 1
#endif
#ifndef LOG_CAPACITY
#define LOG_CAPACITY 3
#endif
#ifndef PUBLISH_BELOW
#define PUBLISH_BELOW WsDeque::kAlwaysPublish
#endif

using mr::engine::Join;
using mr::engine::Task;
using mr::engine::WsDeque;

namespace {

WsDeque *deque;
std::atomic<int> taken[ITEMS + 1];
Join joins[ITEMS + 1];

void fn(void *) {}

// The spark numbered i (1..ITEMS): each of its three words says i.
Task spark(int i) { return Task{fn, reinterpret_cast<void *>(std::intptr_t{i}), &joins[i]}; }

void take(const Task &t) {
  std::intptr_t i = reinterpret_cast<std::intptr_t>(t.env);
  assert(i >= 1 && i <= ITEMS && t.fn == fn && t.join == &joins[i]);
  taken[i].fetch_add(1, std::memory_order_relaxed);
}

std::atomic<bool> pushed;  // SCENARIO_LAST: the thieves start after the pushes

void *owner(void *) {
#ifdef SCENARIO_ASK
  for (int i = 1; i < ITEMS; i++) deque->push(spark(i));
  auto top = static_cast<const std::atomic<std::int64_t> *>(deque->top_address());
  auto bottom = static_cast<const std::atomic<std::int64_t> *>(deque->bottom_address());
  // relaxed: the owner's own bottom_; acquire: as the view's read of top.
  std::int64_t b = bottom->load(std::memory_order_relaxed);
  bool none_left = top->load(std::memory_order_acquire) == b;
  bool published = deque->push(spark(ITEMS));
  assert(published || !none_left);
#elif defined(SCENARIO_WRAP)
  constexpr int kFull = 1 << LOG_CAPACITY;
  static_assert(ITEMS > kFull, "SCENARIO_WRAP pushes past a full array");
  for (int i = 1; i <= kFull; i++) deque->push(spark(i));
  Task t;
  if (deque->pop(t)) take(t);
  for (int i = kFull + 1; i <= ITEMS; i++) deque->push(spark(i));
#elif defined(SCENARIO_SWITCH)
  deque->push(spark(1));
  deque->push(spark(2));
  Task t;
  if (deque->pop(t)) take(t);
  deque->publish();
  for (int i = 3; i <= ITEMS; i++) deque->push(spark(i));
#ifdef SWITCH_PUBLISH
  deque->publish();
#else
  deque->publish_all();
#endif
#else
  for (int i = 1; i <= ITEMS; i++) deque->push(spark(i));
#endif
  pushed.store(true, std::memory_order_release);
#if !defined(SCENARIO_PUBLISH) && !defined(SCENARIO_ASK) && !defined(SCENARIO_WRAP) && \
    !defined(SCENARIO_SWITCH)
  Task t;
  while (deque->pop(t)) {
    take(t);
    deque->publish();
  }
#endif
  return nullptr;
}

void *thief(void *) {
#ifdef SCENARIO_LAST
  while (!pushed.load(std::memory_order_acquire)) {}
#endif
  for (int k = 0; k < STEALS; k++) {
    Task t;
    if (deque->steal(t) == WsDeque::Steal::TAKEN) take(t);
  }
#ifdef SCENARIO_SWITCH
  // After the owner's switch (acquire: pairs with `pushed`'s release), the owner is done: a
  // steal finds the sparks still there, or EMPTY when none is published (no CAS races it).
  while (!pushed.load(std::memory_order_acquire)) {}
  for (;;) {
    Task t;
    WsDeque::Steal s = deque->steal(t);
    if (s == WsDeque::Steal::EMPTY) break;
    if (s == WsDeque::Steal::TAKEN) take(t);
  }
#endif
  return nullptr;
}

}  // namespace

int main() {
  deque = new WsDeque(LOG_CAPACITY, PUBLISH_BELOW);
  pthread_t o, th[THIEVES];
  pthread_create(&o, nullptr, owner, nullptr);
  for (pthread_t &x : th) pthread_create(&x, nullptr, thief, nullptr);
  pthread_join(o, nullptr);
  for (pthread_t &x : th) pthread_join(x, nullptr);
#if defined(SCENARIO_PUBLISH) || defined(SCENARIO_ASK) || defined(SCENARIO_WRAP)
  Task t;
  while (deque->pop(t)) take(t);
#endif
  // The owner popped until it found the deque empty: every spark was taken, and only once.
  for (int i = 1; i <= ITEMS; i++) assert(taken[i].load(std::memory_order_relaxed) == 1);
  return 0;
}
