// resident.cpp: the contexts resident on the engines that run team members.
//
// Member i (0 < i < engines) of an outermost team started on an engine runs on the context
// resident on its engine: one context per engine, spawned bound there the first time a team
// needs it and kept, which runs one team member after another. Between regions it looks for its
// next job for a while, since the next region usually follows at once (a short loop's region
// costs a few microseconds; a spawn, and a wake-up when the engine has gone to sleep, would cost
// as much again), then parks on a future until a job is posted.
#include <atomic>
#include <cstdint>
#include <new>
#include <vector>

#include "env.hpp"
#include "fatal.hpp"
#include "mrengine.h"
#include "records.hpp"
#include "resident.hpp"
#include "team.hpp"
#include "wait.hpp"

namespace mrg {

namespace {

struct Resident {
  // Jobs posted so far, times two, plus one while the resident is parked: one word, so that
  // "post a job" and "park unless a job came" cannot miss each other.
  std::atomic<std::uint64_t> mail{0};
  // The job: written by the poster before its release exchange of `mail`, read by the resident
  // after its acquire load that sees the new count. The next job is posted only after this
  // member has arrived at the region's end, so a job is never overwritten before it is read.
  Team *team = nullptr;
  int member = 0;
  MR_Future wake = MR_FUTURE_INIT;  // signalled by the poster that finds the resident parked
};

// Only the creator of the top-level team that holds the slots (slots_busy, parallel.cpp) posts
// jobs, makes residents and reads this list, so it needs no lock: slots_busy's acquire and
// release order it.
std::vector<Resident *> &residents = *new std::vector<Resident *>;
int resident_channel = -1;

// The next job after the `seen` first ones: the new mail word. It looks for the job for a while
// (wait.hpp's look_ns) before parking, since the next region usually follows at once: pausing,
// or, after a region with more members than processors (`oversubscribed`), yielding, since
// while it looks its engine runs nothing else and a pause would hold a processor that the
// threads of the next region's other members need.
std::uint64_t resident_wait(Resident *r, std::uint64_t seen, bool oversubscribed) {
  std::uint64_t idle = seen << 1;
  std::uint64_t m;
  auto posted = [r, idle, &m] {
    // acquire: a new count makes the job's fields visible (pairs with the poster's release).
    m = r->mail.load(std::memory_order_acquire);
    return m != idle;
  };
  if (oversubscribed ? yield_until(posted) : spin_until(posted)) return m;
  // acquire: as above, when a job came meanwhile (the parked bit itself publishes nothing).
  if (!r->mail.compare_exchange_strong(m, idle | 1, std::memory_order_acquire)) return m;
  MR_future_wait(&r->wake);
  // Only the poster that found the parked bit signals, once; nothing touches the future again
  // until this resident parks next, so it may be reset here.
  MR_future_init(&r->wake);
  // acquire: as above.
  return r->mail.load(std::memory_order_acquire);
}

void resident_main(void *arg) {
  auto *r = static_cast<Resident *>(arg);
  std::uint64_t seen = 0;
  bool oversubscribed = false;
  for (;;) {
    seen = resident_wait(r, seen, oversubscribed) >> 1;
    oversubscribed = r->team->oversubscribed();  // (run_member lets go of the team)
    run_member(r->team, r->member);
  }
}

}  // namespace

void resident_post(int e, Team *t, int member) {
  if (residents.empty()) residents.assign(static_cast<size_t>(G.engines), nullptr);
  Resident *&r = residents[static_cast<size_t>(e)];
  if (!r) {
    if (resident_channel < 0) {
      // A channel of their own that MR_shutdown drops, so that a program that started
      // mrengine itself can still shut it down while residents wait for jobs.
      MR_ChannelOptions co;
      MR_channel_options_default(&co);
      co.close = MR_CLOSE_DROP;
      resident_channel = MR_channel_create(&co);
      if (resident_channel < 0)
        die("cannot make the channel of the team members: %s", MR_strerror(resident_channel));
    }
    r = new Resident;
    MR_SpawnOptions o;
    MR_spawn_options_default(&o);
    o.engine = e;
    o.channel = resident_channel;
    int rc = MR_spawn(resident_main, r, &o);
    if (rc != 0) die("cannot start team member %d: %s", member, MR_strerror(rc));
  }
  r->team = t;
  r->member = member;
  // relaxed: the count is read back by this thread alone (the only poster).
  std::uint64_t next = (r->mail.load(std::memory_order_relaxed) >> 1) + 1;
  // release: publishes the job (and the team) to the resident.
  if (r->mail.exchange(next << 1, std::memory_order_release) & 1) MR_future_signal(&r->wake, 1);
}

void forget_residents() {
  new (&residents) std::vector<Resident *>;
  resident_channel = -1;
}

}  // namespace mrg
