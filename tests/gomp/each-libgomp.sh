# each-libgomp.sh: sourced by the checks that run one gcc -fopenmp program of tests/gomp on this
# tree's libgomp.so.1 ("mine") and on the system's libgomp, gcc's ("theirs"), which must both pass:
# libgomp is the reference. Without gcc's libgomp, or in a cross build (whose program runs under
# its emulator, $MR_TEST_RUN), only ours runs. Under ThreadSanitizer only ours runs too: the
# system's libgomp is not instrumented, so TSan sees no order in its barriers and reports the
# program's own data as raced.
#
# The check sets gomp_prog first (dash passes no arguments to a sourced file). Sets prog
# (tests/gomp/$gomp_prog in the build tree), status (0 until a run fails) and MRENGINE_OPTIONS,
# and defines each_libgomp.

builddir=$(pwd)
run=${MR_TEST_RUN:-}
prog=$builddir/tests/gomp/$gomp_prog
mine=$builddir/gomp/.libs
[ -x "$prog" ] || { echo "$gomp_prog: $prog not built"; exit 1; }
theirs=
f=$(${CC:-gcc} -print-file-name=libgomp.so.1 2>/dev/null)
if [ -n "$f" ] && [ -e "$f" ] && [ -z "$run" ]; then theirs=$(cd "$(dirname "$f")" && pwd -P); fi
case ${MR_SANITIZE_FLAGS:-} in
  *thread*) theirs= ;;
esac
MRENGINE_OPTIONS="-P 2"; export MRENGINE_OPTIONS
status=0

# each_libgomp TIMEOUT TEST [VAR=value...]: run the program's TEST under the settings given, on
# each library; print PASS or FAIL for each and clear status on a failure.
each_libgomp() {
  limit=$1; t=$2; shift 2
  for lib in mine theirs; do
    dir=$mine; [ $lib = theirs ] && dir=$theirs
    [ -n "$dir" ] || continue
    label="$t${*:+ ($*)}, $lib"
    if env LD_LIBRARY_PATH="$dir" "$@" timeout "$limit" $run "$prog" "$t"; then
      echo "PASS: $label"
    else
      echo "FAIL: $label"; status=1
    fi
  done
}
