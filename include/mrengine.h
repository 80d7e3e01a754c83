/* mrengine.h: the C ABI of mrengine, a Mercury-style runtime scheduler.
 *
 * A program (or the C code a compiler generates) links libmrengine and gets:
 *   engines     OS threads that run work; engine 0 is the thread that called MR_init;
 *   contexts    user-level threads with their own stacks (MR_spawn, and the contexts that run
 *               sparks and suspend at joins);
 *   sparks      potential parallelism: MR_fork_new_child pushes one on the current engine's
 *               work-stealing deque; an idle engine may steal it;
 *   sync terms  the join of a parallel conjunction (MR_sync_term_init, MR_join_and_continue).
 *
 * Every function returns 0 or a negative MR_E* code unless it says otherwise. Misuse that cannot
 * be reported as a code (more branches forked than a sync term counts, a future signalled with
 * two values, an internal invariant broken) stops the process with a message that starts with
 * "mrengine: ". A thread that is not an engine may fork, join and wait on futures: where a
 * context would suspend, it blocks.
 *
 * The protocol behind these calls is described in doc/design.md; options in doc/options.md.
 */
#ifndef MRENGINE_H
#define MRENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <atomic_ops.h>

#include "mrengine_config.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MR_EXTERN __attribute__((visibility("default")))
#else
#define MR_EXTERN
#endif

/* ---- Errors ----------------------------------------------------------------------------- */

/* One table: the enum, MR_strerror and MR_err_name are generated from it. */
#define MR_ERRNO_MAP(XX)                                                                       \
  XX(EINVAL, -1, "invalid argument")                                                           \
  XX(EOPTION, -2, "unknown option or bad option value")                                        \
  XX(ENOMEM, -3, "out of memory (context stack or runtime structure)")                         \
  XX(EAGAIN, -4, "resource temporarily unavailable (an engine thread could not be created)")   \
  XX(EBUSY, -5, "the runtime is already initialised")                                          \
  XX(ENOTINIT, -6, "the runtime is not initialised")                                           \
  XX(ENOTENGINE, -7, "the calling thread or context may not do this")                          \
  XX(ERANGE, -8, "engine number out of range")                                                 \
  XX(ESHUTDOWN, -9, "the runtime is shutting down")                                            \
  XX(EFIRED, -10, "the timer has already fired (or is firing)")                                \
  XX(ECANCELLED, -11, "the timer was already cancelled")                                       \
  XX(EOVERFLOW, -12, "the duration overflows the clock")                                       \
  XX(EBADF, -13, "bad file descriptor")                                                        \
  XX(ENOTPOLL, -14, "the file descriptor cannot be waited on (a regular file or a directory)") \
  XX(EINUSE, -15, "somebody already waits on this file descriptor for that direction")         \
  XX(ENOFDWAIT, -16, "fd waits need MR_CONFIG_FD_WAITS at MR_init")                            \
  XX(ENOCHANNEL, -17, "no such channel")                                                       \
  XX(ELEVEL, -18, "priority level out of range")                                               \
  XX(ECHANNELS, -19, "too many channels (MR_MAX_CHANNELS exist)")                              \
  XX(EDEADLINE, -20, "a deadline for a FIFO channel, or none for a deadline channel")          \
  XX(ECLOSED, -21, "closed: the scope has ended, or the channel is closed")                    \
  XX(EDROPPED, -22, "the context was dropped before its function returned")                    \
  XX(EDEADLK, -23, "the caller would wait for itself (it is a context of that channel)")       \
  XX(ENOTSUP, -24, "not supported by this build of mrengine")

/* An enum made of a table, which clang-format would take for an expression. */
/* clang-format off */
typedef enum {
#define MR_ERR_ENUM_(name, value, text) MR_##name = (value),
  MR_ERRNO_MAP(MR_ERR_ENUM_)
#undef MR_ERR_ENUM_
  MR_ERRNO_END_ = -25
} MR_Errno;
/* clang-format on */

