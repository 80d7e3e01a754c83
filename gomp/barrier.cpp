// barrier.cpp: the barrier of a team: an arrival counter and one MR_Future per generation
// parity. The last member to arrive resets the other parity's future, publishes the new
// generation and signals this one; a waiter looks for the new generation for a moment (in an
// oversubscribed team, yielding its processor), then waits on the future (a member on an
// engine suspends its context and its engine runs other work; a member on a thread of our own
// blocks).
#include <atomic>

#include "barrier.hpp"
#include "current.hpp"
#include "engine/cpu_relax.hpp"
#include "export.hpp"
#include "mrengine.h"
#include "records.hpp"
#include "task.hpp"
#include "wait.hpp"

namespace mrg {

// A barrier of a cancellable region returns early once the region is cancelled (the canceller
// releases the waiters of the current generation, see GOMP_cancel).
bool team_barrier_cancellable(Team *t) {
  // acquire: a cancelled region's members see what the canceller wrote.
  if (t->cancelled.load(std::memory_order_acquire)) return true;
  team_barrier(t);
  // acquire: as above.
  return t->cancelled.load(std::memory_order_acquire);
}

namespace {

// Arrive at the barrier of generation *g (read here): true for the last member to arrive,
// which has then released the others.
bool arrive(Team *t, unsigned *g) {
  // acquire: the generation can only move on once we have arrived, so this is ours.
  *g = t->generation.load(std::memory_order_acquire);
  // acq_rel: release publishes what this member wrote before the barrier; acquire (for the
  // last arrival) sees what every other member wrote.
  if (t->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 != static_cast<unsigned>(t->n))
    return false;
  // Every member has arrived, so every waiter of generation g-1 has returned from its wait
  // and the future of parity g+1 may be made unsignalled again.
  t->arrived.store(0, std::memory_order_relaxed);  // ordered before the signal below
  MR_future_init(&t->bar[(*g + 1) & 1]);
  // release: a member that sees the new generation sees the reset above.
  t->generation.store(*g + 1, std::memory_order_release);
  MR_future_signal(&t->bar[*g & 1], 1);  // publishes everything above to the waiters
  return true;
}

}  // namespace

void team_arrive(Team *t) {
  unsigned g;
  if (t->n > 1) arrive(t, &g);
}

void team_barrier(Team *t) {
  if (t->n == 1) return;
  Task *self = current();
  unsigned g;
  if (!arrive(t, &g)) {
    // The others are usually close behind: look for the new generation for a moment before
    // suspending (a suspension and its wake-up cost several microseconds).
    // A member on a thread that is not an engine may be waiting for a task's spark that only
    // an engine runs (Team::stranded): the wait then suspends at once, freeing this engine.
    auto done = [t, g] {
      // acquire: as the wait's, the last arrival's writes are visible once we see it.
      // relaxed (cancelled, stranded): hints to stop looking; the future's wait orders the rest.
      return t->generation.load(std::memory_order_acquire) != g ||
             t->cancelled.load(std::memory_order_relaxed) ||
             t->stranded.load(std::memory_order_relaxed) != 0;
    };
    int spins = barrier_spins(t->oversubscribed());
    for (int i = 0; i < spins && !done(); i++) mr::engine::cpu_relax();
    // With more members than processors the ones not arrived yet are often preempted: yield
    // the processor to them for a while rather than sleep (two system calls a waiter).
    if (t->oversubscribed()) yield_until(done);
    // acquire: as above.
    if (t->generation.load(std::memory_order_acquire) == g) MR_future_wait(&t->bar[g & 1]);
  }
  set_current(self);  // the wait may have run other tasks on this thread
}

}  // namespace mrg

using namespace mrg;

MRG_EXPORT void GOMP_barrier(void) {
  Task *self = current();
  join_children(self);
  team_barrier(self->team);
}
