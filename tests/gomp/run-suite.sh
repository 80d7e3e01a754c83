#!/bin/bash
# run-suite.sh: gcc's own libgomp run tests (from the Debian package gcc-12-source) on three
# OpenMP runtimes: the system's libgomp, LLVM's libomp (through a libgomp.so.1 link to it) and
# mrengine's (this tree's gomp/.libs). Each test is compiled once, as gcc's test harness would
# (gcc -O2 -fopenmp and its dg-options / dg-additional-options), and the binary is run on each
# runtime with a time limit. Prints a table (passed / failed / timed out / unsupported per
# runtime) and mrengine's failures with their reasons.
#
# usage: tests/gomp/run-suite.sh [--suite c | fortran] [--tier core | --list FILE]
#                                [--runtimes "mrengine system libomp"]
#                                [--timeout SECONDS] [--jobs N] [--builddir DIR] [--quiet]
#   --suite       c (default): libgomp.c and libgomp.c-c++-common, compiled with $CC;
#                 fortran: libgomp.fortran, compiled with $FC (gfortran's harness compiles
#                 each test at several optimisation levels; here once, at -O2 and the test's
#                 own options)
#   --tier core   only the tests named in tests/gomp/core.list (core-fortran.list for
#                 Fortran: what `make check` runs)
#   --list FILE   only the tests named in FILE (paths as in core.list: libgomp.c/foo.c)
# Exit status: 0 if mrengine passed every test it ran that the system's libgomp passes, except
# those it stops as unsupported and those in tests/gomp/known.list (each with its reason); 1
# otherwise; 77 if the gcc source tarball is missing.
# Environment: GCC_SOURCE_TARBALL (default /usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz), CC (gcc),
# FC (gfortran),
# SUITE_CFLAGS (more compiler flags for every test, e.g. a sanitizer build's -fsanitize=...),
# MR_TEST_RUN (the command that runs a test, e.g. tests/emulate.sh in a cross build).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
builddir=$(pwd)
tier=all
list=
suite=c
runtimes="mrengine system libomp"
timeout_s=10
jobs=2
quiet=no
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suite=$2; shift 2 ;;
    --tier) tier=$2; shift 2 ;;
    --list) list=$2; tier=list; shift 2 ;;
    --runtimes) runtimes=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --builddir) builddir=$2; shift 2 ;;
    --quiet) quiet=yes; shift ;;
    *) echo "usage: $0 [--suite c|fortran] [--tier core | --list FILE] [--runtimes LIST] [--timeout S] [--jobs N] [--builddir DIR] [--quiet]" >&2; exit 2 ;;
  esac
done
case $suite in
  c) core_list=core.list; CC=${CC:-gcc} ;;
  fortran) core_list=core-fortran.list; CC=${FC:-gfortran} ;;
  *) echo "run-suite: --suite c or fortran" >&2; exit 2 ;;
esac
[ "$tier" = core ] && list=$srcdir/tests/gomp/$core_list

tarball=${GCC_SOURCE_TARBALL:-/usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz}
if [ ! -r "$tarball" ]; then
  echo "run-suite: $tarball not found: install the Debian package gcc-12-source (./bootstrap --install-deps)"
  exit 77
fi
command -v "$CC" >/dev/null || { echo "run-suite: no compiler '$CC' for the $suite suite"; exit 77; }

work=$builddir/tests/gomp/suite
mkdir -p "$work"
top=$work/gcc-12.2.0
tests_root=$top/libgomp/testsuite
# Extracted once, under a lock: make check runs the C and the Fortran tiers at once.
(
  flock 9
  if [ ! -f "$work/.extracted" ]; then
    echo "run-suite: extracting the libgomp test suite from $tarball"
    tar -C "$work" -xJf "$tarball" --wildcards 'gcc-12.2.0/libgomp/*' 'gcc-12.2.0/include/*' || exit 1
    touch "$work/.extracted"
  fi
) 9> "$work/.extract-lock" || exit 1

