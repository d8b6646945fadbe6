# ocal — reductions and scans, included by the top-level Makefile.am (one non-recursive
# make). Append to the variables defined there: ocalinclude_HEADERS,
# src_libocal_core_la_SOURCES, OCAL_KERNEL_FILES, OCAL_TESTS, noinst_PROGRAMS, EXTRA_DIST.
