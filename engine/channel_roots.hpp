// channel_roots.hpp: the steps on a channel's roots word (doc/design.md section 24, "Closing a
// channel"): a spawn counts its context unless the channel is closed, a root leaves the count
// when its function returns or it is dropped, and the close sets the closed bit; the word reaches
// "closed, no roots" once. Dependency-free, so that tests/weak/close.cpp checks these very steps
// under GenMC (engine/mutant.hpp).
#ifndef MR_ENGINE_CHANNEL_ROOTS_HPP
#define MR_ENGINE_CHANNEL_ROOTS_HPP

#include <atomic>
#include <cstdint>

#include "mutant.hpp"

namespace mr::engine {

// The word: bit 0 set once the channel is closed, and above it (in units of kRootsUnit) its
// spawned contexts whose function has not returned and which were not dropped.
inline constexpr std::uint64_t kRootsClosed = 1, kRootsUnit = 2;

// A spawn counts its context: false (nothing counted) if the channel is closed. relaxed load
// and CAS: only the order of RMWs on this word matters here (every spawn's CAS is before the
// close's RMW or after it); the context's decrement in roots_leave follows this CAS through the
// context's queueing and run, so coherence puts it after.
inline bool roots_add(std::atomic<std::uint64_t> &w) {
  std::uint64_t v = w.load(std::memory_order_relaxed);
  do {
    if (v & kRootsClosed) return false;
  } while (!w.compare_exchange_weak(v, v + kRootsUnit, std::memory_order_relaxed));
  return true;
}

// A root leaves the count: true if it was the last of a closed channel (the caller signals the
// channel's end). acq_rel: release publishes what this context did to the waiters; acquire (for
// the last) takes the other roots' releases, so that the signal carries them all.
inline bool roots_leave(std::atomic<std::uint64_t> &w) {
  return w.fetch_sub(kRootsUnit, MR_WEAK_MUTANT(ROOT_DONE, std::memory_order_acq_rel)) ==
         (kRootsUnit | kRootsClosed);
}

// The close: the one RMW that sets the closed bit (later spawns read it in their CAS and are
// refused). Returns the word before: closed already, or 0 when no root is left (the caller
// signals the end). acq_rel: acquire, if no root is left, takes their releases for the signal,
// as roots_leave does.
inline std::uint64_t roots_close(std::atomic<std::uint64_t> &w) {
  return w.fetch_or(kRootsClosed, MR_WEAK_MUTANT(ROOT_CLOSE, std::memory_order_acq_rel));
}

}  // namespace mr::engine

#endif
