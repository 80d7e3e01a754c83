#!/bin/sh
# check-doacross.sh: doacross loops (tests/gomp/doacross, a gcc -fopenmp program) on this
# tree's libgomp.so.1 and on the system's libgomp (gcc's), which must both pass: a wavefront
# under every schedule on 2 to 4 threads, and a nest of more than 2^28 iterations. Without
# gcc's libgomp only ours runs. A cross build runs the program under its emulator
# ($MR_TEST_RUN, empty natively).
builddir=$(pwd)
run=${MR_TEST_RUN:-}
prog=$builddir/tests/gomp/doacross
mine=$builddir/gomp/.libs
[ -x "$prog" ] || { echo "check-doacross: $prog not built"; exit 1; }
f=$(${CC:-gcc} -print-file-name=libgomp.so.1 2>/dev/null)
theirs=
if [ -n "$f" ] && [ -e "$f" ] && [ -z "$run" ]; then theirs=$(cd "$(dirname "$f")" && pwd -P); fi
MRENGINE_OPTIONS="-P 2"; export MRENGINE_OPTIONS
status=0
for t in wavefront large; do
  for lib in mine theirs; do
    dir=$mine; [ $lib = theirs ] && dir=$theirs
    [ -n "$dir" ] || continue
    if LD_LIBRARY_PATH="$dir" timeout 120 $run "$prog" "$t"; then
      echo "PASS: $t ($lib)"
    else
      echo "FAIL: $t ($lib)"; status=1
    fi
  done
done
exit $status
