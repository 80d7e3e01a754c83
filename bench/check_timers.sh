#!/bin/sh
# check_timers.sh: make check runs the timer benchmark once with small counts, so that it keeps
# building and running; it measures nothing.
exec ./bench/timers --check