/* The text of an error code ("unknown error" for a code not in the table). Any thread. */
MR_EXTERN const char *MR_strerror(int err);
/* The name of an error code, e.g. "MR_EOPTION" ("MR_EUNKNOWN" if not in the table). Any thread. */
MR_EXTERN const char *MR_err_name(int err);

/* ---- Start-up and shut-down --------------------------------------------------------------- */

/* Runtime configuration. Call MR_config_default first, then change fields: more fields may be
 * added at the end at any time, and `size` tells the library which ones the caller knows.
 * Options in the environment variable MRENGINE_OPTIONS are applied after these fields and
 * override them (doc/options.md). */
/* The park hook (MR_Config.park, .unpark, .park_ctx): how an engine with nothing to do sleeps,
 * and how it is woken, instead of the engine's own semaphore. The library calls
 *   park(ctx, engine, deadline)  on engine `engine`'s thread: wait until unpark(ctx, engine) is
 *                                called, or CLOCK_MONOTONIC (MR_now) reaches deadline
 *                                (UINT64_MAX: no deadline). It must return if unpark was called
 *                                before or during it, since it last returned; it may return
 *                                early for any reason (the engine then looks for work again).
 *                                Returns 0, or a negative MR_E* code, which stops the process
 *                                with a message naming the engine.
 *   unpark(ctx, engine)          from any thread, at any time while the runtime runs.
 * Both set, or both NULL (the semaphore). doc/design.md, "The park hook", says why any park that
 * keeps this contract loses no wake-up. */
typedef int (*MR_ParkFn)(void *ctx, int engine, uint64_t deadline);
typedef void (*MR_UnparkFn)(void *ctx, int engine);

typedef struct MR_Config {
  size_t size;               /* sizeof(MR_Config), set by MR_config_default */
  unsigned flags;            /* MR_CONFIG_* bits; any other bit: MR_EINVAL */
  int engines;               /* number of engines; 0 = the PUs this process may run on */
  int spin_rounds;           /* steal rounds an idle engine makes before it sleeps (0..10^6) */
  size_t stack_size;         /* bytes of a regular context stack (MR_spawn, primordial excluded) */
  size_t small_stack_size;   /* bytes of a spark context stack */
  unsigned poll_interval_us; /* polling build only: how long a sleeping engine waits (us, 1..10^7;
                                each wait costs CPU: doc/options.md) */
  const char *options; /* options text in MRENGINE_OPTIONS syntax, applied before it; or NULL */
  MR_ParkFn park;      /* the park hook (above), or NULL for the engines' semaphores */
  MR_UnparkFn unpark;  /* set together with park */
  void *park_ctx;      /* passed to both */
  const struct MR_GcHooks *gc; /* a collector's hooks (mrengine_gc.h, MR_gc_set_hooks) or NULL */
} MR_Config;

/* Don't read MRENGINE_OPTIONS. */
#define MR_CONFIG_IGNORE_ENV 0x1u
/* Don't print option errors on stderr (MR_init_error_message still has them). */
#define MR_CONFIG_QUIET 0x2u
/* Engines sleep in epoll_wait, so that MR_wait_fd suspends contexts (not with a park hook). */
#define MR_CONFIG_FD_WAITS 0x4u

/* Fill *cfg with the defaults. Any thread. */
MR_EXTERN void MR_config_default(MR_Config *cfg);

/* Start the runtime: the calling thread becomes engine 0 and its current code the primordial
 * context; engines 1..N-1 are created. cfg may be NULL (defaults).
 * Returns 0; MR_EBUSY if the runtime is already running; MR_EOPTION for a bad option (the
 * message, naming the option and the value, is printed on stderr and kept for
 * MR_init_error_message); MR_EINVAL for a bad field in cfg (a value outside its option's range in
 * doc/options.md included, the message naming the field); MR_EAGAIN or MR_ENOMEM if threads or
 * stacks could not be made (nothing is left behind). Call from a thread that is not an engine;
 * threads may call it at the same time, and while another thread's MR_shutdown runs: one runtime
 * exists at a time, and MR_init returns MR_EBUSY while one runs, starts or is being shut down
 * (until that MR_shutdown has returned). The child of a fork() has no runtime (the parent's is
 * left to the parent) and may call MR_init to start one of its own (doc/api.md, "fork()"). */
