# ocal — the standalone benchmark programs of bench/ that are not part of `ocal bench` (those
# are in tools/local.mk, which links them with the suites' library; an area's own benchmark
# that needs its internals stays in that area's fragment). Included by the top-level
# Makefile.am; appends to the variables defined there.

# Allocation with and without the pool, transfer bandwidth (pageable, staged, pinned) and a
# transfer/compute pipeline, as JSON lines; bench/memory_torch.py prints PyTorch's figures.
noinst_PROGRAMS += bench/memory
bench_memory_LDADD = src/libocal.la $(OPENCL_LIBS) -lm
EXTRA_DIST += bench/memory_torch.py
TESTS += tests/bench_memory_quick.sh
EXTRA_DIST += tests/bench_memory_quick.sh

# VkFFT configurations compared on the fft suite's shapes.
noinst_PROGRAMS += bench/fft_tune
bench_fft_tune_LDADD = src/libocal.la -lm
EXTRA_DIST += bench/fft_tune.sh
EXTRA_DIST += bench/reduce_engine_round.sh

# What limits the kernels on a GPU: ptxas registers and spills, local memory, and the speed of
# the passes' access patterns as plain copies (OpenCL only, not ocal).
noinst_PROGRAMS += bench/fft_fourstep_probe
bench_fft_fourstep_probe_SOURCES = bench/fft_fourstep_probe.c
bench_fft_fourstep_probe_CFLAGS = $(AM_CFLAGS) $(OPENCL_CFLAGS)
bench_fft_fourstep_probe_LDADD = $(OPENCL_LIBS)

# bench/wgmma_probe: which sm_80/sm_90a PTX instructions an OpenCL driver takes inline, and
# whether a PTX binary retargeted to sm_90a with wgmma builds and runs (docs/tensor-cores.md).
noinst_PROGRAMS += bench/wgmma_probe
bench_wgmma_probe_SOURCES = bench/wgmma_probe.c
bench_wgmma_probe_CFLAGS = $(AM_CFLAGS) $(OPENCL_CFLAGS)
bench_wgmma_probe_LDADD = $(OPENCL_LIBS)

# bench/gemm_mma_probe: cl/gemm_mma.cl's tensor-core kernels checked and timed on an NVIDIA GPU
# (plain OpenCL, not libocal; exits 77 elsewhere). Not a test: bench/gemm_mma_round.sh runs it.
noinst_PROGRAMS += bench/gemm_mma_probe
bench_gemm_mma_probe_SOURCES = bench/gemm_mma_probe.c
bench_gemm_mma_probe_CFLAGS = $(AM_CFLAGS) $(OPENCL_CFLAGS)
bench_gemm_mma_probe_LDADD = $(OPENCL_LIBS) -lm
EXTRA_DIST += bench/compare_builds.sh
EXTRA_DIST += bench/gemm_mma_round.sh bench/gemm_mma_clang_check.sh \
	bench/tc_round.sh docs/tensor-cores.md

# f16 and bf16 beside f32: memory-bound operations and the portable half GEMM, as JSON lines;
# bench/half_gpu_round.sh runs it with tests/check_half on the GPU.
noinst_PROGRAMS += bench/half
bench_half_LDADD = src/libocal.la $(OPENCL_LIBS) -lm
EXTRA_DIST += bench/half_gpu_round.sh

# bench/scan_probe: cl/scan.cl's single-pass scan in a matrix of build variants, checked and
# timed beside a device copy (plain OpenCL, not libocal). Not a test: bench/scan_round.sh runs it.
noinst_PROGRAMS += bench/scan_probe
bench_scan_probe_SOURCES = bench/scan_probe.c
bench_scan_probe_CFLAGS = $(AM_CFLAGS) $(OPENCL_CFLAGS)
bench_scan_probe_LDADD = $(OPENCL_LIBS) -lm
EXTRA_DIST += bench/scan_round.sh cl/scan_probe.cl

# bench/gemm_f32_probe: exact FP32 GEMM variants (cl/blas_gemm.cl's tiles and options, and a
# cp.async kernel, cl/gemm_f32_probe.cl) checked and timed on one device (plain OpenCL, not
# libocal; docs/blas-engines.md).
noinst_PROGRAMS += bench/gemm_f32_probe
bench_gemm_f32_probe_SOURCES = bench/gemm_f32_probe.c
bench_gemm_f32_probe_CFLAGS = $(AM_CFLAGS) $(OPENCL_CFLAGS)
bench_gemm_f32_probe_LDADD = $(OPENCL_LIBS) -lm
EXTRA_DIST += cl/gemm_f32_probe.cl
