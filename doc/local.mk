# The reference manual: Doxygen over the public headers (Doxyfile.in, made Doxyfile by
# configure). `make doc` writes doc/html in the build directory and fails on any warning;
# tests/doc.sh runs the same configuration in make check, so an undocumented public function
# or parameter, or a missing \returns, fails the suite (it is skipped, saying so, where
# doxygen is not installed).
# Uses from Makefile.am: TESTS, EXTRA_DIST, AM_TESTS_ENVIRONMENT.

TESTS += tests/doc.sh
EXTRA_DIST += Doxyfile.in tests/doc.sh
AM_TESTS_ENVIRONMENT += OCAL_DOXYGEN='$(DOXYGEN)'; export OCAL_DOXYGEN; \
	OCAL_DOXYFILE='$(abs_top_builddir)/Doxyfile'; export OCAL_DOXYFILE;

doc: Doxyfile include/ocal/version.h
	@if test -z '$(DOXYGEN)'; then \
	  echo 'make doc: doxygen was not found by configure (scripts/install-deps.sh installs it)'; \
	  exit 1; fi
	$(AM_V_at)rm -rf doc/html doc/doxygen.log && $(MKDIR_P) doc
	$(AM_V_GEN)OCAL_DOC_DIR=doc OCAL_DOC_LOG=doc/doxygen.log OCAL_DOC_HTML=YES \
	  '$(DOXYGEN)' Doxyfile || { cat doc/doxygen.log; exit 1; }
	@if test -s doc/doxygen.log; then cat doc/doxygen.log; \
	  echo 'make doc: Doxygen warned (above): fix the header comments'; exit 1; fi
	@echo 'make doc: the reference is in doc/html/index.html'

clean-doc:
	-rm -rf doc/html doc/doxygen.log

.PHONY: doc clean-doc
