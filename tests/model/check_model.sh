#!/bin/sh
# check_model.sh: verify tests/model/engine_sleep.pml with Spin, exhaustively, for 3 engines, in
# each scenario; then check that the model can fail: each mutant must make Spin report a
# violation (with MR_TEST_FULL set, as .ci/run does). Run by `make check-model`; exits 77 if spin
# is not installed.
set -eu
top=${top_srcdir:-$(dirname "$0")/../..}
model="$top/tests/model/engine_sleep.pml"
command -v spin >/dev/null 2>&1 || { echo "spin not found: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$model" "$work/engine_sleep.pml"
cd "$work"

# verify DEFINES...: prints pan's summary; sets $errors to pan's error count.
verify() {
  spin -a "$@" engine_sleep.pml >spin.out 2>&1 || { cat spin.out; exit 1; }
  cc -O2 -DCOLLAPSE -DMEMLIM=4096 -o pan pan.c
  ./pan -m100000 >pan.out 2>&1 || true
  if grep -q "reached -DMEMLIM bound\|Search not completed" pan.out && ! grep -q "errors: [1-9]" pan.out; then
    echo "$*: the search did not complete"; cat pan.out; exit 1
  fi
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | tail -n1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | tail -n1)
  echo "$*: $states states, $errors errors"
}

status=0
# Each scenario with the semaphore, then with the park hook's contract (PARK_HOOK: a binary
# permit; SCENARIO_INJECT with it is 2.8x10^7 states and 1.6 GB, run by hand).
# ABSENT_ENGINE=1: engine 1's thread cannot be created (--lazy-engines).
for run in "SCENARIO_SPARK" "SCENARIO_INJECT" "SCENARIO_BOUND" "SCENARIO_CHANNELS" \
           "SCENARIO_SPARK PARK_HOOK" "SCENARIO_BOUND PARK_HOOK" \
           "SCENARIO_SPARK ABSENT_ENGINE=1" "SCENARIO_INJECT ABSENT_ENGINE=1" \
           "SCENARIO_BOUND ABSENT_ENGINE=1"; do
  # shellcheck disable=SC2086
  verify $(printf -- '-D%s ' $run)
  if [ "$errors" != 0 ]; then
    echo "FAIL: the protocol violates a property in $run:"; cat pan.out
    # shellcheck disable=SC2086
    spin -t -p $(printf -- '-D%s ' $run) engine_sleep.pml | tail -60
    status=1
  fi
done

# The mutants: the original design's plain store to SLEEPING, the post-work check before the
# push, no last look before sleeping, a last look that reads one channel's bit of the work word,
# and a park that loses an unpark that came before it. Each must be caught.
if [ -z "${MR_TEST_FULL:-}" ]; then
  echo "mutants: not run (set MR_TEST_FULL=1 to run them)"
  exit $status
fi
for mutant in "SCENARIO_BOUND MUTANT_PLAIN_SLEEP" "SCENARIO_INJECT MUTANT_CHECK_BEFORE_PUSH" \
              "SCENARIO_CHANNELS MUTANT_LOOK_ONE_CHANNEL" \
              "SCENARIO_INJECT MUTANT_NO_LAST_LOOK" \
              "SCENARIO_INJECT PARK_HOOK MUTANT_PARK_LOSES_UNPARK" \
              "SCENARIO_INJECT ABSENT_ENGINE=1 MUTANT_ABSENT_KEEPS_DELIVERY"; do
  # shellcheck disable=SC2086
  verify $(printf -- '-D%s ' $mutant)
  if [ "$errors" = 0 ]; then
    echo "FAIL: the model does not catch ${mutant##* }"; status=1
  fi
done
exit $status
