# ocal — bench/experiments/: one-off probes, sweeps and GPU round scripts, each kept with the
# question it answered (bench/experiments/README.md). Built only by `make experiments`, never
# by `make` or `make check`, and left out of the tarball (nodist_: a git checkout has them);
# the tarball carries this folder's README alone, which the docs link to.
# Included by bench/local.mk.

EXTRA_DIST += bench/experiments/README.md

OCAL_EXPERIMENTS = \
	bench/experiments/cluster_probe \
	bench/experiments/fft_fourstep_probe \
	bench/experiments/fft_tune \
	bench/experiments/gemm_dmma_probe \
	bench/experiments/gemm_f32_probe \
	bench/experiments/gemm_mma_probe \
	bench/experiments/gemm_own \
	bench/experiments/gemm_splitk \
	bench/experiments/gemm_transposes \
	bench/experiments/gemm_wgmma_probe \
	bench/experiments/l2_probe \
	bench/experiments/launch_probe \
	bench/experiments/scan_probe \
	bench/experiments/stream_probe \
	bench/experiments/wgmma_probe
EXTRA_PROGRAMS = $(OCAL_EXPERIMENTS)
CLEANFILES += $(OCAL_EXPERIMENTS)

# Plain OpenCL and the ICD loader (not libocal): bench/experiments/cl_probe.h.
EXPERIMENT_CL_CFLAGS = $(AM_CFLAGS) $(OPENCL_CFLAGS)
nodist_bench_experiments_cluster_probe_SOURCES = bench/experiments/cluster_probe.c
bench_experiments_cluster_probe_CFLAGS = $(EXPERIMENT_CL_CFLAGS)
bench_experiments_cluster_probe_LDADD = $(OPENCL_LIBS)
nodist_bench_experiments_fft_fourstep_probe_SOURCES = bench/experiments/fft_fourstep_probe.c
bench_experiments_fft_fourstep_probe_CFLAGS = $(EXPERIMENT_CL_CFLAGS)
bench_experiments_fft_fourstep_probe_LDADD = $(OPENCL_LIBS)
nodist_bench_experiments_gemm_f32_probe_SOURCES = bench/experiments/gemm_f32_probe.c
bench_experiments_gemm_f32_probe_CFLAGS = $(EXPERIMENT_CL_CFLAGS)
bench_experiments_gemm_f32_probe_LDADD = $(OPENCL_LIBS) -lm
nodist_bench_experiments_gemm_mma_probe_SOURCES = bench/experiments/gemm_mma_probe.c
bench_experiments_gemm_mma_probe_CFLAGS = $(EXPERIMENT_CL_CFLAGS)
bench_experiments_gemm_mma_probe_LDADD = $(OPENCL_LIBS) -lm
nodist_bench_experiments_l2_probe_SOURCES = bench/experiments/l2_probe.c
bench_experiments_l2_probe_CFLAGS = $(EXPERIMENT_CL_CFLAGS)
bench_experiments_l2_probe_LDADD = $(OPENCL_LIBS)
nodist_bench_experiments_launch_probe_SOURCES = bench/experiments/launch_probe.c
bench_experiments_launch_probe_CFLAGS = $(EXPERIMENT_CL_CFLAGS)
bench_experiments_launch_probe_LDADD = $(OPENCL_LIBS)
nodist_bench_experiments_stream_probe_SOURCES = bench/experiments/stream_probe.c
bench_experiments_stream_probe_CFLAGS = $(EXPERIMENT_CL_CFLAGS)
bench_experiments_stream_probe_LDADD = $(OPENCL_LIBS)
nodist_bench_experiments_scan_probe_SOURCES = bench/experiments/scan_probe.c
bench_experiments_scan_probe_CFLAGS = $(EXPERIMENT_CL_CFLAGS)
bench_experiments_scan_probe_LDADD = $(OPENCL_LIBS) -lm
nodist_bench_experiments_wgmma_probe_SOURCES = bench/experiments/wgmma_probe.c
bench_experiments_wgmma_probe_CFLAGS = $(EXPERIMENT_CL_CFLAGS)
bench_experiments_wgmma_probe_LDADD = $(OPENCL_LIBS)

# Through libocal's public API.
nodist_bench_experiments_fft_tune_SOURCES = bench/experiments/fft_tune.c
bench_experiments_fft_tune_LDADD = src/libocal.la -lm
nodist_bench_experiments_gemm_dmma_probe_SOURCES = bench/experiments/gemm_dmma_probe.c
bench_experiments_gemm_dmma_probe_CFLAGS = $(EXPERIMENT_CL_CFLAGS)
bench_experiments_gemm_dmma_probe_LDADD = src/libocal.la $(OPENCL_LIBS) -lm
nodist_bench_experiments_gemm_wgmma_probe_SOURCES = bench/experiments/gemm_wgmma_probe.c
bench_experiments_gemm_wgmma_probe_CFLAGS = $(EXPERIMENT_CL_CFLAGS)
bench_experiments_gemm_wgmma_probe_LDADD = src/libocal.la $(OPENCL_LIBS) -lm
nodist_bench_experiments_gemm_own_SOURCES = bench/experiments/gemm_own.c
bench_experiments_gemm_own_LDADD = src/libocal.la -lm
nodist_bench_experiments_gemm_splitk_SOURCES = bench/experiments/gemm_splitk.c
bench_experiments_gemm_splitk_LDADD = src/libocal.la -lm
nodist_bench_experiments_gemm_transposes_SOURCES = bench/experiments/gemm_transposes.c
bench_experiments_gemm_transposes_LDADD = src/libocal.la

.PHONY: experiments
experiments: $(OCAL_EXPERIMENTS)
