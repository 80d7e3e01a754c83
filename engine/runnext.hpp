// runnext.hpp: the steps of the hand-off slot (doc/design.md section 6, "The hand-off slot"): a
// Context *, tagged kRunnextBound when bound to the slot's engine, that the engine runs at its
// running context's next suspension. Only the engine's running context fills the slot; the
// engine and thieves empty it. Dependency-free, so that tests/weak/runnext.cpp checks these very
// steps under GenMC (engine/mutant.hpp).
#ifndef MR_ENGINE_RUNNEXT_HPP
#define MR_ENGINE_RUNNEXT_HPP

#include <atomic>
#include <cstdint>

#include "mutant.hpp"

namespace mr::engine {

struct Context;

// runnext's tag: the context is bound to the slot's engine (thieves leave it; they can tell
// without reading the context, which the owner may already have run and freed).
constexpr std::uintptr_t kRunnextBound = 1;

// Called only by the context running on the slot's engine: x goes in the slot. Returns what it
// displaced (0: nothing), which the caller queues.
inline std::uintptr_t fill_runnext(std::atomic<std::uintptr_t> &slot, std::uintptr_t x) {
  // Only the owner makes the slot non-empty (thieves only empty it), so an empty slot stays
  // empty until this store: a plain store-release does, publishing x's saved continuation
  // to a thief that takes it (J1). relaxed load: the owner's own last write, or a thief's 0.
  std::uintptr_t old = slot.load(std::memory_order_relaxed);
  if (old == 0)
    slot.store(x, MR_WEAK_MUTANT(RUNNEXT_FILL, std::memory_order_release));
  else  // release as above; no acquire: what it displaces is the owner's own earlier store
    old = slot.exchange(x, MR_WEAK_MUTANT(RUNNEXT_SWAP, std::memory_order_release));
  return old;
}

// Called only by the slot's engine: take the context in the slot, if any. `alone`: no other
// engine exists, so no thief either.
inline Context *take_runnext(std::atomic<std::uintptr_t> &slot, bool alone = false) {
  // relaxed load: the owner's own last store (program order: the owner had the context's saved
  // continuation before it put it there, section 14 keeps an engine on its thread), or a
  // thief's 0.
  std::uintptr_t x = slot.load(std::memory_order_relaxed);
  if (x == 0) return nullptr;
  if ((x & kRunnextBound) != 0 || alone) {
    // A thief only ever replaces an unbound word (its CAS expects one), so a bound word stays
    // until the owner's own next store: a plain store empties it. relaxed, as the load.
    slot.store(0, std::memory_order_relaxed);
  } else {
    // An unbound word may be taken by a thief meanwhile: the exchange decides. relaxed, as the
    // load (a thief's 0 carries nothing).
    x = slot.exchange(0, std::memory_order_relaxed);
  }
  return reinterpret_cast<Context *>(x & ~kRunnextBound);
}

// A thief whose steal found the engine's deque empty: take the slot's context into *c if it is
// unbound. Returns whether it did.
inline bool steal_runnext(std::atomic<std::uintptr_t> &slot, Context **c) {
  // relaxed: only the tag is tested, and the CAS reads the word again. CAS acquire on success:
  // pairs with the release of the owner's store it read (the context's saved continuation, J1);
  // relaxed on failure (someone else took it).
  std::uintptr_t x = slot.load(std::memory_order_relaxed);
  if (x != 0 && (x & kRunnextBound) == 0 &&
      slot.compare_exchange_strong(x, 0, MR_WEAK_MUTANT(RUNNEXT_STEAL, std::memory_order_acquire),
                                   std::memory_order_relaxed)) {
    *c = reinterpret_cast<Context *>(x);
    return true;
  }
  return false;
}

}  // namespace mr::engine

#endif
