# ocal — ocal's own two-pass four-step FFT (src/fft/fourstep.c, cl/fft_fourstep.cl), included
# by the top-level Makefile.am after src/fft/local.mk.
src_libocal_core_la_SOURCES += src/fft/fourstep.c
OCAL_KERNEL_FILES += cl/fft_fourstep.cl
EXTRA_DIST += src/fft/fourstep.mk
EXTRA_DIST += bench/fft_fourstep.sh

OCAL_TESTS += tests/check_fft_fourstep
tests_check_fft_fourstep_SOURCES = tests/check_fft_fourstep.c $(FIXTURE_FILES)
tests_check_fft_fourstep_LDADD = $(FIXTURE_LDADD) -lm
tests_check_fft_fourstep_CFLAGS = $(FIXTURE_CFLAGS)

# What limits the kernels on a GPU: ptxas registers and spills, local memory, and the speed of
# the passes' access patterns as plain copies (OpenCL only, not ocal).
noinst_PROGRAMS += bench/fft_fourstep_probe
bench_fft_fourstep_probe_SOURCES = bench/fft_fourstep_probe.c
bench_fft_fourstep_probe_CFLAGS = $(AM_CFLAGS) $(OPENCL_CFLAGS)
bench_fft_fourstep_probe_LDADD = $(OPENCL_LIBS)
