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
