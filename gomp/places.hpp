// places.hpp: the place list and thread binding (doc/gomp.md, "Places and binding"): OMP_PLACES
// resolved against the machine with hwloc, where the members of a team go under a policy, and
// binding a thread to its place.
#ifndef MR_GOMP_PLACES_HPP
#define MR_GOMP_PLACES_HPP

#include <vector>

#include "env.hpp"

namespace mrg {

// The places: each a sorted list of OS processor numbers the process may run on. Empty when
// bind-var is false (OMP_PROC_BIND=false or unset, and OMP_PLACES unset): no thread is bound.
// Resolved on first use, then fixed. Any thread.
const std::vector<std::vector<int>> &places();

// The placement of a thread's initial task: place 0 and a partition of every place when there
// are places, else none.
Placement initial_placement();

// Where the n members of a new team go (*out, one per member) under policy `bind` (a Bind),
// from `parent`, the encountering implicit task's placement (OpenMP 5.1, "Controlling OpenMP
// Thread Affinity"). Needs places() non-empty.
void assign_places(int bind, const Placement &parent, int n, std::vector<Placement> *out);

// Bind the calling thread to place p (0 <= p < places().size()), unless it is already there.
void bind_to_place(int p);

}  // namespace mrg

#endif
