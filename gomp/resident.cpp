// resident.cpp: the contexts resident on the engines that run team members.
//
// Member i (0 < i < engines) of an outermost team started on an engine runs on the context
// resident on its engine: one context at a time per engine, spawned bound there when a team
// needs one, which runs one team member after another. Between regions it looks for its next
// job for a while, since the next region usually follows at once (a short loop's region costs a
// few microseconds; a spawn would cost as much again), then ends; the next job spawns another.
// No resident waits without a job, so residents are ordinary contexts of the default channel:
// MR_shutdown waits for the members of a region in flight (one whose member 0 is a context the
// program spawned) and, after their look, for nothing more.
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
  // Jobs posted so far, times two, plus one while no context is resident (none yet, or the last
  // one ended): one word, so that "post a job" and "end unless a job came" cannot miss each
  // other, and the poster that finds the bit spawns the next resident.
  std::atomic<std::uint64_t> mail{1};
  // The job: written by the poster before its exchange of `mail`, read by the resident after
  // its acquire load that sees the new count. The next job is posted only after this member
  // has arrived at the region's end, so a job is never overwritten before it is read.
  Team *team = nullptr;
  int member = 0;
  // Jobs taken so far: the resident's alone, handed from one resident to the next through the
  // ending one's release of the bit and the poster's acquire of it, then the spawn.
  std::uint64_t seen = 0;
};

// Only the creator of the top-level team that holds the slots (slots_busy, parallel.cpp) posts
// jobs, makes residents and reads this list, so it needs no lock: slots_busy's acquire and
// release order it.
std::vector<Resident *> &residents = *new std::vector<Resident *>;

// The next job of resident r: the new mail word, or one with the low bit set if none came
// and r's context is to end. It looks for the job for a while (wait.hpp's look_ns) before
// ending, since the next region usually follows at once: pausing, or, after a region with more
// members than processors (`oversubscribed`), yielding, since while it looks its engine runs
// nothing else and a pause would hold a processor that the threads of the next region's other
// members need.
std::uint64_t resident_wait(Resident *r, bool oversubscribed) {
  std::uint64_t idle = r->seen << 1;
  std::uint64_t m;
  auto posted = [r, idle, &m] {
    // acquire: a new count makes the job's fields visible (pairs with the poster's release).
    m = r->mail.load(std::memory_order_acquire);
    return m != idle;
  };
  if (oversubscribed ? yield_until(posted) : spin_until(posted)) return m;
  // Success, release: the next resident's poster sees `seen` as this one left it. Failure,
  // acquire: as above, a job came meanwhile.
  if (r->mail.compare_exchange_strong(m, idle | 1, std::memory_order_release,
                                      std::memory_order_acquire))
    return idle | 1;
  return m;
}

void resident_main(void *arg) {
  auto *r = static_cast<Resident *>(arg);
  bool oversubscribed = false;
  for (;;) {
    std::uint64_t m = resident_wait(r, oversubscribed);
    if (m & 1) return;  // no job came: the next post spawns another resident
    r->seen = m >> 1;
    oversubscribed = r->team->oversubscribed();  // (run_member lets go of the team)
    run_member(r->team, r->member);
  }
}

}  // namespace

bool resident_post(int e, Team *t, int member) {
  if (residents.empty()) residents.assign(static_cast<size_t>(G.engines), nullptr);
  Resident *&r = residents[static_cast<size_t>(e)];
  if (!r) r = new Resident;
  r->team = t;
  r->member = member;
  // relaxed: the count is written by this thread alone (the only poster); the resident only
  // adds the low bit.
  std::uint64_t next = (r->mail.load(std::memory_order_relaxed) >> 1) + 1;
  // release: publishes the job (and the team) to the resident. acquire: when the bit is set,
  // the ended resident's `seen` (pairs with its release).
  std::uint64_t old = r->mail.exchange(next << 1, std::memory_order_acq_rel);
  if (!(old & 1)) return true;
  MR_SpawnOptions o;
  MR_spawn_options_default(&o);
  o.engine = e;
  int rc = MR_spawn(resident_main, r, &o);
  if (rc == MR_EAGAIN) {
    // Engine e has no thread and never will (--lazy-engines, doc/options.md): the job was not
    // taken, and still no resident is there. relaxed: only the holder of the slots reads it,
    // and slots_busy's release and acquire order it for the next one.
    r->mail.store(old, std::memory_order_relaxed);
    return false;
  }
  if (rc != 0) die("cannot start team member %d: %s", member, MR_strerror(rc));
  return true;
}

void forget_residents() { new (&residents) std::vector<Resident *>; }

}  // namespace mrg
