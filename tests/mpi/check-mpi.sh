#!/bin/sh
# check-mpi.sh: libmrmpi's tests (make check-mpi), each a run of several ranks on this machine
# only (shared memory and loopback), bounded in time. Without mpirun: SKIP (77).
# The negative controls: the same programs with the plain blocking calls (tasks deadlock plain),
# or with OpenMP on libgomp, must still be running at their time-out.
builddir=$(pwd)
MPIRUN=${MPIRUN:-mpirun}
command -v "$MPIRUN" >/dev/null 2>&1 || { echo "SKIP: no mpirun"; exit 77; }
# Open MPI: run as root in containers, oversubscribe the 2 cores, and keep to this machine.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_plm_rsh_agent=false \
OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_btl \
  OMPI_MCA_btl_vader_single_copy_mechanism OMPI_MCA_plm_rsh_agent \
  OMPI_MCA_rmaps_base_oversubscribe OMPI_MCA_mpi_yield_when_idle
MRENGINE_OPTIONS=; export MRENGINE_OPTIONS
tasks=$builddir/tests/mpi/tasks
omp=$builddir/tests/mpi/omp_tasks
LD_LIBRARY_PATH=$builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; export LD_LIBRARY_PATH
status=0
# run SECONDS RANKS ARGS...: the exit status of mpirun, 124 at the time-out.
run() {
  secs=$1; np=$2; shift 2
  timeout -k 5 "$secs" "$MPIRUN" --oversubscribe -np "$np" "$@" </dev/null
}
expect() {  # expect NAME WANT GOT
  if [ "$3" -eq "$2" ]; then
    echo "PASS: $1"
  else
    echo "FAIL: $1 (status $3, expected $2)"; status=1
  fi
}

run 60 2 "$tasks" deadlock api; expect "deadlock api" 0 $?
run 60 2 "$tasks" deadlock interpose; expect "deadlock interpose" 0 $?
run 10 2 "$tasks" deadlock plain >/dev/null 2>&1; expect "deadlock plain (deadlocks)" 124 $?
for np in 2 3 4; do
  run 120 $np "$tasks" ring; expect "ring on $np ranks" 0 $?
done
for np in 2 4; do
  run 120 $np "$tasks" halo; expect "halo on $np ranks" 0 $?
done
for t in mixed early cancel shutdown isolate; do
  run 60 2 "$tasks" $t; expect "$t" 0 $?
done
# Without glibc's per-thread cache, mallinfo2 counts every chunk freed (the test's leak check).
GLIBC_TUNABLES=glibc.malloc.tcache_count=0 run 60 2 -x GLIBC_TUNABLES "$tasks" future_drop
expect "future_drop" 0 $?
# Posted before its send failed, the receive would be waited for: a hang (before the time-out).
run 20 2 "$tasks" sendrecv_error; expect "sendrecv_error" 0 $?
run 60 2 "$builddir/tests/mpi/cxx"; expect "c++ (mrmpi.hpp)" 0 $?
# The other interposed calls (p2p.c, vcoll.c): each deadlocks unless it suspends.
for t in waitsome mprobe; do
  run 60 2 "$builddir/tests/mpi/p2p" $t; expect "$t" 0 $?
done
for np in 2 3; do
  run 60 $np "$builddir/tests/mpi/p2p" replace; expect "sendrecv_replace on $np ranks" 0 $?
  run 60 $np "$builddir/tests/mpi/vcoll"; expect "v collectives and scans on $np ranks" 0 $?
done
# Below MPI_THREAD_MULTIPLE, the first call that would suspend stops the process with mrmpi's
# message; under MPI_THREAD_FUNNELED, the waits before it that complete at their first test
# return (the program prints a line once they have).
for level in serialized funneled; do
  LEVEL=$(echo "$level" | tr a-z A-Z)
  out=$(run 60 2 "$tasks" $level 2>"$builddir/tests/mpi/$level.err"); rc=$?
  err=$(cat "$builddir/tests/mpi/$level.err"); rm -f "$builddir/tests/mpi/$level.err"
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
     echo "$err" | grep -q '^mrmpi: MPI_Recv in an mrengine context needs MPI_THREAD_MULTIPLE' &&
     echo "$err" | grep -q "but MPI provides MPI_THREAD_$LEVEL" &&
     { [ $level = serialized ] || echo "$out" | grep -q '^funneled: waits that need not'; }; then
    echo "PASS: $level (a clear error, only where a call would suspend)"
  else
    echo "FAIL: $level: status $rc, stdout: $out, stderr: $err"; status=1
  fi
done
# OpenMP tasks with depend on 1 thread per rank: libmrgomp completes, libgomp deadlocks. A team
# of one defers its tasks because libmrmpi is in the process (doc/mpi.md): nothing to set.
if [ -x "$omp" ]; then
  OMP_NUM_THREADS=1 run 60 2 -x OMP_NUM_THREADS \
    -x LD_LIBRARY_PATH="$builddir/gomp/.libs:$LD_LIBRARY_PATH" "$omp"
  expect "openmp tasks on libmrgomp" 0 $?
  OMP_NUM_THREADS=1 run 60 2 -x OMP_NUM_THREADS \
    -x LD_LIBRARY_PATH="$builddir/gomp/.libs:$LD_LIBRARY_PATH" \
    -x LD_PRELOAD="$builddir/.libs/libmrmpi.so" "$builddir/tests/mpi/omp_preload"
  expect "openmp tasks, libmrmpi by LD_PRELOAD" 0 $?
  OMP_NUM_THREADS=1 run 10 2 -x OMP_NUM_THREADS "$omp" >/dev/null 2>&1
  expect "openmp tasks on libgomp (deadlocks)" 124 $?
fi
exit $status
