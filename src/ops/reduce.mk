# ocal — reductions and scans, included by the top-level Makefile.am (one non-recursive
# make). Append to the variables defined there: ocalinclude_HEADERS,
# src_libocal_core_la_SOURCES, OCAL_KERNEL_FILES, OCAL_TESTS, noinst_PROGRAMS, EXTRA_DIST.

ocalinclude_HEADERS += include/ocal/reduce.h
src_libocal_core_la_SOURCES += \
	src/ops/reduce_internal.h \
	src/ops/engine.h \
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
