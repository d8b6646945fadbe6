# ocal — the fft part of the build, included by the top-level Makefile.am (one non-recursive
# make). Append to the variables defined there: ocalinclude_HEADERS,
# src_libocal_core_la_SOURCES, src_libocal_core_la_LIBADD, OCAL_KERNEL_FILES, OCAL_TESTS,
# noinst_PROGRAMS, EXTRA_DIST.

ocalinclude_HEADERS += include/ocal/fft.h
src_libocal_core_la_SOURCES += src/fft/names.c
src_libocal_core_la_SOURCES += \
	src/fft/engine.h \
	src/fft/plan.c
# VkFFT is one 1.6 MB header: it is compiled in vkfft.c only.
if HAVE_VKFFT
src_libocal_core_la_SOURCES += src/fft/vkfft.c
endif
if HAVE_CLFFT
src_libocal_core_la_SOURCES += src/fft/clfft.c
endif
src_libocal_core_la_CPPFLAGS += $(CLFFT_CFLAGS)
src_libocal_core_la_LIBADD += $(CLFFT_LIBS) -lm

# White-box link (the convenience library, no libtool wrapper): the disk-cache test execs
# this very program as a second process through /proc/self/exe.
OCAL_TESTS += tests/check_fft
tests_check_fft_SOURCES = tests/check_fft.c $(FIXTURE_FILES)
tests_check_fft_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/core
tests_check_fft_LDADD = src/libocal_core.la $(CHECK_LIBS) -lm
tests_check_fft_CFLAGS = $(FIXTURE_CFLAGS)
# Real plans through a C2C plan, where the engines refuse the real one (viac2c.c).
src_libocal_core_la_SOURCES += src/fft/viac2c.c
OCAL_KERNEL_FILES += cl/fft_via_c2c.cl
# Transforms of length 1 (unit.c): a copy, a widening or the real parts, no engine.
src_libocal_core_la_SOURCES += src/fft/unit.c
# Scaling for the normalisations an engine does not do itself.
OCAL_KERNEL_FILES += cl/fft_scale.cl

# ocal's own two-pass four-step FFT (src/fft/fourstep.c, cl/fft_fourstep.cl).
src_libocal_core_la_SOURCES += src/fft/fourstep.c
OCAL_KERNEL_FILES += cl/fft_fourstep.cl
# The default engine's measured choice between the four-step kernels and VkFFT.
src_libocal_core_la_SOURCES += src/fft/choose.c

OCAL_TESTS += tests/check_fft_fourstep
tests_check_fft_fourstep_SOURCES = tests/check_fft_fourstep.c $(FIXTURE_FILES)
tests_check_fft_fourstep_LDADD = $(FIXTURE_LDADD) -lm
tests_check_fft_fourstep_CFLAGS = $(FIXTURE_CFLAGS)
