/* mrengine_view.h: what generated code reads of the current engine without a call, and the
 * inline fast paths built on it (the granularity test, the fork and the join). Part of the C ABI
 * of mrengine.h, which includes it inside its extern "C" block; do not include it alone. */
#ifndef MRENGINE_VIEW_H
#define MRENGINE_VIEW_H

#ifndef MRENGINE_H
#error "include mrengine.h, not mrengine_view.h"
#endif

/* ---- What generated code reads of the current engine ---------------------------------------- */

/* One spark in an engine's deque, word by word: {fn, env, st} (engine/task.hpp's Task). */
typedef struct MR_SparkSlot {
  AO_t fn;  /* an MR_TaskFn */
  AO_t env; /* a void * */
  AO_t st;  /* an MR_SyncTerm * */
} MR_SparkSlot;

/* The array of an engine's deque: slot i of the deque is slots[i & mask]. Replaced (never
 * changed in place) when the deque grows; a replaced array lives as long as the deque. */
typedef struct MR_SparkArray {
  AO_t mask;           /* capacity - 1 (a power of two, minus one) */
  const void *retired; /* the runtime's own */
  MR_SparkSlot *slots;
} MR_SparkArray;

/* What generated code may read of the current engine without a call. The layout is frozen per
 * version: fields are never moved or removed, only added at the end (version 1 is the first
 * four), and tests/check_granularity asserts every offset. It is read with libatomic_ops, so a
 * client compiles as C89 or C99 without <stdatomic.h>. Version 2 adds what the inline fork and
 * join need, version 3 the running context's channel, which the inline MR_sync_term_init stores
 * in the sync term, and version 4 the published part of the deque (doc/design.md, H1). A client
 * compiled against version N reads MR_engine_view_vN, which only a library of version N
 * defines, so that such a client fails to link (or to load) against another version instead of
 * running wrong. */
typedef struct MR_EngineView {
  const volatile AO_t *deque_top;    /* offset 0: index of the oldest spark of the engine's deque */
  const volatile AO_t *deque_bottom; /* offset 1 pointer: one past its newest spark, held or
                                        published (version 4: before, only published ones) */
  AO_t spark_threshold;              /* offset 2 pointers: --granularity-factor x engines */
  AO_t version;                      /* offset 2 pointers + 1 AO_t: MR_ENGINE_VIEW_VERSION */
  /* version 2, from offset 2 pointers + 2 AO_t: */
  AO_t engine;        /* this engine's number, 0..N-1 */
  volatile AO_t slow; /* nonzero: fork and join must call the library (tracing,
                                        MR_shutdown_now); written by the runtime */
  MR_SparkArray *const volatile *deque_array; /* the deque's current array */
  const volatile AO_t *census;  /* the census word: engines sleeping in the high 32 bits,
                                   searching in the low 32 (read inline before version 4) */
  volatile AO_t *sparks_pushed; /* the engine's counters (MR_EngineStats), owner-written */
  volatile AO_t *sparks_run_local;
  /* version 3: */
  volatile AO_t channel; /* the channel of the context running on the engine */
  /* version 4: */
  volatile AO_t *deque_published; /* one past the newest spark that thieves may take; the
                                     sparks from there to deque_bottom are held by the owner */
  AO_t publish_below;             /* sparks kept published while there are that many: engines - 1
                                     (every one in a blocking region in place) */
  volatile AO_t *deque_top_copy;  /* the owner's copy of deque_top, never ahead of it */
  volatile AO_t *publish_wanted;  /* nonzero: the owner must publish (1: a thief asked; 2: fewer
                                    than publish_below are published by deque_top_copy) */
} MR_EngineView;

#define MR_ENGINE_VIEW_VERSION 4

/* The view of the engine running the current thread, or NULL on a thread that is not an engine.
 * Set by the runtime; never write it. MR_engine_view is version 1's name, kept for its clients;
 * MR_engine_view_v4 is the same pointer under the name of this version. */
