#!/bin/sh
# check_weak.sh: model-check the engine's own atomics under the C++ memory model with GenMC
# (RC11 and IMM): every harness of tests/weak must verify, and every mutant (one order of a
# proof weakened, engine/mutant.hpp) must be caught (GenMC's exit code 42). One line per run;
# fails on any other outcome. Run by `make check-weak`; builds GenMC first (genmc-build.sh) and
# exits 77 when it cannot (no tarball, no LLVM 15).
#   top_srcdir, top_builddir  the tree and its build (the generated headers)
set -eu
top=${top_srcdir:-$(dirname "$0")/../..}
build=${top_builddir:-$top}
rc=0
genmc=$(top_srcdir=$top "$top/tests/weak/genmc-build.sh") || rc=$?
[ $rc -eq 0 ] || exit $rc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

llvm=${MR_GENMC_LLVM:-/usr/lib/llvm-15}
gdir=$(dirname "$genmc")

# compile FILE DEFINES...: FILE to LLVM IR as genmc would compile it (its flags, its headers),
# with two changes GenMC 0.11 needs: SROA (the engine copies a Task through a reference, a
# memcpy that GenMC cannot split otherwise) and the overflow test of new[] as a plain multiply
# (GenMC has no llvm.umul.with.overflow). Writes $work/in.ll.
compile() {
  file=$1; shift
  "$llvm/bin/clang" -fno-discard-value-names -Xclang -disable-O0-optnone -g -std=c++20 \
    -Xclang -no-opaque-pointers -Wno-invalid-noreturn -I"$top" -I"$top/include" -I"$build" \
    -I"$build/include" -I"$top/tests/weak" -I"$gdir/include" -DMR_NO_INLINE_FORKS "$@" \
    -S -emit-llvm -o "$work/raw.ll" "$top/tests/weak/$file" &&
  "$llvm/bin/opt" -opaque-pointers=0 -S -passes=sroa "$work/raw.ll" -o "$work/sroa.ll" || return 1
  sed -e '/^declare .*@llvm\.umul\.with\.overflow\.i64/d' \
      -e 's/@llvm\.umul\.with\.overflow\.i64/@mr.weak.umul/g' "$work/sroa.ll" >"$work/in.ll"
  cat >>"$work/in.ll" <<'EOF'
define internal { i64, i1 } @mr.weak.umul(i64 %a, i64 %b) {
  %p = mul i64 %a, %b
  %r = insertvalue { i64, i1 } undef, i64 %p, 0
  %s = insertvalue { i64, i1 } %r, i1 false, 1
  ret { i64, i1 } %s
}
EOF
}

# run EXPECT FILE DEFINES...: FILE under RC11 and IMM; EXPECT is "pass" (GenMC's exit code 0),
# "caught" (42: an assertion, a race), "rc11-passes" (a mutant that only IMM can show: 0 under
# RC11, 42 under IMM) or "imm-passes" (a race of C++ that has no effect under IMM: 42 under
# RC11, 0 under IMM). A mutant is MUTANT=SITE among the DEFINES; UNROLL=N bounds the loops (an
# execution past the bound is blocked, not explored further).
status=0
run() {
  expect=$1 file=$2; shift 2
  defs="" opts=""
  for d in "$@"; do
    # The quotes of MUTANT are the macro's: its value is a string literal.
    # shellcheck disable=SC2089
    case $d in
      MUTANT=*) defs="$defs -DMR_WEAK_MUTANT_SITE=\"${d#MUTANT=}\"" ;;
      UNROLL=*) opts="--unroll=${d#UNROLL=}" ;;
      *) defs="$defs -D$d" ;;
    esac
  done
  for model in rc11 imm; do
    want=0
    case $expect/$model in caught/* | rc11-passes/imm | imm-passes/rc11) want=42 ;; esac
    code=0
    # shellcheck disable=SC2086,SC2090
    if compile "$file" $defs >"$work/out" 2>&1; then
      # shellcheck disable=SC2086
      "$genmc" --$model --disable-estimation --disable-warn-on-unfreed-memory $opts \
        --input-from-bitcode-file "$work/in.ll" >"$work/out" 2>&1 || code=$?
    else
      code=compile
    fi
    execs=$(sed -n 's/^Number of complete executions explored: *//p' "$work/out" | tail -n1)
    secs=$(sed -n 's/^Total wall-clock time: *//p' "$work/out" | tail -n1)
    why=$(grep -m1 -E '^(Assertion violation|Error):' "$work/out" || :)
    line=$(printf '%-9s %-4s %-52s exit %s, %s executions, %s %s' "$file" "$model" "$*" \
      "$code" "${execs:-?}" "${secs:-?}" "$why")
    if [ "$code" = "$want" ]; then
      echo "ok    $line"
    else
      echo "FAIL  $line (expected exit $want)"; tail -40 "$work/out"; status=1
    fi
  done
}

