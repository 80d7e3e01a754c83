// wait.hpp: how long a team member looks for what it waits for (its next job, a barrier's new
// generation) before it sleeps, by OMP_WAIT_POLICY and by whether its team has more members
// than processors (doc/gomp.md, "Waiting": Oversubscription).
#ifndef MR_GOMP_WAIT_HPP
#define MR_GOMP_WAIT_HPP

#include <sched.h>

#include <cstdint>

#include "engine/cpu_relax.hpp"
#include "mrengine.h"

namespace mrg {

// Pauses a member spins at a barrier, looking for the new generation, before it yields (in an
// oversubscribed team, where by default it does not spin) or sleeps.
int barrier_spins(bool oversubscribed);

// How long a member looks before it sleeps, in ns: 200 us (100 ms with OMP_WAIT_POLICY=active,
// none with passive). Pausing between regions when its team fit the processors (spin_until),
// yielding between regions and at barriers when it did not (yield_until).
std::uint64_t look_ns();

// Look for done() for look_ns(), pausing (cpu_relax) between looks: true once done() is, false
// when the time is up. The processor stays with the caller: for teams that fit the processors.
template <class Done>
bool spin_until(Done done) {
  if (done()) return true;
  std::uint64_t until = MR_now() + look_ns();
  for (unsigned i = 1;; i++) {
    if (done()) return true;
    if ((i & 63) == 0 && MR_now() >= until) return false;
    mr::engine::cpu_relax();
  }
}

// Look for done() for look_ns(), and at least kMinYields times, yielding the processor
// (sched_yield) between looks: true once done() is, false when both are up. For a team with
// more members than processors, where the member waited for is often preempted: a yield lets
// it run on this processor at once, where a pause would keep it off for the rest of the time
// slice and a sleep would cost a system call to wake. With nothing else to run a yield returns
// at once, and the time bounds the processor time spent; when others run, one yield may take a
// whole time slice of theirs, and the count gives the wait its chances all the same.
constexpr unsigned kMinYields = 64;
template <class Done>
bool yield_until(Done done) {
  if (done()) return true;
  std::uint64_t ns = look_ns();
  if (ns == 0) return false;
  std::uint64_t until = MR_now() + ns;
  for (unsigned i = 1;; i++) {
    sched_yield();
    if (done()) return true;
    if (i >= kMinYields && MR_now() >= until) return false;
  }
}

}  // namespace mrg

#endif
