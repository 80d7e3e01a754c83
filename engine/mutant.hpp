// mutant.hpp: the memory orders that doc/design.md's proofs name, and their weakening for the
// weak-memory model checking of tests/weak (doc/design.md section 18, "Weak memory").
//
// MR_WEAK_MUTANT(SITE, order) is `order` in every build of mrengine: the code is the same as if
// it were written out. A harness of tests/weak compiles the engine's own code under GenMC with
// -DMR_WEAK_MUTANT_SITE='"SITE"': the one site of that name is then relaxed (a relaxed fence
// is no fence), and GenMC must find the execution that the proof says the order rules out.
#ifndef MR_ENGINE_MUTANT_HPP
#define MR_ENGINE_MUTANT_HPP

#include <atomic>

#ifdef MR_WEAK_MUTANT_SITE
namespace mr::engine::weak {
constexpr bool same(const char *a, const char *b) {
  while (*a && *a == *b) a++, b++;
  return *a == *b;
}
}  // namespace mr::engine::weak
#define MR_WEAK_MUTANT(site, order) \
  (::mr::engine::weak::same(#site, MR_WEAK_MUTANT_SITE) ? std::memory_order_relaxed : (order))
#else
#define MR_WEAK_MUTANT(site, order) (order)
#endif

#endif
