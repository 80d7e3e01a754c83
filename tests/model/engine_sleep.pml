/* engine_sleep.pml: the engine sleep/notify protocol of engine/idle.cpp, engine/wake.cpp and
 * engine/sleep.cpp, for 3 engines, as a Promela model for Spin. doc/design.md, "The model",
 * maps every process and variable to the code.
 *
 * Promela is sequentially consistent: each seq_cst fence of the code (P1..P4) is what makes the
 * real accesses around it behave as they do here. One atomic{} is one atomic instruction of the
 * code (a CAS, an RMW) or a critical section under a wake lock.
 *
 * Engine 0 starts WORKING (it runs the primordial context); engines 1 and 2 start asleep and
 * counted, as with --lazy-engines (every engine takes the working->idle->sleeping path after its
 * first wake-up, and engine 0 before it). The work comes from the scenario chosen below; then
 * the primordial context shuts down (P4).
 *
 * Checked (make check: tests/model/check_model.sh):
 *   - no invalid end state: when nothing can move, every engine has left and all work has run
 *     (the watchdog asserts it at timeout, i.e. when every process is blocked);
 *   - every item of work runs exactly once (counts);
 *   - a CONTEXT notification is never dropped (it is only sent to SLEEPING, under the lock);
 *   - the census is exact: `sleeping` equals the number of engines in SLEEPING at every step in
 *     which no wake lock is held, and neither count underflows.
 * Mutants (-DMUTANT_...) must each produce a violation.
 *
 * With -DABSENT_ENGINE=1 engine 1 never gets a thread (--lazy-engines, its pthread_create
 * failed: doc/design.md section 15): its process never runs, and the first delivery to it
 * retires it and returns the notification to its deliverer. The rest must still run all work
 * and leave, with the census exact.
 *
 * With -DPARK_HOOK the engines sleep through the park hook's contract instead of the semaphore
 * (doc/design.md, "The park hook"): a binary permit that an unpark sets and a park consumes, and
 * a park that may also return early (EARLY_RETURNS times in all, default 1, at any park of any
 * engine, so that the state space stays finite and small: a spurious return, or a time-out of
 * the polling build or of a timer). An early
 * return is handled like a polling time-out. MUTANT_PARK_LOSES_UNPARK is a park that breaks the
 * contract: an unpark that comes before the park is lost.
 */

#define N 3
/* The work, chosen by a scenario (tests/model/check_model.sh verifies each exhaustively):
 *   SCENARIO_SPARK:  engine 0 pushes a spark on its own deque (the cheap post-work check, P1);
 *   SCENARIO_INJECT: a thread that is not an engine pushes a spark on the injector (P1, the
 *                    push fence and the last injector check);
 *   SCENARIO_BOUND:  a thread that is not an engine schedules a context bound to engine 2 (P3);
 *   SCENARIO_CHANNELS: a thread that is not an engine queues a context in either of two
 *                    channels (P1 with the channels' work word: a context posted to any channel
 *                    is found by the last look of an engine falling asleep);
 *   SCENARIO_ALL (the default): the first three at once (about 10^8 states and 8 GB: by hand).
 * Every scenario ends with MR_shutdown (P4). SPARKS may be set (-DSPARKS=2) for more sparks. */
#define DO_CHANNELS 0
#if defined(SCENARIO_CHANNELS)
#define DO_SPARK 0
#define DO_INJECT 0
#define DO_BOUND 0
#undef DO_CHANNELS
#define DO_CHANNELS 1
#elif defined(SCENARIO_SPARK)
#define DO_SPARK 1
#define DO_INJECT 0
#define DO_BOUND 0
#elif defined(SCENARIO_INJECT)
#define DO_SPARK 0
#define DO_INJECT 1
#define DO_BOUND 0
#elif defined(SCENARIO_BOUND)
#define DO_SPARK 0
#define DO_INJECT 0
#define DO_BOUND 1
#else
#define DO_SPARK 1
#define DO_INJECT 1
#define DO_BOUND 1
#endif
#ifndef SPARKS
#define SPARKS (DO_SPARK)
#endif
#define WORK (SPARKS + DO_INJECT + DO_BOUND + DO_CHANNELS)

