"""Arrays, creation, operators and elementwise functions against NumPy."""
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ocal
from conftest import assert_close

REAL = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.uint32, np.uint64]
rng = np.random.default_rng(7)


def host(shape, dtype, low=-50, high=50):
    if np.dtype(dtype).kind == "u":
        low = 0
    return rng.uniform(low, high, shape).astype(dtype)


@pytest.mark.parametrize("dtype", REAL + [np.float16, np.complex64, np.complex128, np.bool_])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 0, 2), (2, 3, 5), (2, 1, 3, 4)])
def test_roundtrip(dtype, shape):
    h = host(shape, np.float64).astype(dtype)
    a = ocal.asarray(h)
    assert a.shape == shape and a.dtype == np.dtype(dtype) and a.size == h.size
    np.testing.assert_array_equal(a.get(), h)


def test_bfloat16_roundtrip():
    ml = pytest.importorskip("ml_dtypes")
    h = np.linspace(-3, 3, 11).astype(ml.bfloat16)
    a = ocal.asarray(h)
    assert a.dtype == np.dtype(ml.bfloat16)
    np.testing.assert_array_equal(a.get(), h)
    np.testing.assert_array_equal((a * 2).get(), h * 2)


def test_creation():
    assert_close(ocal.zeros((2, 3)), np.zeros((2, 3), np.float32))
    assert_close(ocal.ones(5, np.int32), np.ones(5, np.int32))
    assert_close(ocal.full((2, 2), 7.5, np.float64), np.full((2, 2), 7.5))
    assert_close(ocal.arange(10), np.arange(10))
    assert_close(ocal.arange(1.0, 2.0, 0.25), np.arange(1.0, 2.0, 0.25))
    assert_close(ocal.arange(5, 0, -2), np.arange(5, 0, -2))
    assert_close(ocal.linspace(0, 1, 7), np.linspace(0, 1, 7, dtype=np.float32))
    assert_close(ocal.linspace(0, 1, 4, endpoint=False, dtype=np.float64),
                 np.linspace(0, 1, 4, endpoint=False))
    assert ocal.empty((0, 4)).shape == (0, 4)
    assert_close(ocal.zeros_like(ocal.ones(3, np.uint8)), np.zeros(3, np.uint8))


BINARY = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
          ("minimum", np.minimum), ("maximum", np.maximum), ("equal", np.equal),
          ("not_equal", np.not_equal), ("less", np.less), ("less_equal", np.less_equal),
          ("greater", np.greater), ("greater_equal", np.greater_equal)]


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                  min_side=0, max_side=4),
       da=st.sampled_from(REAL), db=st.sampled_from(REAL), op=st.sampled_from(BINARY))
def test_binary_broadcast(shapes, da, db, op):
    sa, sb = shapes.input_shapes
    if len(shapes.result_shape) > 4:
        return
    x, y = host(sa, da, 0, 20), host(sb, db, 0, 20)
    want = op[1](x, y)
    if want.dtype not in (np.float32, np.float64, np.int32, np.int64, np.uint8, np.uint32,
                          np.uint64, np.bool_):
        with pytest.raises(ocal.OcalError):
            getattr(ocal, op[0])(ocal.asarray(x), ocal.asarray(y))
        return
    assert_close(getattr(ocal, op[0])(ocal.asarray(x), ocal.asarray(y)), want)


