# The Python package (python/, built by meson-python from its own pyproject.toml, not by
# Automake): its files travel in the tarball, and tests/python.sh runs its suite in make check.
# Uses from Makefile.am: EXTRA_DIST, TESTS.

# The package's pytest suite, where a virtual environment with it exists (else a skip).
TESTS += tests/python.sh
EXTRA_DIST += python/local.mk tests/python.sh \
	python/README.md \
	python/bench/mlp_calls.c \
	python/bench/mlp_gpu_diag.sh \
	python/bench/mlp_ops.py \
	python/bench/mlp_vs_c.py \
	python/bench/overhead.py \
	python/bench/small_ops.py \
	python/bench/step_calls.py \
	python/examples/lobpcg_laplacian.py \
	python/examples/mlp_train.py \
	python/examples/raw_kernel.py \
	python/meson.build \
	python/ocal/__init__.py \
	python/ocal/_core.pyx \
	python/ocal/_dlpack.pxi \
	python/ocal/_indexing.pxi \
	python/ocal/_strided.pxi \
	python/ocal/_errors.py \
	python/ocal/fft.py \
	python/ocal/kernels.py \
	python/ocal/linalg.py \
	python/ocal/random.py \
	python/ocal/sparse/__init__.py \
	python/ocal/sparse/linalg.py \
	python/pyproject.toml \
	python/tests/conftest.py \
	python/tests/test_api_coverage.py \
	python/tests/test_array.py \
	python/tests/test_dlpack.py \
	python/tests/test_errors.py \
	python/tests/test_examples.py \
	python/tests/test_fft.py \
	python/tests/test_indexing.py \
	python/tests/test_interop.py \
	python/tests/test_kernels.py \
	python/tests/test_reduce.py \
	python/tests/test_sparse.py \
	python/tools/abi3_static.sh \
	python/tools/gen_pxd.py