# The runtimes' library directories (a directory whose libgomp.so.1 the binary loads).
mrlib=$builddir/gomp/.libs
[ -r "$mrlib/libgomp.so.1" ] || { echo "run-suite: $mrlib/libgomp.so.1 not built (make first)"; exit 1; }
libomp_dir=$work/libomp
mkdir -p "$libomp_dir"
libomp_so=/usr/lib/llvm-14/lib/libomp.so.5
if [ -r "$libomp_so" ]; then
  ln -sf "$libomp_so" "$libomp_dir/libgomp.so.1"
else
  runtimes=$(echo " $runtimes " | sed 's/ libomp / /')
fi

# The tests: run tests of libgomp.c and libgomp.c-c++-common, or of libgomp.fortran (the
# sources gfortran's harness takes: .f, .F, .f90, .F90, .f95, .f03, .f08), with their
# subdirectories. Each suite has its own list and results.
tests_txt=$work/tests-$suite.txt
if [ -n "$list" ]; then
  grep -v '^#' "$list" | sed '/^[[:space:]]*$/d' > "$tests_txt"
elif [ "$suite" = fortran ]; then
  (cd "$tests_root" && find libgomp.fortran -regex '.*\.[fF]\(90\|95\|03\|08\)?' | sort) > "$tests_txt"
else
  (cd "$tests_root" && find libgomp.c libgomp.c-c++-common -name '*.c' | sort) > "$tests_txt"
fi

# Parse one test's dg- directives (perl is part of every Debian system). Prints shell
# assignments: kind (run, or skip with a reason), opts, sources, envs, shouldfail, and writes the
# dg-output patterns to $2.
parse_dg() {
  perl -e '
    my ($file, $outpat) = @ARGV;
    open my $f, "<", $file or die;
    local $/; my $t = <$f>;
    my $kind = "run"; my $why = ""; my $opts = undef; my @add; my @src; my @env; my $fail = 0; my @out;
    my $bad_target = qr/offload|nvptx|amdgcn|openacc|hsa/;
    while ($t =~ /\{\s*(dg-[\w-]+)\s*(.*?)\s*\}\s*(?:\*\/|$)/mg) {
      my ($d, $a) = ($1, $2);
      if ($d eq "dg-do") {
        my ($what, $sel) = $a =~ /^(\w+)\s*(.*)$/;
        if ($what ne "run") { $kind = "skip"; $why = "dg-do $what"; }
        elsif ($sel =~ $bad_target) { $kind = "skip"; $why = "needs an offload target"; }
      } elsif ($d eq "dg-require-effective-target") {
        if ($a =~ $bad_target) { $kind = "skip"; $why = "needs $a"; }
      } elsif ($d eq "dg-options" || $d eq "dg-additional-options") {
        my ($o, $sel) = $a =~ /^"([^"]*)"\s*(.*)$/ ? ($1, $2) : ($a =~ /^(\S+)\s*(.*)$/);
        # The host is a device sharing the address space of the program (offload_device_shared_as:
        # the harness of gcc finds that a target region sees its variables, as it does here).
        my $host = $sel =~ /^\{\s*target\s+offload_device_shared_as\s*\}$/;
        next if !$host && ($sel =~ $bad_target || $sel =~ /\b(ia32|ilp32|x32|powerpc|arm|aarch64|sparc|s390|mips)/);
        if ($d eq "dg-options") { $opts = $o } else { push @add, $o }
      } elsif ($d eq "dg-additional-sources") {
        $a =~ s/"//g; push @src, split " ", $a;
      } elsif ($d eq "dg-set-target-env-var") {
        my ($n, $v) = $a =~ /^(\w+)\s+"?([^"]*)"?/; push @env, "$n=$v";
      } elsif ($d eq "dg-shouldfail") {
        $fail = 1;
      } elsif ($d eq "dg-output") {
        my ($p) = $a =~ /^"(.*)"/s; push @out, $p if defined $p;
      } elsif ($d eq "dg-add-options" && $a =~ /float128/) {
        push @add, "";
      }
    }
    $opts = "-O2" unless defined $opts;
    $opts = "-O2 $opts" if $ENV{suite} eq "fortran";  # dg-options add to the harness level
    sub sq { my $s = shift; $s =~ s/\x27/\x27\\\x27\x27/g; "\x27$s\x27" }
    print "kind=", sq($kind), "\nwhy=", sq($why), "\nopts=", sq(join(" ", $opts, @add)), "\n";
    print "sources=", sq(join(" ", @src)), "\nenvs=", sq(join(" ", @env)), "\nshouldfail=$fail\n";
    open my $o, ">", $outpat or die; print $o join("", @out); close $o;
  ' "$1" "$2"
}

