#!/bin/sh
# Run every comparison kernel once per implementation and worker count on its small input
# (--check) and fail if any computes a wrong answer. make check runs this from the build
# directory; the kernels are listed in Makefile.am (peer_kernels).
status=0
for k in fib nqueens uts mandelbrot spectral micro fanout; do
  if ./bench/$k --check; then :; else
    echo "check_kernels: bench/$k --check failed" >&2
    status=1
  fi
done
# The scope form of the fan-out (MR_scope, mr::scope, task_group, taskgroup).
if ./bench/fanout --scope --check; then :; else
  echo "check_kernels: bench/fanout --scope --check failed" >&2
  status=1
fi
exit $status
