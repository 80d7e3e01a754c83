#!/bin/sh
# check-suite.sh: the core tier of gcc 12's libgomp test suite (tests/gomp/core.list) on this
# tree's libgomp.so.1, as `make check` runs it. Skipped (77) when the Debian package
# gcc-12-source is not installed. Its arguments go to run-suite.sh (check-suite-fortran.sh
# passes --suite fortran).
here=$(cd "$(dirname "$0")" && pwd)
MRENGINE_OPTIONS=; export MRENGINE_OPTIONS
# A cross build compiles the tests with its compilers (aarch64-linux-gnu-gcc, and the gfortran
# of the same name) and runs them under its emulator ($MR_TEST_RUN, tests/emulate.sh).
if [ -n "${MR_TEST_RUN:-}" ]; then
  CC=$MR_TEST_CC FC=${MR_TEST_CC%gcc}gfortran
  export CC FC
fi
# In a sanitizer build the tests are compiled with the sanitizer too: the library they load
# needs its runtime (without it every test would stop at a missing symbol, counted unsupported).
SUITE_CFLAGS=${MR_SANITIZE_FLAGS:-}; export SUITE_CFLAGS
# Some of gcc's tests race on purpose (OpenMP's appendix examples, handshakes through flush,
# which ThreadSanitizer does not model): under it the suite checks the tests' results, and a
# report does not fail a test. tests/gomp/design.c, free of races, is where its reports count.
case ${MR_SANITIZE_FLAGS:-} in
  *thread*) TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}exitcode=0"; export TSAN_OPTIONS ;;
esac
# Under AddressSanitizer: the allocator tests ask for sizes no allocator can give and expect
# NULL (alloc-6: ~0 - 1023 bytes), which ASan's malloc would abort on; and gfortran's programs
# leave their own allocatables allocated at exit, which LeakSanitizer would report as theirs.
case ${MR_SANITIZE_FLAGS:-} in
  *address*)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
    case " $* " in *" fortran "*) ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" ;; esac
    export ASAN_OPTIONS ;;
esac
exec "$here/run-suite.sh" --tier core --runtimes mrengine --quiet --timeout 20 "$@"
