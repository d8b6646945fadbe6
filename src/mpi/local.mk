# ocal — libocal-mpi, the optional library of collectives over MPI (include/ocal/mpi.h),
# built when configure finds MPI. libocal itself never links MPI. Included by the top-level
# Makefile.am; appends to the variables defined there.

EXTRA_DIST += src/mpi/local.mk cl/mpi_accumulate.cl ocal-mpi.pc.in tests/mpi.sh \
	bench/mpi_allreduce_torch.py docs/mpi.md

if HAVE_MPI
lib_LTLIBRARIES += src/libocal-mpi.la
ocalinclude_HEADERS += include/ocal/mpi.h
pkgconfig_DATA += ocal-mpi.pc
src_libocal_mpi_la_SOURCES = src/mpi/mpi_internal.h src/mpi/mpi.c src/mpi/collectives.c \
	src/mpi/shared.c
nodist_src_libocal_mpi_la_SOURCES = src/mpi/mpi_cl.c
src_libocal_mpi_la_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
src_libocal_mpi_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS)
src_libocal_mpi_la_LIBADD = src/libocal.la $(MPI_LIBS) $(OPENCL_LIBS) $(PTHREAD_LIBS)
src_libocal_mpi_la_LDFLAGS = -version-info $(OCAL_LT_VERSION) -no-undefined

# The accumulate kernel, embedded as one string (libocal's own table is internal to it).
src/mpi/mpi_cl.c: $(top_srcdir)/cl/mpi_accumulate.cl
	$(AM_V_GEN)$(MKDIR_P) src/mpi && { \
	  echo '/* Generated from cl/mpi_accumulate.cl by src/mpi/local.mk: do not edit. */'; \
	  echo 'extern const char ocal_mpi__accumulate_source[];'; \
	  echo 'const char ocal_mpi__accumulate_source[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $(top_srcdir)/cl/mpi_accumulate.cl; \
	  echo ';'; } > $@.tmp && mv $@.tmp $@
BUILT_SOURCES += src/mpi/mpi_cl.c
CLEANFILES += src/mpi/mpi_cl.c

MPI_PROG_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
MPI_PROG_LDADD = src/libocal-mpi.la src/libocal.la $(MPI_LIBS) $(OPENCL_LIBS) -lm

# Examples: the smallest (a distributed sum), data-parallel MLP training and distributed CG.
noinst_PROGRAMS += examples/mpi_sum examples/mlp_train_mpi
examples_mpi_sum_CFLAGS = $(MPI_PROG_CFLAGS)
examples_mpi_sum_LDADD = $(MPI_PROG_LDADD)
examples_mlp_train_mpi_SOURCES = examples/mlp_train_mpi.c examples/mlp_common.c examples/mlp_common.h
examples_mlp_train_mpi_CFLAGS = $(MPI_PROG_CFLAGS)
examples_mlp_train_mpi_LDADD = $(MPI_PROG_LDADD)
# Distributed CG on the 2-D Poisson matrix, the halo exchange overlapped with the SpMV.
noinst_PROGRAMS += examples/poisson_cg_mpi
examples_poisson_cg_mpi_CFLAGS = $(MPI_PROG_CFLAGS)
examples_poisson_cg_mpi_LDADD = $(MPI_PROG_LDADD)

# The benchmark: ours against download + MPI_Allreduce + upload and the pinned copy speed.
noinst_PROGRAMS += bench/mpi_allreduce
bench_mpi_allreduce_CFLAGS = $(MPI_PROG_CFLAGS)
bench_mpi_allreduce_LDADD = $(MPI_PROG_LDADD)

# Tests: a program run by tests/mpi.sh under mpirun with 1, 2 and 3 ranks.
check_PROGRAMS += tests/mpi_collectives
tests_mpi_collectives_CFLAGS = $(MPI_PROG_CFLAGS)
tests_mpi_collectives_LDADD = $(MPI_PROG_LDADD)
TESTS += tests/mpi.sh
AM_TESTS_ENVIRONMENT += MPIRUN='$(MPIRUN)'; export MPIRUN;
# tests/snippets.sh compiles docs/mpi.md's C blocks with MPI's flags.
AM_TESTS_ENVIRONMENT += OCAL_SNIPPET_MPI_CFLAGS='$(MPI_CFLAGS)'; export OCAL_SNIPPET_MPI_CFLAGS;
endif
