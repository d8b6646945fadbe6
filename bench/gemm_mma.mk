# ocal — bench/gemm_mma_probe (cl/gemm_mma.cl's tensor-core kernels checked and timed on an
# NVIDIA GPU; plain OpenCL, not libocal; exits 77 elsewhere), included by the top-level
# Makefile.am. Not a test: bench/gemm_mma_round.sh runs it on the GPU machine.
noinst_PROGRAMS += bench/gemm_mma_probe
bench_gemm_mma_probe_SOURCES = bench/gemm_mma_probe.c
bench_gemm_mma_probe_CFLAGS = $(AM_CFLAGS) $(OPENCL_CFLAGS)
bench_gemm_mma_probe_LDADD = $(OPENCL_LIBS) -lm
EXTRA_DIST += bench/gemm_mma.mk bench/gemm_mma_round.sh bench/gemm_mma_clang_check.sh \
	cl/gemm_mma.cl docs/tensor-cores.md
