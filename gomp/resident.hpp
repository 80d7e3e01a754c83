// resident.hpp: the contexts resident on the engines, which run member i (0 < i < engines) of
// each outermost team started on an engine (doc/gomp.md, "Which thread runs what").
#ifndef MR_GOMP_RESIDENT_HPP
#define MR_GOMP_RESIDENT_HPP

#include "records.hpp"

namespace mrg {

// Post member `member` of team t to the resident of engine e (spawning one if none is there).
// false if engine e cannot have a thread (--lazy-engines: its thread could not be created), the
// job not posted: the caller runs the member elsewhere. Called only by the creator of the
// top-level team that holds the slots (parallel.cpp's slots_busy).
bool resident_post(int e, Team *t, int member);

// The child of a fork() (fork.cpp): the residents were the parent's runtime's; the list starts
// empty (the old one is leaked).
void forget_residents();

}  // namespace mrg

#endif
