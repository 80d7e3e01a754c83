// wait.cpp: the budgets of the waits of team members (doc/gomp.md, "Waiting").
#include <cstdint>

#include "env.hpp"
#include "wait.hpp"

namespace mrg {

// 2000 pauses (100000 with OMP_WAIT_POLICY=active, none with passive), or, in a team with more
// members than processors, none (1000 with active) before yielding: there the member waited for
// is often preempted, and a spinning member keeps it from the processor (libgomp throttles
// GOMP_SPINCOUNT so). 100 pauses (2.5-4.5 us on the machine of doc/gomp.md) made a short region
// of 4 members on 2 processors 8.3 us against 4.7 with none (bench/omp/regions).
int barrier_spins(bool oversubscribed) {
  if (G.wait_policy == 0) return 0;
  if (oversubscribed) return G.wait_policy == 1 ? 1000 : 0;
  return G.wait_policy == 1 ? 100000 : 2000;
}

// Active looks long (as libgomp's threads spin), passive not at all; by default the next
// region, which usually follows at once, is found before the member parks (a park and its
// wake-up cost a few microseconds and, for a thread of our own, two system calls).
std::uint64_t look_ns() {
  if (G.wait_policy == 1) return 100000000;
  return G.wait_policy == 0 ? 0 : 200000;
}

}  // namespace mrg