# Compile and run one test on every runtime; one result line per runtime:
#   <test> <runtime> <pass|fail|timeout|unsupported|skip> <reason>
run_one() {
  local t=$1
  local name=${t//\//__}
  local dir=$work/out/$name
  mkdir -p "$dir"
  local kind why opts sources envs shouldfail
  eval "$(parse_dg "$tests_root/$t" "$dir/output.pat")"
  if [ "$kind" != run ]; then
    for r in $runtimes; do echo "$t $r skip $why"; done
    return
  fi
  local tdir=$tests_root/$(dirname "$t")
  local srcs="$tests_root/$t"
  for s in $sources; do srcs="$srcs $tdir/$s"; done
  # Compiled once, again when the test, its compiler or its flags change. A Fortran test is
  # compiled in its own directory, where it writes its modules (tests share module names).
  local cdir=$tdir
  [ "$suite" = fortran ] && cdir=$dir
  if [ ! -x "$dir/a.out" ] || [ "$tests_root/$t" -nt "$dir/a.out" ] ||
     [ "$(cat "$dir/cflags" 2>/dev/null)" != "$CC $opts ${SUITE_CFLAGS:-}" ]; then
    # shellcheck disable=SC2086
    if ! (cd "$cdir" && timeout 120 "$CC" -fopenmp $opts ${SUITE_CFLAGS:-} -I"$tdir" -idirafter "$top/libgomp" \
          -idirafter "$top/include" $srcs -o "$dir/a.out" -lm) > "$dir/compile.log" 2>&1; then
      for r in $runtimes; do echo "$t $r skip does not compile here"; done
      return
    fi
    printf '%s\n' "$CC $opts ${SUITE_CFLAGS:-}" > "$dir/cflags"
  fi
  for r in $runtimes; do
    local libdir=
    case $r in
      mrengine) libdir=$mrlib ;;
      libomp) libdir=$libomp_dir ;;
      system) libdir= ;;
    esac
    local rc
    # shellcheck disable=SC2086
    { (cd "$dir" && env -u LD_LIBRARY_PATH ${libdir:+LD_LIBRARY_PATH=$libdir} $envs \
       timeout -k 2 "$timeout_s" ${MR_TEST_RUN:-} ./a.out) > "$dir/$r.out" 2> "$dir/$r.err" \
       < /dev/null; } 2>/dev/null
    rc=$?
    local res reason=""
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      res=timeout; reason="no exit within ${timeout_s}s"
    elif grep -q '^mrengine-gomp: .* is not supported' "$dir/$r.err"; then
      res=unsupported; reason=$(grep -m1 '^mrengine-gomp:' "$dir/$r.err")
    elif grep -q 'symbol lookup error' "$dir/$r.err"; then
      res=unsupported; reason=$(grep -m1 -o 'undefined symbol: [^ ,]*' "$dir/$r.err")
    elif grep -q "version \`[A-Z_0-9.]*' not found" "$dir/$r.err"; then
      res=unsupported; reason=$(grep -m1 -o "version \`[A-Z_0-9.]*' not found" "$dir/$r.err")
    elif { [ "$shouldfail" = 1 ] && [ $rc -ne 0 ]; } || { [ "$shouldfail" = 0 ] && [ $rc -eq 0 ]; }; then
      res=pass
      if [ -s "$dir/output.pat" ] && ! perl -e '
          local $/; open my $p, "<", $ARGV[0]; my $pat = <$p>;
          open my $o, "<", $ARGV[1]; my $out = <$o>; open my $e, "<", $ARGV[2]; $out .= <$e>;
          exit($out =~ /$pat/s ? 0 : 1)' "$dir/output.pat" "$dir/$r.out" "$dir/$r.err" 2>/dev/null; then
        res=fail; reason="output does not match dg-output"
      fi
    else
      res=fail
      if [ $rc -gt 128 ]; then reason="killed by signal $((rc - 128))"; else reason="exit status $rc"; fi
      local first
      first=$(grep -m1 -v '^$' "$dir/$r.err" | cut -c1-100)
      [ -n "$first" ] && reason="$reason: $first"
    fi
    echo "$t $r $res $reason"
  done
}
export -f run_one parse_dg
export work tests_root top runtimes mrlib libomp_dir timeout_s CC SUITE_CFLAGS suite