MR_EXTERN extern __thread const MR_EngineView *MR_engine_view;
MR_EXTERN extern __thread const MR_EngineView *MR_engine_view_v4
#if defined(__GNUC__)
    __attribute__((tls_model("initial-exec")))
#endif
    ;

/* The inline join's slow path (unchanged since version 2, hence its name): arrive for the `ran`
 * branches it ran in place (a release RMW,
 * which also finds more branches forked than counted), then MR_join_and_continue's. Called only
 * by the inline MR_join_and_continue. */
MR_EXTERN void MR_join_slow_v2(MR_SyncTerm *st, unsigned ran);

/* The inline fork's and join's publication (doc/design.md, H1): a thief asked for sparks, or too
 * few are published: publish held ones, then the post-work check. Called only by the inline
 * MR_fork_new_child and MR_join_and_continue, on an engine. */
MR_EXTERN void MR_publish_v4(void);

#if defined(__GNUC__)
#define MR_INLINE_ static __inline__
#else
#define MR_INLINE_ static
#endif

/* Nonzero if the current engine's deque holds fewer sparks than --granularity-factor x engines
 * (default 8 x engines): generated code should then spark a conjunct, and otherwise run it in
 * sequence (Mercury's MR_par_cond_local_wsdeque_length). Also nonzero, with a nonzero factor,
 * while another engine has asked this one for sparks and this one holds some that it has not
 * published (doc/design.md, H1): the spark's fork publishes them, so a producer that runs most
 * of its conjuncts in sequence still feeds an idle engine. Zero on a thread that is not an
 * engine. A few loads and no call; top is read with acquire (a thief that took the last
 * published spark asked before it moved top, so that ask is seen with it), the rest without
 * ordering (AO_load): the answer is a heuristic that may be one spark off while thieves steal.
 * In position-independent code a compiler may keep the thread-local's address from an earlier
 * use in the same function;
 * if a join in between resumed the context on another engine, the test then reads the previous
 * engine's deque: a wrong guess, never an invalid access (views live as long as the runtime). */
MR_INLINE_ int MR_par_cond_local_wsdeque_length(void) {
  const MR_EngineView *v = MR_engine_view_v4; /* initial-exec: no __tls_get_addr call in PIC */
  if (v == NULL) return 0;
  {
    AO_t bottom = AO_load(v->deque_bottom);
    AO_t top = AO_load_acquire(v->deque_top);
    if ((long)(bottom - top) < (long)v->spark_threshold) return 1;
    return v->spark_threshold != 0 && (AO_load(v->publish_wanted) & 1) != 0 &&
           bottom != AO_load(v->deque_published);
  }
}

/* ---- The inline fork and join (x86-64 and arm64, GCC or Clang) ----------------------------- */

/* ThreadSanitizer does not model the fences the fast paths rely on (P1, D1): a client built with
 * it calls the functions, which run the same protocol. */
#if defined(__SANITIZE_THREAD__)
#define MR_TSAN_CLIENT_ 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MR_TSAN_CLIENT_ 1
#endif
#endif

#if defined(__GNUC__) && defined(__ELF__) &&                                \
    (defined(__x86_64__) || (defined(__aarch64__) && defined(__LP64__))) && \
    !defined(MR_NO_INLINE_FORKS) && !defined(MR_TSAN_CLIENT_)
#define MR_INLINE_FORKS 1
#define MR_FAST_INLINE_ static __inline__ __attribute__((always_inline))

/* The current thread's view, read afresh from the thread pointer at each call. A compiler may
 * keep a thread-local's address across a call (the thread pointer is constant within a thread,
 * and __tls_get_addr is declared const); a context that suspended in that call may have resumed
 * on another engine's thread, and the kept address is then the old thread's. The volatile asm
 * with a memory clobber is neither hoisted, merged nor kept across a call, and it reads the
 * thread pointer itself (%fs on x86-64, TPIDR_EL0 on arm64): the initial-exec offset of
 * MR_engine_view_v4 from the GOT, then the word at thread pointer + offset. */
