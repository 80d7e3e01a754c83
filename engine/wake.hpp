// wake.hpp: the poster's side. After work is published (a spark pushed, a context queued, a
// spark injected): is someone looking for it, and if not, which engine to wake and how; and
// `schedule`, which makes a suspended context runnable.
#ifndef MR_ENGINE_WAKE_HPP
#define MR_ENGINE_WAKE_HPP

#include <atomic>

#include "engine.hpp"

namespace mr::engine {

// Is any work visible: a spark on any deque, an unbound context in another engine's hand-off
// slot, a context in any channel (the work word), in self's bound queue or in self's own slot
// (self may be nullptr), a spark in the injector? Any thread. Relaxed loads: every caller has a
// seq_cst fence right before (P1, P2, P3).
bool work_visible(const Shared *self);

// Hand a searching unit the caller owns to a sleeping engine, with WORKSTEAL_ADVICE naming
// `origin` (the engine where work is, or -1). Returns false if no engine was asleep. Any thread.
bool wake_one_with_unit(int origin);

// Give back a searching unit the caller owns. If it was the last one while engines sleep, look
// once more for work that posters left to this searcher (P2) and wake a sleeper for it. Any
// thread.
void give_back_unit(int origin);

// Deliver a notification to engine t: try_wake_engine (SLEEPING only) or try_notify_engine
// (following kDelivery), and start t's thread if t is a lazy engine that has none yet. RETRY
// also when t can never have a thread (the notification, with any unit it carried, stays the
// caller's). Any thread.
Sent wake_engine(Shared *t, Action a, void *data);
Sent notify_engine(Shared *t, Action a, void *data);

// Does engine t have a thread? A lazy engine that has none gets one now (asleep, as if it had
// slept since MR_init) unless someone else claimed that; while the claimant creates it, wait for
// the outcome. false: t never will (its pthread_create failed, with a warning, or MR_shutdown
// retired it) and counts as neither sleeper nor searcher. Any thread.
bool has_thread(Shared *t);

// Retire lazy engine x, whose start the caller claimed and which has no thread: give back its
// sleeping unit, leave it WORKING for good. Any thread.
void retire_unstarted(Shared *x);

// The slow half of the post-work check (work_posted): engines sleep and none searches, so claim
// a searching unit and wake a sleeper with it. Any thread.
void wake_for_work(int origin);

// The post-work check, after work was published from engine `origin` (-1: from a thread that is
// not an engine): a seq_cst fence, then wake one sleeper if engines sleep and none searches. Any
// thread. Inline: it is on the path of every published spark. An engine that is the runtime's
// only one skips it: nobody else could sleep or take the work (P1, "The only engine").
inline void work_posted(int origin) {
  const Runtime *rt = g_rt;
  if (origin >= 0 && rt->n == 1) return;
  post_work_fence();  // proof P1 (publish the work, then read the census)
  std::uint64_t w = rt->census.load();
  if (Census::nobody_to_wake(w)) return;
  wake_for_work(origin);
}

// Engine e's own sparks (the owner's side of its deque, H1): a push, which publishes if a thief
// asked or too few sparks are published and then runs the post-work check; that publication
// alone (after a pop, and from the inline fork and join); a pop of the newest spark, held or
// published, then that publication; and the publication of every held spark, before e runs
// anything but its own sparks. Called only by e.
inline void push_spark(Engine *e, const Task &t) {
  if (e->deque.push(t)) work_posted(e->id);
}
inline void publish_some(Engine *e) {
  if (e->deque.publish()) work_posted(e->id);
}
inline bool pop_spark(Engine *e, Task &t) {
  if (!e->deque.pop(t)) return false;
  publish_some(e);
  return true;
}
inline void publish_held(Engine *e) {
  if (e->deque.publish_all()) work_posted(e->id);
}
// While e's current context runs a blocking region in place, e's deque publishes every spark
// it pushes (H1): e blocks in the region's call and would not push, pop or switch again to
// publish a held one, which the call may wait for. The deque's own rule does it: with
// publish_below at kAlwaysPublish every push finds kShort and publishes, the inline fork's
// (which reads the same word) included. Outside, N - 1 as at the start. Called only by e: at a
// region's begin and end in place, and at each switch to a context (which may be inside one).
inline void set_in_region(Engine *e, bool in) {
  const std::int64_t n = in ? WsDeque::kAlwaysPublish : g_rt->n - 1;
  e->deque.set_publish_below(n);
  e->view.publish_below = static_cast<AO_t>(n);  // the inline code's copy
}

// Make a suspended context runnable: from a context running on an engine where c may run, into
// that engine's hand-off slot; otherwise as enqueue. A FOREIGN record by posting its thread. Any
// thread.
void schedule(Context *c);

// Queue a runnable context (not FOREIGN): an unbound one in its queue channel (queue_channel)
// with the post-work check (P1), a bound one handed to its sleeping engine or queued there with
// advice (P3). Any thread.
void enqueue(Context *c);

}  // namespace mr::engine

#endif
