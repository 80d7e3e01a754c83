#!/bin/sh
# check-suite-fortran.sh: the core tier of gcc 12's libgomp.fortran tests
# (tests/gomp/core-fortran.list) on this tree's libgomp.so.1, as `make check` runs it. Skipped
# (77) without gfortran or the Debian package gcc-12-source.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/check-suite.sh" --suite fortran