@pytest.mark.parametrize("dtype", REAL)
def test_operators_and_scalars(dtype):
    x, y = host((4, 5), dtype, 1, 30), np.maximum(host((5,), dtype, 1, 30), 1)
    a, b = ocal.asarray(x), ocal.asarray(y)
    assert_close(a + b, x + y)
    assert_close(a - b, x - y)
    assert_close(a * b, x * y)
    assert_close(a / b, x / y)
    assert_close(a // b, x // y)
    assert_close(a % b, x % y)
    assert_close(a + 3, x + 3)
    assert_close(2 * a, 2 * x)
    assert_close(a * 0.5, x * 0.5)
    assert_close(a < 10, x < 10)
    assert_close(a == b, x == y)
    assert_close(-a if x.dtype.kind != "u" else a, -x if x.dtype.kind != "u" else x)
    assert_close(abs(a), abs(x))
    assert_close(ocal.where(a > 10, a, b), np.where(x > 10, x, y))
    assert_close((a > 5) & (a < 20), (x > 5) & (x < 20))
    assert_close((a > 5) | ~(a < 20), (x > 5) | ~(x < 20))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_where_with_scalars(dtype):
    x = host((3, 5), dtype, 0, 20)
    a, m = ocal.asarray(x), ocal.asarray(x > 9)
    for u, v in [(a, 0.0), (a, 2), (3, a), (1.5, a), (7, 0)]:
        want = np.where(x > 9, u.get() if isinstance(u, ocal.Array) else u,
                        v.get() if isinstance(v, ocal.Array) else v)
        assert_close(ocal.where(m, u, v), want)          # NumPy's types
    ctx = a.context
    ocal.where(m, a, 0)
    before = ctx.memory_stats()
    ocal.where(m, a, 0)                          # a cached 0-d scalar: one allocation, the result
    after = ctx.memory_stats()
    assert after["hits"] + after["misses"] - before["hits"] - before["misses"] == 1


def test_out_arguments():
    x, y = host((4, 6), np.float32, 1, 9), host((6,), np.float32, 1, 9)
    a, b = ocal.asarray(x), ocal.asarray(y)
    out = ocal.empty((4, 6))
    assert ocal.add(a, b, out=out) is out
    assert_close(out, x + y)
    ocal.multiply(a, 0.5, out=out)
    assert_close(out, x * 0.5)
    ocal.subtract(3, a, out=out)
    assert_close(out, 3 - x)
    m = ocal.empty((4, 6), bool)
    assert_close(ocal.greater(a, 4, out=m), x > 4)
    c = ocal.asarray(x)
    ocal.relu(ocal.subtract(c, 5, out=c), out=c)         # in place
    assert_close(c, np.maximum(x - 5, 0))
    assert_close(ocal.where(m, a, 0.0, out=out), np.where(x > 4, x, 0))
    s = ocal.empty(6)
    assert ocal.sum(a, axis=0, out=s) is s
    assert_close(s, x.sum(axis=0), np.float32)
    k = ocal.empty((4, 1))
    assert_close(a.max(axis=1, keepdims=True, out=k), x.max(axis=1, keepdims=True))
    labels = ocal.asarray(np.array([1, 0, 5, 2], np.int32))
    loss, grad = ocal.softmax_cross_entropy(a, labels)
    l2 = ocal.empty(4)
    assert ocal.softmax_cross_entropy(a, labels, out=(l2, a))[1] is a     # grad in place
    assert_close(l2, loss.get())
    assert_close(a, grad.get())
    with pytest.raises(ocal.ShapeMismatchError):
        ocal.add(b, b, out=out)
    with pytest.raises(ocal.TypeMismatchError):
        ocal.greater(b, 1, out=ocal.empty(6))
    with pytest.raises(ocal.TypeMismatchError):
        ocal.exp(ocal.asarray(np.arange(6, dtype=np.int32)), out=ocal.empty(6, np.int32))


def test_out_fast_paths_keep_the_checks():
    """The out= calls of a training step take paths that compare types and shapes in C: the
    same results as the general path, and the same errors where out does not fit."""
    x, y = host((4, 6), np.float32, -9, 9), host((6,), np.float32, 1, 9)
    a, b = ocal.asarray(x), ocal.asarray(y)
    out = ocal.empty((4, 6))
    assert_close(ocal.add(b, a, out=out), y + x)                    # broadcast either side
    assert_close(ocal.less(a, 2, out=ocal.empty((4, 6), bool)), x < 2)
    with pytest.raises(ocal.ShapeMismatchError):
        ocal.add(a, b, out=ocal.empty((1, 4, 6)))
    with pytest.raises(ocal.TypeMismatchError):
        ocal.add(a, a, out=ocal.empty((4, 6), np.float64))
    with pytest.raises(ocal.TypeMismatchError):
        ocal.add(a, 1.5, out=ocal.empty((4, 6), bool))
    with pytest.raises(ocal.ShapeMismatchError):
        ocal.relu(a, out=ocal.empty((6, 4)))
    with pytest.raises(ocal.TypeMismatchError):
        ocal.relu(a, out=ocal.empty((4, 6), np.float64))
    m = ocal.asarray(x > 0)
    for fill in (0.0, -0.0, np.nan, 0.0):                  # floats told apart by their bits
        want = np.where(x > 0, x, np.float32(fill))
        for got in (ocal.where(m, a, fill, out=out).get(), ocal.where(m, a, fill).get()):
            np.testing.assert_array_equal(got, want)
            assert (np.signbit(got) == np.signbit(want)).all()
    assert_close(ocal.where(m, 1.0, a, out=out), np.where(x > 0, np.float32(1), x))
    with pytest.raises(ocal.ShapeMismatchError):
        ocal.where(m, a, 0.0, out=ocal.empty((1, 4, 6)))
    s = ocal.empty(4)
    assert_close(ocal.sum(a, axis=-1, out=s), x.sum(axis=-1), np.float32)
    with pytest.raises(ocal.ShapeMismatchError):
        ocal.sum(a, axis=0, out=s)
    with pytest.raises(ocal.InvalidArgumentError):
        ocal.sum(a, axis=2, out=s)
    with pytest.raises(ocal.TypeMismatchError):
        ocal.sum(ocal.asarray(x.astype(np.int32)), axis=1, out=ocal.empty(4, np.int32))
    e, z = ocal.empty((0, 6)), ocal.full(6, 3.0, np.float32)
    assert_close(ocal.sum(e, axis=0, out=z), np.zeros(6, np.float32))   # no rows: zeros
    with pytest.raises(ocal.InvalidArgumentError):
        ocal.max(e, axis=0, out=z)
    labels = ocal.asarray(np.array([1, 0, 5, 2], np.int32))
    with pytest.raises(ocal.ShapeMismatchError):
        ocal.softmax_cross_entropy(a, labels, out=(ocal.empty(6), a))
    with pytest.raises(TypeError):
        ocal.linalg.gemm(a, a, out, transa=True, alpha="x")


def test_axpy():
    x, y = host((4, 6), np.float32), host((4, 6), np.float32)
    a, b = ocal.asarray(x), ocal.asarray(y)
    assert ocal.linalg.axpy(-0.25, a, b) is b
    assert_close(b, y - 0.25 * x)
    c = ocal.asarray(y[0])
    ocal.linalg.axpy(2, ocal.asarray(x[1]), c)
    assert_close(c, y[0] + 2 * x[1])
    with pytest.raises(ocal.TypeMismatchError):
        ocal.linalg.axpy(1.0, ocal.asarray(x.astype(np.float64)), b)
    with pytest.raises(ocal.ShapeMismatchError):
        ocal.linalg.axpy(1.0, ocal.zeros(5), b)


def test_negative_floor_and_remainder():
    x = np.array([-7, -3, 0, 5, 8], np.int32)
    y = np.array([2, -2, 3, -3, 5], np.int32)
    a, b = ocal.asarray(x), ocal.asarray(y)
    assert_close(a // b, x // y)
    assert_close(a % b, x % y)
    xf, yf = x.astype(np.float64) + 0.5, y.astype(np.float64)
    assert_close(ocal.asarray(xf) % ocal.asarray(yf), xf % yf)


@pytest.mark.parametrize("ltype", [np.int32, np.int64, np.uint8, np.uint64])
def test_softmax_cross_entropy_bad_labels_give_nan_rows(ltype):
    """A label outside [0, classes) makes its row's loss and gradient NaN (documented: the
    kernel cannot raise); the other rows are NumPy's."""
    rng = np.random.default_rng(31)
    z = rng.standard_normal((7, 5)).astype(np.float32)
    lab = rng.integers(0, 5, 7).astype(ltype)
    bad = [1, 4]
    lab[1] = 5
    lab[4] = np.iinfo(ltype).max if np.iinfo(ltype).min == 0 else -1
    loss, grad = ocal.softmax_cross_entropy(ocal.asarray(z), ocal.asarray(lab))
    loss, grad = loss.get(), grad.get()
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    good = [r for r in range(7) if r not in bad]
    want = -np.log(p[good, lab[good].astype(np.int64)])
    np.testing.assert_allclose(loss[good], want, rtol=1e-5)
    onehot = np.eye(5, dtype=np.float32)[lab[good].astype(np.int64)]
    np.testing.assert_allclose(grad[good], p[good] - onehot, atol=1e-6)
    assert np.isnan(loss[bad]).all() and np.isnan(grad[bad]).all()


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.uint8])
def test_integer_floor_divide_remainder_exact(dtype):
    """// and % of integers are exact for every type (no trip through a double): full-range
    values, small divisors, zero divisors (0, NumPy's result) and MIN // -1 (wraps)."""
    rng = np.random.default_rng(11)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, 41, dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, 41, dtype=dtype, endpoint=True)
    y[::3] = rng.integers(1 if info.min == 0 else -9, 10, len(y[::3]), dtype=dtype)
    y[1] = 0
    if info.min < 0:
        x[2], y[2] = info.min, -1
    a, b = ocal.asarray(x), ocal.asarray(y)
    with np.errstate(all="ignore"):
        assert_close(a // b, x // y)
        assert_close(a % b, x % y)
        assert_close(ocal.floor_divide(a[:40:2], b[1::2]), x[:40:2] // y[1::2])
        o = ocal.empty(41, dtype=dtype)
        ocal.remainder(a, b, out=o)
        assert_close(o, x % y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floor_divide_remainder(dtype):
    rng = np.random.default_rng(12)
    x = (rng.standard_normal(43) * 10).astype(dtype)
    y = (rng.standard_normal(43) * 3).astype(dtype)
    y[:3] = 0
    x[3], y[3] = -0.0, 5
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((ocal.asarray(x) // ocal.asarray(y)).get(), x // y)
        np.testing.assert_array_equal((ocal.asarray(x) % ocal.asarray(y)).get(), x % y)


def test_inplace():
    x = host((3, 4), np.float32)
    a = ocal.asarray(x)
    a += 1
    a *= ocal.asarray(x)
    a -= 2
    assert_close(a, (x + 1) * x - 2)


def test_numpy_refusals():
    """What NumPy refuses is refused, not computed with the result cast silently: an integer
    array in place with a float operand (same_kind), -bool, integers to negative integer
    powers, a repeated reduction axis."""
    i = ocal.asarray(np.arange(1, 4))
    for other in (1.5, 2.0, ocal.asarray(np.full(3, 0.5, np.float32))):
        with pytest.raises(TypeError, match="same_kind"):
            i *= other
    with pytest.raises(TypeError, match="same_kind"):
        m = ocal.asarray(np.array([True, False]))
        m += 1
    assert_close(i, np.arange(1, 4))                 # nothing was written
    i += np.int64(2)                                  # the same kind is taken
    f = ocal.asarray(np.ones(3, np.float32))
    f += ocal.asarray(np.ones(3))                     # float64 into float32: same kind
    assert_close(i, np.arange(3, 6))
    assert_close(f, np.full(3, 2, np.float32))
    with pytest.raises(TypeError):
        -ocal.asarray(np.array([True, False]))
    with pytest.raises(ValueError, match="negative integer powers"):
        i ** -1
    with pytest.raises(ValueError, match="negative integer powers"):
        ocal.power(i, -2)
    assert_close(i ** 2, np.arange(3, 6) ** 2)
    assert_close(i ** -1.0, np.arange(3, 6) ** -1.0)
    with pytest.raises(ValueError, match="duplicate"):
        ocal.sum(ocal.ones((2, 3)), axis=(0, 0))
    with pytest.raises(ValueError, match="duplicate"):
        ocal.var(ocal.ones((2, 3, 4)), axis=(0, -1, 2))


def test_python_integers_beside_integer_arrays():
    """A Python integer beyond 2**53 is used exactly (a double cannot carry it), and one out
    of the array type's range raises OverflowError, as NumPy does."""
    x = np.array([0, 1, -1], np.int64)
    big = 2**53 + 1
    a = ocal.asarray(x)
    assert_close(a + big, x + big)
    assert_close(big - a, big - x)
    o = ocal.empty(3, dtype=np.int64)
    ocal.add(a, big, out=o)
    assert_close(o, x + big)
    a += big
    assert_close(a, x + big)
    u = np.array([0, 5], np.uint64)
    assert_close(ocal.asarray(u) + (2**64 - 6), u + np.uint64(2**64 - 6))
    for arr, v in ((np.ones(3, np.uint8), 300), (np.ones(3, np.uint8), -1),
                   (np.ones(3, np.int32), 2**40)):
        with pytest.raises(OverflowError):
            ocal.asarray(arr) + v


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_python_floats_beyond_the_type_overflow_to_inf(dtype):
    """NumPy 2 casts a Python number beside a float32 (or half) array to the array's type:
    one beyond its range becomes an infinity, with NumPy's overflow warning, on every path
    (either side, in place, out=, comparisons)."""
    x = np.array([1, -2, 0.5], dtype)
    a = ocal.asarray(x)
    with np.errstate(over="ignore"):
        for v in (1e300, -1e300, 10**39):
            for got, want in ((a + v, x + v), (v - a, v - x), (a * v, x * v), (a < v, x < v),
                              (a == v, x == v)):
                assert got.dtype == want.dtype, (v, got.dtype, want.dtype)
                np.testing.assert_array_equal(got.get(), want)
            o = ocal.empty(3, dtype=dtype)
            ocal.add(a, v, out=o)
            np.testing.assert_array_equal(o.get(), x + v)
            b, y = a.copy(), x.copy()
            b += v
            y += v
            np.testing.assert_array_equal(b.get(), y)
    with pytest.warns(RuntimeWarning, match="overflow"):
        a + 1e300
    assert_close(a + 100.0, x + 100.0)                # within range: as before


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_integer_scalars_exact_beside_64bit_arrays(dtype):
    """Python and NumPy integer scalars beyond 2**53 are used exactly beside int64 and
    uint64 arrays, in arithmetic and in comparisons."""
    rng = np.random.default_rng(21)
    info = np.iinfo(dtype)
    x = rng.integers(info.max // 2, info.max, 37, dtype=dtype, endpoint=True)
    x[3] = info.max
    a = ocal.asarray(x)
    for v in (int(x[5]), int(x[5]) + 1, int(info.max), (1 << 53) + 1):
        for s in (v, dtype(v)):
            for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
                assert_close(getattr(a, op)(s), getattr(x, op)(s))
            assert_close(ocal.maximum(a, s), np.maximum(x, s))
            assert_close(a // s, x // s)
            assert_close(a % s, x % s)
    small = dtype((1 << 62) - 7)
    with np.errstate(over="ignore"):
        assert_close(a + small, x + small)
        assert_close(a - int(small), x - int(small))
        assert_close(small - a, small - x)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.uint32, np.int64, np.uint64])
def test_comparisons_with_python_integers_out_of_range(dtype):
    """NumPy 2 compares a Python integer outside the array's type exactly (uint8 > -1 is
    True everywhere); arithmetic with it raises OverflowError naming the call."""
    info = np.iinfo(dtype)
    x = np.random.default_rng(22).integers(info.min, info.max, 29, dtype=dtype, endpoint=True)
    a = ocal.asarray(x)
    for v in (info.min - 1, info.max + 1, -(2**70), 2**70):
        for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
            assert_close(getattr(a, op)(v), getattr(x, op)(v))
        assert_close(v < a, v < x)
        assert_close(v >= a, v >= x)
        o = ocal.empty(29, dtype=np.bool_)
        ocal.greater(a, v, out=o)
        assert_close(o, x > v)
        with pytest.raises(OverflowError, match=r"ocal\.add: the Python integer %d is out of "
                           r"bounds for %s.*astype" % (v, np.dtype(dtype))):
            a + v


def test_python_integers_out_of_range_are_refused_by_full_and_assignment():
    """ocal.full, full_like, fill and item assignment raise SizeOverflowError (an
    OverflowError, as NumPy 2's) for a Python integer the dtype cannot hold: nothing wraps."""
    cases = [(lambda: ocal.full(3, 300, dtype=np.uint8), "ocal.full", 300),
             (lambda: ocal.full(3, 2**40, dtype=np.int32), "ocal.full", 2**40),
             (lambda: ocal.full(2, -1, dtype=np.uint32), "ocal.full", -1),
             (lambda: ocal.full_like(ocal.zeros(2, dtype=np.uint8), 256), "ocal.full_like", 256),
             (lambda: ocal.zeros(3, dtype=np.uint8).fill(-1), "ocal.Array.fill", -1)]
    for f, name, v in cases:
        with pytest.raises(ocal.SizeOverflowError, match=r"%s: the Python integer %d is out of "
                           r"bounds.*use a dtype that holds it" % (re.escape(name), v)):
            f()
    x = ocal.zeros(7, dtype=np.uint8)
    for key, v in ((0, 300), (0, -1), (slice(None), 256), (np.array([1, 4]), 999)):
        with pytest.raises(OverflowError, match=r"__setitem__.*Python integer %d" % v):
            x[key] = v
    assert_close(x, np.zeros(7, np.uint8))          # nothing was written
    with pytest.raises(OverflowError, match=r"ocal\.where: the Python integer"):
        ocal.where(ocal.asarray(np.array([True, False])), ocal.zeros(2, dtype=np.int32), 2**40)
    x[2] = 255
    x[3:5] = np.uint8(7)
    assert_close(x, np.array([0, 0, 255, 7, 7, 0, 0], np.uint8))
    assert_close(ocal.full(3, 2**63 - 1, dtype=np.int64), np.full(3, 2**63 - 1, np.int64))


UNARY = [("negative", np.negative, None), ("abs", np.abs, None), ("sqrt", np.sqrt, "pos"),
         ("exp", np.exp, "small"), ("log", np.log, "pos"), ("log1p", np.log1p, "pos"),
         ("expm1", np.expm1, "small"), ("sin", np.sin, None), ("cos", np.cos, None),
         ("tanh", np.tanh, None), ("floor", np.floor, None), ("ceil", np.ceil, None),
         ("round", np.round, None), ("sign", np.sign, None), ("square", np.square, None),
         ("reciprocal", lambda v: 1 / v, "pos"), ("rsqrt", lambda v: 1 / np.sqrt(v), "pos"),
         ("sigmoid", lambda v: 1 / (1 + np.exp(-v)), "small"),
         ("relu", lambda v: np.maximum(v, 0), None)]


@pytest.mark.parametrize("name,ref,domain", UNARY)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0,), (13,), (3, 7)])
def test_unary(name, ref, domain, dtype, shape):
    low, high = {"pos": (0.1, 20), "small": (-5, 5), None: (-20, 20)}[domain]
    x = host(shape, dtype, low, high)
    assert_close(getattr(ocal, name)(ocal.asarray(x)), ref(x).astype(dtype))


def test_unary_integer_input_gives_numpy_float():
    x = np.arange(1, 9, dtype=np.int32)
    assert_close(ocal.sqrt(ocal.asarray(x)), np.sqrt(x))
    assert_close(ocal.exp(ocal.asarray(x.astype(np.uint8))), np.exp(x.astype(np.uint8)))


def test_gelu():
    from scipy.special import erf
    x = host((50,), np.float64, -4, 4)
    assert_close(ocal.gelu(ocal.asarray(x)), x * (1 + erf(x / np.sqrt(2))) / 2)


@pytest.mark.parametrize("src", [np.float32, np.float64, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("dst", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_,
                                 np.float16])
def test_astype(src, dst):
    x = host((9,), np.float64, 0, 100).astype(src)
    assert_close(ocal.asarray(x).astype(dst), x.astype(dst))


def test_views_and_setitem():
    x = host((5, 4), np.float32)
    a = ocal.asarray(x)
    assert_close(a[2], x[2])
    assert_close(a[1:4], x[1:4])
    assert_close(a[-1], x[-1])
    assert_close(a[3, 1:], x[3, 1:])
    assert_close(a.reshape(4, 5), x.reshape(4, 5))
    assert_close(a.reshape(-1), x.reshape(-1))
    assert_close(a.T, x.T)
    a[1] = 0
    a[2:4] = ocal.ones((2, 4))
    x[1] = 0
    x[2:4] = 1
    assert_close(a, x)
    a[::2] = 1                                 # a copy: scattered into a on the device
    x[::2] = 1
    assert_close(a, x)
    with pytest.raises(IndexError):
        a[9]


def test_iteration():
    """Iteration goes over the first axis, as NumPy's; over a 0-d array it raises TypeError
    (no silently empty loop)."""
    x = host((3, 2), np.float32)
    rows = list(ocal.asarray(x))
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    for r, want in zip(rows, x):
        assert_close(r, want)
    assert [float(v) for v in ocal.asarray(x[:, 0])] == [float(v) for v in x[:, 0]]
    zero_d = ocal.asarray(np.float32(2.5))
    with pytest.raises(TypeError, match="0-d"):
        list(zero_d)
    with pytest.raises(TypeError, match="0-d"):
        iter(zero_d)
    with pytest.raises(TypeError):
        list(np.float32(2.5) * np.ones(()))           # what NumPy does


def test_matmul():
    for sa, sb in [((3, 4), (4, 5)), ((4,), (4, 6)), ((3, 4), (4,)), ((4,), (4,)),
                   ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((0, 4), (4, 3))]:
        x, y = host(sa, np.float32), host(sb, np.float32)
        assert_close(ocal.asarray(x) @ ocal.asarray(y), x @ y)
    x, y = host((5, 7), np.float64), host((7, 3), np.float64)
    assert_close(ocal.linalg.matmul(ocal.asarray(x), ocal.asarray(y)), x @ y)
    with pytest.raises(ValueError):
        ocal.ones((3, 4)) @ ocal.ones((3, 4))


def test_random():
    g = ocal.random.default_rng(42)
    u = g.random((1000,)).get()
    assert u.dtype == np.float32 and (u >= 0).all() and (u < 1).all() and 0.4 < u.mean() < 0.6
    n = g.standard_normal((4000,), dtype=np.float64).get()
    assert abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1
    again = ocal.random.default_rng(42).random((1000,)).get()
    np.testing.assert_array_equal(u, again)
    assert not np.array_equal(g.random((1000,)).get(), u)


def test_transpose_any_axes():
    """.T, ocal.transpose(x, axes) and x.transpose(...) as NumPy's, up to 4-D; axes that are
    no permutation are refused, naming the call."""
    rng = np.random.default_rng(51)
    for shape in ((5, 3), (2, 3, 7), (3, 1, 5, 2)):
        x = rng.standard_normal(shape).astype(np.float32)
        a = ocal.asarray(x)
        assert_close(a.T, x.T)
        assert_close(a.transpose(), x.transpose())
        perm = tuple(rng.permutation(len(shape)))
        assert_close(ocal.transpose(a, perm), np.transpose(x, perm))
        assert_close(a.transpose(*perm), x.transpose(*perm))
        assert_close(a.transpose(list(perm)), x.transpose(list(perm)))
    i = rng.integers(-9, 9, (3, 4, 5)).astype(np.int64)
    assert_close(ocal.transpose(ocal.asarray(i), (-1, 0, 1)), np.transpose(i, (-1, 0, 1)))
    for bad in ((0, 0, 1), (0, 1), (0, 1, 3)):
        with pytest.raises(ocal.InvalidArgumentError, match=r"ocal\.transpose: axes .* is not a "
                           r"permutation of the 3 axes.*give each axis"):
            ocal.asarray(i).transpose(bad)


def test_integer_arctan2_bool_min_max_and_astype_advice():
    """arctan2 of two same-type integer arrays gives float64, min and max of bools give
    bools (NumPy's types); the C library's advice to convert reads astype() from Python."""
    rng = np.random.default_rng(52)
    x = rng.integers(-20, 20, 23).astype(np.int32)
    y = rng.integers(-20, 20, 23).astype(np.int32)
    assert_close(ocal.arctan2(ocal.asarray(x), ocal.asarray(y)), np.arctan2(x, y))
    m = rng.standard_normal((4, 7)) > 0
    b = ocal.asarray(m)
    for f in ("min", "max"):
        assert_close(getattr(ocal, f)(b), getattr(np, f)(m))
        assert_close(getattr(b, f)(axis=1), getattr(m, f)(axis=1))
    with pytest.raises(ocal.UnsupportedError, match=r"astype\(\)") as e:
        ocal.cumsum(ocal.ones(3, dtype=np.float16))
    assert "ocal_cast" not in str(e.value)
