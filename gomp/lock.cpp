// lock.cpp: the omp_* locks. omp_lock_t is a lock word of 4 bytes; omp_nest_lock_t's 16 bytes
// are a lock word, a depth and the owning task: nest locks are owned by the task, not the
// thread.
#include <atomic>

#include "current.hpp"
#include "export.hpp"
#include "lock.hpp"
#include "omp.hpp"
#include "records.hpp"

namespace mrg {
namespace {

// omp_nest_lock_t's 16 bytes: a state word, a depth and the owning task.
struct NestLock {
  int state;
  int depth;
  Task *owner;
};
static_assert(sizeof(NestLock) == kNestLockBytes, "omp_nest_lock_t is 16 bytes on this target");

}  // namespace
}  // namespace mrg

using namespace mrg;

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
  if (std::atomic_ref<Task *>(l->owner).load(std::memory_order_relaxed) == self) return ++l->depth;
  int expected = 0;
  // acquire: as lock_word.
  if (!std::atomic_ref<int>(l->state).compare_exchange_strong(
          expected, 1, std::memory_order_acquire, std::memory_order_relaxed))
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
