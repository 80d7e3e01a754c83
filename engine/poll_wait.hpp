// poll_wait.hpp: contexts that wait on a polled event source (MR_poll_wait; doc/design.md,
// "Polled waits"). A waiting context is bound to its engine; only that engine keeps and polls
// its waits, in its idle loop, and sleeps no longer than a source's period while any is
// outstanding. Nothing here is shared between engines: every field is its owner's.
#ifndef MR_ENGINE_POLL_WAIT_HPP
#define MR_ENGINE_POLL_WAIT_HPP

#include <cstdint>
#include <vector>

#include "engine.hpp"

namespace mr::engine {

// One engine's waits on one source, kept as the arrays its poll function takes.
struct PollGroup {
  const MR_PollSource *src = nullptr;
  std::vector<void *> items;
  std::vector<Context *> waiters;   // waiters[i] waits for items[i]
  std::vector<unsigned char> done;  // the poll function's answers
};

// One engine's polled waits. Owner only: the waits are added in the publish step of the
// waiting context's suspension and polled by the idle loop, both on the engine's own thread.
struct PollEngine {
  int waiting = 0;  // items outstanding over all groups: the idle loop's one test
  std::vector<PollGroup> groups;
};

// Make every engine's PollEngine. Returns 0 or MR_ENOMEM. Called by start(), before the engine
// threads exist.
int poll_start(Runtime *rt);

// Free them, with no engine thread running. The waiters of contexts that MR_shutdown_now
// dropped are forgotten, never touched.
void poll_stop(Runtime *rt);

// Poll every group of engine e that has items, and make the contexts whose items are done
// runnable (on e). Called only by engine e, outside any context.
void poll_now(Engine *e);

// Called only by engine e's idle loop: poll if any wait of e is outstanding. The test is one
// load of an owner-only count.
inline void poll_idle(Engine *e) {
  if (g_rt->polls[e->id].waiting != 0) poll_now(e);
}

// The latest moment a sleep of engine e may end: a period after now while a wait of e is
// outstanding, else kNever. Called only by engine e, right before it parks.
std::uint64_t poll_wait_deadline(Engine *e);

// MR_poll_wait (mrengine_poll.h).
int poll_wait(const MR_PollSource *src, void *item);

}  // namespace mr::engine

#endif
