## mpi/local.mk: libmrmpi, task-aware MPI (doc/mpi.md), and its tests. Included from Makefile.am.

# Built only when configure found MPI (--without-mpi turns it off). libmrmpi calls the engine
# only through the public API (MR_poll_wait), and MPI through its profiling interface (PMPI_*).
if MR_HAVE_MPI
lib_LTLIBRARIES += libmrmpi.la
include_HEADERS += include/mrmpi.h include/mrmpi.hpp
# Its man pages, from mrmpi.h's comments, with the others (Makefile.am, "documentation").
man_headers += $(top_srcdir)/include/mrmpi.h
endif
libmrmpi_la_SOURCES = mpi/waits.hpp mpi/poll.cpp mpi/waits.cpp mpi/interpose.cpp
# The C API only: no MPI C++ bindings (deprecated, and a warning in every file).
libmrmpi_la_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS) -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX
libmrmpi_la_CXXFLAGS = $(AM_CXXFLAGS) -fvisibility=hidden
libmrmpi_la_LIBADD = libmrengine.la $(MPI_LIBS)
libmrmpi_la_LDFLAGS = -version-info 0:0:0 -no-undefined $(PTHREAD_FLAGS)

# The tests run several ranks (mpirun, this machine only) and take longer than make check
# should: `make check-mpi` runs them (.ci/run does, as a timed stage). tests/mpi/check-mpi.sh
# says which; every run has a time-out.
mpi_test_progs = tests/mpi/tasks tests/mpi/p2p tests/mpi/vcoll tests/mpi/cxx tests/mpi/omp_tasks \
	tests/mpi/omp_preload
EXTRA_PROGRAMS += $(mpi_test_progs)
CLEANFILES += $(mpi_test_progs)
tests_mpi_tasks_SOURCES = tests/mpi/tasks.c tests/mpi/mpitest.h
tests_mpi_tasks_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
tests_mpi_tasks_CFLAGS = $(MR_CFLAGS)
tests_mpi_tasks_LDADD = libmrmpi.la libmrengine.la $(MPI_LIBS)
tests_mpi_p2p_SOURCES = tests/mpi/p2p.c tests/mpi/mpitest.h
tests_mpi_p2p_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
tests_mpi_p2p_CFLAGS = $(MR_CFLAGS)
tests_mpi_p2p_LDADD = libmrmpi.la libmrengine.la $(MPI_LIBS)
tests_mpi_vcoll_SOURCES = tests/mpi/vcoll.c tests/mpi/mpitest.h
tests_mpi_vcoll_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
tests_mpi_vcoll_CFLAGS = $(MR_CFLAGS)
tests_mpi_vcoll_LDADD = libmrmpi.la libmrengine.la $(MPI_LIBS)
tests_mpi_cxx_SOURCES = tests/mpi/cxx.cpp
tests_mpi_cxx_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS) -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX
tests_mpi_cxx_LDADD = libmrmpi.la libmrengine.la $(MPI_LIBS)
# A gcc -fopenmp program that knows nothing of mrengine: run on libmrgomp, its blocking MPI
# calls go through libmrmpi because it is linked before the MPI library.
tests_mpi_omp_tasks_SOURCES = tests/mpi/omp_tasks.c
tests_mpi_omp_tasks_CPPFLAGS = $(MPI_CFLAGS)
tests_mpi_omp_tasks_CFLAGS = $(MR_CFLAGS) $(OPENMP_CFLAGS)
tests_mpi_omp_tasks_LDFLAGS = $(OPENMP_CFLAGS)
tests_mpi_omp_tasks_LDADD = libmrmpi.la $(MPI_LIBS)
# The same program linked with nothing of mrengine: libmrmpi comes in by LD_PRELOAD.
tests_mpi_omp_preload_SOURCES = tests/mpi/omp_tasks.c
tests_mpi_omp_preload_CPPFLAGS = $(MPI_CFLAGS)
tests_mpi_omp_preload_CFLAGS = $(MR_CFLAGS) $(OPENMP_CFLAGS)
tests_mpi_omp_preload_LDFLAGS = $(OPENMP_CFLAGS)
tests_mpi_omp_preload_LDADD = $(MPI_LIBS)
EXTRA_DIST += tests/mpi/check-mpi.sh
if MR_HAVE_MPI
check-mpi: $(mpi_test_progs) gomp/libgomp.la
	MPIRUN='$(MPIRUN)' $(SHELL) $(srcdir)/tests/mpi/check-mpi.sh
else
check-mpi:
	@echo "check-mpi: SKIP: configure found no MPI (or --without-mpi)"
endif
.PHONY: check-mpi

# The benchmark (doc/mpi.md, "The benchmark"): `make bench-mpi` builds bench/mpi_heat (one gcc
# -fopenmp program for the three versions: the runtime is chosen at run time) and runs
# bench/mpi_heat.sh (MPI_HEAT_RUNS runs of each version on 2 and 4 ranks, interleaved;
# MPI_HEAT_FLAGS for the program, e.g. --nx 4096 --rows 1024 --iters 200). Its table also goes
# to $(BENCH_OUT)/mpi-heat.csv, which bench/plot.sh draws as mpi-heat.svg (with gnuplot).
EXTRA_PROGRAMS += bench/mpi_heat
CLEANFILES += bench/mpi_heat
bench_mpi_heat_SOURCES = bench/mpi_heat.c
bench_mpi_heat_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
bench_mpi_heat_CFLAGS = $(MR_CFLAGS) -O2 $(OPENMP_CFLAGS)
bench_mpi_heat_LDFLAGS = $(OPENMP_CFLAGS)
bench_mpi_heat_LDADD = libmrmpi.la libmrengine.la $(MPI_LIBS) -lm
EXTRA_DIST += bench/mpi_heat.sh
MPI_HEAT_RUNS = 5
MPI_HEAT_FLAGS =
MPI_HEAT_THREADS = 1
if MR_HAVE_MPI
bench-mpi: bench/mpi_heat$(EXEEXT) gomp/libgomp.la
	$(MKDIR_P) $(BENCH_OUT)
	MPIRUN='$(MPIRUN)' MPI_HEAT_THREADS='$(MPI_HEAT_THREADS)' \
	  MPI_HEAT_CSV='$(BENCH_OUT)/mpi-heat.csv' \
	  $(SHELL) $(srcdir)/bench/mpi_heat.sh $(MPI_HEAT_RUNS) $(MPI_HEAT_FLAGS)
	if command -v gnuplot >/dev/null; then sh $(srcdir)/bench/plot.sh $(BENCH_OUT); fi
	@echo "bench-mpi: table above; CSV and SVG in $(BENCH_OUT)"
else
bench-mpi:
	@echo "bench-mpi: configure found no MPI (or --without-mpi)"; exit 1
endif
.PHONY: bench-mpi
