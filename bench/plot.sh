#!/bin/sh
# plot.sh DIR: SVG plots from the CSV files that make bench leaves in DIR.
#   DIR/kernels.csv       -> DIR/<kernel>-<param>.svg: median time against workers, one line per
#                            implementation (min..max as error bars)
#   DIR/wake-samples.csv  -> DIR/wake-latency.svg: the distribution (CDF) of the wake latency of
#                            every variant, blocked and busy poster
#   DIR/omp-summary.csv   -> DIR/omp-<kernel>.svg: bench/omp/run.sh's table (make bench-omp):
#                            median against threads, one line per runtime (min..max as error bars)
#   DIR/mpi-heat.csv      -> DIR/mpi-heat.svg: bench/mpi_heat.sh's table (make bench-mpi): time
#                            per iteration against ranks, one line per version (min..max as bars)
# Needs gnuplot (Debian: gnuplot-nox).
set -e
dir=${1:?usage: plot.sh DIR}
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not found (Debian: gnuplot-nox)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -f "$dir/kernels.csv" ]; then
  # One data file per kernel run and implementation: workers median min max.
  awk -F, -v t="$tmp" 'NR > 1 && $3 != "seq" {
      f = t "/" $1 "-" $2 "." $3; print $4, $6, $7, $8 >> f; runs[$1 "-" $2] = 1 }
    NR > 1 && $3 == "seq" { seq[$1 "-" $2] = $6 }
    NR > 1 && $4 > maxw { maxw = $4 }
    END { for (k in runs) { print k > (t "/runs")
            if (k in seq) { print 1, seq[k] > (t "/" k ".seq"); print maxw, seq[k] > (t "/" k ".seq") } } }' \
    "$dir/kernels.csv"
  for run in $(cat "$tmp/runs"); do
    plots=""
    for impl in mrc mrcxx tbb omp; do
      f="$tmp/$run.$impl"
      [ -f "$f" ] || continue
      case $impl in mrc) t="mrengine C";; mrcxx) t="mrengine C++";; tbb) t="oneTBB";; omp) t="OpenMP";; esac
      plots="$plots${plots:+, }'$f' using 1:(\$2*1e3):(\$3*1e3):(\$4*1e3) with yerrorlines title '$t'"
    done
    if [ -f "$tmp/$run.seq" ]; then
      plots="$plots, '$tmp/$run.seq' using 1:(\$2*1e3) with lines dashtype 2 title 'sequential'"
    fi
    gnuplot <<GP
set terminal svg size 640,420 dynamic font "sans,11"
set output '$dir/$run.svg'
set title '$run: median time (min..max)'
set xlabel 'workers'
set ylabel 'ms'
set xtics 1
set xrange [0.8:$(awk 'END { print $1 + 0.2 }' "$tmp/$run.seq" 2>/dev/null || echo 2.2)]
set yrange [0:*]
set key outside right
set grid
plot $plots
GP
  done
fi

if [ -f "$dir/wake-samples.csv" ]; then
  awk -F, -v t="$tmp" '
    NR > 1 { k = $1 " (" $2 ")"; gsub(/[ ,()]/, "_", k); print $3 > (t "/w." k); names[k] = $1 " (" $2 " poster)" }
    END { for (k in names) print k "\t" names[k] > (t "/wnames") }' "$dir/wake-samples.csv"
  sort -o "$tmp/wnames" "$tmp/wnames"
  plots=""
  while IFS='	' read -r key title; do
    sort -g "$tmp/w.$key" > "$tmp/s.$key"
    n=$(wc -l < "$tmp/s.$key")
    awk -v n="$n" '{ print $1, NR / n }' "$tmp/s.$key" > "$tmp/c.$key"
    plots="$plots${plots:+, }'$tmp/c.$key' using 1:2 with steps title '$title'"
  done < "$tmp/wnames"
  gnuplot <<GP
set terminal svg size 760,460 dynamic font "sans,11"
set output '$dir/wake-latency.svg'
set title 'wake latency: fraction of trials started within x'
set xlabel 'microseconds from post to start (log scale)'
set ylabel 'fraction of trials'
set logscale x
set key outside right
set grid
plot $plots
GP
fi

if [ -f "$dir/omp-summary.csv" ]; then
  # One data file per kernel and runtime: threads median min max; the unit and size per kernel.
  awk -F, -v t="$tmp" 'NR > 1 && $8 != "" {
      f = t "/omp." $1 "." $5; print $3, $8, $9, $10 >> f; unit[$1] = $4; size[$1] = $2
      if ($3 > maxt) maxt = $3 }
    END { for (k in unit) print k, unit[k], size[k] > (t "/omp.kernels"); print maxt + 0 > (t "/omp.maxt") }' \
    "$dir/omp-summary.csv"
  while read -r kernel unit size; do
    plots=""
    for rt in libgomp libomp mrengine; do
      f="$tmp/omp.$kernel.$rt"
      [ -f "$f" ] || continue
      sort -n -o "$f" "$f"
      plots="$plots${plots:+, }'$f' using 1:2:3:4 with yerrorlines title '$rt'"
    done
    [ -n "$plots" ] || continue
    gnuplot <<GP
set terminal svg size 640,420 dynamic font "sans,11"
set output '$dir/omp-$kernel.svg'
set title 'OpenMP $kernel $size, same binary: median (min..max)'
set xlabel 'threads (OMP_NUM_THREADS)' noenhanced
set ylabel '$unit'
set xtics 1
set xrange [0.8:$(awk '{ print $1 + 0.2 }' "$tmp/omp.maxt")]
set yrange [0:*]
set key outside right
set grid
plot $plots
GP
  done < "$tmp/omp.kernels"
fi

if [ -f "$dir/mpi-heat.csv" ]; then
  # One data file per version: ranks median min max (seconds per iteration).
  awk -F, -v t="$tmp" 'NR > 1 { print $1, $3, $4, $5 >> (t "/heat." $2)
      if (NR == 2 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
    END { print lo - 0.5 ":" hi + 0.5 > (t "/heat.xrange") }' "$dir/mpi-heat.csv"
  plots=""
  for v in forkjoin tasks mrc; do
    f="$tmp/heat.$v"
    [ -f "$f" ] || continue
    case $v in forkjoin) t="(a) fork-join";; tasks) t="(b) tasks";; mrc) t="(c) mrc";; esac
    sort -n -o "$f" "$f"
    plots="$plots${plots:+, }'$f' using 1:(\$2*1e3):(\$3*1e3):(\$4*1e3) with yerrorlines title '$t'"
  done
  if [ -n "$plots" ]; then
    gnuplot <<GP
set terminal svg size 640,420 dynamic font "sans,11"
set output '$dir/mpi-heat.svg'
set title 'bench/mpi_heat (2-D heat equation): time per iteration, median (min..max)' noenhanced
set xlabel 'ranks'
set ylabel 'ms per iteration'
set xtics 1
set xrange [$(cat "$tmp/heat.xrange")]
set yrange [0:*]
set key outside right
set grid
plot $plots
GP
  fi
fi
