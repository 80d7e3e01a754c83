// close.cpp: MR_channel_close against spawns (doc/design.md section 24, "Closing a channel")
// under GenMC, with the engine's own steps on the channel's roots word
// (engine/channel_roots.hpp). SPAWNS threads spawn a context each in a drop channel (count_root)
// and, if it was counted, run it as an engine would: dropped if the engine sees the channel's
// bit in closed_drops (its on_drop), else its function; either way it leaves the count
// (root_done). Another thread closes the channel (close_channel: the drop bit, then the closed
// bit) and waits for its end (MR_channel_wait; the channel's future is a release store and an
// acquire load here, section 11 checks futures). Each spawn is refused (MR_ECLOSED) or its
// context runs or is dropped, once; the waiter, once the channel is done, sees what every
// counted context did (a race on a plain word under RC11, a stale value under IMM).
#include "harness.hpp"

#include <genmc.h>

#include "engine/channel_roots.hpp"

#ifndef SPAWNS
#define SPAWNS 2
#endif

using namespace mr::engine;

namespace {

enum Outcome { kNone, kRan, kDropped };

std::atomic<std::uint64_t> roots;         // Channel::roots
std::atomic<std::uint64_t> closed_drops;  // Runtime::closed_drops (the channel's bit)
std::atomic<int> done;                    // Channel::done, signalled once
int outcome[SPAWNS];                      // what became of each spawn's context (plain)
std::atomic<bool> refused[SPAWNS];
int seen[SPAWNS];  // what the waiter saw of them once the channel was done

// The end of the channel: future_signal(&done, 1), once.
void signal_done() { assert(done.fetch_add(1, std::memory_order_release) == 0); }

// MR_spawn in the channel, then the context's one run on an engine (run_spawned, or the
// scheduler's drop_context).
void *spawner(void *arg) {
  auto i = reinterpret_cast<std::intptr_t>(arg);
  if (!roots_add(roots)) {  // count_root: MR_ECLOSED
    refused[i].store(true, std::memory_order_relaxed);
    return nullptr;
  }
  // dropped_by_close: relaxed, a context that misses the bit runs once more.
  if (closed_drops.load(std::memory_order_relaxed) & 1)
    outcome[i] = kDropped;  // on_drop
  else
    outcome[i] = kRan;                    // the function
  if (roots_leave(roots)) signal_done();  // root_done
  return nullptr;
}

// close_channel, then wait_channel.
void *closer(void *) {
  closed_drops.fetch_or(1, std::memory_order_relaxed);
  std::uint64_t old = roots_close(roots);
  assert((old & kRootsClosed) == 0);
  if (old == 0) signal_done();
  __VERIFIER_assume(done.load(std::memory_order_acquire) == 1);  // future_wait
  // Every context counted has run or been dropped, and what it did is visible; a spawn not
  // counted by now is refused.
  for (int i = 0; i < SPAWNS; i++) seen[i] = outcome[i];
  return nullptr;
}

}  // namespace

int main() {
  pthread_t t[SPAWNS + 1];
  for (std::intptr_t i = 0; i < SPAWNS; i++)
    pthread_create(&t[i], nullptr, spawner, reinterpret_cast<void *>(i));
  pthread_create(&t[SPAWNS], nullptr, closer, nullptr);
  for (pthread_t &x : t) pthread_join(x, nullptr);
  for (int i = 0; i < SPAWNS; i++)  // refused, or counted and run or dropped: exactly one
    assert(refused[i].load(std::memory_order_relaxed) == (outcome[i] == kNone) &&
           seen[i] == outcome[i]);
  assert(done.load(std::memory_order_relaxed) == 1);
  assert(roots.load(std::memory_order_relaxed) == kRootsClosed);
  return 0;
}
