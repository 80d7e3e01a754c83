// sync.cpp: critical sections, atomic regions, single constructs and the omp_* locks.
//
// Locks are words in the program's own storage (omp_lock_t is 4 bytes, omp_nest_lock_t 16, a
// named critical section one pointer). A waiter spins briefly, then yields its thread: a holder
// is a running task on another thread (tasks do not suspend holding a lock unless they wait
// inside it, doc/gomp.md), so sleeping in the kernel would only add latency.
#include <sched.h>
#include <time.h>

#include "engine/cpu_relax.hpp"
#include "gomp.hpp"

namespace mrg {

using mr::engine::cpu_relax;

void backoff(unsigned *round) {
  unsigned r = (*round)++;
  if (r < 64) {
    cpu_relax();
  } else if (r < 256) {
    sched_yield();
  } else {
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, nullptr);
  }
}

namespace {

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

alignas(64) std::uintptr_t critical_word = 0;
alignas(64) std::uintptr_t atomic_word = 0;

// omp_nest_lock_t's 16 bytes: a state word, a depth and the owning task.
struct NestLock {
  int state;
  int depth;
  Task *owner;
};
static_assert(sizeof(NestLock) == 16, "omp_nest_lock_t is 16 bytes on this target");

}  // namespace
}  // namespace mrg

using namespace mrg;

MRG_EXPORT void GOMP_critical_start(void) { lock_word(&critical_word); }
MRG_EXPORT void GOMP_critical_end(void) { unlock_word(&critical_word); }
MRG_EXPORT void GOMP_critical_name_start(void **pptr) {
  lock_word(reinterpret_cast<std::uintptr_t *>(pptr));
}
MRG_EXPORT void GOMP_critical_name_end(void **pptr) {
  unlock_word(reinterpret_cast<std::uintptr_t *>(pptr));
}
MRG_EXPORT void GOMP_atomic_start(void) { lock_word(&atomic_word); }
MRG_EXPORT void GOMP_atomic_end(void) { unlock_word(&atomic_word); }

// ---- single ---------------------------------------------------------------------------------

MRG_EXPORT bool GOMP_single_start(void) {
  Task *self = current();
  Team *t = self->team;
  if (t->n == 1) return true;
  unsigned mine = ++self->single_seq;
  // Every member meets the constructs in the same order, so when this member reaches its
  // construct `mine` the count is at least mine-1; whoever moves it from mine-1 to mine runs
  // the body. relaxed: the body's data is ordered by the barrier or copy that follows it.
  unsigned expected = mine - 1;
  return t->single_count.compare_exchange_strong(expected, mine, std::memory_order_relaxed);
}

MRG_EXPORT void *GOMP_single_copy_start(void) {
  if (GOMP_single_start()) return nullptr;
  Task *self = current();
  // The winner publishes its data, then arrives (GOMP_single_copy_end); the barrier orders it.
  team_barrier(self->team);
  return self->team->copy_ptr;
}

MRG_EXPORT void GOMP_single_copy_end(void *data) {
  Task *self = current();
  self->team->copy_ptr = data;
  team_barrier(self->team);
}

// ---- locks ----------------------------------------------------------------------------------

MRG_EXPORT void omp_init_lock(int *lock) { *lock = 0; }
MRG_EXPORT void omp_destroy_lock(int *lock) { (void)lock; }
MRG_EXPORT void omp_set_lock(int *lock) { lock_word(lock); }
MRG_EXPORT void omp_unset_lock(int *lock) { unlock_word(lock); }
MRG_EXPORT int omp_test_lock(int *lock) {
  int expected = 0;
  // acquire: as lock_word.
  return std::atomic_ref<int>(*lock).compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                                             std::memory_order_relaxed);
}

MRG_EXPORT void omp_init_nest_lock(void *p) {
  auto *l = static_cast<NestLock *>(p);
  l->state = 0;
  l->depth = 0;
  l->owner = nullptr;
}
MRG_EXPORT void omp_destroy_nest_lock(void *p) { (void)p; }
MRG_EXPORT int omp_test_nest_lock(void *p) {
  auto *l = static_cast<NestLock *>(p);
  Task *self = current();
  // The owner field is only written by the holder, so a task sees itself there only if it holds
  // the lock. relaxed: a task reads its own write, or another's stale value that is not itself.
  if (std::atomic_ref<Task *>(l->owner).load(std::memory_order_relaxed) == self)
    return ++l->depth;
  int expected = 0;
  // acquire: as lock_word.
  if (!std::atomic_ref<int>(l->state).compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                                              std::memory_order_relaxed))
    return 0;
  std::atomic_ref<Task *>(l->owner).store(self, std::memory_order_relaxed);  // read as above
  l->depth = 1;
  return 1;
}
MRG_EXPORT void omp_set_nest_lock(void *p) {
  auto *l = static_cast<NestLock *>(p);
  Task *self = current();
  // relaxed: see omp_test_nest_lock.
  if (std::atomic_ref<Task *>(l->owner).load(std::memory_order_relaxed) == self) {
    l->depth++;
    return;
  }
  lock_word(&l->state);
  std::atomic_ref<Task *>(l->owner).store(self, std::memory_order_relaxed);  // read as above
  l->depth = 1;
}
MRG_EXPORT void omp_unset_nest_lock(void *p) {
  auto *l = static_cast<NestLock *>(p);
  if (--l->depth == 0) {
    std::atomic_ref<Task *>(l->owner).store(nullptr, std::memory_order_relaxed);  // as above
    unlock_word(&l->state);
  }
}
