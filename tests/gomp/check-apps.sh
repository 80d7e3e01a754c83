#!/bin/sh
# check-apps.sh: programs nobody here wrote, on libmrgomp and on the system's libgomp, at 1, 2
# and 8 threads, their outputs compared byte for byte: Debian's ImageMagick (convert-im6.q16: a
# resize, a blur and a sharpen of a generated picture, OpenMP loops over rows, for which it
# picks teams of 1 to 3 threads from the picture's size and the thread limit) and
# OpenBLAS's OpenMP build (tests/gomp/apps_blas.c: a dgemm and a dgetrf, compiled here).
# libmrgomp takes libgomp's place through the library path (doc/gomp.md), and the run checks
# that the dynamic linker did pick it. Either program missing skips its half; both, the test
# (77). A sanitizer build skips it too: the programs lack the sanitizer's runtime; and a cross
# build, whose library the build machine's programs cannot load.
builddir=$(pwd)
here=$(cd "$(dirname "$0")" && pwd)
lib=$builddir/gomp/.libs
work=$builddir/tests/gomp/apps
convert=/usr/bin/convert-im6.q16
blas=/usr/lib/x86_64-linux-gnu/openblas-openmp
[ -r "$lib/libgomp.so.1" ] || { echo "check-apps: $lib/libgomp.so.1 not built"; exit 1; }
if [ -n "${MR_SANITIZE_FLAGS:-}" ]; then
  echo "SKIP: a sanitizer build (the programs do not load the sanitizer's runtime)"
  exit 77
fi
if [ -n "${MR_TEST_RUN:-}" ]; then
  echo "SKIP: a cross build (the programs are the build machine's, not the build's)"
  exit 77
fi
mkdir -p "$work"
unset MRENGINE_OPTIONS OMP_PROC_BIND OMP_PLACES
status=0
ran=0

# Does the program at $1 load libmrgomp when our directory leads the library path?
loads_ours() {
  LD_LIBRARY_PATH=$lib ldd "$1" | grep -q "libgomp.so.1 => $lib/libgomp.so.1"
}

# compare NAME THREADS COMMAND...: the command, given its output file as its last argument, on
# both runtimes; the two files compared (NAME's extension is the output's format).
compare() {
  name=$1 n=$2
  shift 2
  for r in libgomp mrengine; do
    out=$work/$r.$n.$name
    rm -f "$out"
    if [ $r = mrengine ]; then path=$lib; else path=; fi
    env -u LD_LIBRARY_PATH ${path:+LD_LIBRARY_PATH=$path} OMP_NUM_THREADS=$n \
      MAGICK_THREAD_LIMIT=$n timeout 60 "$@" "$out" 2> "$out.err"
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL: $name, $n threads, on $r: status $rc: $(head -c 300 "$out.err")"
      status=1
      return
    fi
  done
  if cmp -s "$work/libgomp.$n.$name" "$work/mrengine.$n.$name"; then
    echo "PASS: $name, $n threads: $(wc -c < "$work/mrengine.$n.$name") bytes, identical"
    rm -f "$work/libgomp.$n.$name" "$work/mrengine.$n.$name"  # (ImageMagick's are 11 MB)
  else
    echo "FAIL: $name, $n threads: libmrgomp's output differs from libgomp's"
    status=1
  fi
}

if [ -x "$convert" ]; then
  if loads_ours "$convert"; then
    ran=1
    for n in 1 2 8; do
      compare convert.ppm $n "$convert" -seed 7 -size 640x480 plasma:fractal -resize 250% \
        -blur 0x2 -sharpen 0x1 -depth 16
    done
  else
    echo "FAIL: $convert does not load $lib/libgomp.so.1 on the library path"
    status=1
  fi
else
  echo "SKIP: ImageMagick's $convert (Debian package imagemagick) is not installed"
fi

if [ -r "$blas/libopenblas.so.0" ]; then
  prog=$work/apps_blas
  if ! ${MR_TEST_CC:-${CC:-gcc}} -O2 "$here/apps_blas.c" -o "$prog" -L"$blas" -Wl,-rpath,"$blas" \
      -lopenblas > "$work/apps_blas.log" 2>&1; then
    echo "FAIL: apps_blas.c does not build: $(head -c 300 "$work/apps_blas.log")"
    exit 1
  fi
  if loads_ours "$prog"; then
    ran=1
    for n in 1 2 8; do compare openblas.bin $n "$prog"; done
  else
    echo "FAIL: $prog does not load $lib/libgomp.so.1 on the library path"
    status=1
  fi
else
  echo "SKIP: OpenBLAS's OpenMP build (Debian package libopenblas-openmp-dev) is not installed"
fi

[ $ran = 1 ] || [ $status = 1 ] || exit 77
exit $status