# The deque (D1): the last element raced by the owner's pop and the thieves.
run pass deque.cpp SCENARIO_LAST ITEMS=2 THIEVES=1 STEALS=2
run pass deque.cpp SCENARIO_LAST ITEMS=2 THIEVES=2 STEALS=1
run pass deque.cpp SCENARIO_LAST ITEMS=3 THIEVES=2 STEALS=2
for m in POP_FENCE STEAL_FENCE; do
  run caught deque.cpp SCENARIO_LAST ITEMS=2 THIEVES=1 STEALS=2 MUTANT=$m
  run caught deque.cpp SCENARIO_LAST ITEMS=2 THIEVES=2 STEALS=1 MUTANT=$m
done
# Publication: steals while the owner pushes, and while a push grows the array (a deque of 2).
run pass deque.cpp SCENARIO_PUBLISH ITEMS=2 THIEVES=1 STEALS=2
run pass deque.cpp SCENARIO_PUBLISH ITEMS=3 THIEVES=1 STEALS=2 LOG_CAPACITY=1
for m in PUSH_BOTTOM STEAL_BOTTOM; do
  run caught deque.cpp SCENARIO_PUBLISH ITEMS=2 THIEVES=1 STEALS=2 MUTANT=$m
done
for m in GROW_ARRAY STEAL_ARRAY; do
  run caught deque.cpp SCENARIO_PUBLISH ITEMS=3 THIEVES=1 STEALS=1 LOG_CAPACITY=1 MUTANT=$m
done
# The steal's CAS releases its read of the slot before the owner reuses it (load buffering,
# which RC11 rules out by definition and IMM does not).
run rc11-passes deque.cpp SCENARIO_PUBLISH ITEMS=3 THIEVES=1 STEALS=2 LOG_CAPACITY=1 \
  MUTANT=STEAL_CAS
# Orders that neither model needs here (doc/design.md section 18 says why): the mutant passes.
for m in POP_CAS PUSH_TOP; do
  run pass deque.cpp SCENARIO_LAST ITEMS=2 THIEVES=2 STEALS=1 MUTANT=$m
  run pass deque.cpp SCENARIO_PUBLISH ITEMS=3 THIEVES=1 STEALS=2 LOG_CAPACITY=1 MUTANT=$m
done
# Slot reuse (H1): the array filled, a pop, and a push that wraps to the slot a thief took. The
# pop's acquire read of top (POP_TOP) is not caught: the write of the slot is control-dependent
# on the read, which both models keep (doc/design.md section 18).
run pass deque.cpp SCENARIO_WRAP LOG_CAPACITY=2 ITEMS=5 THIEVES=1 STEALS=1
run pass deque.cpp SCENARIO_WRAP LOG_CAPACITY=2 ITEMS=5 THIEVES=1 STEALS=1 MUTANT=POP_TOP
# Push, pop and steal at once (doc/design.md, D1): a thief that reads bottom from pop's store
# sees the pushes below it only because that store is a release.
run pass deque.cpp SCENARIO_RACE ITEMS=2 THIEVES=1 STEALS=2
run caught deque.cpp SCENARIO_RACE ITEMS=2 THIEVES=1 STEALS=2 MUTANT=POP_BOTTOM
# Held sparks (H1): one or two published, the rest held and published after a pop (half of them
# when a thief that found nothing asked), while thieves steal; a held spark is popped with no
# fence and no CAS.
run pass deque.cpp SCENARIO_RACE ITEMS=3 THIEVES=1 STEALS=2 PUBLISH_BELOW=1
# Two thieves steal once each (a spark held when it was pushed is among those they can take:
# the owner publishes the next after each pop). With two steals each the run explores 835,072
# executions (150 s under RC11 and 665 s under IMM on the 2-core CI machine), most of the
# stage; once each, 4,780 (8 s).
run pass deque.cpp SCENARIO_LAST ITEMS=3 THIEVES=2 STEALS=1 PUBLISH_BELOW=1
run pass deque.cpp SCENARIO_RACE ITEMS=3 THIEVES=1 STEALS=2 PUBLISH_BELOW=2
for m in PUSH_BOTTOM POP_FENCE STEAL_FENCE; do
  run caught deque.cpp SCENARIO_RACE ITEMS=3 THIEVES=1 STEALS=2 PUBLISH_BELOW=2 MUTANT=$m
