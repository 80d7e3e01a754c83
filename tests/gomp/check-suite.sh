#!/bin/sh
# check-suite.sh: the core tier of gcc 12's libgomp test suite (tests/gomp/core.list) on this
# tree's libgomp.so.1, as `make check` runs it. Skipped (77) when the Debian package
# gcc-12-source is not installed.
here=$(cd "$(dirname "$0")" && pwd)
MRENGINE_OPTIONS=; export MRENGINE_OPTIONS
exec "$here/run-suite.sh" --tier core --runtimes mrengine --quiet --timeout 20
