// affinity.hpp: what a program learns of places and thread affinity: the place queries, the
// affinity format (OMP_AFFINITY_FORMAT, omp_capture_affinity) and OMP_DISPLAY_AFFINITY
// (doc/gomp.md, "Places and binding").
#ifndef MR_GOMP_AFFINITY_HPP
#define MR_GOMP_AFFINITY_HPP

#include <string>

#include "records.hpp"

namespace mrg {

// affinity-format-var (OMP_AFFINITY_FORMAT, then omp_set_affinity_format). Any thread.
std::string affinity_format();

// OMP_DISPLAY_AFFINITY: member m, on its own thread as it begins its implicit task, prints
// its line in affinity-format-var unless it is the line the thread displayed last (OpenMP
// displays a thread's line at its first region and whenever what it shows changes).
void display_member_affinity(const Task *m);

}  // namespace mrg

#endif
