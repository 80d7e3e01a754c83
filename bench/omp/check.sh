#!/bin/sh
# check.sh: make check's test of the OpenMP kernels: every kernel on tiny inputs, on each
# runtime run.sh finds (libgomp, libomp, and libmrgomp when gomp/.libs holds it), 1 and 2
# threads, every answer checked. run.sh's exit status is the test's (77: a runtime was missing).
exec /bin/sh "${top_srcdir:-.}/bench/omp/run.sh" --check --timeout 120 \
  --csv bench/omp/check.csv "$@"
