// close.hpp: closing channels (doc/design.md, "Closing" and "Closing a channel"). Once
// MR_shutdown begins, the contexts of drop channels are dropped when they would next run, and
// their sparks when a scheduler would turn them into work; complete channels run to the end.
// MR_channel_close closes one channel while the runtime runs: its spawns are refused, and, if it
// drops, its spawned contexts are dropped when they would next run. The one place that decides
// whether a channel still accepts spawns, and whether channels may still be made.
#ifndef MR_ENGINE_CLOSE_HPP
#define MR_ENGINE_CLOSE_HPP

#include "engine.hpp"

namespace mr::engine {

// Count a context that MR_shutdown or MR_channel_close drops in its channel and forget it: it
// never runs again (no destructors run on its stack), and it is freed with the runtime. A
// spawned one's on_drop is called here and it leaves its channel's count (root_done); before
// them, the wait it was resumed from is ended (Context::unwait). Called only by an engine's
// scheduler, holding the only reference to c (c was runnable: what it waited for resumed it, and
// only its Context::unwait still points to the records of that wait).
void drop_context(Context *c);

// Count a context about to be spawned in channel ch, unless ch is closed: 0 or MR_ECLOSED. Any
// thread. Channel 0 is never closed, and its contexts are not counted.
int count_root(int ch);

// A context counted by count_root has finished its function, or been dropped (or its spawn
// failed): when it was the last of a closed channel, that channel's waiters resume. Any thread.
void root_done(int ch);

// MR_channel_close and MR_channel_wait (mrengine.h has the codes; ch exists and is not 0). Any
// thread; close_channel while running, wait_channel also in a context.
int close_channel(int ch);
int wait_channel(int ch);

// Call the on_drop of every spawned context still alive whose function has not returned (the
// contexts dropped when the runtime is freed), then the on_free of every dropped one. Called
// only by the thread of the shutdown (engine 0's, which then has no current context), once
// every engine and backup thread has stopped and before any context is freed.
void call_on_drops_at_stop();

// Is spark t to be run? If MR_shutdown drops it, it is counted in its channel and forgotten: it
// never runs and its join never completes (its parent, of the same channel, is dropped or swept
// at the end). Any engine.
bool keep_spark(const Task &t);

// May a context be spawned in channel ch now? Not once MR_shutdown_now has begun, nor once
// MR_shutdown has if ch drops its work. Any thread.
inline bool accepts_spawns(int ch) {
  // relaxed: a spawn that misses either flag only adds a context that is then dropped and
  // counted (MR_shutdown closes the spawn counter at its end, which refuses the rest).
  if (g_rt->shutdown.load(std::memory_order_relaxed)) return false;
  return !(g_rt->channels[ch].close == Close::DROP &&
           g_rt->closing.load(std::memory_order_relaxed));
}

// Make a channel (MR_channel_create has the codes): refused with MR_ESHUTDOWN once MR_shutdown
// has begun. Any thread while running.
int create_channel(int level, ChannelKind kind, Close close, int followup);

// MR_shutdown begins: from now on drop channels' work is dropped (closing set, P4's order).
// Called only by the primordial context.
void begin_closing();

// Fill *r with what the channels dropped while closing plus what is left over, `contexts` and
// `sparks` per channel (counted by free_runtime): the totals, and the per-channel counts if
// r->size covers them. Engines stopped.
void report_drops(MR_ShutdownReport *r, const std::uint64_t *contexts, const std::uint64_t *sparks);

}  // namespace mr::engine

#endif
