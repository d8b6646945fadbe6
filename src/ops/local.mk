# ocal — the ops part of the build, included by the top-level Makefile.am (one non-recursive
# make). Append to the variables defined there: ocalinclude_HEADERS,
# src_libocal_core_la_SOURCES, src_libocal_core_la_LIBADD, OCAL_KERNEL_FILES, OCAL_TESTS,
# noinst_PROGRAMS, EXTRA_DIST.

ocalinclude_HEADERS += include/ocal/ops.h
src_libocal_core_la_SOURCES += \
	src/ops/ops_common.h \
	src/ops/ops_common.c \
	src/ops/elementwise.c \
	src/ops/random.c
OCAL_KERNEL_FILES += cl/elementwise.cl cl/random.cl

OCAL_TESTS += tests/check_elementwise
tests_check_elementwise_SOURCES = tests/check_elementwise.c $(FIXTURE_FILES)
tests_check_elementwise_LDADD = $(FIXTURE_LDADD)
tests_check_elementwise_CFLAGS = $(FIXTURE_CFLAGS)

# Reductions and scans.
ocalinclude_HEADERS += include/ocal/reduce.h
src_libocal_core_la_SOURCES += \
	src/ops/reduce_internal.h \
	src/ops/scan_engine.h \
	src/ops/reduce_engine.h \
	src/ops/reduce_common.c \
	src/ops/reduce.c \
	src/ops/scan.c
OCAL_KERNEL_FILES += cl/reduce.cl cl/scan.cl

# Tests: every reduction and scan against a host reference on PoCL (or OCAL_DEVICE).
OCAL_TESTS += tests/check_reduce tests/check_scan
tests_check_reduce_SOURCES = tests/check_reduce.c $(FIXTURE_FILES)
tests_check_reduce_LDADD = $(FIXTURE_LDADD) -lm
tests_check_reduce_CFLAGS = $(FIXTURE_CFLAGS)
tests_check_scan_SOURCES = tests/check_scan.c $(FIXTURE_FILES)
tests_check_scan_LDADD = $(FIXTURE_LDADD) -lm
tests_check_scan_CFLAGS = $(FIXTURE_CFLAGS)

# Softmax, log-softmax and softmax cross-entropy (include/ocal/nn.h).
ocalinclude_HEADERS += include/ocal/nn.h
src_libocal_core_la_SOURCES += src/ops/softmax.c
OCAL_KERNEL_FILES += cl/softmax.cl

# Tests: every op against a double-precision host reference on PoCL (or OCAL_DEVICE).
OCAL_TESTS += tests/check_softmax
tests_check_softmax_SOURCES = tests/check_softmax.c $(FIXTURE_FILES)
tests_check_softmax_LDADD = $(FIXTURE_LDADD) -lm
tests_check_softmax_CFLAGS = $(FIXTURE_CFLAGS)

# f16 and bf16 buffers through every operation that takes them.
OCAL_TESTS += tests/check_half
tests_check_half_SOURCES = tests/check_half.c $(FIXTURE_FILES)
tests_check_half_LDADD = $(FIXTURE_LDADD) -lm
tests_check_half_CFLAGS = $(FIXTURE_CFLAGS)
