# ocal — the core part of the build that the top-level Makefile.am does not list itself: the
# memory layer (caching pool, pinned memory, transfers). Included by the top-level Makefile.am
# (one non-recursive make); appends to the variables defined there.

ocalinclude_HEADERS += include/ocal/memory.h
src_libocal_core_la_SOURCES += \
	src/core/memory_internal.h \
	src/core/pool.c \
	src/core/transfer.c

OCAL_TESTS += tests/check_memory
tests_check_memory_SOURCES = tests/check_memory.c $(FIXTURE_FILES)
tests_check_memory_LDADD = $(FIXTURE_LDADD)
tests_check_memory_CFLAGS = $(FIXTURE_CFLAGS)
