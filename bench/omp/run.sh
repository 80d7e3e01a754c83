#!/bin/sh
# run.sh: the OpenMP kernels of bench/omp (built once with gcc -O2 -fopenmp) on three
# runtimes: gcc's libgomp, LLVM's libomp and libmrgomp (mrengine's libgomp.so.1). The same
# binaries run on each; only LD_LIBRARY_PATH changes, pointing at a directory whose
# libgomp.so.1 is the runtime to use.
#
#   bench/omp/run.sh [options]
#     --runs N          timed runs per kernel, runtime and thread count (default 5)
#     --threads LIST    OMP_NUM_THREADS values, e.g. "1 2" (default "1 2"), for every kernel
#                       but regions
#     --over LIST       threads per processor for regions, the oversubscription kernel
#                       (default "1 2 4": on 2 processors, 2, 4 and 8 threads)
#     --kernels LIST    some of: fib nqueens uts mergesort gs fanout loop barrier knapsack
#                       regions sparselu align (default all)
#     --timeout S       seconds one run may take before it is killed (default 120)
#     --gomp DIR        directory with gcc's libgomp.so.1 (default: the one gcc links)
#     --omp DIR         directory with a libgomp.so.1 that is LLVM's libomp (default: a
#                       symlink to libomp.so.5 made in bench/omp/libomp-as-gomp)
#     --mr DIR          directory with libmrgomp's libgomp.so.1 (default: gomp/.libs in the
#                       build directory when it holds one)
#     --bindir DIR      where the kernels are (default: bench/omp in the build directory)
#     --csv FILE        one row per run (default bench/omp/results.csv); the table's figures go
#                       to FILE with -summary.csv in place of .csv
#     --keep-going      after a run times out, keep running that runtime on that kernel and
#                       thread count (by default its remaining runs are skipped, so that a
#                       hanging runtime costs one timeout, not N)
#     --check           tiny inputs, one run each, answers checked: exit 0 when every runtime
#                       gave every right answer, 1 when one did not, 77 (skipped) when they
#                       all did but a runtime was not there to run (libmrgomp not built)
#
# Runs are interleaved: for each kernel and each run, every thread count and every runtime in
# turn (the runtime that goes first rotates), so that a change in the machine's load during the
# benchmark lands on every runtime alike. Every run is its own process, under `timeout`; a run
# that times out, dies of a signal, exits non-zero, gives a wrong answer or the wrong team size
# is reported as such in the table and the CSV, and the other runs go on.
#
# Run from the build directory (make bench-omp and make check do). POSIX sh plus `local`
# (it runs under dash and bash).
set -u

runs=5
threads="1 2"
over="1 2 4"
all_kernels="fib nqueens uts mergesort gs fanout loop barrier knapsack regions sparselu align"
kernels=$all_kernels
timeout_s=120
gomp_dir=
omp_dir=
mr_dir=
bindir=bench/omp
csv=bench/omp/results.csv
keep_going=no
check=no

die() { echo "run.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=${2:?}; shift 2 ;;
    --threads) threads=${2:?}; shift 2 ;;
    --over) over=${2:?}; shift 2 ;;
    --kernels) kernels=${2:?}; shift 2 ;;
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --gomp) gomp_dir=${2:?}; shift 2 ;;
    --omp) omp_dir=${2:?}; shift 2 ;;
    --mr) mr_dir=${2:?}; shift 2 ;;
    --bindir) bindir=${2:?}; shift 2 ;;
    --csv) csv=${2:?}; shift 2 ;;
    --keep-going) keep_going=yes; shift ;;
    --check) check=yes; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 0 ;;
    *) die "unknown option '$1' (--help lists them)" ;;
  esac
done
case "$runs" in ''|*[!0-9]*|0) die "--runs wants a positive integer" ;; esac
case "$timeout_s" in ''|*[!0-9]*|0) die "--timeout wants a positive integer" ;; esac
[ "$check" = yes ] && runs=1

