"""Reductions, scans and softmax against NumPy and SciPy."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ocal
from conftest import assert_close

rng = np.random.default_rng(11)
OPS = ["sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax"]


@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=6),
       dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.uint8]),
       op=st.sampled_from(OPS), data=st.data())
def test_reduce_axis(shape, dtype, op, data):
    x = rng.uniform(0, 3 if op == "prod" else 50, shape).astype(dtype)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    keep = data.draw(st.booleans()) if not op.startswith("arg") else False
    want = getattr(np, op)(x, axis=axis, keepdims=keep) if keep else getattr(np, op)(x, axis=axis)
    got = getattr(ocal, op)(ocal.asarray(x), axis=axis, keepdims=keep)
    if np.dtype(want.dtype).kind == "f" and np.dtype(dtype).kind == "f":
        assert_close(got, np.asarray(want, dtype))
    else:
        assert_close(got, np.asarray(want))


def test_reduce_axis_tuple_and_methods():
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    a = ocal.asarray(x)
    assert_close(a.sum(axis=(0, 2)), x.sum(axis=(0, 2)))
    assert_close(a.max(axis=(1, 2), keepdims=True), x.max(axis=(1, 2), keepdims=True))
    assert_close(a.mean(axis=(1, 2)), x.mean(axis=(1, 2)))
    assert_close(a.var(axis=1, ddof=1), x.var(axis=1, ddof=1))
    assert_close(ocal.norm2(a), np.float32(np.linalg.norm(x)))
    assert_close(ocal.vdot(a, a), np.float32(np.vdot(x, x)))


def test_mean_var_std_over_axes_apart():
    """mean/var/std over a tuple of axes that are not the trailing ones ((0, 2) of three)."""
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    i = rng.integers(-50, 50, (3, 4, 5)).astype(np.int32)
    a, ai = ocal.asarray(x), ocal.asarray(i)
    for keep in (False, True):
        assert_close(a.mean(axis=(0, 2), keepdims=keep), x.mean(axis=(0, 2), keepdims=keep))
        assert_close(ocal.var(a, axis=(2, 0), keepdims=keep), x.var(axis=(2, 0), keepdims=keep))
        assert_close(ocal.std(a, axis=(0, 2), ddof=1, keepdims=keep),
                     x.std(axis=(0, 2), ddof=1, keepdims=keep))
        assert_close(ai.mean(axis=(0, 2), keepdims=keep), i.mean(axis=(0, 2), keepdims=keep))
        assert_close(ai.var(axis=(0, 2), keepdims=keep), i.var(axis=(0, 2), keepdims=keep))


def test_empty_reductions():
    e = ocal.zeros((0, 3))
    assert_close(e.sum(axis=0), np.zeros(3, np.float32))
    assert_close(e.sum(), np.float32(0))
    with pytest.raises(ValueError):
        e.max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_cumsum(dtype):
    x = rng.uniform(0, 9, (4, 6)).astype(dtype)
    a = ocal.asarray(x)
    assert_close(ocal.cumsum(a), np.cumsum(x))
    assert_close(ocal.cumsum(a, axis=0), np.cumsum(x, axis=0))
    assert_close(a.cumsum(axis=-1), np.cumsum(x, axis=-1))


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax(axis):
    from scipy.special import softmax, log_softmax
    x = rng.normal(scale=5, size=(7, 10)).astype(np.float32)
    assert_close(ocal.softmax(ocal.asarray(x), axis=axis), softmax(x, axis=axis))
    assert_close(ocal.log_softmax(ocal.asarray(x), axis=axis), log_softmax(x, axis=axis))
