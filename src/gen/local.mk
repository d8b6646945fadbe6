# ocal — your own kernels: raw programs and kernels, and the elementwise / reduction / scan
# generators. Included by the top-level Makefile.am (one non-recursive make); appends to the
# variables defined there.

ocalinclude_HEADERS += include/ocal/kernel.h
src_libocal_core_la_SOURCES += \
	src/gen/gen_internal.h \
	src/gen/parse.c \
	src/gen/kernel.c \
	src/gen/gen.c

# Tests on PoCL (or OCAL_DEVICE): raw kernels, and the generators against host references.
OCAL_TESTS += tests/check_kernel tests/check_gen
tests_check_kernel_SOURCES = tests/check_kernel.c $(FIXTURE_FILES)
tests_check_kernel_LDADD = $(FIXTURE_LDADD) -lm
tests_check_kernel_CFLAGS = $(FIXTURE_CFLAGS)
tests_check_gen_SOURCES = tests/check_gen.c $(FIXTURE_FILES)
tests_check_gen_LDADD = $(FIXTURE_LDADD) -lm
tests_check_gen_CFLAGS = $(FIXTURE_CFLAGS)

# Examples: the PyCUDA-style program and a generated reduction; run at small sizes in
# `make check`, with the benchmark's quick run.
noinst_PROGRAMS += examples/raw_kernel examples/gen_reduction bench/gen
examples_raw_kernel_LDADD = src/libocal.la
examples_gen_reduction_LDADD = src/libocal.la -lm
bench_gen_LDADD = src/libocal.la $(OPENCL_LIBS) -lm
TESTS += tests/example_kernels.sh
EXTRA_DIST += tests/example_kernels.sh
