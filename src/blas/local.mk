# ocal — the blas part of the build, included by the top-level Makefile.am (one non-recursive
# make). Append to the variables defined there: ocalinclude_HEADERS,
# src_libocal_core_la_SOURCES, src_libocal_core_la_LIBADD, OCAL_KERNEL_FILES, OCAL_TESTS,
# noinst_PROGRAMS, EXTRA_DIST.

ocalinclude_HEADERS += include/ocal/blas.h
src_libocal_core_la_SOURCES += src/blas/names.c
src_libocal_core_la_SOURCES += \
	src/blas/blas_internal.h \
	src/blas/engine.h \
	src/blas/blas.c \
	src/blas/builtin.c \
	src/blas/clblast.c \
	src/blas/gemm_own.c \
	src/blas/gemm_tc.c \
	src/blas/gemm_dmma.c \
	src/blas/gemm_wgmma.c \
	src/blas/tc_answer.c \
	src/blas/tc_probe.c \
	src/blas/tensor_cores.h \
	src/blas/gemv.c \
	src/blas/params.c \
	src/blas/rule.c \
	src/blas/splitk.c \
	src/blas/tune.c \
	src/blas/tuning.c
OCAL_KERNEL_FILES += cl/blas_splitk.cl cl/blas_gemv.cl cl/blas_gemm.cl cl/gemm_mma.cl \
	cl/gemm_wgmma.cl cl/wgmma_pack.cl cl/gemm_dmma.cl
if HAVE_CLBLAST
src_libocal_core_la_CPPFLAGS += $(CLBLAST_CFLAGS)
src_libocal_core_la_LIBADD += $(CLBLAST_LIBS)
endif

# White-box: the tuning file and parameter checks through src/blas/blas_internal.h.
OCAL_TESTS += tests/check_blas
tests_check_blas_SOURCES = tests/check_blas.c $(FIXTURE_FILES)
tests_check_blas_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/core -I$(top_srcdir)/src/blas
tests_check_blas_LDADD = src/libocal_core.la $(CHECK_LIBS) -lm
tests_check_blas_CFLAGS = $(FIXTURE_CFLAGS)

# TF32 GEMM: the tensor-core engine (real where the device's probe passes, else emulated), its
# probe's cached answer, the rule, and the exact fallback (white-box: engine.h).
OCAL_TESTS += tests/check_gemm_tc
tests_check_gemm_tc_SOURCES = tests/check_gemm_tc.c $(FIXTURE_FILES)
tests_check_gemm_tc_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/core -I$(top_srcdir)/src/blas
tests_check_gemm_tc_LDADD = src/libocal_core.la $(CHECK_LIBS) -lm
tests_check_gemm_tc_CFLAGS = $(FIXTURE_CFLAGS)
