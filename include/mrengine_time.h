/* mrengine_time.h: waiting for a moment (sleeps, timers, tickers) and for file descriptors
 * (MR_wait_fd). Part of mrengine's C ABI: include <mrengine.h>, which includes this header inside
 * its extern "C" block, after the declarations it uses. */
#ifndef MRENGINE_TIME_H
#define MRENGINE_TIME_H

#ifndef MRENGINE_H
#error "include <mrengine.h>, not <mrengine_time.h>"
#endif

/* ---- Time: sleeps, timers, tickers ----------------------------------------------------------- */

/* Times are nanoseconds of CLOCK_MONOTONIC (MR_now); durations are nanoseconds. Timers run on the
 * engines, with no timer thread: each engine keeps the timers armed on it and its idle loop fires
 * them; a sleeping engine waits no longer than its earliest deadline, and wakes for a busy
 * engine's timer (by the deadline plus 1 ms) unless every engine is busy (doc/design.md,
 * "Timers"). A deadline that has passed fires at once. Pending timers are dropped (never fire) when the runtime shuts down. */

/* CLOCK_MONOTONIC now, in nanoseconds. Any thread. */
MR_EXTERN uint64_t MR_now(void);

/* Suspend the calling context until MR_now() >= deadline; its engine runs other work meanwhile. A
 * bound context resumes on its engine. On a thread that is not an engine (or with the runtime
 * not running) the thread sleeps, until the deadline however many signal handlers interrupt it.
 * On an engine's thread outside any context (an on_drop, a polled source's poll function) a
 * sleep would stop the engine: it stops the process with a message, as a join there does.
 * Returns 0 (at once for a deadline that has passed); MR_ENOMEM (the timer could not be stored:
 * no wait). Any thread. */
MR_EXTERN int MR_sleep_until(uint64_t deadline);

/* MR_sleep_until(MR_now() + ns). Returns 0, MR_ENOMEM, or MR_EOVERFLOW (ns too large for the
 * clock; no wait). Any thread. */
MR_EXTERN int MR_sleep_for(uint64_t ns);

/* A one-shot timer. Storage is the caller's and must stay alive while the timer is pending; a
 * zeroed MR_Timer (or MR_TIMER_INIT) has never been started. Once a timer has fired or been
 * cancelled (MR_timer_cancel says which) the runtime no longer touches it: it may be freed or
 * started again. */
typedef struct MR_Timer {
  uintptr_t mr_private[8];
} MR_Timer;

#define MR_TIMER_INIT          \
  {                            \
    { 0, 0, 0, 0, 0, 0, 0, 0 } \
  }

/* At deadline, run fn(env) as a new unbound context (as MR_spawn does; MR_shutdown waits for it
 * once it has started). Returns 0; MR_ENOTINIT; MR_EINVAL (t or fn NULL, or t pending);
 * MR_ENOMEM; MR_ESHUTDOWN. Any thread while the runtime runs. */
MR_EXTERN int MR_timer_start(MR_Timer *t, uint64_t deadline, MR_TaskFn fn, void *env);

/* Stop *t before it fires. Returns 0 (cancelled: its function will never run); MR_EFIRED (it has
 * fired or is firing: its function runs or has run, unless the runtime shuts down first);
 * MR_ECANCELLED (cancelled before); MR_EINVAL
 * (t NULL or never started); MR_ESHUTDOWN (the runtime stopped while it was pending: it was
 * dropped). In every case the runtime no longer uses *t. Any thread, once MR_timer_start (or
 * MR_future_signal_at) on t has returned. */
MR_EXTERN int MR_timer_cancel(MR_Timer *t);

/* Signal *f with value at deadline (MR_future_signal), using *t as the timer: MR_timer_cancel(t)
 * stops it. Returns 0; MR_ENOTINIT; MR_EINVAL (f or t NULL, or t pending); MR_ENOMEM. Any thread
 * while the runtime runs. */
MR_EXTERN int MR_future_signal_at(MR_Future *f, uintptr_t value, uint64_t deadline, MR_Timer *t);

/* A periodic ticker: ticks at start + k * period (k = 1, 2, ...). Storage is the caller's; it
 * holds no runtime resource (nothing to stop). One waiter at a time. */
typedef struct MR_Ticker {
  uint64_t mr_private[3];
} MR_Ticker;

/* Start *tk now with the given period (ns). Returns 0; MR_EINVAL (tk NULL or period 0). Any
 * thread. */
MR_EXTERN int MR_ticker_start(MR_Ticker *tk, uint64_t period);

/* Wait for the next tick (MR_sleep_until: a context suspends) and store in *ticks how many
 * periods have elapsed since the previous wait returned (or since the start): 1 when the waiter
 * keeps up, more when ticks were missed (they are counted, not queued; a wait that finds ticks
 * missed returns at once). Returns 0; MR_EINVAL (tk or ticks NULL, tk not started); MR_ENOMEM.
 * Any thread. */
MR_EXTERN int MR_ticker_wait(MR_Ticker *tk, uint64_t *ticks);

/* ---- Waiting on file descriptors ------------------------------------------------------------- */

/* What MR_wait_fd waits for and returns (bits). */
#define MR_FD_READ 0x1  /* readable (or a peer closed: a read returns 0) */
#define MR_FD_WRITE 0x2 /* writable */
#define MR_FD_ERROR 0x4 /* an error or a hang-up is pending on the descriptor (returned only) */

/* Suspend the calling context until fd is ready for `events` (MR_FD_READ and/or MR_FD_WRITE) or
 * timeout_ns nanoseconds have passed (negative: no time-out), with no backup thread: the engine
 * runs other work and, with nothing to do, sleeps in epoll_wait. The context resumes on the same
 * engine. Needs MR_CONFIG_FD_WAITS. On a thread that is not an engine (or with the runtime not
 * running) the thread waits in an epoll instance of its own, with the same results; a signal
 * handler that interrupts it does not move its time-out. On an engine's thread outside any
 * context (an on_drop, a polled source's poll function) a wait with a time-out other than 0
 * stops the process with a message (it would stop the engine); a poll (0) is answered. One read
 * waiter and one write waiter may wait on a descriptor at once, from any engines or threads.
 * Returns the ready bits (> 0); 0 at the time-out (a descriptor ready then is reported ready,
 * however short the time-out); MR_EINVAL (events not READ/WRITE); MR_EBADF
 * (fd not open); MR_ENOTPOLL (a regular file or directory); MR_EINUSE (somebody already waits on
 * fd for one of `events`, wherever it runs; or, from a context, fd is one of the runtime's own
 * descriptors: an engine's epoll instance or eventfd); MR_ENOFDWAIT (no MR_CONFIG_FD_WAITS); MR_ENOMEM. A
 * descriptor closed while a context waits on it is a mistake of the program's, answered safely:
 * the wait ends at its time-out, or earlier when the file it named, still open through another
 * descriptor (a dup, a forked child's copy), becomes ready: it is then reported ready under the
 * closed number, which may name another file by then (a read of it may find nothing, as after
 * any readiness). A later wait is never told of the closed file. Contexts that wait keep MR_shutdown
 * waiting (give them time-outs); MR_shutdown_now drops them. A context that MR_channel_close
 * drops when its wait ends gives the descriptor up as it is dropped. Any thread. */
MR_EXTERN int MR_wait_fd(int fd, int events, int64_t timeout_ns);

#endif /* MRENGINE_TIME_H */
