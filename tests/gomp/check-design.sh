#!/bin/sh
# check-design.sh: run tests/gomp/design (a gcc -fopenmp program) against this tree's
# libgomp.so.1, once per design point, on 2 engines (MRENGINE_OPTIONS), as `make check` does.
# A cross build runs the programs under its emulator ($MR_TEST_RUN, empty natively).
builddir=$(pwd)
run=${MR_TEST_RUN:-}
prog=$builddir/tests/gomp/design
lib=$builddir/gomp/.libs
[ -x "$prog" ] || { echo "check-design: $prog not built"; exit 1; }
LD_LIBRARY_PATH=$lib; export LD_LIBRARY_PATH
MRENGINE_OPTIONS="-P 2"; export MRENGINE_OPTIONS
status=0
for t in runtime threadprivate barrier tied depend depend-release depend-wavefront depend-undeferred complete-taskwait complete-depend complete-undeferred \
    complete-group-owed complete-group-owed-nested \
    spawned-member0 spawned-shutdown current-program foreign-ordered alone-order alone-detach-depend oversubscribed barrier-tasks \
    locks ordered task-reduction nonmonotonic kept-team idle shutdown two-creators alloc-traits; do
  if timeout 60 $run "$prog" "$t"; then echo "PASS: $t"; else echo "FAIL: $t"; status=1; fi
done
# The child of a fork() after regions uses OpenMP (a program of its own: design_fork.c). Not
# under qemu-user, whose child of a fork() of a process with threads cannot start a thread.
if [ -n "$run" ]; then
  echo "SKIP: fork (under qemu-user, the child of a fork() of a process with threads cannot" \
    "start a thread)"
elif timeout 60 "$builddir/tests/gomp/design_fork"; then
  echo "PASS: fork"
else
  echo "FAIL: fork"; status=1
fi
# The waits of an oversubscribed team under each wait policy, which is read once at start-up.
for w in active passive; do
  if OMP_WAIT_POLICY=$w timeout 60 $run "$prog" oversubscribed-yield; then
    echo "PASS: oversubscribed-yield ($w)"
  else
    echo "FAIL: oversubscribed-yield ($w)"; status=1
  fi
done
# The current task of a context that suspends outside libmrgomp, on one engine with tasks as sparks.
if MRENGINE_OPTIONS="-P 1" MRGOMP_DEFER_ALONE=true timeout 60 $run "$prog" current-suspend; then echo "PASS: current-suspend"; else echo "FAIL: current-suspend"; status=1; fi
# Engines 1 and 2 cannot start (--lazy-engines): their members run on slot threads.
if MRENGINE_OPTIONS="-P 3 --lazy-engines" timeout 60 $run "$prog" lazy-absent; then echo "PASS: lazy-absent"; else echo "FAIL: lazy-absent"; status=1; fi
# A member on a slot thread holds a critical section while the one engine's member waits for it.
if MRENGINE_OPTIONS="-P 1" timeout 60 $run "$prog" foreign-critical; then echo "PASS: foreign-critical"; else echo "FAIL: foreign-critical"; status=1; fi
# OMP_STACKSIZE is read once at start-up.
if OMP_STACKSIZE=64M OMP_MAX_ACTIVE_LEVELS=2 timeout 60 $run "$prog" stacksize; then echo "PASS: stacksize"; else echo "FAIL: stacksize"; status=1; fi
# Cancellation needs cancel-var, which is read once at start-up.
if OMP_CANCELLATION=true timeout 60 $run "$prog" cancel-undeferred; then echo "PASS: cancel-undeferred"; else echo "FAIL: cancel-undeferred"; status=1; fi
# An unsupported construct stops the program with the runtime's message.
err=$(timeout 60 $run "$prog" unsupported 2>&1 >/dev/null)
rc=$?
if [ $rc -ne 0 ] && echo "$err" | grep -q '^mrengine-gomp: GOMP_offload_register is not supported'; then
  echo "PASS: unsupported ($err)"
else
  echo "FAIL: unsupported: status $rc, stderr: $err"; status=1
fi
exit $status
