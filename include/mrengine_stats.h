/* mrengine_stats.h: what a runtime tells about itself: its engines' counters and its traces. Part of mrengine's C ABI: include <mrengine.h>, which includes this
 * header inside its extern "C" block, after the declarations it uses. */
#ifndef MRENGINE_STATS_H
#define MRENGINE_STATS_H

#ifndef MRENGINE_H
#error "include <mrengine.h>, not <mrengine_stats.h>"
#endif

/* ---- Statistics ---------------------------------------------------------------------------- */

/* Notification kinds, the index into MR_EngineStats.wakeups: XX(name, value, column), where the
 * column names the kind's count in the statistics table ("w:" and the column). */
#define MR_NOTIFY_MAP(XX)                                                                       \
  XX(CONTEXT, 0, "ctx")            /* a context handed to a sleeping engine */                  \
  XX(CONTEXT_ADVICE, 1, "adv")     /* a context was queued for the engine: look at the queue */ \
  XX(WORKSTEAL_ADVICE, 2, "steal") /* work to steal, with a searching unit to steal with */     \
  XX(SHUTDOWN, 3, "shut")          /* the runtime stops */

/* clang-format off */
#define MR_NOTIFY_ENUM_(name, value, column) MR_NOTIFY_##name = (value),
#define MR_NOTIFY_COUNT_(name, value, column) +1
enum {
  MR_NOTIFY_MAP(MR_NOTIFY_ENUM_)
  MR_NOTIFY_KINDS = 0 MR_NOTIFY_MAP(MR_NOTIFY_COUNT_) /* how many kinds */
};
#undef MR_NOTIFY_ENUM_
#undef MR_NOTIFY_COUNT_
/* clang-format on */

/* The per-engine counters, in one list: MR_EngineStats below, the library's own counters and the
 * columns of the statistics table are all made from it, in this order. XX(field, column) is one
 * counter; XW(field, column) is one counter per notification kind (MR_NOTIFY_*). */
#define MR_ENGINE_STATS_MAP(XX, XW)                                                              \
  XX(sparks_pushed, "pushed")          /* sparks this engine pushed on its deque */              \
  XX(sparks_run_local, "local")        /* sparks it popped from its own deque and ran */         \
  XX(sparks_stolen, "stolen")          /* sparks it stole from another engine and ran */         \
  XX(steal_attempts, "steals")         /* steal calls on another engine's deque */               \
  XX(steal_failures, "failed")         /* ... that took nothing */                               \
  XX(sleeps, "sleeps")                 /* times the engine waited on its semaphore */            \
  XW(wakeups, "w:")                    /* notifications received, by MR_NOTIFY_* kind */         \
  XX(spurious_wakeups, "spurious")     /* woken (work-steal advice or poll), found no work */    \
  XX(notifications_sent, "sent")       /* notifications this engine delivered to others */       \
  XX(notifications_dropped, "dropped") /* notifications it tried to send that the table drops */ \
  XX(contexts_created, "created")      /* contexts (stacks) this engine had to create */         \
  XX(contexts_reused, "reused")        /* contexts it took from a free cache */                  \
  XX(contexts_suspended, "suspend")    /* contexts that suspended on this engine */              \
  XX(contexts_resumed, "resume")       /* suspended contexts resumed on this engine */           \
  XX(sparks_injected, "inject")        /* sparks from threads that are not engines, run here */  \
  XX(blocking_offloaded, "offload")    /* blocking regions begun here that moved to a backup */  \
  XX(blocking_inline, "inplace")       /* ... that ran in place (no backup thread to be had) */  \
  XX(timers_fired, "timers")           /* timers due on this engine that it fired */             \
  XX(timers_taken, "taken")            /* overdue timers of another engine it fired (busy owner) */

/* Per-engine counters. Each is written only by its engine; read them at a quiescent point for
 * exact figures. More fields may be added at the end (of MR_ENGINE_STATS_MAP). */
typedef struct MR_EngineStats {
  size_t size; /* sizeof(MR_EngineStats): MR_engine_stats_init sets it */
#define MR_STATS_FIELD_(field, column) uint64_t field;
#define MR_STATS_KINDS_(field, column) uint64_t field[MR_NOTIFY_KINDS];
  MR_ENGINE_STATS_MAP(MR_STATS_FIELD_, MR_STATS_KINDS_)
#undef MR_STATS_FIELD_
#undef MR_STATS_KINDS_
} MR_EngineStats;

/* Make *out ready for MR_stats_get: every counter 0 and out->size sizeof(MR_EngineStats). Any
 * thread. */
MR_EXTERN void MR_engine_stats_init(MR_EngineStats *out);

/* Copy engine `engine`'s counters into *out (out->size bytes at most). Any thread while the
 * runtime runs. Returns 0, MR_ENOTINIT, MR_ERANGE, or MR_EINVAL (out NULL or out->size too
 * small to hold the first counter). */
MR_EXTERN int MR_stats_get(int engine, MR_EngineStats *out);

/* Print the counters of every engine, one row each and a row of totals, as the --stats option
 * does at MR_shutdown (doc/api.md shows the columns). Any thread while the runtime runs.
 * Returns 0, MR_ENOTINIT, or MR_EINVAL (out NULL). */
MR_EXTERN int MR_stats_print(FILE *out);

/* ---- Tracing (doc/api.md, "Tracing") ------------------------------------------------------ */

/* Start writing a trace of the engines, contexts and sparks to `path` (created or truncated):
 * a GHC eventlog for ThreadScope if it ends in ".eventlog", Chrome trace-event JSON for Perfetto
 * if it ends in ".json". Any thread while the runtime runs. Returns 0; MR_ENOTINIT; MR_EBUSY if
 * a trace is already being written (--trace or an earlier MR_trace_start); MR_EINVAL if path is
 * NULL, has neither suffix, or cannot be created; MR_ENOMEM for the buffers. */
MR_EXTERN int MR_trace_start(const char *path);

/* Finish the trace: write out every engine's buffer and the end of the file, and close it. Any
 * thread while the runtime runs. Returns 0, MR_ENOTINIT, or MR_EINVAL if no trace is on.
 * MR_shutdown finishes a trace that is still on. */
MR_EXTERN int MR_trace_stop(void);

/* Put a marker with this text in the trace (ThreadScope's user markers, a global instant in
 * Perfetto). Any thread while the runtime runs; does nothing when no trace is on. Returns 0,
 * MR_ENOTINIT, MR_EINVAL if text is NULL, or MR_ENOMEM. */
MR_EXTERN int MR_trace_marker(const char *text);

#endif /* MRENGINE_STATS_H */