MR_EXTERN int MR_init(const MR_Config *cfg);

/* The message of the last MR_init failure in this process, or "" if none. Any thread. */
MR_EXTERN const char *MR_init_error_message(void);

/* Wait until every spawned context has finished, and every branch that a thread that is not an
 * engine forked (so that the thread's MR_join_and_continue returns; a branch such a thread forks
 * once this wait has ended runs on that thread, in MR_fork_new_child), stop every engine whatever
 * its state, join their threads and free every stack. Returns 0; MR_ENOTINIT if not running;
 * MR_ENOTENGINE if not called from the primordial context (the code that called MR_init) itself:
 * also from a branch that the library's MR_join_and_continue runs on the primordial's stack and
 * from a blocking region run in place there (the join or region is unfinished; a branch the
 * inline join of mrengine_view.h runs there cannot be told apart: don't). MR_init may be called
 * again afterwards. */
MR_EXTERN int MR_shutdown(void);

#define MR_LEVELS 8        /* priority levels 0 (highest) .. MR_LEVELS - 1 (see "Channels") */
#define MR_MAX_CHANNELS 64 /* channels per runtime, the default one included */

/* What a shutdown left undone: MR_shutdown_now's, or MR_shutdown_report's (the contexts and
 * sparks of MR_CLOSE_DROP channels). */
typedef struct MR_ShutdownReport {
  size_t size;               /* sizeof(MR_ShutdownReport): MR_shutdown_report_init */
  uint64_t contexts_dropped; /* contexts never resumed: queued to run, or waiting at a join, a
                                future or a loop */
  uint64_t sparks_dropped;   /* sparks never run: on engines' deques or in the injector */
  /* The same per channel (filled if size covers them): */
  uint64_t channel_contexts_dropped[MR_MAX_CHANNELS];
  uint64_t channel_sparks_dropped[MR_MAX_CHANNELS];
} MR_ShutdownReport;

/* Make *report ready for MR_shutdown_report or MR_shutdown_now: every counter 0 and report->size
 * sizeof(MR_ShutdownReport), so that the caller need not set the size by hand. Any thread. */
MR_EXTERN void MR_shutdown_report_init(MR_ShutdownReport *report);

/* MR_shutdown, and what it dropped in *report (report->size as for MR_shutdown_now; NULL: none).
 * Returns as MR_shutdown does, or MR_EINVAL (report->size too small). */
MR_EXTERN int MR_shutdown_report(MR_ShutdownReport *report);

/* Stop without waiting for spawned contexts: each engine leaves as soon as the context it is
 * running reaches a suspension point (it finishes, suspends at a join, future or loop, or ends a
 * blocking region), so a context that never suspends delays it. Every context and spark not run
 * by then is dropped: freed without running any more of it (no destructors run on a dropped
 * context's stack), and counted in *report if report is not NULL. Threads that are not engines
 * and wait at a join or future for dropped work wait forever. Returns 0, MR_ENOTINIT,
 * MR_ENOTENGINE (as MR_shutdown) or MR_EINVAL (report->size too small). */
MR_EXTERN int MR_shutdown_now(MR_ShutdownReport *report);

/* ---- Engines ---------------------------------------------------------------------------- */

/* The id (0..N-1) of the engine running the caller, or -1 on a thread that is not an engine. */
MR_EXTERN int MR_engine_id(void);
/* The number of engines, or 0 when the runtime is not running. Any thread. */
MR_EXTERN int MR_num_engines(void);

/* Where engine `engine` runs: *cpu is the OS index of the processing unit it is bound to (as
 * sched_getcpu() and /proc/cpuinfo number them), or -1 if it is not pinned (--thread-pinning=none,
 * or pinning was not possible: MR_init then printed a warning). Any thread while the runtime
 * runs. Returns 0, MR_ENOTINIT, MR_ERANGE, or MR_EINVAL (cpu NULL). */
MR_EXTERN int MR_engine_cpu(int engine, int *cpu);

