// critical.cpp: critical sections and atomic regions: a lock word for unnamed critical
// sections, one for atomic regions, and a named critical section's own pointer as its word.
#include <cstdint>

#include "export.hpp"
#include "lock.hpp"

namespace mrg {
namespace {

alignas(64) std::uintptr_t critical_word = 0;
alignas(64) std::uintptr_t atomic_word = 0;

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
