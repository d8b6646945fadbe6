# ocal — bench/fft_tune (VkFFT configurations compared on the fft suite's shapes), included by
# the top-level Makefile.am.
noinst_PROGRAMS += bench/fft_tune
bench_fft_tune_LDADD = src/libocal.la -lm
EXTRA_DIST += bench/fft_tune.sh
