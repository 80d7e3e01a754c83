#!/bin/sh
# emulate.sh: run one program of a cross build (./configure --host=aarch64-linux-gnu) under
# qemu-user. `make check` runs every test program through it (LOG_COMPILER) and the test scripts
# run theirs through it ($MR_TEST_RUN), when configure found an emulator (MR_EMULATOR).
#
# usage: MR_EMULATOR=qemu-aarch64 [MR_LIBTOOL='sh ./libtool'] tests/emulate.sh PROGRAM [ARGS...]
#
# A libtool wrapper script (a program linked against the uninstalled libraries) is replaced by
# its program, with the library path of the build (libtool --mode=execute). The emulator is
# named on the command line, so this works with or without binfmt_misc. The target's dynamic
# loader and libraries are Debian's multiarch ones (libc6:arm64 ...), where the emulated loader
# looks by default; QEMU_LD_PREFIX (e.g. /usr/aarch64-linux-gnu) points it elsewhere.
#
# MR_TEST_EMULATED=1 is set for the program (qemu-user passes the environment on): the few tests
# that cannot work under an emulator skip on it and say why (tests/README.md, "Cross builds").
set -eu
: "${MR_EMULATOR:?emulate.sh: MR_EMULATOR (the emulator, e.g. qemu-aarch64) is not set}"
[ $# -ge 1 ] || { echo "usage: $0 PROGRAM [ARGS...]" >&2; exit 2; }
MR_TEST_EMULATED=1
export MR_TEST_EMULATED
# shellcheck disable=SC2086 # both are commands with their arguments
if [ -n "${MR_LIBTOOL:-}" ]; then
  exec $MR_LIBTOOL --mode=execute $MR_EMULATOR "$@"
else
  exec $MR_EMULATOR "$@"
fi