mtype = { WORKING, IDLE, STEALING, SLEEPING, NOTIFIED, BUSY };
mtype = { CTX, CTX_ADVICE, STEAL_ADVICE, SHUT };

mtype st[N];          /* SleepSync::state */
mtype act[N];         /* SleepSync::action */
bool lk[N];           /* SleepSync::wake_lock */
#ifdef PARK_HOOK
#ifndef EARLY_RETURNS
#define EARLY_RETURNS 0
#endif
bool permit[N];       /* the park hook's permit (park.hpp) */
#ifdef MUTANT_PARK_LOSES_UNPARK
bool parked[N];       /* the engine is inside park */
#define PARKED(v, b) parked[v] = b
#else
#define PARKED(v, b) skip
#endif
byte early;           /* early returns the parks may still make, all engines together */
#else
byte sem[N];          /* SleepSync::sem */
#endif
byte searching;       /* Census, low half */
byte sleeping;        /* Census, high half */
byte deque[N];        /* WsDeque: sparks on each engine's deque */
byte injector;        /* Runtime::injector */
byte boundq[N];       /* Engine::bound: contexts bound to the engine, queued */
byte chq[2];         /* Channels: contexts queued in two channels; the work word's bit k is
                         chq[k] > 0 (set and cleared with the queue, under its lock) */
bool shutdown;        /* Runtime::shutdown */
byte ran;             /* work items run */
byte left;            /* engines that left their idle loop */
bool posted_all;      /* every producer has finished posting */

#define LOCK(v)   atomic { !lk[v] -> lk[v] = true }
#define UNLOCK(v) lk[v] = false

/* The census invariant, checked whenever no wake lock is held (a notifier or the engine itself
 * changes `sleeping` and the state together under the lock). */
#define CENSUS_OK (lk[0] || lk[1] || lk[2] || \
    sleeping == (st[0] == SLEEPING) + (st[1] == SLEEPING) + (st[2] == SLEEPING))

/* The work word as the last look reads it: every channel's bit (the mutant reads one). */
#ifdef MUTANT_LOOK_ONE_CHANNEL
#define CHANNEL_WORK (chq[0] > 0)
#else
#define CHANNEL_WORK (chq[0] > 0 || chq[1] > 0)
#endif
#define WORK_VISIBLE(self) (deque[0] + deque[1] + deque[2] + injector + boundq[self] > 0 || CHANNEL_WORK)
#define WORK_VISIBLE_ANY (deque[0] + deque[1] + deque[2] + injector > 0 || CHANNEL_WORK)

/* try_wake_engine: deliver `a` to engine v if it is SLEEPING. res: 1 delivered, 0 retry. */
inline try_wake(v, a, res) {
  LOCK(v);
  if
  :: st[v] == SLEEPING ->
       act[v] = a;
       assert(sleeping > 0);
       sleeping--;
       st[v] = NOTIFIED;
       UNLOCK(v);
#if defined(PARK_HOOK) && defined(MUTANT_PARK_LOSES_UNPARK)
       if :: parked[v] -> permit[v] = true :: else -> skip fi;   /* lost unless parked */
#elif defined(PARK_HOOK)
       permit[v] = true;    /* unpark_engine */
#else
       sem[v]++;
#endif
       res = 1
  :: else -> UNLOCK(v); res = 0
  fi;
#ifdef ABSENT_ENGINE
  /* has_thread after a delivery: engine ABSENT_ENGINE's thread cannot be created, so the
   * deliverer retires it (retire_unstarted: WORKING for good, its sleeping unit already gone
   * with the delivery) and keeps what it sent (RETRY). The mutant believes the delivery. */
  if
  :: res && v == ABSENT_ENGINE ->
       LOCK(v);
       assert(st[v] == NOTIFIED && act[v] != CTX);
       st[v] = WORKING;
       UNLOCK(v);
#ifndef MUTANT_ABSENT_KEEPS_DELIVERY
       res = 0
#endif
  :: else -> skip
  fi
#endif
}

/* try_notify_engine for the advice and SHUTDOWN (kDelivery): CAS through BUSY when IDLE or
 * STEALING, try_wake when SLEEPING, dropped or latched otherwise. */
