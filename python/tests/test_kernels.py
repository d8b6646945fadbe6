"""ocal.kernels: raw and generated kernels with CuPy's conventions."""
import numpy as np
import pytest

import ocal
from conftest import assert_close

SRC = r"""
__kernel void saxpy(float a, __global const float *x, __global float *y, ulong n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
"""


def test_raw_kernel():
    k = ocal.kernels.RawKernel(SRC, "saxpy")
    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, np.float32)
    dx, dy = ocal.asarray(x), ocal.asarray(y)
    k((8,), (128,), (2.0, dx, dy, 1000))
    assert_close(dy, 2 * x + y)
    k(global_size=1000, args=(np.float32(1.0), dx, dy, np.uint64(1000)))
    assert_close(dy, 3 * x + y)
    with pytest.raises(ocal.OcalError) as e:
        k((8,), (128,), (2.0, dx, np.int32(5), 1000))  # a scalar for a pointer
    assert "__global pointer" in str(e.value)
    with pytest.raises(ocal.OcalError):
        k((8,), (128,), (2.0, dx))


def test_raw_module_build_error():
    with pytest.raises(ocal.BuildError) as e:
        ocal.kernels.RawModule("__kernel void f(__global float *x) { x[0] = undefined_name; }")
    assert "undefined_name" in str(e.value)


def test_elementwise_kernel():
    k = ocal.kernels.ElementwiseKernel("float32 x, float32 y, float32 a", "float32 z",
                                       "z = a * x + y", "axpy")
    x, y = np.linspace(0, 1, 77).astype(np.float32), np.ones(77, np.float32)
    z = k(ocal.asarray(x), ocal.asarray(y), 3.0)
    assert_close(z, 3 * x + y)
    g = ocal.kernels.ElementwiseKernel("T x", "T y", "y = x * x + (T)1", "sq1")
    assert_close(g(ocal.asarray(np.arange(9, dtype=np.int64))), np.arange(9) ** 2 + 1)
    out = ocal.empty(9, np.float64)
    g(ocal.asarray(np.arange(9.0)), out)
    assert_close(out, np.arange(9.0) ** 2 + 1)
    with pytest.raises(ValueError):
        k(ocal.ones(3), ocal.ones(4), 1.0)


def test_reduction_kernel():
    l2 = ocal.kernels.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2")
    h = np.random.default_rng(4).normal(size=(6, 13)).astype(np.float32)
    assert_close(l2(ocal.asarray(h)), np.float32(np.linalg.norm(h)))
    assert_close(l2(ocal.asarray(h), axis=1), np.linalg.norm(h, axis=1).astype(np.float32))
    mx = ocal.kernels.ReductionKernel("float32 x", "float32 y", "x", "fmax(a, b)", "y = a",
                                      "-INFINITY", "mx")
    assert_close(mx(ocal.asarray(h), axis=0, keepdims=True), h.max(axis=0, keepdims=True))


def test_scan_kernel():
    s = ocal.kernels.ScanKernel(np.int64, "a + b", "0", "x * 2", "int32 x")
    h = np.arange(1, 40, dtype=np.int32)
    assert_close(s(ocal.asarray(h)), np.cumsum(h * 2).astype(np.int64))
    e = ocal.kernels.ScanKernel(np.float32, "a + b", "0", exclusive=True, in_params="T x")
    f = np.ones(10, np.float32)
    assert_close(e(ocal.asarray(f)), np.arange(10, dtype=np.float32))


def test_elementwise_kernel_size_beside_arrays():
    """size= beside array arguments must equal their size: a larger one would make the
    kernel write past the arrays' ends."""
    sq = ocal.kernels.ElementwiseKernel("float32 x", "float32 y", "y = x * x", "sq")
    x = np.random.default_rng(7).standard_normal(37).astype(np.float32)
    for size in (38, 100000, 36):
        with pytest.raises(ocal.InvalidArgumentError, match=r"sq\(\.\.\., size=%d\).*37 "
                           r"elements.*leave size= out" % size):
            sq(ocal.asarray(x), size=size)
    assert_close(sq(ocal.asarray(x), size=37), x * x)
    assert_close(sq(ocal.asarray(x)), x * x)
    with pytest.raises(ocal.InvalidArgumentError, match="sq.*size must be a non-negative"):
        sq(np.float32(2), size=-1)
    with pytest.raises(ocal.InvalidArgumentError, match="sq: no array argument.*pass size="):
        sq(np.float32(2))
    assert_close(sq(np.float32(3), size=5), np.full(5, 9, np.float32))


def test_reduction_and_scan_kernels_check_shapes_and_axis():
    """Inputs of different shapes are refused (the kernel reads element i of each), and an
    axis out of range is refused, not wrapped."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((37, 11)).astype(np.float32)
    y = rng.standard_normal((3, 11)).astype(np.float32)
    dot = ocal.kernels.ReductionKernel("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "dot")
    with pytest.raises(ocal.ShapeMismatchError, match=r"dot: the array arguments have shapes "
                       r"\[\(3, 11\), \(37, 11\)\].*one shape"):
        dot(ocal.asarray(x), ocal.asarray(y))
    assert_close(dot(ocal.asarray(x), ocal.asarray(x), axis=1), (x * x).sum(axis=1))
    s = ocal.kernels.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "s")
    scan = ocal.kernels.ScanKernel(np.float32, "a + b", 0, name="cs")
    for ax in (2, -3, 7):
        with pytest.raises(ocal.InvalidArgumentError, match=r"s\(\.\.\., axis=%d\): axis is out "
                           r"of bounds for an array of 2 dimensions: pass an integer from -2 "
                           r"to 1" % ax):
            s(ocal.asarray(x), axis=ax)
        with pytest.raises(ocal.InvalidArgumentError, match=r"cs\(\.\.\., axis=%d\)" % ax):
            scan(ocal.asarray(x), axis=ax)
    assert_close(s(ocal.asarray(x), axis=-2), x.sum(axis=0))
    assert_close(scan(ocal.asarray(x), axis=-1), np.cumsum(x, axis=-1))
    two = ocal.kernels.ScanKernel(np.float32, "a + b", 0, input_expr="x + y",
                                  in_params="T x, T y", name="cs2")
    with pytest.raises(ocal.ShapeMismatchError, match="cs2: the array arguments"):
        two(ocal.asarray(x), ocal.asarray(y))
