#!/bin/sh
# install_clients.sh [BUILDDIR]: install a configured mrengine build (BUILDDIR, by default the
# current directory) into a staging directory with make install DESTDIR=..., check that the
# headers, the man pages and the CMake package are there, then build and run a client of the
# staged tree (tests/install/client.c) twice: through pkg-config, and through CMake's
# find_package(mrengine CONFIG) and its target mrengine::mrengine. The staged tree is not where
# it was configured to go, so the CMake client also shows that the package finds itself from its
# own location. Also: make install prefix=DIR is refused before anything is installed. .ci/run
# runs it as the "install" stage.
set -eu
build=${1:-.}
src=$(cd "$(dirname "$0")" && pwd)/install
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root

fail() { echo "FAIL: $*"; exit 1; }

# A prefix given at install time is refused before anything is installed (Makefile.am).
if make -C "$build" install prefix="$work/moved" >"$work/moved.log" 2>&1; then
  fail "make install prefix=DIR was accepted"
fi
grep -q "Run ./configure --prefix=DIR" "$work/moved.log" ||
  fail "make install prefix=DIR: no reason given"
[ ! -e "$work/moved" ] || fail "make install prefix=DIR installed something"
make -C "$build" install DESTDIR="$root" >"$work/install.log" 2>&1 ||
  { tail -40 "$work/install.log"; fail "make install"; }
pc=$(find "$root" -name mrengine.pc)
[ -n "$pc" ] || fail "no mrengine.pc in the staged tree"
prefix=$root$(sed -n 's/^prefix=//p' "$pc")
libdir=$(dirname "$(dirname "$pc")")
version=$(sed -n 's/^Version: *//p' "$pc")
for f in mrengine.h mrengine_time.h mrengine_poll.h mrengine_stats.h mrengine_view.h mrengine_config.h \
         mrengine.hpp mrengine_time.hpp mrengine-config.cmake mrengine-config-version.cmake mrengine.3 MR_init.3; do
  [ -n "$(find "$root" -name "$f")" ] || fail "$f is not installed"
done
echo "installed $version under $prefix"

# 1. pkg-config: the .pc file's prefix moved to the staged tree.
flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --define-variable=prefix="$prefix" \
  --cflags --libs mrengine) || fail "pkg-config mrengine"
${CC:-cc} -Wall -Werror -o "$work/client-pc" "$src/client.c" $flags ||
  fail "pkg-config client build"
LD_LIBRARY_PATH=$libdir "$work/client-pc" || fail "pkg-config client run"

# 2. CMake: found through the staged prefix, at this version. The build tree's executable has the
# imported library's directory as its RPATH, so it runs without LD_LIBRARY_PATH.
cmake -S "$src" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  -DMRENGINE_VERSION="$version" >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "cmake"; }
cmake --build "$work/cmake" >"$work/cmake-build.log" 2>&1 ||
  { cat "$work/cmake-build.log"; fail "CMake client build"; }
"$work/cmake/client" || fail "CMake client run"
# The version file refuses a later major version.
if cmake -S "$src" -B "$work/cmake-later" -DCMAKE_PREFIX_PATH="$prefix" \
     -DMRENGINE_VERSION=99.0 >"$work/cmake-later.log" 2>&1; then
  fail "find_package(mrengine 99.0) accepted version $version"
fi
echo "PASS: a pkg-config client and a CMake client of the installed tree"
