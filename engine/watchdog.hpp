// watchdog.hpp: the debug build's liveness watchdog (doc/design.md, section 17). The safety
// checks (the deque's bounds, every spark run once at MR_shutdown) cannot see work that waits:
// a held spark that nothing will publish, or a timer that nobody answers for, while an engine
// sleeps. A thread started with the engines looks every few milliseconds and stops the process
// when either has lasted longer than kWatchdogBoundNs while another engine slept throughout:
//
// - Held sparks (H1): an engine that switches to a context, or runs a blocking region in place,
//   must publish every spark it holds first. It records here any it still holds then
//   (watchdog_note_switch); they stay "stranded" until published or taken back by their owner.
// - Timers (TM1): a timer overdue by the bound while some engine sleeps, and no sleeping
//   engine's wait ends by the timer's deadline plus the takeover grace, and no engine is awake
//   and looking (which would pass its idle loop and fire it).
//
// Off in other builds: the calls below are empty.
#ifndef MR_ENGINE_WATCHDOG_HPP
#define MR_ENGINE_WATCHDOG_HPP

#include <cstdint>

#include "clock.hpp"
#include "engine.hpp"

namespace mr::engine {

// How long a stranded spark or an overdue timer may wait while another engine sleeps.
inline constexpr std::uint64_t kWatchdogBoundNs = 50000000;

#ifdef MR_DEBUG
// Start the watchdog (after the engines started) and stop it (before they stop). Called only by
// the thread that runs start() and the shutdowns.
void watchdog_start();
void watchdog_stop();

// Called only by engine e, about to run a context or a blocking region in place, after it
// published its held sparks: record any it still holds, for the watchdog.
inline void watchdog_note_switch(Engine *e) {
  std::int64_t h = e->deque.held_end();
  // relaxed: the watchdog reads them as estimates, and checks the deque again.
  if (!e->deque.holds_below(h)) {
    e->strand_end.store(0, std::memory_order_relaxed);
    return;
  }
  if (e->strand_end.load(std::memory_order_relaxed) == 0)
    e->strand_since.store(now_ns(), std::memory_order_relaxed);
  e->strand_end.store(h, std::memory_order_relaxed);
}
#else
inline void watchdog_start() {}
inline void watchdog_stop() {}
inline void watchdog_note_switch(Engine *) {}
#endif

}  // namespace mr::engine

#endif
