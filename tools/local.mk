# ocal — `ocal bench` and the benchmark programs, included by the top-level Makefile.am (one
# non-recursive make). The suites live once, in tools/bench/, built into a convenience
# library that the ocal tool and every bench/ program link: bench/X runs one suite alone and
# prints JSON lines; `ocal bench` runs any of them and writes JSON, Markdown and charts.

noinst_LTLIBRARIES += tools/libocalbench.la
tools_libocalbench_la_SOURCES = \
	tools/bench/bench.h \
	tools/bench/cmd.c \
	tools/bench/compute.c \
	tools/bench/core.c \
	tools/bench/memory.c \
	tools/bench/report.c \
	tools/bench/sparse.c
BENCH_LDADD = tools/libocalbench.la src/libocal.la -lm
BENCH_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/bench

tools_ocal_CPPFLAGS = $(BENCH_CPPFLAGS)

noinst_PROGRAMS += bench/elementwise bench/reduce bench/gemm bench/fft bench/kernel_cache
bench_elementwise_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_elementwise_LDADD = $(BENCH_LDADD)
bench_reduce_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_reduce_LDADD = $(BENCH_LDADD)
bench_gemm_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_gemm_LDADD = $(BENCH_LDADD)
bench_fft_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_fft_LDADD = $(BENCH_LDADD)
bench_kernel_cache_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_kernel_cache_LDADD = $(BENCH_LDADD)

# `ocal bench --quick` end to end: JSON, Markdown, --compare, --from, --plot, bad arguments.
TESTS += tests/bench_tool.sh
EXTRA_DIST += tests/bench_tool.sh bench/pytorch_reference.py bench/lobpcg_scipy.py docs/sparse.md docs/benchmarks.md \
	docs/bench-elementwise.png docs/bench-reduce.png docs/bench-gemm.png docs/bench-fft.png \
	docs/bench-h100.json docs/bench-h100-torch.json docs/bench-h200.json docs/bench-h200-torch.json
