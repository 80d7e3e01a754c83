## gomp/local.mk: libmrgomp, an OpenMP runtime with libgomp's ABI on mrengine (doc/gomp.md),
## and its tests. Included from Makefile.am.

# Installed as $(libdir)/mrengine/libgomp.so.1: a gcc -fopenmp program runs on mrengine with
# LD_LIBRARY_PATH=$(libdir)/mrengine.
gompdir = $(libdir)/mrengine
gomp_LTLIBRARIES = gomp/libgomp.la
gomp_libgomp_la_SOURCES = \
	gomp/gomp.hpp \
	gomp/team.cpp \
	gomp/task.cpp \
	gomp/sync.cpp \
	gomp/loop.cpp \
	gomp/api.cpp \
	gomp/target.cpp \
	gomp/alloc.cpp \
	gomp/unsupported.cpp
# The public headers, and the engine's header-only helpers by their path from the top
# (engine/cpu_relax.hpp): libmrgomp calls the engine only through the public API.
gomp_libgomp_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
gomp_libgomp_la_CXXFLAGS = $(AM_CXXFLAGS) -fvisibility=hidden
gomp_libgomp_la_LIBADD = libmrengine.la
gomp_libgomp_la_LDFLAGS = -version-info 1:0:0 -no-undefined \
	-Wl,--version-script=$(srcdir)/gomp/libgomp.map $(PTHREAD_FLAGS)
EXTRA_gomp_libgomp_la_DEPENDENCIES = gomp/libgomp.map

EXTRA_DIST += gomp/libgomp.map tests/gomp/run-suite.sh tests/gomp/core.list tests/gomp/known.list \
	tests/gomp/check-suite.sh tests/gomp/check-design.sh

# The design tests: gcc -fopenmp programs run against this library (check-design.sh sets the
# library path), and the core tier of gcc's own libgomp test suite (check-suite.sh).
if MR_HAVE_OPENMP_C
check_PROGRAMS += tests/gomp/design
tests_gomp_design_SOURCES = tests/gomp/design.c
tests_gomp_design_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_gomp_design_LDFLAGS = $(OPENMP_CFLAGS)
tests_gomp_design_LDADD = -ldl
TESTS += tests/gomp/check-design.sh tests/gomp/check-suite.sh
endif

# run-suite.sh extracts gcc's test suite into tests/gomp/suite and compiles and runs it there.
clean-local: clean-gomp-suite
clean-gomp-suite:
	rm -rf tests/gomp/suite
.PHONY: clean-gomp-suite
