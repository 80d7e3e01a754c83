// backoff.hpp: waiting politely for another thread.
#ifndef MR_GOMP_BACKOFF_HPP
#define MR_GOMP_BACKOFF_HPP

namespace mrg {

// One step of a wait for another thread: spin, then yield, then sleep in short spells, as
// *round (zero at the wait's start, advanced here) grows.
void backoff(unsigned *round);

// backoff, except that its sleeps are MR_sleep_for's: they suspend the calling context when it
// runs in one on an engine, so that the engine runs other work meanwhile: the waits for other members and
// tasks (ordered, doacross, locks), where the thread waited for may itself wait for a task that
// only an engine can run. Waits that must hold their engine use backoff.
void backoff_suspending(unsigned *round);

}  // namespace mrg

#endif