#if defined(MR_WEAK_VIEW_NOW)
/* tests/weak/view.cpp, under GenMC (which runs no assembly): the harness names the view. */
MR_FAST_INLINE_ const MR_EngineView *MR_view_now_(void) { return MR_WEAK_VIEW_NOW(); }
#else
MR_FAST_INLINE_ const MR_EngineView *MR_view_now_(void) {
  const MR_EngineView *v;
#if defined(__x86_64__)
  __asm__ __volatile__(
      "movq MR_engine_view_v4@gottpoff(%%rip), %0\n\t"
      "movq %%fs:(%0), %0"
      : "=r"(v)
      :
      : "memory");
#else
  unsigned long tp;
  __asm__ __volatile__(
      "adrp %0, :gottprel:MR_engine_view_v4\n\t"
      "ldr %0, [%0, #:gottprel_lo12:MR_engine_view_v4]\n\t"
      "mrs %1, tpidr_el0\n\t"
      "ldr %0, [%1, %0]"
      : "=&r"(v), "=&r"(tp)
      :
      : "memory");
#endif
  return v;
}
#endif

/* The fast paths' atomics are GCC's __atomic builtins (the C11 and C++ memory model, usable from
 * C89) with the orders of engine/wsdeque.hpp and engine/wake.hpp, named as there: x86-TSO would
 * hide a weaker one, arm64 does not (doc/design.md section 13). */
#define MR_RELAXED_LOAD_(p) __atomic_load_n((p), __ATOMIC_RELAXED)
/* The order a proof names at a site (engine/mutant.hpp's MR_WEAK_MUTANT, for C): `order`, but
 * relaxed at the one site that tests/weak/view.cpp names with MR_WEAK_MUTANT_SITE. */
