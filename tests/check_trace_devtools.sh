#!/bin/sh
# check_trace_devtools.sh: Chrome DevTools' own trace parser reads mrengine's JSON traces. The npm
# package devtools-timeline-model (DevTools' front-end sources) is installed at test time into
# the build tree (tests/npm); tests/trace_devtools.js checks what it parsed. The traces: the
# pipeline example (futures, contexts) and the same on 3 engines with --lazy-engines.
# SKIP (77) without node and npm, or when the npm registry cannot be reached.
set -u
src=${top_srcdir:-.}
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "check_trace_devtools: SKIP: node or npm missing (Debian: nodejs npm)"
  exit 77
fi
dir=tests/npm
if [ ! -d "$dir/node_modules/devtools-timeline-model" ]; then
  mkdir -p "$dir"
  if ! (cd "$dir" && npm install --no-audit --no-fund --no-save devtools-timeline-model@1.4.0 \
          > install.log 2>&1); then
    echo "check_trace_devtools: SKIP: npm install failed (registry unreachable?), see $dir/install.log"
    exit 77
  fi
fi
for run in "2" "3 --lazy-engines"; do
  set -- $run
  out=tests/trace-devtools.json
  # ${MR_TEST_RUN:-}: the emulator of a cross build (empty natively).
  MRENGINE_OPTIONS="-P $* --trace=$out" ${MR_TEST_RUN:-} ./examples/pipeline 3000 > /dev/null ||
    exit 1
  NODE_PATH="$dir/node_modules" node "$src/tests/trace_devtools.js" "$out" "$1" || exit 1
  rm -f "$out"
done
