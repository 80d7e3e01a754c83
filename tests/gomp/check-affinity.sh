#!/bin/sh
# check-affinity.sh: places, binding, the affinity format and OMP_DISPLAY_ENV on this tree's
# libgomp.so.1 against the system's libgomp (gcc's), for settings whose output is the same on
# both: tests/gomp/affinity (a gcc -fopenmp program) prints what each thread sees, including
# the processors the kernel lets it run on; the lines are compared sorted (threads print in any
# order), and OMP_DISPLAY_ENV's lines are compared where both runtimes hold the same values.
# Not compared: a team with more members than places but not a multiple of them, where OpenMP
# asks for consecutive members on each place (as here) and libgomp deals the remainder out
# round the places. Skipped (77) when gcc's libgomp is not found.
builddir=$(pwd)
prog=$builddir/tests/gomp/affinity
mine=$builddir/gomp/.libs
[ -x "$prog" ] || { echo "check-affinity: $prog not built"; exit 1; }
f=$(${CC:-gcc} -print-file-name=libgomp.so.1 2>/dev/null)
[ -n "$f" ] && [ -e "$f" ] || { echo "check-affinity: gcc's libgomp not found: skipped"; exit 77; }
theirs=$(cd "$(dirname "$f")" && pwd -P)
MRENGINE_OPTIONS=; export MRENGINE_OPTIONS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-affinity.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
# The variables both runtimes give the same value, whatever their defaults; MASTER is libgomp
# 12's name for PRIMARY.
keys='OMP_PROC_BIND|OMP_PLACES|OMP_NUM_THREADS|OMP_DYNAMIC|OMP_CANCELLATION|OMP_DISPLAY_AFFINITY'
keys="$keys|OMP_AFFINITY_FORMAT|OMP_MAX_TASK_PRIORITY|OMP_DEFAULT_DEVICE|_OPENMP"
run() {  # name lib: the program's output, then OMP_DISPLAY_ENV's lines, sorted
  LD_LIBRARY_PATH=$2 OMP_DISPLAY_ENV=true timeout 60 "$prog" > "$tmp/$1.out" 2> "$tmp/$1.err"
  echo "rc=$?" >> "$tmp/$1.out"
  grep -E "^  ($keys) = " "$tmp/$1.err" | sed "s/'MASTER/'PRIMARY/; s/,MASTER/,PRIMARY/g" \
    >> "$tmp/$1.out"
  sort "$tmp/$1.out" > "$tmp/$1.sorted"
}
# OMP_DISPLAY_AFFINITY's lines (in a format without thread ids), sorted.
show() {  # name lib
  LD_LIBRARY_PATH=$2 OMP_DISPLAY_AFFINITY=true OMP_AFFINITY_FORMAT="shown %L %a %n %N %A" \
    timeout 60 "$prog" display 2>&1 > /dev/null | grep '^shown ' | sort >> "$tmp/$1.sorted"
}
check() {  # the settings, as VAR=value words
  env_text=$*
  (export "$@"; run mine "$mine"; run theirs "$theirs"; show mine "$mine"; show theirs "$theirs")
  if cmp -s "$tmp/mine.sorted" "$tmp/theirs.sorted"; then
    echo "PASS: $env_text"
  else
    echo "FAIL: $env_text (< libmrgomp, > libgomp)"
    diff "$tmp/mine.sorted" "$tmp/theirs.sorted"
    status=1
  fi
}
check OMP_NUM_THREADS=2
check OMP_PLACES=threads OMP_PROC_BIND=spread OMP_NUM_THREADS=2
check OMP_PLACES=threads OMP_PROC_BIND=close,spread OMP_NUM_THREADS=4
check OMP_PLACES=threads OMP_PROC_BIND=spread,close OMP_NUM_THREADS=2,3
check "OMP_PLACES={0},{1}" OMP_PROC_BIND=true OMP_NUM_THREADS=2
check "OMP_PLACES={0:2},{1}" OMP_PROC_BIND=spread,close OMP_NUM_THREADS=4,2
check "OMP_PLACES={0}:2" OMP_PROC_BIND=primary OMP_NUM_THREADS=2
check "OMP_PLACES={0},{1},{0,1}" OMP_PROC_BIND=close OMP_NUM_THREADS=6
check OMP_PLACES=threads OMP_NUM_THREADS=2 "OMP_AFFINITY_FORMAT=%n of %N at %A"
check OMP_PLACES=cores OMP_PROC_BIND=false OMP_NUM_THREADS=2
check "OMP_PLACES=threads(1)" OMP_PROC_BIND=spread OMP_NUM_THREADS=2
exit $status
