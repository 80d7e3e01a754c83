#!/bin/sh
# bench-gomp.sh: small OpenMP kernels (tests/gomp/bench/*.c, built with gcc -O2 -fopenmp) on the
# system's libgomp, LLVM's libomp and this tree's libgomp.so.1 (mrengine). Prints the median of
# RUNS runs (seconds) per kernel and runtime, and mrengine's speed-up over each.
# usage: tests/gomp/bench-gomp.sh [--threads N] [--runs R]   (from the build directory)
here=$(cd "$(dirname "$0")" && pwd)
builddir=$(pwd)
threads=2
runs=5
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--threads N] [--runs R]" >&2; exit 2 ;;
  esac
done
out=$builddir/tests/gomp/bench-out
mkdir -p "$out/libomp"
ln -sf /usr/lib/llvm-14/lib/libomp.so.5 "$out/libomp/libgomp.so.1"
mrlib=$builddir/gomp/.libs

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-8s %10s %10s %10s %12s %12s\n' kernel mrengine libgomp libomp 'vs libgomp' 'vs libomp'
for k in fib loop barrier; do
  ${CC:-gcc} -O2 -fopenmp "$here/bench/$k.c" -o "$out/$k" || exit 1
  line=$k
  for r in mrengine system libomp; do
    case $r in mrengine) lib=$mrlib ;; libomp) lib=$out/libomp ;; *) lib= ;; esac
    i=0
    : > "$out/$k.$r"
    while [ $i -lt "$runs" ]; do
      env -u LD_LIBRARY_PATH ${lib:+LD_LIBRARY_PATH=$lib} OMP_NUM_THREADS=$threads \
        timeout 120 "$out/$k" >> "$out/$k.$r" || { echo "$k on $r failed" >&2; exit 1; }
      i=$((i + 1))
    done
    eval "t_$r=$(median < "$out/$k.$r")"
  done
  # shellcheck disable=SC2154
  awk -v k="$k" -v m="$t_mrengine" -v s="$t_system" -v l="$t_libomp" \
    'BEGIN { printf "%-8s %10.4f %10.4f %10.4f %11.2fx %11.2fx\n", k, m, s, l, s / m, l / m }'
done
