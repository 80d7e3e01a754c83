#!/bin/sh
# check-icv.sh: ICVs set by the environment (tests/gomp/icv, a gcc -fopenmp program), each test
# under the settings it names, on this tree's libgomp.so.1 and on the system's (each-libgomp.sh).
gomp_prog=icv; . "${top_srcdir:-.}/tests/gomp/each-libgomp.sh"
# gcc passes schedule(nonmonotonic: runtime) with a task reduction as kind 4 of GOMP_loop_start.
each_libgomp 60 sched-runtime-nonmonotonic OMP_SCHEDULE=static,1
# A list asks for nesting: as many levels as supported, not as many as its entries.
each_libgomp 60 levels-list OMP_NUM_THREADS=3,2
each_libgomp 60 levels-list OMP_PROC_BIND=spread,close
# OMP_THREAD_LIMIT counts each initial thread's contention group on its own.
each_libgomp 60 thread-limit-groups OMP_THREAD_LIMIT=4
exit $status