done
# The request of a thief that takes the last published spark (H1): an owner that reads top
# (acquire) past its published sparks reads the request too, because the thief asked before its
# CAS (a release); its next push publishes.
run pass deque.cpp SCENARIO_ASK ITEMS=3 THIEVES=1 STEALS=1 PUBLISH_BELOW=1
run caught deque.cpp SCENARIO_ASK ITEMS=3 THIEVES=1 STEALS=1 PUBLISH_BELOW=1 MUTANT=STEAL_CAS
# A request the owner's rewrite of `wanted` lost waits at most for the owner's next switch, whose
# publish_all publishes every held spark (H1); a switch that only answered requests (publish)
# would leave sparks held.
run pass deque.cpp SCENARIO_SWITCH ITEMS=4 THIEVES=1 STEALS=2 PUBLISH_BELOW=1
run caught deque.cpp SCENARIO_SWITCH ITEMS=4 THIEVES=1 STEALS=2 PUBLISH_BELOW=1 SWITCH_PUBLISH=1

# The sleep protocol (P1, P2, P3): a spark, an injected spark, the last searcher, a bound
# context. The mutants that pass are orders these proofs do not need (doc/design.md section 18).
for sc in SPARK INJECT; do
  run pass sleep.cpp SCENARIO_$sc
  for m in POST_FENCE SLEEP_FENCE WAKE_NOTIFIED; do
    run caught sleep.cpp SCENARIO_$sc MUTANT=$m
  done
done
run pass sleep.cpp SCENARIO_SEARCHER
for m in SEARCHER_FENCE POST_FENCE; do run caught sleep.cpp SCENARIO_SEARCHER MUTANT=$m; done
# An engine starts searching (a relaxed unit) while the spark is pushed and another sleeps.
run pass sleep.cpp SCENARIO_SEARCH
for m in POST_FENCE SLEEP_FENCE; do run caught sleep.cpp SCENARIO_SEARCH MUTANT=$m; done
run pass sleep.cpp SCENARIO_SPARK MUTANT=SLEEPER_RMW
run pass sleep.cpp SCENARIO_SEARCHER MUTANT=UNSEARCH_RMW
run pass sleep.cpp SCENARIO_BOUND
for m in BOUND_FENCE NOTIFY_NOTIFIED WAKE_NOTIFIED; do
  run caught sleep.cpp SCENARIO_BOUND MUTANT=$m
done
for m in IDLE_FENCE ADVICE_FENCE OWN_STORE; do run pass sleep.cpp SCENARIO_BOUND MUTANT=$m; done
# Shutdown (P4): the flag, the fence and SHUTDOWN against an engine going to sleep.
run pass sleep.cpp SCENARIO_SHUTDOWN
for m in SHUTDOWN_FENCE NOTIFY_NOTIFIED WAKE_NOTIFIED; do
  run caught sleep.cpp SCENARIO_SHUTDOWN MUTANT=$m
done
for m in SHUTDOWN_STORE IDLE_FENCE SLEEP_FENCE; do
  run pass sleep.cpp SCENARIO_SHUTDOWN MUTANT=$m
