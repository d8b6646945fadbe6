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

# f16 and bf16 beside f32: memory-bound operations and the portable half GEMM, as JSON lines.
noinst_PROGRAMS += bench/half
bench_half_LDADD = src/libocal.la $(OPENCL_LIBS) -lm

# Before and after: two builds' `ocal bench` suites run alternately, the best of each kept.
EXTRA_DIST += bench/compare_builds.sh
EXTRA_DIST += bench/reduce_gpu_request.sh

include bench/experiments/local.mk