# The arguments of each kernel: the benchmark's sizes, or with --check tiny ones that take a
# few milliseconds but still create tasks on every path (dependences, taskgroups, deep trees),
# and still hand out several chunks per loop and meet at many barriers.
kernel_args() {
  if [ "$check" = yes ]; then
    case "$1" in
      fib) echo "20" ;;
      nqueens) echo "8" ;;
      uts) echo "-b 100 -q 0.124 -m 8 -r 42" ;;
      mergesort) echo "50000 512" ;;
      gs) echo "128 16 3" ;;
      fanout) echo "50 200" ;;
      loop) echo "200 1000" ;;
      barrier) echo "2000" ;;
      knapsack) echo "20" ;;
      regions) echo "200 256" ;;
      sparselu) echo "6 8" ;;
      align) echo "12 40" ;;
    esac
  else
    case "$1" in
      fib) echo "32" ;;
      nqueens) echo "12" ;;
      uts) echo "" ;;   # T3, checked against its published counts
      mergesort) echo "4000000 2048" ;;
      gs) echo "1024 32 20" ;;
      fanout) echo "1000 1000" ;;
      loop) echo "20000 4096" ;;
      barrier) echo "100000" ;;
      knapsack) echo "36" ;;
      regions) echo "20000 2048" ;;
      sparselu) echo "32 64" ;;
      align) echo "120 400" ;;
    esac
  fi
}

# The thread counts a kernel runs at: --threads, or for regions --over times the processors.
kernel_threads() {
  if [ "$1" = regions ]; then
    local p f out=
    p=$(nproc 2>/dev/null || echo 1)
    for f in $over; do out="$out $((p * f))"; done
    echo $out
  else
    echo $threads
  fi
}

for k in $kernels; do
  case " $all_kernels " in *" $k "*) ;; *) die "unknown kernel '$k'" ;; esac
  [ -x "$bindir/$k" ] || die "$bindir/$k is not built (make bench-omp builds the kernels)"
done

# ---- the three runtimes ----------------------------------------------------------------------
# gcc's libgomp: the directory of the libgomp.so.1 that gcc links. It is named explicitly
# rather than left to the default search so that an LD_LIBRARY_PATH in the caller's environment
# cannot substitute another.
if [ -z "$gomp_dir" ]; then
  f=$(${CC:-gcc} -print-file-name=libgomp.so.1 2>/dev/null)
  if [ -n "$f" ] && [ -e "$f" ]; then
    gomp_dir=$(cd "$(dirname "$f")" && pwd -P)
  else
    f=$(/sbin/ldconfig -p 2>/dev/null | sed -n 's/.*libgomp\.so\.1 .*=> //p' | head -n 1)
    [ -n "$f" ] && gomp_dir=$(dirname "$f")
  fi
fi
# LLVM's libomp answers to libgomp's ABI too (its GOMP_* entry points); a directory with a
# symlink named libgomp.so.1 makes the dynamic linker take it for the program's libgomp.
if [ -z "$omp_dir" ]; then
  f=
  for c in /usr/lib/llvm-*/lib/libomp.so.5 /usr/lib/x86_64-linux-gnu/libomp.so.5 \
           /usr/lib/*/libomp.so.5 /usr/local/lib/libomp.so; do
    [ -e "$c" ] && { f=$c; break; }
  done
  [ -z "$f" ] && f=$(/sbin/ldconfig -p 2>/dev/null | sed -n 's/.*libomp\.so\.5 .*=> //p' | head -n 1)
  if [ -n "$f" ]; then
    omp_dir=bench/omp/libomp-as-gomp
    mkdir -p "$omp_dir" && ln -sf "$f" "$omp_dir/libgomp.so.1"
  fi
fi
# libmrgomp: the build tree's gomp/.libs (its libgomp.so.1 finds libmrengine.so.0 through its
# run path).
if [ -z "$mr_dir" ] && [ -e gomp/.libs/libgomp.so.1 ]; then
  mr_dir=gomp/.libs
fi

rt_names="libgomp libomp mrengine"
rt_dir() {
  case "$1" in libgomp) echo "$gomp_dir" ;; libomp) echo "$omp_dir" ;; mrengine) echo "$mr_dir" ;; esac
}
# Absolute directories, since the kernels' environment must not depend on the working directory.
absdir() { [ -n "$1" ] && [ -d "$1" ] && (cd "$1" && pwd -P); }
present=
absent=
for rt in $rt_names; do
  d=$(absdir "$(rt_dir "$rt")")
  if [ -n "$d" ] && [ -e "$d/libgomp.so.1" ]; then
    case $rt in libgomp) gomp_dir=$d ;; libomp) omp_dir=$d ;; mrengine) mr_dir=$d ;; esac
    present="$present $rt"
  else
    absent="$absent $rt"
  fi
done
[ -n "$present" ] || die "no runtime found (see --gomp, --omp, --mr)"

# Which file each runtime's directory really gives the kernels, as the dynamic linker resolves
# it: proof that the runs below are on the runtime they are labelled with.
first_kernel=${kernels%% *}
echo "run.sh: $runs run(s) per figure, threads: $threads, timeout ${timeout_s}s per run$([ "$check" = yes ] && echo ', --check (tiny inputs)')"
for rt in $present; do
  d=$(rt_dir "$rt")
  lib=$(LD_LIBRARY_PATH=$d ldd "$bindir/$first_kernel" 2>/dev/null | sed -n 's/^[[:space:]]*libgomp\.so\.1 => \([^ ]*\).*/\1/p')
  real=$(readlink -f "$lib" 2>/dev/null)
  printf 'run.sh: %-9s LD_LIBRARY_PATH=%s -> %s\n' "$rt" "$d" "${real:-?}"
