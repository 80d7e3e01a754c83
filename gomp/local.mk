## gomp/local.mk: libmrgomp, an OpenMP runtime with libgomp's ABI on mrengine (doc/gomp.md),
## and its tests. Included from Makefile.am.

# Installed as $(libdir)/mrengine/libgomp.so.1: a gcc -fopenmp program runs on mrengine with
# LD_LIBRARY_PATH=$(libdir)/mrengine.
gompdir = $(libdir)/mrengine
gomp_LTLIBRARIES = gomp/libgomp.la
# In the order of doc/gomp.md's map of the code, from the lowest floor.
gomp_libgomp_la_SOURCES = \
	gomp/export.hpp \
	gomp/fatal.hpp \
	gomp/fatal.cpp \
	gomp/backoff.hpp \
	gomp/backoff.cpp \
	gomp/iter.hpp \
	gomp/env.hpp \
	gomp/env.cpp \
	gomp/depend.hpp \
	gomp/depend.cpp \
	gomp/records.hpp \
	gomp/wait.hpp \
	gomp/wait.cpp \
	gomp/runtime.hpp \
	gomp/runtime.cpp \
	gomp/places.hpp \
	gomp/places.cpp \
	gomp/unsupported.cpp \
	gomp/omp.hpp \
	gomp/error.cpp \
	gomp/fortran.cpp \
	gomp/current.hpp \
	gomp/current.cpp \
	gomp/ordered.hpp \
	gomp/ordered.cpp \
	gomp/task.hpp \
	gomp/task.cpp \
	gomp/lock.hpp \
	gomp/lock.cpp \
	gomp/alloc.cpp \
	gomp/teams.cpp \
	gomp/api.cpp \
	gomp/affinity.hpp \
	gomp/affinity.cpp \
	gomp/display_env.cpp \
	gomp/workshare.hpp \
	gomp/workshare.cpp \
	gomp/barrier.hpp \
	gomp/barrier.cpp \
	gomp/critical.cpp \
	gomp/target.cpp \
	gomp/reduction.hpp \
	gomp/reduction.cpp \
	gomp/team.hpp \
	gomp/team.cpp \
	gomp/single.cpp \
	gomp/pool.hpp \
	gomp/pool.cpp \
	gomp/resident.hpp \
	gomp/resident.cpp \
	gomp/scope.cpp \
	gomp/taskloop.cpp \
	gomp/parallel.hpp \
	gomp/parallel.cpp \
	gomp/loop.hpp \
	gomp/loop.cpp \
	gomp/doacross.cpp \
	gomp/sections.cpp \
	gomp/cancel.cpp \
	gomp/fork.cpp
# The public headers, and the engine's internal headers by their path from the top:
# engine/cpu_relax.hpp (header-only) and engine/context_local.hpp (the one internal function
# libmrgomp calls, exported from libmrengine for it: current.hpp); otherwise libmrgomp calls the
# engine only through the public API.
gomp_libgomp_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
gomp_libgomp_la_CXXFLAGS = $(AM_CXXFLAGS) -fvisibility=hidden $(HWLOC_CFLAGS)
gomp_libgomp_la_LIBADD = libmrengine.la $(HWLOC_LIBS)
gomp_libgomp_la_LDFLAGS = -version-info 1:0:0 -no-undefined \
	-Wl,--version-script=$(srcdir)/gomp/libgomp.map $(PTHREAD_FLAGS)
EXTRA_gomp_libgomp_la_DEPENDENCIES = gomp/libgomp.map

EXTRA_DIST += gomp/libgomp.map tests/gomp/run-suite.sh tests/gomp/core.list tests/gomp/known.list \
	tests/gomp/check-suite.sh tests/gomp/check-design.sh tests/gomp/check-layers.sh \
	tests/gomp/check-affinity.sh tests/gomp/check-icv.sh tests/gomp/check-doacross.sh \
	tests/gomp/each-libgomp.sh

# doc/gomp.md's map of the code against gomp/'s #include lines (it needs no OpenMP compiler).
TESTS += tests/gomp/check-layers.sh
EXTRA_DIST += doc/gomp.md

# The design tests: gcc -fopenmp programs run against this library (check-design.sh sets the
# library path), and the core tier of gcc's own libgomp test suite (check-suite.sh).
if MR_HAVE_OPENMP_C
check_PROGRAMS += tests/gomp/design
tests_gomp_design_SOURCES = tests/gomp/design.c tests/gomp/design_tasks.c tests/gomp/design_alone.c \
	tests/gomp/design_complete.c tests/gomp/design_spawned.c tests/gomp/design_foreign.c \
	tests/gomp/design_over.c tests/gomp/design_lazy.c tests/gomp/design.h tests/gomp/by_name.h
tests_gomp_design_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_gomp_design_LDFLAGS = $(OPENMP_CFLAGS)
tests_gomp_design_LDADD = -ldl
check_PROGRAMS += tests/gomp/design_fork
tests_gomp_design_fork_SOURCES = tests/gomp/design_fork.c tests/gomp/design.h tests/gomp/by_name.h
tests_gomp_design_fork_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_gomp_design_fork_LDFLAGS = $(OPENMP_CFLAGS)
tests_gomp_design_fork_LDADD = -ldl
TESTS += tests/gomp/check-design.sh tests/gomp/check-suite.sh
# Places and binding against gcc's libgomp (check-affinity.sh).
check_PROGRAMS += tests/gomp/affinity
tests_gomp_affinity_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_gomp_affinity_LDFLAGS = $(OPENMP_CFLAGS)
TESTS += tests/gomp/check-affinity.sh
# ICVs from the environment, on this library and gcc's (check-icv.sh).
check_PROGRAMS += tests/gomp/icv
tests_gomp_icv_SOURCES = tests/gomp/icv.c tests/gomp/by_name.h
tests_gomp_icv_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_gomp_icv_LDFLAGS = $(OPENMP_CFLAGS)
TESTS += tests/gomp/check-icv.sh
# Doacross loops under every schedule and beyond 2^28 iterations (check-doacross.sh).
check_PROGRAMS += tests/gomp/doacross
tests_gomp_doacross_SOURCES = tests/gomp/doacross.c tests/gomp/by_name.h
tests_gomp_doacross_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_gomp_doacross_LDFLAGS = $(OPENMP_CFLAGS)
TESTS += tests/gomp/check-doacross.sh
endif

# gfortran's programs (the Fortran forms, gomp/fortran.cpp: the core tier of gcc's
# libgomp.fortran tests) and programs nobody here wrote (ImageMagick, OpenBLAS's OpenMP build),
# compared with libgomp. Each skips (77) what is not installed; they compile at test time.
TESTS += tests/gomp/check-suite-fortran.sh tests/gomp/check-apps.sh
EXTRA_DIST += tests/gomp/check-suite-fortran.sh tests/gomp/core-fortran.list \
	tests/gomp/check-apps.sh tests/gomp/apps_blas.c

# run-suite.sh extracts gcc's test suite into tests/gomp/suite and compiles and runs it there;
# check-apps.sh works in tests/gomp/apps.
clean-local: clean-gomp-suite
clean-gomp-suite:
	rm -rf tests/gomp/suite tests/gomp/apps
.PHONY: clean-gomp-suite