/* ---- Parallel conjunctions: sparks and sync terms ------------------------------------------ */

/* A task: a function and its environment. */
typedef void (*MR_TaskFn)(void *env);

/* The join of one parallel conjunction. Storage is the caller's (usually on its stack); the
 * content is private to the runtime. */
typedef struct MR_SyncTerm {
  uintptr_t mr_private[2];
} MR_SyncTerm;

/* Prepare st for a conjunction of `conjuncts` branches (>= 1): the caller runs one of them itself
 * and forks conjuncts-1 with MR_fork_new_child. Any thread. Forking more branches than that
 * stops the process with a message (when the fork or the extra branch's arrival shows it). */
MR_EXTERN void MR_sync_term_init(MR_SyncTerm *st, unsigned conjuncts);

/* Push a spark {fn, env, st} on the current engine's deque: fn(env) will run, here or on another
 * engine, before MR_join_and_continue(st) returns. From a thread that is not an engine the spark
 * goes to the runtime's injector, from which an engine that has no sparks of its own takes it.
 * Any thread while the runtime runs; stops the process with a message otherwise. */
MR_EXTERN void MR_fork_new_child(MR_SyncTerm *st, MR_TaskFn fn, void *env);

/* Called by the context that initialised st, after its own branch: returns once every forked
 * branch has finished. Meanwhile it runs its own sparks inline while they are still on its
 * engine's deque; if one was stolen it suspends the context and the engine does other work.
 * A thread that is not an engine blocks until the last branch has finished. */
MR_EXTERN void MR_join_and_continue(MR_SyncTerm *st);

/* These three are also inline functions (the fast paths, in mrengine_view.h): with GCC or Clang
 * on x86-64 and arm64, unless the client defines MR_NO_INLINE_FORKS, MR_sync_term_init(...),
 * MR_fork_new_child(...) and MR_join_and_continue(...) expand to them, and call the functions
 * above only on their slow paths. The functions keep their names and behaviour (and their
 * addresses may be taken). */

/* What generated code reads of the current engine without a call: MR_EngineView, the
 * granularity test, and the inline fork and join. */
#include "mrengine_view.h"

/* ---- Futures (dependent parallel conjunctions) ---------------------------------------------- */

/* A single-assignment variable shared between conjuncts: one side signals a value, the others
 * wait for it. Storage is the caller's; the content is private. A zeroed MR_Future (or
 * MR_FUTURE_INIT, or MR_future_init) is unsignalled. It must stay alive until every waiter has
 * returned. */
typedef struct MR_Future {
  uintptr_t mr_private[4];
} MR_Future;

#define MR_FUTURE_INIT \
  {                    \
    { 0, 0, 0, 0 }     \
  }

/* Make *f unsignalled. Any thread, before the future is shared. */
MR_EXTERN void MR_future_init(MR_Future *f);

/* Give *f its value and make every waiter runnable again (none is lost, whenever it began to
 * wait). Signalling again with the same value does nothing; with a different value it is a misuse
 * that stops the process with a message. Any thread while the runtime runs. */
MR_EXTERN void MR_future_signal(MR_Future *f, uintptr_t value);

/* The value of *f. If it is not signalled yet, a context suspends (its engine does other work)
 * and a thread that is not an engine blocks, until MR_future_signal. Any thread. */
MR_EXTERN uintptr_t MR_future_wait(MR_Future *f);

/* Nonzero if *f is signalled (MR_future_wait would not wait). Any thread. */
MR_EXTERN int MR_future_is_signalled(const MR_Future *f);

/* ---- Loop control (parallel loops in a bounded number of contexts) --------------------------- */

/* A parallel loop whose iterations run in at most `contexts` worker contexts at once (Mercury's
 * loop control). The master (the context that runs the loop) starts each iteration with
 * MR_lc_spawn; while every slot is busy it suspends, and resumes when an iteration finishes;
 * MR_lc_finish waits for every iteration. Unlike one spark per iteration, the iterations waiting
 * to start cost nothing: they have not been created yet. */
typedef struct MR_LoopControl MR_LoopControl;