#ifdef MR_WEAK_MUTANT_SITE
#define MR_ORDER_(site, order) \
  (__builtin_strcmp(#site, MR_WEAK_MUTANT_SITE) == 0 ? __ATOMIC_RELAXED : (order))
#else
#define MR_ORDER_(site, order) (order)
#endif
#define MR_RELAXED_STORE_(p, x) __atomic_store_n((p), (x), __ATOMIC_RELAXED)

/* The sync term's arrivals still expected, and its channel: the first two 32-bit words of st
 * (engine/task.hpp's Join). */
#define MR_ST_COUNT_(st) ((volatile unsigned *)(void *)&(st)->mr_private[0])
#define MR_ST_CHANNEL_(st) (MR_ST_COUNT_(st) + 1)

/* Count one event in an owner-written counter: a load and a store, no RMW. */
#define MR_BUMP_(p) MR_RELAXED_STORE_((p), MR_RELAXED_LOAD_(p) + 1)

MR_FAST_INLINE_ void MR_sync_term_init_inline_(MR_SyncTerm *st, unsigned conjuncts) {
  if (conjuncts == 0) {
    MR_sync_term_init(st, conjuncts); /* stops the process with the message */
    return;
  }
  {
    const MR_EngineView *v = MR_view_now_();
    /* relaxed: the spark push's store-release publishes them. */
    MR_RELAXED_STORE_(MR_ST_COUNT_(st), conjuncts);
    MR_RELAXED_STORE_(MR_ST_CHANNEL_(st), v == NULL ? 0u : (unsigned)MR_RELAXED_LOAD_(&v->channel));
    st->mr_private[1] = 0; /* no parent yet */
  }
}

/* Whether the owner must publish after a push or a pop (engine/wsdeque.hpp's wanted_, H1): a
 * thief asked, or fewer than publish_below sparks are published by the owner's count. */
MR_FAST_INLINE_ int MR_must_publish_(const MR_EngineView *v) {
  /* relaxed: a thief's request is a hint; the owner's own bit is its own store. */
  return MR_RELAXED_LOAD_(v->publish_wanted) != 0;
}

/* engine/wsdeque.hpp's note_count: with bottom b and top t by the owner's count, mark that too
 * few are published (bit 2 of publish_wanted). */
MR_FAST_INLINE_ void MR_note_count_(const MR_EngineView *v, AO_t b, AO_t t) {
  AO_t w;
  if ((long)(b - t) >= (long)v->publish_below) return;
  w = MR_RELAXED_LOAD_(v->publish_wanted); /* relaxed: the owner's bit */
  if ((w & 2) == 0) MR_RELAXED_STORE_(v->publish_wanted, w | 2);
}

/* The push of engine/wsdeque.hpp: the spark is held, and published if a thief asked or too few
 * are (H1). */
MR_FAST_INLINE_ void MR_fork_new_child_inline_(MR_SyncTerm *st, MR_TaskFn fn, void *env) {
  const MR_EngineView *v = MR_view_now_();
  /* relaxed: slow is a hint (section 13); the count is read only to catch a misuse. */
  if (v == NULL || MR_RELAXED_LOAD_(&v->slow) != 0 || MR_RELAXED_LOAD_(MR_ST_COUNT_(st)) <= 1) {
    MR_fork_new_child(st, fn, env); /* not an engine, tracing, shutting down, or a misuse */
    return;
  }
  {
    volatile AO_t *held = (volatile AO_t *)v->deque_bottom;
    AO_t h = MR_RELAXED_LOAD_(held);                     /* owner's own word */
    AO_t copy = MR_RELAXED_LOAD_(v->deque_top_copy);     /* owner's own word */
    MR_SparkArray *a = MR_RELAXED_LOAD_(v->deque_array); /* only the owner stores it */
    MR_SparkSlot *s;
    if ((long)(h - copy) > (long)a->mask) { /* full by the copy: the library reads top */
      MR_fork_new_child(st, fn, env);
      return;
    }
    s = &a->slots[h & a->mask];
    /* relaxed: held, the owner's alone; a publication's store-release publishes them. */
    MR_RELAXED_STORE_(&s->fn, (AO_t)fn);
    MR_RELAXED_STORE_(&s->env, (AO_t)env);
    MR_RELAXED_STORE_(&s->st, (AO_t)st);
    MR_RELAXED_STORE_(held, h + 1); /* relaxed: others read it only as an estimate */
    MR_BUMP_(v->sparks_pushed);
    if (MR_must_publish_(v)) MR_publish_v4();
  }
}

/* The owner's pop of engine/wsdeque.hpp, and engine/join.cpp's join loop: while the newest spark
 * on this engine's deque is one of st's, take it back and run it here; the branches run here
 * arrive together at the end. A held spark is taken with plain loads and stores (H1); a
 * published one with D1's fence, and its CAS if it is the last. */
/* Whether the join is over: only the `ran` branches run here and the parent's own arrival are
 * left (acquire: pairs with the other branches' release arrivals, whose results become visible),
 * so no spark of st is left anywhere and nobody else writes the counter: a relaxed store makes
 * it 1, the arrivals of those run here. */
MR_FAST_INLINE_ int MR_join_done_(MR_SyncTerm *st, unsigned ran) {
  if (__atomic_load_n(MR_ST_COUNT_(st), MR_ORDER_(VIEW_JOIN_LOAD, __ATOMIC_ACQUIRE)) != ran + 1)
    return 0;
  if (ran > 0) MR_RELAXED_STORE_(MR_ST_COUNT_(st), 1u);
  return 1;
}

MR_FAST_INLINE_ void MR_join_and_continue_inline_(MR_SyncTerm *st) {
  unsigned ran = 0;
  for (;;) {
    const MR_EngineView *v;
    volatile AO_t *top, *held, *bottom;
    MR_SparkArray *a;
    MR_SparkSlot *s;
    AO_t h, b, t;
    MR_TaskFn fn;
    void *env;
    v = MR_view_now_();
    if (v == NULL || MR_RELAXED_LOAD_(&v->slow) != 0) break;
    top = (volatile AO_t *)v->deque_top;
    held = (volatile AO_t *)v->deque_bottom;
    bottom = v->deque_published;
    h = MR_RELAXED_LOAD_(held) - 1;          /* owner's own word */
    b = MR_RELAXED_LOAD_(bottom);            /* owner's own word (thieves only read it) */
    t = MR_RELAXED_LOAD_(v->deque_top_copy); /* owner's own word */
    a = MR_RELAXED_LOAD_(v->deque_array);    /* only the owner stores it */
    s = &a->slots[h & a->mask];
    /* Only the owner writes slots, so the newest one can be looked at before it is popped: a
     * spark of another conjunction stays where it is. The copy of top is never ahead of it, so
     * it only makes the deque look fuller (the pop below decides). */
    if ((long)(h - t) < 0 || (MR_SyncTerm *)MR_RELAXED_LOAD_(&s->st) != st) break;
    fn = (MR_TaskFn)MR_RELAXED_LOAD_(&s->fn); /* the owner's own stores */
    env = (void *)MR_RELAXED_LOAD_(&s->env);
    if ((long)(h - b) >= 0) { /* held: no thief reads at or above the published bottom (H1) */
      MR_RELAXED_STORE_(held, h);
      if (MR_must_publish_(v)) MR_publish_v4(); /* a thief may have asked */
    } else {
      /* store-release: a thief reading this bottom sees the pushes below it (proof D1). */
      __atomic_store_n(bottom, h, MR_ORDER_(VIEW_POP_BOTTOM, __ATOMIC_RELEASE));
      /* seq_cst fence: proof D1 (the owner's bottom store and a thief's top load must not both
       * miss each other for the last spark). */
      __atomic_thread_fence(MR_ORDER_(VIEW_POP_FENCE, __ATOMIC_SEQ_CST));
      /* acquire: the copy lets the inline fork reuse slots below t, after the thieves' reads of
       * them (H1's slot reuse). */
      t = __atomic_load_n(top, MR_ORDER_(VIEW_POP_TOP, __ATOMIC_ACQUIRE));
      MR_RELAXED_STORE_(v->deque_top_copy, t); /* relaxed: the owner's own copy */
      if ((long)(t - h) > 0) {                 /* a thief took it */
        MR_RELAXED_STORE_(bottom, h + 1);
        MR_note_count_(v, h + 1, t);
        break;
      }
      MR_RELAXED_STORE_(held, h);
      if (t == h) { /* the last spark: race the thieves for it */
        /* CAS seq_cst on success (part of proof D1), acquire on failure (as the load above). */
        int won = __atomic_compare_exchange_n(top, &t, t + 1, 0,
                                              MR_ORDER_(VIEW_POP_CAS, __ATOMIC_SEQ_CST),
                                              MR_ORDER_(VIEW_POP_TOP, __ATOMIC_ACQUIRE));
        MR_RELAXED_STORE_(bottom, h + 1);
        MR_RELAXED_STORE_(held, h + 1);
        /* Won or lost, one CAS moved top past h: the copy may follow (the deque is empty). */
        MR_RELAXED_STORE_(v->deque_top_copy, h + 1);
        MR_note_count_(v, h + 1, h + 1);
        if (!won) break;
      } else {
        MR_note_count_(v, h, t);
      }
    }
    MR_BUMP_(v->sparks_run_local);
    fn(env);
    ran++;
    if (MR_join_done_(st, ran)) return; /* the common case: every branch was run here */
  }
  if (MR_join_done_(st, ran)) return; /* the others were stolen and have arrived */
  /* Branches still running elsewhere (or stolen, or another conjunction's spark, or not an
   * engine, or slow): the library arrives for the ran branches and waits. */
  MR_join_slow_v2(st, ran);
}

#define MR_sync_term_init(st, conjuncts) MR_sync_term_init_inline_((st), (conjuncts))
#define MR_fork_new_child(st, fn, env) MR_fork_new_child_inline_((st), (fn), (env))
#define MR_join_and_continue(st) MR_join_and_continue_inline_(st)

#endif /* the inline fork and join */

#endif /* MRENGINE_VIEW_H */
