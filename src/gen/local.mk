# ocal — kernels generated from the user's expressions: elementwise, reduction and scan
# (raw programs and kernels are src/kernel/local.mk's). Included by the top-level
# Makefile.am (one non-recursive make); appends to the variables defined there.

src_libocal_core_la_SOURCES += \
	src/gen/gen_internal.h \
	src/gen/parse.c \
	src/gen/source.c \
	src/gen/rewrite.c \
	src/gen/args.c \
	src/gen/gen.c

# Tests on PoCL (or OCAL_DEVICE): the generators against host references.
OCAL_TESTS += tests/check_gen
tests_check_gen_SOURCES = tests/check_gen.c $(FIXTURE_FILES)
tests_check_gen_LDADD = $(FIXTURE_LDADD) -lm
tests_check_gen_CFLAGS = $(FIXTURE_CFLAGS)

# The benchmark (generated against built-in kernels); tests/example_kernels.sh runs its
# quick form with the two run-time-kernel examples (examples/local.mk).
noinst_PROGRAMS += bench/gen
bench_gen_LDADD = src/libocal.la $(OPENCL_LIBS) -lm
TESTS += tests/example_kernels.sh
EXTRA_DIST += tests/example_kernels.sh

# What the first reduction, scan and generated reduction of a process cost (kernel builds
# included), and GEMM's and FFT's; run it with an empty disk cache to see cold compiles. It reads src/core's compile tally, so it links libocal_core.
noinst_PROGRAMS += bench/first_calls
bench_first_calls_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/core
bench_first_calls_LDADD = src/libocal_core.la $(OPENCL_LIBS) -lm
EXTRA_DIST += docs/scan.md