/* A loop control with `contexts` slots (0: --lc-contexts-per-engine x engines) in *out.
 * Returns 0, MR_ENOTINIT, MR_EINVAL (out NULL or contexts > 65536), MR_ENOMEM. Any thread. */
MR_EXTERN int MR_lc_create(unsigned contexts, MR_LoopControl **out);

/* Run fn(env) as the loop's next iteration in a worker context, waiting (suspended) for a free
 * slot. Returns 0; MR_EINVAL (lc or fn NULL); MR_ENOTENGINE (not called from a context);
 * MR_ENOMEM or MR_ESHUTDOWN (the iteration did not start). */
MR_EXTERN int MR_lc_spawn(MR_LoopControl *lc, MR_TaskFn fn, void *env);

/* Wait until every iteration started on lc has finished, then free lc. Returns 0; MR_EINVAL;
 * MR_ENOTENGINE (not called from a context: lc is left as it was). */
MR_EXTERN int MR_lc_finish(MR_LoopControl *lc);

/* ---- Scopes (doc/api.md, "Scopes") ----------------------------------------------------------- */

/* A scope is a fork-join region whose number of tasks is not known in advance: MR_scope_begin
 * opens it, MR_scope_spawn adds a task fn(env) (from the owner, or from any task of the scope,
 * so tasks may spawn more tasks into it), and MR_scope_end returns once every task spawned into
 * it has finished. Tasks may therefore borrow the owner's stack: env may point into the frame
 * that calls MR_scope_end. Each task is a spark of the calling engine (a thread that is not an
 * engine puts it in the injector): idle engines steal it, and at MR_scope_end the owner runs
 * its own remaining tasks itself, then suspends (a thread that is not an engine blocks) until
 * the last one finishes. A scope's tasks belong to the channel of the context that began it.
 * Storage is the caller's (usually on its stack) and the content private, like MR_SyncTerm's;
 * the words it does not use yet keep room for later versions without changing its size. A
 * zeroed MR_Scope is an ended one (MR_scope_spawn returns MR_ECLOSED). Scopes nest: a task may
 * open a scope of its own. */
typedef struct MR_Scope {
  uintptr_t mr_private[4];
} MR_Scope;

/* Open *s (the caller becomes its owner). Any thread while the runtime runs. Returns 0;
 * MR_ENOTINIT; MR_EINVAL (s NULL). */
MR_EXTERN int MR_scope_begin(MR_Scope *s);

/* Add the task fn(env) to *s. Called by the owner before MR_scope_end, or by a task of *s while
 * it runs (any other caller must know that *s has not ended). Returns 0; MR_ENOTINIT; MR_EINVAL
 * (s or fn NULL); MR_ECLOSED (*s has ended, and fn will not run). */
MR_EXTERN int MR_scope_spawn(MR_Scope *s, MR_TaskFn fn, void *env);

/* Wait until every task of *s has finished, including the tasks they spawned into it, then end
 * *s; its storage may then be reused (MR_scope_begin opens it again). Called only by the owner.
 * Returns 0; MR_ENOTINIT; MR_EINVAL (s NULL); MR_ECLOSED (*s had already ended). */
MR_EXTERN int MR_scope_end(MR_Scope *s);

/* A scope around one call: MR_scope_begin, fn(scope, env) (which spawns into scope), then
 * MR_scope_end. Returns as MR_scope_begin and MR_scope_end do, or MR_EINVAL (fn NULL). */
typedef void (*MR_ScopeFn)(MR_Scope *scope, void *env);
MR_EXTERN int MR_scope(MR_ScopeFn fn, void *env);

/* ---- Contexts ------------------------------------------------------------------------------ */

