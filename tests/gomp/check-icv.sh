#!/bin/sh
# check-icv.sh: ICVs set by the environment (tests/gomp/icv, a gcc -fopenmp program), each test
# under the settings it names, on this tree's libgomp.so.1 and on the system's libgomp (gcc's),
# which must both pass: libgomp is the reference. Without gcc's libgomp only ours runs. A cross
# build runs the program under its emulator ($MR_TEST_RUN, empty natively).
builddir=$(pwd)
run=${MR_TEST_RUN:-}
prog=$builddir/tests/gomp/icv
mine=$builddir/gomp/.libs
[ -x "$prog" ] || { echo "check-icv: $prog not built"; exit 1; }
f=$(${CC:-gcc} -print-file-name=libgomp.so.1 2>/dev/null)
theirs=
if [ -n "$f" ] && [ -e "$f" ] && [ -z "$run" ]; then theirs=$(cd "$(dirname "$f")" && pwd -P); fi
MRENGINE_OPTIONS="-P 2"; export MRENGINE_OPTIONS
status=0
check() {  # test VAR=value...
  t=$1; shift
  for lib in mine theirs; do
    dir=$mine; [ $lib = theirs ] && dir=$theirs
    [ -n "$dir" ] || continue
    if env LD_LIBRARY_PATH="$dir" "$@" timeout 60 $run "$prog" "$t"; then
      echo "PASS: $t ($*, $lib)"
    else
      echo "FAIL: $t ($*, $lib)"; status=1
    fi
  done
}
# gcc passes schedule(nonmonotonic: runtime) with a task reduction as kind 4 of GOMP_loop_start.
check sched-runtime-nonmonotonic OMP_SCHEDULE=static,1
# A list asks for nesting: as many levels as supported, not as many as its entries.
check levels-list OMP_NUM_THREADS=3,2
check levels-list OMP_PROC_BIND=spread,close
# OMP_THREAD_LIMIT counts each initial thread's contention group on its own.
check thread-limit-groups OMP_THREAD_LIMIT=4
exit $status