done
# Futures (section 11): the state word's protocol; a waiter waits out kSignalling in a loop.
run pass future.cpp SIGNALLERS=1 WAITERS=2 UNROLL=3
run pass future.cpp SIGNALLERS=2 WAITERS=1 UNROLL=3
for m in FUTURE_WAIT_LOAD FUTURE_WAITER_CAS FUTURE_SIGNAL_CAS FUTURE_SIGNALLED FUTURE_SETTLED; do
  run caught future.cpp SIGNALLERS=1 WAITERS=2 UNROLL=3 MUTANT=$m
done
# The join hand-over (J1): branches arrive while the parent joins (and, inline, arrives for the
# branch it ran itself); the last arrival resumes the parent.
run pass join.cpp BRANCHES=2
run pass join.cpp SCENARIO_INLINE BRANCHES=1
for m in JOIN_ARRIVE JOIN_LOAD JOIN_SUSPEND; do run caught join.cpp BRANCHES=1 MUTANT=$m; done
run caught join.cpp SCENARIO_INLINE BRANCHES=1 MUTANT=JOIN_INLINE
# The hand-off slot (section 6): the owner fills it twice and takes it while a thief steals it.
run pass runnext.cpp
run pass runnext.cpp BOUND
for m in RUNNEXT_FILL RUNNEXT_SWAP RUNNEXT_STEAL; do run caught runnext.cpp MUTANT=$m; done
# The inline fork and join of include/mrengine_view.h against a thief (D1, J1, H1), and the
# fork's publication with its post-work check against a sleeper (P1). The fork holds its sparks
# with plain stores; the publication (MR_publish_v4) is the deque's, with its store-release
# (PUSH_BOTTOM) and the post-work fence (POST_FENCE). One spark published, the others held: the
# thief that finds nothing asks, and the join's pop of a held spark publishes the next.
# VIEW_POP_CAS passes, as POP_CAS; the pop's release is needed where two sparks were published.
run pass view.cpp BRANCHES=2
run pass view.cpp BRANCHES=3 STEALS=2
run pass view.cpp BRANCHES=2 PUBLISH_BELOW=2
for m in PUSH_BOTTOM VIEW_POP_FENCE VIEW_JOIN_LOAD; do
  run caught view.cpp BRANCHES=2 PUBLISH_BELOW=2 MUTANT=$m
done
run caught view.cpp BRANCHES=3 STEALS=2 MUTANT=PUSH_BOTTOM
for m in VIEW_POP_CAS VIEW_POP_BOTTOM VIEW_POP_TOP; do
  run pass view.cpp BRANCHES=2 PUBLISH_BELOW=2 MUTANT=$m
done
run pass view.cpp SCENARIO_LIBRARY_PUSH PUBLISH_BELOW=2
run caught view.cpp SCENARIO_LIBRARY_PUSH PUBLISH_BELOW=2 MUTANT=VIEW_POP_BOTTOM
run pass view.cpp SCENARIO_SLEEP
run caught view.cpp SCENARIO_SLEEP MUTANT=POST_FENCE
# Waiting on a descriptor (section 23): readiness on E races the time-out fired by another
# engine; the context, on E, cancels, waits for the fire function, and its frame goes.
run pass fd.cpp
run pass fd.cpp SCENARIO_TIMEOUT
for m in FD_TIMER_DONE FD_DONE_LOAD; do run imm-passes fd.cpp MUTANT=$m; done
for m in FD_READY_CAS FD_TIMEOUT_CAS FD_STATE_LOAD; do run pass fd.cpp MUTANT=$m; done
# Timers (section 21): armed from one thread, fired as overdue by an engine, cancelled and reused
# by another thread; SCENARIO_NOT_DUE: not yet due, cancelled twice, reused by a cancel.
run pass timer.cpp
run pass timer.cpp SCENARIO_NOT_DUE
for m in TIMER_ARM TIMER_FIRED TIMER_LOOK; do run caught timer.cpp MUTANT=$m; done
run caught timer.cpp SCENARIO_NOT_DUE MUTANT=TIMER_LOOK
run imm-passes timer.cpp SCENARIO_NOT_DUE MUTANT=TIMER_CANCELLED
# Closing a channel (section 24): 1-2 spawns in a drop channel while it is closed and waited for.
run pass close.cpp
run pass close.cpp SPAWNS=1
for m in ROOT_DONE ROOT_CLOSE; do run caught close.cpp MUTANT=$m; done
exit $status
