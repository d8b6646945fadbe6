# ocal — the ThreadSanitizer stress program (docs/defences.md). Built with `make check`, run
# by tests/defences.sh in a build configured with --enable-tsan (clang). Included by the
# top-level Makefile.am.
check_PROGRAMS += tests/tsan/stress
tests_tsan_stress_LDADD = src/libocal.la $(PTHREAD_LIBS) -lm
EXTRA_DIST += tests/tsan/local.mk tests/tsan.supp