inline try_notify(v, a) {
  do
  :: st[v] == IDLE || st[v] == STEALING ->
       LOCK(v);
       if
       :: st[v] == IDLE || st[v] == STEALING -> st[v] = BUSY; act[v] = a; st[v] = NOTIFIED;
          UNLOCK(v); break
       :: else -> UNLOCK(v)     /* the CAS failed: decide again */
       fi
  :: st[v] == SLEEPING ->
       try_wake(v, a, r);
       if :: r -> break :: else -> skip fi
  :: else -> break              /* WORKING, NOTIFIED, BUSY: dropped (advice) or latched */
  od
}

/* wake_one_with_unit: hand the caller's searching unit to a sleeper (any; the code's choice
 * among them is a policy, every choice is explored). res: 1 woken, 0 nobody asleep. */
inline wake_one(self, res) {
  res = 0;
  k = 0;
  do
  :: k < N ->
       if
       :: k != self && st[k] == SLEEPING -> try_wake(k, STEAL_ADVICE, res)
       :: else -> skip
       fi;
       if :: res -> break :: else -> k++ fi
  :: else -> break
  od;
  k = 0
}

/* give_back_unit (P2). */
inline release_unit(self) {
  do
  :: true ->
       atomic { assert(searching > 0); old = searching; searching-- };
       if
       :: old != 1 || sleeping == 0 -> break
       :: else -> skip
       fi;
       /* seq_cst fence (P2) */
       if
       :: !WORK_VISIBLE_ANY -> break
       :: else -> skip
       fi;
       atomic {
         if
         :: searching == 0 && sleeping > 0 -> searching++; claimed = 1
         :: else -> claimed = 0
         fi
       };
       if
       :: !claimed -> break
       :: else -> skip
       fi;
       wake_one(self, r);
       if :: r -> break :: else -> skip fi
  od
}

/* The cheap post-work check (P1), after the work is published and the fence. */
inline maybe_wake(self) {
  if
  :: sleeping > 0 && searching == 0 ->
       atomic {
         if
         :: searching == 0 && sleeping > 0 -> searching++; claimed = 1
         :: else -> claimed = 0
         fi
       };
       if
       :: claimed ->
            wake_one(self, r);
            if :: !r -> release_unit(self) :: else -> skip fi
       :: else -> skip
       fi
  :: else -> skip
  fi
}

/* leave_idle: IDLE/STEALING -> WORKING by CAS; BUSY: wait for the lock; NOTIFIED (advice or
 * SHUTDOWN only): absorbed. */
inline leave_idle(i) {
  do
  :: atomic { st[i] == IDLE || st[i] == STEALING -> st[i] = WORKING }; break
  :: st[i] == BUSY -> atomic { !lk[i] }
  :: st[i] == NOTIFIED ->
       assert(act[i] == CTX_ADVICE || act[i] == SHUT);
       st[i] = WORKING; break
  od
}

/* after_found_work: give the searching unit back, or pass it on (the chain). */
inline after_found(i, victim) {
  if
  :: unit ->
       unit = false;
       if
       :: victim < N && deque[victim] > 0 && sleeping > 0 ->
            wake_one(i, r);
            if :: !r -> release_unit(i) :: else -> skip fi
       :: else -> release_unit(i)
       fi
  :: else -> skip
  fi
}

