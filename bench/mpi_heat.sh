#!/bin/sh
# mpi_heat.sh: bench/mpi_heat's table (doc/mpi.md): on 2 and 4 ranks, the three versions
# interleaved, RUNS runs each; per ranks and version the median time per iteration with
# min..max, the median overlap and CPU per rank. Run from the build directory (make bench-mpi).
#   mpi_heat.sh [RUNS] [mpi_heat options...]
# With MPI_HEAT_CSV=FILE the table also goes to FILE (ranks,version,median,min,max,overlapped,
# cpu; seconds per iteration), from which bench/plot.sh draws mpi-heat.svg (make bench-mpi).
builddir=$(pwd)
runs=${1:-5}
[ $# -gt 0 ] && shift
MPIRUN=${MPIRUN:-mpirun}
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_btl
prog=$builddir/bench/mpi_heat
libs=$builddir/.libs
gomp=$builddir/gomp/.libs
threads=${MPI_HEAT_THREADS:-1}  # threads and engines per rank
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for np in 2 4; do
  r=0
  while [ $r -lt "$runs" ]; do
    for mode in forkjoin tasks mrc; do
      path=$libs
      [ $mode = tasks ] && path=$gomp:$libs
      OMP_NUM_THREADS=$threads MRGOMP_DEFER_ALONE=true MRENGINE_OPTIONS="-P $threads" \
        timeout 600 "$MPIRUN" --oversubscribe -np $np -x OMP_NUM_THREADS -x MRGOMP_DEFER_ALONE \
        -x MRENGINE_OPTIONS -x LD_LIBRARY_PATH="$path" "$prog" $mode "$@" >>"$out" ||
        { echo "mpi_heat.sh: $mode on $np ranks failed" >&2; exit 1; }
    done
    r=$((r + 1))
  done
done
csv=${MPI_HEAT_CSV:-}
[ -z "$csv" ] || echo "ranks,version,median,min,max,overlapped,cpu" >"$csv"
echo "ranks version      s/iteration (median, min..max)    overlapped  CPU/rank"
for np in 2 4; do
  for mode in forkjoin tasks mrc; do
    awk -v m=$mode -v n=$np -v csv="$csv" '$1 == m && $2 == n { t[++k] = $3; o[k] = $4; c[k] = $5 }
      function med(a, k,   i, j, x) {  # sorts a[1..k] (insertion) and returns its median
        for (i = 2; i <= k; i++) {
          x = a[i]
          for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]
          a[j + 1] = x
        }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
      }
      END {
        lo = t[1]; hi = t[1]
        for (i = 1; i <= k; i++) { if (t[i] < lo) lo = t[i]; if (t[i] > hi) hi = t[i] }
        mt = med(t, k); mo = med(o, k); mc = med(c, k)
        printf "%5d %-9s %12.6f (%.6f..%.6f) %10.2f %9.2f\n", n, m, mt, lo, hi, mo, mc
        if (csv != "") printf "%d,%s,%.9f,%.9f,%.9f,%.4f,%.4f\n", n, m, mt, lo, hi, mo, mc >> csv
      }' "$out"
  done
done