typedef struct MR_SpawnOptions {
  size_t size;    /* sizeof(MR_SpawnOptions); more fields may be added at the end */
  unsigned flags; /* reserved, must be 0 (MR_spawn_options_default sets it): MR_spawn refuses any
                     other value, so that a later version can give bits a meaning safely */
  int engine;     /* -1: any engine; otherwise the context is bound and runs only on this engine */
  int channel;    /* the context's channel (MR_CHANNEL_DEFAULT, or one MR_channel_create made) */
  uint64_t deadline; /* a deadline channel's order (MR_now() clock, ns; earliest runs first);
                        must be 0 for a FIFO channel */
  void (*on_drop)(void *arg); /* NULL, or called once with MR_spawn's arg if the context is
                                 dropped before fn returned (below); never if fn returned */
  void (*on_free)(void *arg); /* NULL, or called once with MR_spawn's arg, after on_drop, when
                                 the runtime frees the dropped context: nothing it started
                                 (sparks, scope tasks, loop iterations) runs any more (below) */
} MR_SpawnOptions;

/* Fill *opts with the defaults (unbound, MR_CHANNEL_DEFAULT, no deadline, no on_drop or
 * on_free). Any thread. */
MR_EXTERN void MR_spawn_options_default(MR_SpawnOptions *opts);

/* Run fn(arg) in a new context with a regular-size stack, on opts->channel's queue (or, bound,
 * on opts->engine's own). opts may be NULL; an opts->size that ends before `channel` means the
 * default channel. Any thread while the runtime runs. Returns 0; MR_ENOTINIT; MR_EINVAL (fn
 * NULL, bad opts->size, opts->flags not 0); MR_ERANGE (no such engine); MR_ENOCHANNEL;
 * MR_EDEADLINE (a deadline for a FIFO channel, or 0 for a deadline channel); MR_ENOMEM (no stack
 * could be mapped); MR_EAGAIN (bound to a --lazy-engines engine whose thread could not be
 * created); MR_ECLOSED (MR_channel_close closed the channel); MR_ESHUTDOWN. MR_shutdown
 * waits for every spawned context of a complete channel (doc/api.md, "Channels").
 *
 * A context is dropped before fn returned by MR_channel_close of a drop channel, by MR_shutdown
 * for a drop channel's, and by MR_shutdown_now; opts->on_drop(arg) is then called exactly once
 * (that call is the dropped task's status: fn will never return), and never for a context whose
 * fn returned, nor if MR_spawn did not return 0. Where: a context dropped while the engines run
 * (a closed drop channel, MR_shutdown's closing) is dropped, and on_drop called, by the engine
 * that would have resumed it, in its scheduler, not in a context; what is left when the engines
 * have stopped (MR_shutdown_now, or a drop channel's context still waiting at the end of
 * MR_shutdown) on the thread of the shutdown, after every engine and backup thread stopped and
 * before any dropped context is freed. on_drop may free memory and signal futures
 * (MR_future_signal: a context that waits for such a future runs on, or, if it is dropped too,
 * is freed without running; a thread that waits is woken), and must not wait or suspend (a join,
 * an unsignalled future, a sleep, an MR_wait_fd with a time-out, MR_yield, a blocking region,
 * MR_channel_wait: it stops the process with a message); MR_spawn from it returns MR_ESHUTDOWN
 * during a shutdown. No destructor runs on a dropped context's stack.
 *
 * A dropped context's sparks, scope tasks and loop iterations are not dropped with it by
 * MR_channel_close (nor, at MR_shutdown, those already running): they run on and may use what
 * fn uses (arg, its stack, which stays mapped), so on_drop must not free that. opts->on_free(arg)
 * is called once for every context that was dropped, when the runtime frees it: at
 * MR_shutdown or MR_shutdown_now, on the thread of the shutdown, after every on_drop, once every
 * engine and backup thread has stopped and before any context is freed; it may free arg and
 * what fn shared with its tasks, under the same rules as on_drop. Never for a context whose fn
 * returned, nor if MR_spawn did not return 0. */
MR_EXTERN int MR_spawn(MR_TaskFn fn, void *arg, const MR_SpawnOptions *opts);

