// lock.hpp: a lock word in the program's own storage, taken by compare-and-swap (the omp_* locks,
// critical sections and atomic regions).
//
// A waiter spins briefly, then yields its thread, then sleeps in short spells (backoff): a
// holder is a running task on another thread (tasks do not suspend holding a lock unless they
// wait inside it, doc/gomp.md), so sleeping in the kernel at once would only add latency.
#ifndef MR_GOMP_LOCK_HPP
#define MR_GOMP_LOCK_HPP

#include <atomic>

#include "backoff.hpp"

namespace mrg {

template <class T>
void lock_word(T *word) {
  std::atomic_ref<T> w(*word);
  unsigned round = 0;
  for (;;) {
    T expected = 0;
    // acquire: the critical section sees what the previous holder wrote.
    if (w.load(std::memory_order_relaxed) == 0 &&
        w.compare_exchange_weak(expected, 1, std::memory_order_acquire, std::memory_order_relaxed))
      return;
    backoff(&round);
  }
}

template <class T>
void unlock_word(T *word) {
  // release: publishes the critical section to the next holder.
  std::atomic_ref<T>(*word).store(0, std::memory_order_release);
}

}  // namespace mrg

#endif
