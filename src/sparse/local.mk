# ocal — the sparse part of the build (CSR matrices, SpMV/SpMM, CG, LOBPCG), included by the
# top-level Makefile.am. Appends to the variables defined there.

ocalinclude_HEADERS += include/ocal/sparse.h
src_libocal_core_la_SOURCES += src/sparse/names.c
src_libocal_core_la_SOURCES += \
	src/sparse/sparse_internal.h \
	src/sparse/csr.c \
	src/sparse/mtx.c \
	src/sparse/spmv.c \
	src/sparse/operator.c \
	src/sparse/cg.c \
	src/sparse/lobpcg.c
OCAL_KERNEL_FILES += cl/sparse_spmv.cl cl/sparse_solve.cl
src_libocal_core_la_CPPFLAGS += $(LAPACKE_CFLAGS)
src_libocal_core_la_LIBADD += $(LAPACKE_LIBS)

# White-box: the Matrix Market parser on memory buffers through sparse_internal.h.
OCAL_TESTS += tests/check_sparse
tests_check_sparse_SOURCES = tests/check_sparse.c $(FIXTURE_FILES)
tests_check_sparse_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/core -I$(top_srcdir)/src/sparse
tests_check_sparse_LDADD = src/libocal_core.la $(CHECK_LIBS) $(OPENCL_LIBS) -lm
tests_check_sparse_CFLAGS = $(FIXTURE_CFLAGS)

# The sparse examples: tests/example_sparse.sh runs them at small sizes.
noinst_PROGRAMS += examples/poisson_cg examples/laplacian_eigs
examples_poisson_cg_LDADD = src/libocal.la -lm
examples_laplacian_eigs_LDADD = src/libocal.la -lm
TESTS += tests/example_sparse.sh

EXTRA_DIST += src/sparse/local.mk tests/example_sparse.sh
