#!/bin/sh
# check_time_io.sh: make check runs the timer, echo, levels and million benchmarks once, briefly
# (the echo on 127.0.0.1 with 10 connections for half a second per server; 50,000 contexts at
# once, which fit under the default vm.max_map_count), so that they keep building and running;
# they measure nothing here. $MR_TEST_RUN is the emulator of a cross build (empty natively).
set -e
run=${MR_TEST_RUN:-}
$run ./bench/timers --check
$run ./bench/echo --seconds 0.5 --conns 10 --reps 1
$run ./bench/levels --check
# The sanitizers: ThreadSanitizer allows about 8,000 fibers, and their frames are bigger.
if [ -n "${MR_SANITIZE_FLAGS:-}" ]; then
  $run ./bench/million --check --count 1000 --stack-size 256
else
  $run ./bench/million --check
fi