proctype engine(byte i) {
  bool unit = false;   /* Engine::search.holds_unit */
  byte k, old, r, v;
  bool claimed, got;
  byte victim;
  byte pushed = 0;
  mtype cur;

  /* Engine 0 starts WORKING in the primordial context and pushes its sparks (fork, P1). */
  do
  :: i == 0 && pushed < SPARKS ->
#ifdef MUTANT_CHECK_BEFORE_PUSH
       maybe_wake(i);
       deque[i]++;
#else
       deque[i]++;
       /* seq_cst fence (P1) */
       maybe_wake(i);
#endif
       pushed++
  :: else -> break
  od;

  if :: i != 0 -> goto wait :: else -> skip fi;
top:  /* working -> idle: plain store; then the seq_cst fence (P3, P4) */
  st[i] = IDLE;
look:
  assert(CENSUS_OK);
  if
  :: st[i] == BUSY -> atomic { !lk[i] }; goto look
  :: st[i] == NOTIFIED ->
       if
       :: act[i] == CTX ->
            st[i] = WORKING;
            after_found(i, N);
            ran++;            /* the context handed over with the notification runs */
            goto top
       :: act[i] == CTX_ADVICE ->
            st[i] = IDLE;
            if :: unit -> unit = false; release_unit(i) :: else -> skip fi;
            goto look
       :: act[i] == STEAL_ADVICE ->
            assert(!unit);
            st[i] = STEALING;
            unit = true;
            goto steal
       :: act[i] == SHUT -> goto leave
       fi
  :: else -> skip
  fi;
  if :: shutdown -> goto leave :: else -> skip fi;

  /* take_local: bound queue, the channels, own deque, injector: one atomic step (which is
   * looked at first, the policy's choice of level, does not matter to the protocol, only what
   * is visible) */
  atomic {
    if
    :: boundq[i] > 0 -> boundq[i]--; got = true
    :: chq[0] > 0 -> chq[0]--; got = true
    :: chq[1] > 0 -> chq[1]--; got = true
    :: else ->
         if
         :: deque[i] > 0 -> deque[i]--; got = true
         :: else ->
              if
              :: injector > 0 -> injector--; got = true
              :: else -> got = false
              fi
         fi
    fi
  };
  if :: got -> victim = N; goto found :: else -> skip fi;

  cur = st[i];   /* one acquire load, used by both tests */
  if
  :: cur != IDLE && !unit -> goto look   /* notified meanwhile */
  :: else -> skip
  fi;
  if
  :: cur == IDLE ->
       atomic {
         if
         :: st[i] == IDLE -> st[i] = STEALING; got = true   /* CAS idle->stealing */
         :: else -> got = false
         fi
       };
       if :: !got -> goto look :: else -> skip fi;
       searching++;            /* Census::add_searcher (relaxed RMW) */
       unit = true
  :: else -> skip
  fi;

steal:  /* one steal round: every other deque, then the queues and the injector */
  assert(unit);
  /* every other deque (the victim order is a policy: any victim with work may be taken) */
  atomic {
    victim = N;
    if
    :: i != 0 && deque[0] > 0 -> deque[0]--; victim = 0
    :: i != 1 && deque[1] > 0 -> deque[1]--; victim = 1
    :: i != 2 && deque[2] > 0 -> deque[2]--; victim = 2
    :: else -> skip
    fi
  };
  if :: victim < N -> goto found :: else -> skip fi;
  /* then the queues and the injector */
  atomic {
    if
    :: boundq[i] > 0 -> boundq[i]--; got = true
    :: chq[0] > 0 -> chq[0]--; got = true
    :: chq[1] > 0 -> chq[1]--; got = true
    :: else ->
         if
         :: injector > 0 -> injector--; got = true
         :: else -> got = false
         fi
    fi
  };
  if :: got -> goto found :: else -> skip fi;
  if :: st[i] == NOTIFIED -> goto look :: else -> skip fi;

  /* fall_asleep */
#ifdef MUTANT_PLAIN_SLEEP
  /* The original design: a plain store, outside the wake lock, may overwrite BUSY or NOTIFIED;
   * the notifier's NOTIFIED then lands on a counted sleeper that nobody will post. */
  st[i] = SLEEPING;
  got = true;
  LOCK(i);
#else
  LOCK(i);
  atomic {
    if
    :: st[i] == STEALING -> st[i] = SLEEPING; got = true  /* CAS stealing->sleeping */
    :: else -> got = false                                 /* NOTIFIED by a CAS notifier */
    fi
  };
#endif
  if :: !got -> UNLOCK(i); goto look :: else -> skip fi;
  atomic { assert(searching > 0); searching--; sleeping++ };   /* searcher_to_sleeper */
  UNLOCK(i);
  unit = false;
  /* seq_cst fence (P1..P4), then the last look */
#ifndef MUTANT_NO_LAST_LOOK
  if
  :: shutdown || WORK_VISIBLE(i) ->
       LOCK(i);
       if
       :: st[i] == SLEEPING -> sleeping--; st[i] = WORKING; UNLOCK(i); goto top
       :: else -> UNLOCK(i)    /* a notifier won: its post is coming */
       fi
  :: else -> skip
  fi;
#endif
wait:  /* wait_for_wake */
#ifdef PARK_HOOK
  if
  :: st[i] == SLEEPING ->   /* park only while SLEEPING (acquire load) */
       PARKED(i, true);
end_sleep:  /* park: a valid place to stay forever, if nothing is left to do */
       if
       :: atomic { permit[i] -> permit[i] = false }
       :: atomic { early > 0 -> early-- }     /* returns early: spurious, or a time-out */
       fi;
       PARKED(i, false)
  :: else -> skip
  fi;
  /* A hook does not say why it returned: leave SLEEPING ourselves, as on a polling time-out,
   * unless a notifier got there first (its permit may then end a later park early). */
  LOCK(i);
  if
  :: st[i] == SLEEPING -> sleeping--; st[i] = WORKING; UNLOCK(i); goto top
  :: else -> UNLOCK(i); goto look
  fi;
#else
end_sleep:  /* sem_wait: a valid place to stay forever, if nothing is left to do */
  atomic { sem[i] > 0 -> sem[i]-- };
  goto look;
#endif

found:  /* become_working, then run the work */
  leave_idle(i);
  after_found(i, victim);
  ran++;
  goto top;

leave:
  if :: unit -> unit = false; release_unit(i) :: else -> skip fi;
  left++;
end_left:
  skip
}

