## bench/omp/local.mk: OpenMP task kernels in plain C, built once with gcc -O2 -fopenmp and run
## unchanged on gcc's libgomp, LLVM's libomp and libmrgomp (bench/omp/run.sh switches the
## runtime with LD_LIBRARY_PATH). Included from Makefile.am.
##
##   make bench-omp    the kernels, then run.sh: the table on stdout, the CSV files in
##                     bench/omp (OMP_BENCH_RUNS runs per figure, OMP_BENCH_FLAGS for run.sh)
##
## The kernels link nothing of mrengine: which runtime they use is decided at run time, by the
## libgomp.so.1 the dynamic linker finds. So they are built with gcc's -fopenmp (libgomp's ABI)
## and not with $(OPENMP_CFLAGS), which for another compiler could mean another ABI.

omp_bench_kernels = bench/omp/fib bench/omp/nqueens bench/omp/uts bench/omp/mergesort \
	bench/omp/gs bench/omp/fanout bench/omp/loop bench/omp/barrier bench/omp/knapsack \
	bench/omp/regions bench/omp/sparselu bench/omp/align
omp_bench_cflags = $(MR_CFLAGS) -O2 -fopenmp

# make check runs run.sh --check (tiny inputs, every runtime found, 1 and 2 threads) when the
# peers were found at configure time (nettle, for UTS); it exits 77, a skip, when libmrgomp is
# not built. Not in the sanitizer builds: the OpenMP runtimes are not instrumented.
if MR_HAVE_PEERS
if MR_SANITIZER
EXTRA_PROGRAMS += $(omp_bench_kernels)
else
check_PROGRAMS += $(omp_bench_kernels)
TESTS += bench/omp/check.sh
endif
else
EXTRA_PROGRAMS += $(omp_bench_kernels)
endif
EXTRA_DIST += bench/omp/run.sh bench/omp/check.sh bench/omp/ompbench.h
CLEANFILES += bench/omp/results.csv bench/omp/results-summary.csv \
	bench/omp/check.csv bench/omp/check-summary.csv
clean-local: clean-omp-bench
clean-omp-bench:
	rm -rf bench/omp/libomp-as-gomp

# Each kernel is the one file bench/omp/NAME.c (automake's default source), including
# ompbench.h, which EXTRA_DIST ships. The flags cannot be shared through AM_CFLAGS, which is
# the ABI tests' (Check's flags), so each kernel names them; and each names its libraries, since
# the default LDADD would link libmrengine.
omp_bench_ldflags = -fopenmp
bench_omp_fib_CFLAGS = $(omp_bench_cflags)
bench_omp_fib_LDFLAGS = $(omp_bench_ldflags)
bench_omp_fib_LDADD =
bench_omp_nqueens_CFLAGS = $(omp_bench_cflags)
bench_omp_nqueens_LDFLAGS = $(omp_bench_ldflags)
bench_omp_nqueens_LDADD =
bench_omp_uts_CFLAGS = $(omp_bench_cflags) $(NETTLE_CFLAGS)
bench_omp_uts_LDFLAGS = $(omp_bench_ldflags)
bench_omp_uts_LDADD = $(NETTLE_LIBS) -lm
bench_omp_mergesort_CFLAGS = $(omp_bench_cflags)
bench_omp_mergesort_LDFLAGS = $(omp_bench_ldflags)
bench_omp_mergesort_LDADD =
bench_omp_gs_CFLAGS = $(omp_bench_cflags)
bench_omp_gs_LDFLAGS = $(omp_bench_ldflags)
bench_omp_gs_LDADD =
bench_omp_fanout_CFLAGS = $(omp_bench_cflags)
bench_omp_fanout_LDFLAGS = $(omp_bench_ldflags)
bench_omp_fanout_LDADD =
bench_omp_loop_CFLAGS = $(omp_bench_cflags)
bench_omp_loop_LDFLAGS = $(omp_bench_ldflags)
bench_omp_loop_LDADD =
bench_omp_barrier_CFLAGS = $(omp_bench_cflags)
bench_omp_barrier_LDFLAGS = $(omp_bench_ldflags)
bench_omp_barrier_LDADD =
bench_omp_knapsack_CFLAGS = $(omp_bench_cflags)
bench_omp_knapsack_LDFLAGS = $(omp_bench_ldflags)
bench_omp_knapsack_LDADD =
bench_omp_regions_CFLAGS = $(omp_bench_cflags)
bench_omp_regions_LDFLAGS = $(omp_bench_ldflags)
bench_omp_regions_LDADD =
bench_omp_sparselu_CFLAGS = $(omp_bench_cflags)
bench_omp_sparselu_LDFLAGS = $(omp_bench_ldflags)
bench_omp_sparselu_LDADD = -lm
bench_omp_align_CFLAGS = $(omp_bench_cflags)
bench_omp_align_LDFLAGS = $(omp_bench_ldflags)
bench_omp_align_LDADD =

OMP_BENCH_RUNS = 5
OMP_BENCH_FLAGS =
.PHONY: bench-omp clean-omp-bench
bench-omp: $(omp_bench_kernels)
	$(MKDIR_P) $(BENCH_OUT)
	$(SHELL) $(srcdir)/bench/omp/run.sh --runs $(OMP_BENCH_RUNS) --csv $(BENCH_OUT)/omp.csv $(OMP_BENCH_FLAGS)
	if command -v gnuplot >/dev/null; then sh $(srcdir)/bench/plot.sh $(BENCH_OUT); fi
	@echo "bench-omp: table above; CSV and SVG in $(BENCH_OUT)"
