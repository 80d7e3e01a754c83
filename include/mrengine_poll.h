/* mrengine_poll.h: waits on event sources that can only be tested (an MPI request, a device
 * queue), which the engines poll. Part of mrengine's C ABI: include <mrengine.h>, which includes
 * this header inside its extern "C" block, after the declarations it uses. */
#ifndef MRENGINE_POLL_H
#define MRENGINE_POLL_H

#ifndef MRENGINE_H
#error "include <mrengine.h>, not <mrengine_poll.h>"
#endif

/* ---- Polled waits ---------------------------------------------------------------------------- */

/* An add-on library (libmrmpi is one) makes a context wait for something that no descriptor,
 * future or timer announces: the context suspends, bound to its engine, and that engine calls
 * the source's poll function over every item its contexts wait for, at the top of each pass of
 * its idle loop and before it sleeps. While any item of an engine is outstanding the engine
 * sleeps no longer than the smallest period of their sources, so it polls again within that
 * period; with none outstanding nothing is polled and an idle engine sleeps as it always has
 * (doc/design.md, "Polled waits"). A busy engine polls only when it passes its idle loop.
 *
 * A source is the caller's storage and must stay alive while the runtime runs:
 *   poll(ctx, items, n, done)    the n items of one engine's waits on this source (each the item
 *                                given to MR_poll_wait, in no particular order): set done[i] to 1
 *                                for each that has completed, leave the others 0. Returns 0, or
 *                                a negative MR_E* code, which stops the process with a message.
 *                                Called on the engine's own thread, outside any context, never
 *                                twice at once for one engine; it must not suspend or block
 *                                (a join, a future's wait, a sleep, an MR_wait_fd with a
 *                                time-out there stops the process with a message).
 *   period_ns                    the longest a sleeping engine waits between two polls while it
 *                                has items of this source (0: 50 us). */
typedef int (*MR_PollFn)(void *ctx, void *const *items, int n, unsigned char *done);

typedef struct MR_PollSource {
  MR_PollFn poll;
  void *ctx;
  uint64_t period_ns;
} MR_PollSource;

/* Suspend the calling context until src->poll reports `item` done; its engine runs other work
 * meanwhile, and the context resumes on the same engine. The caller should test the item once
 * itself first (a wait is a suspension and at least one pass of the idle loop). Returns 0 once
 * done; MR_EINVAL (src, src->poll or item NULL); MR_ENOTENGINE (not called from a context:
 * a thread that is not an engine, a blocking region, or the runtime not running; nothing is
 * waited for, and the caller waits its own way); MR_ENOMEM (the wait could not be recorded).
 * A waiting context keeps MR_shutdown waiting; MR_shutdown_now drops it, and the item is
 * polled no more. Any thread. */
MR_EXTERN int MR_poll_wait(const MR_PollSource *src, void *item);

#endif /* MRENGINE_POLL_H */