/* A thread that is not an engine submits one spark (MR_fork_new_child through the injector). */
proctype foreign_spark() {
  byte k, old, r;
  bool claimed;
#ifdef MUTANT_CHECK_BEFORE_PUSH
  maybe_wake(N);
  injector++;
#else
  injector++;
  /* seq_cst fence: the push fence (P1) */
  maybe_wake(N);
#endif
}

/* A thread that is not an engine makes a context bound to engine 2 runnable (schedule, P3). */
proctype bound_context() {
  byte r;
  if
  :: st[2] == SLEEPING -> try_wake(2, CTX, r)
  :: else -> r = 0
  fi;
  if
  :: !r ->
       boundq[2]++;
       /* seq_cst fence (P3) */
       try_notify(2, CTX_ADVICE)
  :: else -> skip
  fi
}

/* A thread that is not an engine makes an unbound context runnable in a channel of its choice
 * (enqueue: the push sets the channel's bit in the work word, then the fence, P1). */
proctype channel_context() {
  byte k, old, r;
  bool claimed;
  if :: k = 0 :: k = 1 fi;
  chq[k]++;
  /* seq_cst fence (P1) */
  maybe_wake(N)
}

/* MR_shutdown, once the work is done (the spawn join): the flag, the fence, SHUTDOWN to all. */
proctype primordial() {
  byte v, r;
  ran == WORK;
  shutdown = true;
  /* seq_cst fence (P4) */
  v = 0;
  do
  :: v < N -> try_notify(v, SHUT); v++
  :: else -> break
  od
}

/* When every process is blocked: all work ran and every engine left. */
active proctype watchdog() {
end_watch:
  timeout ->
    assert(ran == WORK);
#ifdef ABSENT_ENGINE
    assert(left == N - 1);
#else
    assert(left == N);
#endif
    assert(deque[0] + deque[1] + deque[2] + injector + boundq[0] + boundq[1] + boundq[2] == 0);
    assert(chq[0] + chq[1] == 0);
    assert(searching == 0 && sleeping == 0)
}

init {
  atomic {
    /* Engine 0 runs the primordial context; engines 1 and 2 start asleep (as with
     * --lazy-engines; the working->idle->sleeping path is engine 0's, and every engine's after
     * its first wake-up). */
    st[0] = WORKING; st[1] = SLEEPING; st[2] = SLEEPING; sleeping = 2;
#ifdef PARK_HOOK
    early = EARLY_RETURNS;
#endif
    run engine(0);
#ifdef ABSENT_ENGINE
    run engine(3 - ABSENT_ENGINE);
#else
    run engine(1); run engine(2);
#endif
#if DO_INJECT
    run foreign_spark();
#endif
#if DO_BOUND
    run bound_context();
#endif
#if DO_CHANNELS
    run channel_context();
#endif
    run primordial()
  }
}
