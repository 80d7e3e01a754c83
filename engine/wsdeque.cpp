// wsdeque.cpp: growth and destruction of the work-stealing deque.
#include "config.h"

#include "wsdeque.hpp"

#include <new>

namespace mr::engine {

WsDeque::Array *WsDeque::new_array(std::size_t capacity) {
  auto *a = new Array;
  a->mask = capacity - 1;
  a->retired = nullptr;
  a->slots = new Slot[capacity];
  return a;
}

WsDeque::WsDeque(std::size_t log_capacity, std::int64_t publish_below)
    : publish_below_(publish_below) {
  // relaxed: the deque is published to other engines by the thread start (a happens-before edge).
  array_.store(new_array(std::size_t{1} << log_capacity), std::memory_order_relaxed);
  note_count(0, 0);
}

WsDeque::~WsDeque() {
  // Called only when no thief can be running (runtime shut down): free the live array and
  // every retired one.
  Array *a = array_.load(std::memory_order_relaxed);
  while (a) {
    Array *next = a->retired;
    delete[] a->slots;
    delete a;
    a = next;
  }
}

// Called only by the owning engine, from push(): a new array with the sparks from t to h (held
// ones included).
WsDeque::Array *WsDeque::grow(Array *a, std::int64_t t, std::int64_t h) {
  Array *n = new_array((a->mask + 1) * 2);
  for (std::int64_t i = t; i < h; i++) n->put(i, a->get(i));
  n->retired = a;  // kept until ~WsDeque: a thief may still be reading a
  // store-release: a thief that loads the new array (acquire) sees the copied slots.
  array_.store(n, MR_WEAK_MUTANT(GROW_ARRAY, std::memory_order_release));
  return n;
}

}  // namespace mr::engine