/* Bind the context the caller runs in to the engine running it now, as MR_SpawnOptions.engine
 * binds a new one: whenever it suspends from now on (a join, a future, loop control, a blocking
 * region) it is resumed only on this engine, that is on this OS thread, so thread-local storage
 * whose address it holds stays its own. The binding lasts until the context's task ends: for a
 * spawned context, the rest of its life; for a context that runs a spark, until that spark
 * returns. (A spark may also run inline in the context that joins it; the binding is then that
 * context's.) Returns the engine's id (0..N-1); MR_ENOTINIT; MR_ENOTENGINE on a thread that is
 * not an engine, including inside a blocking region that moved to a backup thread. */
MR_EXTERN int MR_context_bind_here(void);

/* ---- Channels: scheduling classes (doc/api.md, "Channels") ----------------------------------- */

/* A channel is a queue of runnable contexts with a priority level (0 is the highest), a kind
 * (FIFO, or earliest deadline first), a close policy (what MR_shutdown and MR_channel_close do)
 * and a followup channel: where its contexts are queued when they become runnable again after a
 * suspension (a join, a future, loop control, a blocking region, MR_yield, a sleep or fd wait).
 * Sparks belong to the channel of the context that initialised their sync term, and a context
 * made for a stolen spark belongs to that channel. Which level an engine serves next is the
 * policy's (--schedule, doc/options.md). Channel MR_CHANNEL_DEFAULT (level 0, FIFO, complete,
 * followup itself) exists from MR_init; it is where every context goes unless told otherwise, so
 * a program that makes no channel is scheduled as before channels existed. */
#define MR_CHANNEL_DEFAULT 0

#define MR_CHANNEL_FIFO 0     /* first queued, first run */
#define MR_CHANNEL_DEADLINE 1 /* earliest MR_SpawnOptions.deadline first */
#define MR_CLOSE_COMPLETE 0   /* MR_shutdown, MR_channel_close run every context to its end */
#define MR_CLOSE_DROP 1       /* they drop them (doc/api.md, "Closing") */

typedef struct MR_ChannelOptions {
  size_t size;  /* sizeof(MR_ChannelOptions); more fields may be added at the end */
  int level;    /* 0 .. MR_LEVELS - 1 */
  int kind;     /* MR_CHANNEL_FIFO or MR_CHANNEL_DEADLINE */
  int close;    /* MR_CLOSE_COMPLETE or MR_CLOSE_DROP */
  int followup; /* a channel, or -1: the new channel itself */
} MR_ChannelOptions;

/* Fill *opts with the defaults: level 0, FIFO, complete, followup itself. Any thread. */
MR_EXTERN void MR_channel_options_default(MR_ChannelOptions *opts);

/* Make a channel; returns its number (1 .. MR_MAX_CHANNELS - 1), or MR_ENOTINIT; MR_EINVAL
 * (opts NULL, bad size, kind or close); MR_ELEVEL; MR_ENOCHANNEL (no such followup channel);
 * MR_ECHANNELS (all exist); MR_ESHUTDOWN (MR_shutdown has begun). Channels live until the
 * runtime stops. Any thread while the runtime runs. */
MR_EXTERN int MR_channel_create(const MR_ChannelOptions *opts);

/* Close channel ch while the runtime runs, and return at once: from now on MR_spawn into ch
 * returns MR_ECLOSED. With MR_CLOSE_COMPLETE every context spawned into ch before runs to its
 * end; with MR_CLOSE_DROP each spawned context whose function has not returned is dropped (and
 * counted in MR_ChannelStats.contexts_dropped, its on_drop called) when an engine would next run
 * it: a queued one at once, a running one at its next suspension. The sparks of ch, and the
 * contexts that run them, are not dropped: a started conjunction's parent waits for them. Any
 * thread, a context of ch included. Returns 0; MR_ENOTINIT; MR_EINVAL (ch is
 * MR_CHANNEL_DEFAULT, which cannot be closed); MR_ENOCHANNEL; MR_ECLOSED (ch is already closed);
 * MR_ESHUTDOWN (MR_shutdown has begun). A closed channel stays closed until the runtime stops. */
MR_EXTERN int MR_channel_close(int ch);