done
for rt in $absent; do
  printf 'run.sh: %-9s not found: its runs are reported as absent\n' "$rt"
done
echo "run.sh: load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null) on $(nproc 2>/dev/null) processor(s)"

# ---- the runs --------------------------------------------------------------------------------
mkdir -p "$(dirname "$csv")"
# load1: the one-minute load average just before the run, since the machine may be shared.
echo "kernel,size,runtime,threads,run,status,seconds,metric,unit,team,load1,detail" > "$csv"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ompbench.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
skipped=" "   # "kernel/runtime/threads" keys that timed out (their later runs are skipped)

# One run: appends a CSV row and prints a progress line to stderr.
one_run() {  # kernel runtime threads run
  local k=$1 rt=$2 t=$3 r=$4 d status seconds= metric= unit= team= detail= size= line rc load
  load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null)
  d=$(rt_dir "$rt")
  if [ -z "$d" ]; then
    status=absent
  elif [ "$keep_going" = no ] && [ "${skipped#* $k/$rt/$t }" != "$skipped" ]; then
    status=skipped
  else
    # shellcheck disable=SC2046 # the kernel's arguments are words
    LD_LIBRARY_PATH=$d OMP_NUM_THREADS=$t timeout -k 5 "$timeout_s" \
      "$bindir/$k" $(kernel_args "$k") > "$tmp/out" 2> "$tmp/err"
    rc=$?
    line=$(grep '^ompbench ' "$tmp/out" | tail -n 1)
    field() { printf '%s\n' "$line" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1; }
    seconds=$(field seconds); metric=$(field metric); unit=$(field unit)
    team=$(field threads); size=$(field size)
    detail=$(printf '%s\n' "$line" | sed -n 's/.* check=[A-Za-z]* *//p')
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      status=timeout
      skipped="$skipped$k/$rt/$t "
    elif [ $rc -gt 128 ]; then
      status="crash:SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))"
    elif [ -z "$line" ]; then
      status="error:rc=$rc"
    elif ! printf '%s\n' "$line" | grep -q ' check=ok'; then
      status=wrong
    elif [ "$team" != "$t" ]; then
      status="team:$team"
    elif [ $rc -ne 0 ]; then
      status="error:rc=$rc"
    else
      status=ok
    fi
    if [ "$status" != ok ]; then
      # The first lines of stderr say why (an assertion, an unsupported construct...).
      local why
      why=$(head -c 300 "$tmp/err" | tr '\n,' '; ')
      [ -n "$why" ] && detail="$detail stderr: $why"
    fi
  fi
  # The CSV has no quoting: no field may hold a comma.
  detail=$(printf '%s' "$detail" | tr ',' ';')
  size=$(printf '%s' "$size" | tr ',' ';')
  echo "$k,$size,$rt,$t,$r,$status,$seconds,$metric,$unit,$team,$load,$detail" >> "$csv"
  printf 'run.sh: %-9s %-9s threads=%s run %s: %s %s %s\n' "$k" "$rt" "$t" "$r" "$status" \
    "${metric:-}" "${unit:-}" >&2
}

