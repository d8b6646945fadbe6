# ocal — raw programs and kernels: the user's OpenCL C built through the context's caches
# (include/ocal/kernel.h, which also declares the generators of src/gen). Included by the
# top-level Makefile.am (one non-recursive make); appends to the variables defined there.

ocalinclude_HEADERS += include/ocal/kernel.h
src_libocal_core_la_SOURCES += \
	src/kernel/kernel_internal.h \
	src/kernel/signature.c \
	src/kernel/kernel.c

# Tests on PoCL (or OCAL_DEVICE): raw programs and kernels.
OCAL_TESTS += tests/check_kernel
tests_check_kernel_SOURCES = tests/check_kernel.c $(FIXTURE_FILES)
tests_check_kernel_LDADD = $(FIXTURE_LDADD) -lm
tests_check_kernel_CFLAGS = $(FIXTURE_CFLAGS)
