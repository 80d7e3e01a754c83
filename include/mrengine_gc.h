/* mrengine_gc.h: what a garbage collector needs to know of mrengine's threads and stacks.
 *
 * mrengine creates threads of its own (engines 1..N-1, backup threads of blocking regions) and
 * runs contexts on stacks of its own, switching a thread from one stack to another. A collector
 * that scans thread stacks must register those threads, scan the range of the stack each thread
 * runs on now, and scan the stacks that no thread runs on (suspended contexts, and a thread's own
 * stack while a context runs on it). The hooks below tell it each of these; doc/gc.md says how a
 * collector of one's own uses them, and MR_gc_use_boehm wires them for the Boehm-Demers-Weiser
 * collector (bdwgc).
 *
 * C89-callable. Part of mrengine's C ABI: <mrengine.h> includes it inside its extern "C" block,
 * and including this header alone includes <mrengine.h>. Link: libmrengine (pkg-config
 * mrengine); a program that calls MR_gc_use_boehm also links bdwgc (pkg-config bdw-gc, or -lgc).
 */
#ifndef MRENGINE_H
#include "mrengine.h" /* which includes this header where it belongs */
#elif !defined(MRENGINE_GC_H)
#define MRENGINE_GC_H

/* ---- Garbage collectors ------------------------------------------------------------------- */

/* The hooks of a collector. Set with MR_gc_set_hooks before MR_init, which copies them; they are
 * called from MR_init until MR_shutdown (or MR_shutdown_now) returns. Any of them may be NULL.
 * `data` is passed to every hook. None may call into mrengine, and none may suspend or block for
 * long: they run on the thread that calls them, in the middle of the runtime's own work.
 *
 *   thread_begin(data)          on every thread mrengine creates, first of all, before it runs
 *                               any code of the caller's and before it first switches stacks;
 *   thread_end(data)            on that thread, last of all, back on its own stack;
 *   switch_begin(data)          on a thread about to leave the stack it runs on for another;
 *   switch_end(data, lo, hi)    on that thread, first of all on the stack it switched to, which
 *                               spans [lo, hi) (hi is its base: stacks grow down). Called on
 *                               every switch between contexts, and to and from a thread's own
 *                               stack (its bounds as the thread's attributes give them).
 *
 * Between a thread's switch_begin and its switch_end the thread's stack pointer and the stack
 * ranges MR_gc_each_suspended_stack reports are in flux: the collector must not stop that thread
 * in between (a collector that stops threads with signals holds the lock that its stop takes, as
 * MR_gc_use_boehm does with the allocation lock). Once switch_end is called, the stack left is
 * one of the suspended stacks. */
typedef struct MR_GcHooks {
  size_t size; /* sizeof(MR_GcHooks), set by MR_gc_hooks_init */
  void (*thread_begin)(void *data);
  void (*thread_end)(void *data);
  void (*switch_begin)(void *data);
  void (*switch_end)(void *data, void *lo, void *hi);
  void *data;
} MR_GcHooks;

/* Empty a collector's hooks record: every hook NULL, data NULL, size sizeof(MR_GcHooks). Any
 * thread. */
MR_EXTERN void MR_gc_hooks_init(MR_GcHooks *hooks);

/* Give MR_init(cfg) a collector's hooks to install. *hooks (MR_GcHooks: each hook's contract is
 * in mrengine_gc.h and doc/gc.md) is copied by MR_init, so it need only live until then; NULL
 * means no hooks. cfg must have been filled by MR_config_default. Any thread. Returns 0, or
 * MR_EINVAL (cfg NULL or from an older MR_config_default, hooks->size too small). */
MR_EXTERN int MR_gc_set_hooks(MR_Config *cfg, const MR_GcHooks *hooks);

/* A range of a stack that no thread runs on: [lo, hi), lo the saved stack pointer (the lowest
 * address of the registers saved when the stack was left), hi its base. */
typedef void (*MR_GcStackFn)(void *lo, void *hi, void *arg);

/* List the stacks no thread runs on: fn(lo, hi, arg) for each, suspended contexts
 * (waiting at a join, a future, a timer, a descriptor, a channel, in a queue to run, or free in a
 * cache), engine 0's scheduler while a context runs on engine 0, and the own stack of every
 * engine and backup thread while a context runs on it. Takes no lock and allocates nothing: meant
 * for a collector that has stopped every thread mrengine created or runs contexts on, none of them
 * between its switch_begin and switch_end (see MR_GcHooks), and calls it from any thread. Stacks
 * are listed only while a runtime started with hooks runs. Returns the number of ranges reported
 * (0 when fn is NULL). */
MR_EXTERN size_t MR_gc_each_suspended_stack(MR_GcStackFn fn, void *arg);

/* List the ranges of mrengine's own records that hold pointers the program handed it and that
 * no stack may hold: fn(lo, hi, arg) for each, the task and spawned function of every context
 * (MR_spawn's arg, and a spark's env once a context took it, before it first runs or while it
 * waits in a queue), each running engine's deque (the env of every spark forked on an engine,
 * MR_fork_new_child and MR_scope_spawn, while it waits there), the injector (the env of a spark
 * forked by a thread that is not an engine, while it waits there) and the slots of every loop
 * control (MR_lc_spawn's env, until its iteration has started). A collector scans them
 * conservatively, as it scans the suspended stacks, with the same rules: no lock, no allocation,
 * every thread stopped, as MR_gc_each_suspended_stack. Ranges are listed only while a runtime
 * started with hooks runs. Returns the number of ranges reported (0 when fn is NULL).
 * A future's value and a timer's argument live in the program's own MR_Future and MR_Timer,
 * roots when those are. */
MR_EXTERN size_t MR_gc_each_root_range(MR_GcStackFn fn, void *arg);

/* Wire the hooks for the Boehm-Demers-Weiser collector (bdwgc 8.2 or later) into cfg. Each thread
 * mrengine creates is registered and unregistered (GC_register_my_thread), each switch tells the
 * collector the stack the thread now runs on (GC_set_stackbottom, under the allocation lock), and
 * each collection also scans the suspended stacks and the root ranges (GC_set_push_other_roots,
 * chained to the procedure set before). The program calls GC_INIT() first, on its main thread; then
 * MR_config_default(&cfg), MR_gc_use_boehm(&cfg), MR_init(&cfg); and links -lgc. The thread that
 * calls MR_init must be registered with the collector (the main thread is, by GC_INIT).
 * Returns 0, MR_EINVAL (as MR_gc_set_hooks), or MR_ENOTSUP when this libmrengine was built
 * without bdwgc (configure --without-bdwgc, or no libgc found). Any thread. */
MR_EXTERN int MR_gc_use_boehm(MR_Config *cfg);

#endif