set -- $rt_names
for k in $kernels; do
  r=1
  while [ "$r" -le "$runs" ]; do
    for t in $(kernel_threads "$k"); do
      # The runtime that goes first rotates with the run number.
      rot=$(( (r - 1) % 3 ))
      case $rot in
        0) order="$1 $2 $3" ;;
        1) order="$2 $3 $1" ;;
        2) order="$3 $1 $2" ;;
      esac
      for rt in $order; do one_run "$k" "$rt" "$t" "$r"; done
    done
    r=$((r + 1))
  done
done

# ---- the table -------------------------------------------------------------------------------
summary=${csv%.csv}-summary.csv
awk -F, -v summary="$summary" -v rts="$rt_names" -v kernels="$kernels" '
function sortv(a, n,   i, j, x) {
  for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
}
function median(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function fmt(v) { return v >= 100 ? sprintf("%.0f", v) : sprintf("%.3g", v) }
NR == 1 { next }
{
  key = $1 SUBSEP $3 SUBSEP $4
  size[$1] = size[$1] == "" ? $2 : size[$1]
  if ($9 != "") unit[$1] = $9
  if ($6 == "ok") { n[key]++; v[key, n[key]] = $8 }
  else { bad[key, $6]++; badkinds[key] = badkinds[key] == "" ? $6 : (index(" " badkinds[key] " ", " " $6 " ") ? badkinds[key] : badkinds[key] " " $6) }
  total[key]++
  if (!(($1, $4) in seen)) { seen[$1, $4] = 1; kt[$1] = kt[$1] " " $4 }  # its thread counts
}
END {
  nr = split(rts, R, " "); nk = split(kernels, K, " ")
  printf "%-9s %-18s %3s %-7s", "kernel", "size", "thr", "unit"
  for (i = 1; i <= nr; i++) printf " | %-30s", R[i] " median [min..max]"
  printf " | %7s %7s\n", "mr/gomp", "mr/omp"
  print "kernel,size,threads,unit,runtime,ok_runs,runs,median,min,max,failures,mr_over_libgomp,mr_over_libomp" > summary
  failed = 0
  for (a = 1; a <= nk; a++) for (b = 1; b <= split(kt[K[a]], T, " "); b++) {
    k = K[a]; t = T[b]
    printf "%-9s %-18s %3s %-7s", k, size[k], t, unit[k]
    delete med
    line = ""
    for (i = 1; i <= nr; i++) {
      key = k SUBSEP R[i] SUBSEP t; cnt = n[key] + 0
      delete s
      for (j = 1; j <= cnt; j++) s[j] = v[key, j] + 0
      sortv(s, cnt)
      fails = ""
      split(badkinds[key], kinds, " ")
      for (x in kinds) { fails = fails (fails == "" ? "" : " ") bad[key, kinds[x]] "x" kinds[x]; if (kinds[x] != "absent") failed = 1 }
      if (cnt > 0) {
        med[R[i]] = median(s, cnt)
        cell = fmt(med[R[i]]) " [" fmt(s[1]) ".." fmt(s[cnt]) "]"
        if (fails != "") cell = cell " +" fails
        mn = s[1]; mx = s[cnt]
      } else {
        cell = fails == "" ? "-" : badkinds[key] == "absent" ? "absent" : fails; mn = ""; mx = ""
      }
      printf " | %-30s", cell
      line = line sprintf("%s,%s,%s,%s,%s,%d,%d,%s,%s,%s,%s", k, size[k], t, unit[k], R[i], cnt, total[key], cnt ? med[R[i]] : "", mn, mx, fails)
      line = line "\n"
    }
    rg = ("mrengine" in med && "libgomp" in med) ? sprintf("%.2f", med["mrengine"] / med["libgomp"]) : "-"
    ro = ("mrengine" in med && "libomp" in med) ? sprintf("%.2f", med["mrengine"] / med["libomp"]) : "-"
    printf " | %7s %7s\n", rg, ro
    nl = split(line, L, "\n")
    for (j = 1; j < nl; j++) print L[j] "," rg "," ro > summary
  }
  exit failed
}' "$csv"
table_status=$?
echo "run.sh: one row per run in $csv, the table in $summary"
echo "run.sh: load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"

if [ $table_status -ne 0 ]; then
  echo "run.sh: some runs failed (see the table and $csv)" >&2
  exit 1
fi
if [ "$check" = yes ] && [ -n "$absent" ]; then
  echo "run.sh: every answer was right, but not checked on:$absent (skipped)"
  exit 77
fi
exit 0
