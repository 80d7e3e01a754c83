#!/bin/sh
# genmc-build.sh: build GenMC (the model checker of tests/weak) from its source tarball into a
# cache outside the tree, once, and print the path of its binary. GenMC is a tool of the tests,
# never part of mrengine's tree or tarball. A finished build is reused.
#   MR_GENMC_TARBALL  the source (default: $top_srcdir/../shared/tools/genmc-0.11.0.tar.gz, or
#                     beside the main checkout when $top_srcdir is a git worktree)
#   MR_GENMC_DIR      where it is built (default: $XDG_CACHE_HOME/mrengine/genmc-0.11.0)
#   MR_GENMC_LLVM     the LLVM 15 installation (default: /usr/lib/llvm-15)
# Exits 77 (skipped) when the tarball or LLVM 15 is missing; its log goes to $MR_GENMC_DIR.log.
set -eu
top=${top_srcdir:-$(dirname "$0")/../..}
version=0.11.0
tarball=${MR_GENMC_TARBALL:-$top/../shared/tools/genmc-$version.tar.gz}
# In a git worktree, the default is beside the main checkout.
if [ -z "${MR_GENMC_TARBALL:-}" ] && [ ! -f "$tarball" ]; then
  common=$(git -C "$top" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || :)
  [ -z "$common" ] || tarball=$(dirname "$common")/../shared/tools/genmc-$version.tar.gz
fi
dir=${MR_GENMC_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mrengine/genmc-$version}
llvm=${MR_GENMC_LLVM:-/usr/lib/llvm-15}

if [ -x "$dir/genmc" ] && [ -f "$dir/.mrengine-built" ]; then
  echo "$dir/genmc"; exit 0
fi
[ -f "$tarball" ] || { echo "genmc: no source tarball at $tarball: skipped" >&2; exit 77; }
if [ ! -x "$llvm/bin/llvm-config" ] || ! command -v clang-15 >/dev/null 2>&1; then
  echo "genmc: LLVM 15 (llvm-15-dev, clang-15) not installed: skipped" >&2; exit 77
fi

# Build in place (GenMC bakes the path of its own include/ into the binary); the marker file,
# written last, keeps an interrupted build from being taken for a finished one.
rm -rf "$dir"
mkdir -p "$dir"
log="$dir.log"
echo "genmc: building $version in $dir (about 5-10 minutes; log $log)" >&2
(
  tar -xzf "$tarball" -C "$dir" --strip-components=1
  cd "$dir"
  autoreconf --install
  # configure asks for __cplusplus >= 202302L, which g++ 12 does not report for -std=c++23,
  # although it compiles GenMC; the cache variable accepts -std=c++23.
  ./configure --with-llvm="$llvm" ax_cv_cxx_compile_cxx23__std_cpp23=yes
  make -j"${MR_GENMC_JOBS:-2}"
) >"$log" 2>&1 || { echo "genmc: build failed; the end of $log:" >&2; tail -40 "$log" >&2; exit 1; }
touch "$dir/.mrengine-built"
echo "$dir/genmc"
