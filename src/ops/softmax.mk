# ocal — softmax, log-softmax and softmax cross-entropy (include/ocal/nn.h), included by the
# top-level Makefile.am (one non-recursive make). Appends to the variables defined there.

ocalinclude_HEADERS += include/ocal/nn.h
src_libocal_core_la_SOURCES += src/ops/softmax.c
OCAL_KERNEL_FILES += cl/softmax.cl

# Tests: every op against a double-precision host reference on PoCL (or OCAL_DEVICE).
OCAL_TESTS += tests/check_softmax
tests_check_softmax_SOURCES = tests/check_softmax.c $(FIXTURE_FILES)
tests_check_softmax_LDADD = $(FIXTURE_LDADD) -lm
tests_check_softmax_CFLAGS = $(FIXTURE_CFLAGS)

EXTRA_DIST += src/ops/softmax.mk
