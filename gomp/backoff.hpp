// backoff.hpp: waiting politely for another thread.
#ifndef MR_GOMP_BACKOFF_HPP
#define MR_GOMP_BACKOFF_HPP

namespace mrg {

// One step of a wait for another thread: spin, then yield, then sleep in short spells, as
// *round (zero at the wait's start, advanced here) grows.
void backoff(unsigned *round);

}  // namespace mrg

#endif
