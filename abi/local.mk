# The ABI check: `make abi-check` dumps the ABI of the library as built from this tree and
# compares it with the baseline of the last release (abi/ocal-0.3.dump.xz) through
# abi-dumper and abi-compliance-checker, printing the report's path. docs/abi.md says how to
# read the report and how to make a new baseline at a release (`make abi-baseline`).
#
# abi-dumper reads DWARF, which an optimised build blurs (inlined and merged functions), so
# the check builds its own copy of the library, abi/libocal-abi.la, from the same sources
# with CFLAGS='-g -O0', beside the normal build (its objects have their own names) and only
# when asked: nothing here runs in `make` or `make check`.
# Uses from Makefile.am: src_libocal_core_la_* (the library's sources and flags), EXTRA_DIST.

EXTRA_LTLIBRARIES = abi/libocal-abi.la
abi_libocal_abi_la_SOURCES = $(src_libocal_core_la_SOURCES)
nodist_abi_libocal_abi_la_SOURCES = $(nodist_src_libocal_core_la_SOURCES)
abi_libocal_abi_la_CPPFLAGS = $(src_libocal_core_la_CPPFLAGS)
abi_libocal_abi_la_CFLAGS = $(src_libocal_core_la_CFLAGS)
abi_libocal_abi_la_LIBADD = $(src_libocal_core_la_LIBADD)
# -rpath makes libtool build a shared library; it is never installed.
abi_libocal_abi_la_LDFLAGS = -rpath '$(abs_builddir)/abi' -version-info $(OCAL_LT_VERSION) \
	-no-undefined

OCAL_ABI_BASELINE = $(srcdir)/abi/ocal-0.3.dump.xz
EXTRA_DIST += $(srcdir)/abi/ocal-0.2.dump.xz
EXTRA_DIST += $(OCAL_ABI_BASELINE) abi/skip-types.pl

# The public headers in one directory (version.h is made in the build directory): the
# dump's ABI is what they declare.
abi/include: $(include_HEADERS) $(ocalinclude_HEADERS) $(nodist_ocalinclude_HEADERS)
	$(AM_V_GEN)rm -rf abi/include && $(MKDIR_P) abi/include/ocal && \
	cp $(srcdir)/include/ocal.h abi/include/ && \
	for h in $(ocalinclude_HEADERS); do cp $(srcdir)/$$h abi/include/ocal/ || exit 1; done && \
	cp include/ocal/version.h abi/include/ocal/

abi-dump: abi/include
	@if test -z '$(ABI_DUMPER)'; then \
	  echo 'make abi-dump: abi-dumper was not found by configure (scripts/install-deps.sh)'; \
	  exit 1; fi
	$(AM_V_at)$(MAKE) $(AM_MAKEFLAGS) CFLAGS='-g -O0' abi/libocal-abi.la
	$(AM_V_GEN)'$(ABI_DUMPER)' abi/.libs/libocal-abi.so -o abi/ocal-current.dump \
	  -lver '$(PACKAGE_VERSION)' -public-headers abi/include -quiet > abi/dumper.log 2>&1 || \
	  { cat abi/dumper.log; exit 1; }

abi-check: abi-dump
	@if test -z '$(ABI_COMPLIANCE_CHECKER)'; then \
	  echo 'make abi-check: abi-compliance-checker was not found by configure'; exit 1; fi
	$(AM_V_at)rm -rf abi/report && $(MKDIR_P) abi/report && \
	  xz -dc $(OCAL_ABI_BASELINE) > abi/report/baseline.dump && \
	  perl $(srcdir)/abi/skip-types.pl abi/report/baseline.dump abi/ocal-current.dump \
	    > abi/report/skip-types.txt
	@'$(ABI_COMPLIANCE_CHECKER)' -l ocal -old abi/report/baseline.dump \
	  -new abi/ocal-current.dump -skip-types abi/report/skip-types.txt \
	  -report-path abi/report/compat_report.html \
	  > abi/report/checker.log 2>&1; rc=$$?; \
	grep -E 'Binary compatibility|Source compatibility|Total binary|Total source' \
	  abi/report/checker.log; \
	echo "make abi-check: report: $(abs_builddir)/abi/report/compat_report.html"; \
	if test $$rc -ne 0; then \
	  echo 'make abi-check: the ABI changed against the baseline (see the report and docs/abi.md)'; \
	  cat abi/report/checker.log; fi; \
	exit $$rc

# At a release, after the API is final: the new baseline (then commit it and point
# OCAL_ABI_BASELINE at it; docs/abi.md).
abi-baseline: abi-dump
	$(AM_V_GEN)xz -9 -c abi/ocal-current.dump > abi/ocal-$(OCAL_VERSION_MAJOR).$(OCAL_VERSION_MINOR).dump.xz
	@echo "make abi-baseline: wrote abi/ocal-$(OCAL_VERSION_MAJOR).$(OCAL_VERSION_MINOR).dump.xz"

clean-abi:
	-rm -rf abi/include abi/report abi/ocal-current.dump abi/dumper.log abi/libocal-abi.la \
	  abi/.libs

.PHONY: abi-dump abi-check abi-baseline clean-abi
