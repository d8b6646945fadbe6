# ocal — the ThreadSanitizer programs (docs/defences.md): the stress program, and two LOBPCG
# runs at once. Built with `make check`, run by tests/defences.sh in a build configured with
# --enable-tsan (clang). Included by the top-level Makefile.am.
check_PROGRAMS += tests/tsan/stress tests/tsan/lobpcg_pair
tests_tsan_stress_LDADD = src/libocal.la $(PTHREAD_LIBS) -lm
tests_tsan_lobpcg_pair_LDADD = src/libocal.la $(PTHREAD_LIBS) -lm
EXTRA_DIST += tests/tsan/local.mk tests/tsan.supp
