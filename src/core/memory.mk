# ocal — the memory part of the build (caching pool, pinned memory, transfers), included by the
# top-level Makefile.am (one non-recursive make). Appends to the variables defined there.

ocalinclude_HEADERS += include/ocal/memory.h
src_libocal_core_la_SOURCES += \
	src/core/memory_internal.h \
	src/core/pool.c \
	src/core/transfer.c

OCAL_TESTS += tests/check_memory
tests_check_memory_SOURCES = tests/check_memory.c $(FIXTURE_FILES)
tests_check_memory_LDADD = $(FIXTURE_LDADD)
tests_check_memory_CFLAGS = $(FIXTURE_CFLAGS)

# Allocation with and without the pool, transfer bandwidth (pageable, staged, pinned) and a
# transfer/compute pipeline, as JSON lines; bench/memory_torch.py prints PyTorch's figures.
noinst_PROGRAMS += bench/memory
bench_memory_LDADD = src/libocal.la $(OPENCL_LIBS) -lm
EXTRA_DIST += bench/memory_torch.py
TESTS += tests/bench_memory_quick.sh
EXTRA_DIST += tests/bench_memory_quick.sh