results=$work/results-$suite.txt
: > "$results"
total=$(wc -l < "$tests_txt")
echo "run-suite: $total tests of the $suite suite, runtimes: $runtimes, ${timeout_s}s each, $jobs at a time"
xargs -a "$tests_txt" -P "$jobs" -I{} bash -c 'run_one "$1"' _ {} >> "$results"

# The table.
printf '\n%-10s %7s %7s %9s %12s %7s\n' runtime passed failed timed-out unsupported run
for r in $runtimes; do
  awk -v r="$r" '$2 == r && $3 != "skip" { n[$3]++; run++ }
    END { printf "%-10s %7d %7d %9d %12d %7d\n", r, n["pass"], n["fail"], n["timeout"], n["unsupported"], run }' "$results"
done
skipped=$(awk '$3 == "skip"' "$results" | awk '{print $1}' | sort -u | wc -l)
echo "(not run: $skipped of $total tests: compile-only, or need an offload device or OpenACC)"

# mrengine's failures and time-outs, each marked when the system's libgomp does not pass it
# either; only those the system's libgomp passes (or all, without it) make the status 1.
status=0
if echo " $runtimes " | grep -q ' mrengine '; then
  failures=$work/mrengine-failures-$suite.txt
  awk '$2 == "system" { sys[$1] = $3 }
       $2 == "mrengine" && ($3 == "fail" || $3 == "timeout") { bad[$1] = $0 }
       END { for (t in bad) { s = (t in sys) ? sys[t] : "not run";
                              print bad[t] (s == "pass" || s == "not run" ? "" : "  [system: " s "]") } }' \
    "$results" | sort > "$failures"
  n=$(wc -l < "$failures")
  if [ "$n" -gt 0 ]; then
    echo
    echo "mrengine failures ($n; outputs in $work/out/<test>/mrengine.err):"
    sed 's/ mrengine / /' "$failures"
    # Failures the system's libgomp passes fail the run, unless tests/gomp/known.list has them.
    grep -v '^#' "$srcdir/tests/gomp/known.list" | awk 'NF { print $1 }' > "$work/known-$suite.txt"
    if grep -v '\[system: ' "$failures" | awk '{ print $1 }' |
         grep -qvxF -f "$work/known-$suite.txt"; then
      status=1
    fi
  fi
  if [ "$quiet" = no ]; then
    echo
    echo "mrengine unsupported, by entry point:"
    awk '$2 == "mrengine" && $3 == "unsupported" { $1 = $2 = $3 = ""; print }' "$results" \
      | sed 's/^ *//' | sort | uniq -c | sort -rn
  fi
fi
exit $status
