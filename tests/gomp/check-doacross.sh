#!/bin/sh
# check-doacross.sh: doacross loops (tests/gomp/doacross, a gcc -fopenmp program) on this tree's
# libgomp.so.1 and on the system's (each-libgomp.sh): a wavefront under every schedule on 2 to 4
# threads, and a nest of more than 2^28 iterations.
gomp_prog=doacross; . "${top_srcdir:-.}/tests/gomp/each-libgomp.sh"
for t in wavefront large; do
  each_libgomp 120 "$t"
done
exit $status