/* Wait until every context spawned into the closed channel ch has finished or been dropped (a
 * context suspends, a thread that is not an engine blocks); returns at once if they all have. A
 * dropped context waiting for something that never comes is dropped only when it would run, so
 * it keeps the wait waiting. Any number of callers may wait. Returns 0; MR_ENOTINIT;
 * MR_ENOCHANNEL; MR_EINVAL (ch is open: close it first); MR_EDEADLK (the caller is a context of
 * ch, which would wait for itself; a blocking region of such a context must not wait either). A
 * thread that is not an engine must be back from it before MR_shutdown begins. */
MR_EXTERN int MR_channel_wait(int ch);

/* The channel of the calling context (the one sparks forked here belong to), or MR_ENOTINIT;
 * MR_ENOTENGINE on a thread that is not an engine. */
MR_EXTERN int MR_channel_current(void);

/* Give the engine to other work: the calling context is queued in its followup channel and runs
 * again when the policy picks it (at once if nothing else waits). Returns 0; MR_ENOTINIT;
 * MR_ENOTENGINE (not called from a context, or inside a blocking region on a backup thread). */
MR_EXTERN int MR_yield(void);

/* What a channel has done since MR_init (contexts are counted by their own channel, not the
 * followup they were queued in). */
typedef struct MR_ChannelStats {
  size_t size;               /* sizeof(MR_ChannelStats): MR_channel_stats_init sets it */
  uint64_t contexts_run;     /* times one of its contexts was started or resumed */
  uint64_t ns_run;           /* engine time its contexts ran (measured with --stats or the
                                round-robin policy on, else 0) */
  uint64_t contexts_dropped; /* its contexts MR_shutdown or MR_channel_close dropped */
  uint64_t sparks_dropped;   /* its sparks MR_shutdown dropped */
} MR_ChannelStats;

/* Make *out ready for MR_channel_stats: every counter 0 and out->size sizeof(MR_ChannelStats).
 * Any thread. */
MR_EXTERN void MR_channel_stats_init(MR_ChannelStats *out);

/* Copy channel ch's counters into *out. Returns 0, MR_ENOTINIT, MR_ENOCHANNEL, or MR_EINVAL (out
 * NULL or out->size too small). Any thread while the runtime runs. */
MR_EXTERN int MR_channel_stats(int ch, MR_ChannelStats *out);

/* ---- Blocking regions ---------------------------------------------------------------------- */

/* Bracket a blocking system call or a long computation that should not hold an engine:
 *
 *   MR_blocking_begin();  n = read(fd, buf, len);  MR_blocking_end();
 *
 * MR_blocking_begin moves the calling context off its engine onto a backup thread (from a pool
 * of at most --max-backup-threads, created on demand), so that the engine goes on running other
 * work; MR_blocking_end schedules the context back onto an engine (its own engine if it is
 * bound) and returns the backup thread to the pool. errno as it was at MR_blocking_end is kept.
 * Inside the region the code runs on a thread that is not an engine: it may fork and join (as
 * any thread may), but not use loop control, and thread-local variables are the backup
 * thread's. If every backup thread is busy and the cap is reached, the region runs in place
 * (the engine blocks; MR_EngineStats.blocking_inline counts it): the code then runs on the
 * engine (MR_engine_id() says which), and every spark it forks is published at once, for the
 * other engines to take while this one blocks; an engine takes another's sparks when it has no
 * context or spark of its own to run, so a region in place that waits for its sparks waits as
 * long as the other engines keep busy (a context that keeps yielding, say). Regions nest; only the
 * outermost moves the context. Called from a thread that is not an engine, both do nothing.
 * A region costs two thread wake-ups (about 15 us on a 2-core machine, doc/performance.md):
 * bracket calls that may block for long, not every call that might block briefly.
 * MR_blocking_end without a matching MR_blocking_begin stops the process with a message. */
MR_EXTERN void MR_blocking_begin(void);
MR_EXTERN void MR_blocking_end(void);

/* The rest of the C ABI, by concept. */
#include "mrengine_gc.h"
#include "mrengine_poll.h"
#include "mrengine_stats.h"
#include "mrengine_time.h"

#ifdef __cplusplus
}
#endif

#endif /* MRENGINE_H */
