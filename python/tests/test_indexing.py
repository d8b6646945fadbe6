"""Indexing beyond contiguous ranges against NumPy: steps (negative ones too), Ellipsis,
None, integer-array and boolean-mask reads. Ranges are views; the rest are device copies."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ocal
from conftest import assert_close

rng = np.random.default_rng(11)


def slices(n):
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    return st.builds(slice, bound, bound, st.one_of(st.none(), st.integers(-3, 3).filter(bool)))


@st.composite
def basic_keys(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=6))
    key = []
    for n in shape[:draw(st.integers(1, len(shape)))]:
        if n and draw(st.booleans()):
            key.append(draw(st.integers(-n, n - 1)))
        else:
            key.append(draw(slices(n)))
    if draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), Ellipsis)
    return shape, tuple(key)


@given(basic_keys(), st.sampled_from([np.float32, np.int64, np.uint8]))
def test_steps_and_negative_steps(case, dtype):
    shape, key = case
    x = (rng.random(shape) * 100).astype(dtype)
    a = ocal.asarray(x)
    try:
        want = x[key]
    except IndexError:                           # the Ellipsis moved an integer out of range
        with pytest.raises(IndexError):
            a[key]
        return
    assert_close(a[key], want)


@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), st.data())
def test_index_arrays(shape, data):
    x = rng.random(shape).astype(np.float32)
    a = ocal.asarray(x)
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=7)), np.int64)
    key = (slice(None),) * axis + (idx,)
    assert_close(a[key], x[key])
    as_device = ocal.asarray(idx) if idx.size else idx   # an ocal.Array as the index too
    assert_close(a[(slice(None),) * axis + (as_device,)], x[key])


@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), st.data())
def test_boolean_masks(shape, data):
    x = rng.random(shape).astype(np.float32)
    a = ocal.asarray(x)
    k = data.draw(st.integers(1, len(shape)))
    mask = data.draw(hnp.arrays(np.bool_, shape[:k]))
    assert_close(a[mask], x[mask])
    assert_close(a[ocal.asarray(mask)], x[mask])
    if len(shape) >= 2:
        m1 = data.draw(hnp.arrays(np.bool_, shape[1:2]))
        assert_close(a[:, m1], x[:, m1])


def test_numpy_placement_and_views():
    x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    a = ocal.asarray(x)
    for key in [(0, slice(None), [1, 2]), (1, [2, 0]), (slice(None), 1, slice(None), [4, 0]),
                (None, 1, slice(None, None, -1)), ([[0, 1], [1, 0]], 0), (Ellipsis, [3]),
                (1, slice(None), 2)]:
        assert_close(a[key], x[key])
    v = a[1, 2]                                  # a contiguous range: a view
    assert v.int_ptr == a.int_ptr and v.offset == (60 + 40) * 4
    c = a[:, ::2]                                # a copy, made on the device
    assert c.int_ptr != a.int_ptr
    with pytest.raises(IndexError):
        a[[0, 2]]
    with pytest.raises(IndexError):
        a[np.ones(3, bool)]
    with pytest.raises(IndexError):
        a[0, 0, 0, 0, 0]
    assert_close(a[[0], :, [1]], x[[0], :, [1]])   # two index arrays, apart: their dims first
    with pytest.raises(IndexError):
        a[[0, 1], :, [1, 2, 3]]                   # index arrays that do not broadcast
    a[:, [0, 1]] = 1
    x[:, [0, 1]] = 1
    assert_close(a, x)
    with pytest.raises(NotImplementedError):     # views of more than 4 dimensions
        a[..., None]
    with pytest.raises(NotImplementedError):
        ocal.zeros(16).reshape(2, 2, 2, 1, 2)
    half = ocal.zeros(6, np.float16)            # generated kernels take no 16-bit type
    with pytest.raises(NotImplementedError):
        half[::2]
    with pytest.raises(NotImplementedError):
        half[[0, 1]] = 1


@given(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=5), st.data())
def test_several_index_arrays(shape, data):
    x = rng.random(shape).astype(np.float32)
    a = ocal.asarray(x)
    axes = sorted(data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=2, max_size=2,
                                     unique=True)))
    common = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=3))
    key = [slice(None)] * len(shape)
    for j, ax in enumerate(axes):
        n = shape[ax]
        # The second array may be a broadcastable row of the first's shape.
        s = common if j == 0 else data.draw(st.sampled_from([common, common[-1:], (1,)]))
        key[ax] = data.draw(hnp.arrays(np.int64, s, elements=st.integers(-n, n - 1)))
    if data.draw(st.booleans()):               # a step slice on the remaining axis, if any
        rest = [d for d in range(len(shape)) if d not in axes]
        if rest:
            key[rest[0]] = slice(None, None, -2)
    assert_close(a[tuple(key)], x[tuple(key)])


@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), st.data())
def test_assignment_through_copies(shape, data):
    """x[key] = v where x[key] is a copy (steps, index arrays, masks): scattered on the
    device, NumPy's result (indices drawn without repeats: which repeat lands is
    unspecified)."""
    x = rng.random(shape).astype(np.float32)
    a = ocal.asarray(x)
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    kind = data.draw(st.sampled_from(["step", "array", "mask", "two arrays"]))
    key = [slice(None)] * len(shape)
    if kind == "step":
        step = data.draw(st.sampled_from([-3, -1, 2]))
        key[axis] = slice(data.draw(st.integers(-n, n)), None, step)
    elif kind == "mask":
        key[axis] = data.draw(hnp.arrays(np.bool_, (n,)))
    else:
        picks = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
        key[axis] = np.array([p - n if p % 2 else p for p in picks], np.int64)
        if kind == "two arrays" and len(shape) > 1:
            other = (axis + 1) % len(shape)
            key[other] = np.full(len(picks), shape[other] - 1, np.int64)
    key = tuple(key)
    target = x[key].shape
    how = data.draw(st.sampled_from(["scalar", "numpy", "ocal", "row"]))
    if how == "scalar":
        v = 7.5
    elif how == "row":
        v = rng.random(target[-1:] if target else ()).astype(np.float32)
    else:
        v = rng.random(target).astype(np.float32)
    a[key] = ocal.asarray(v) if how == "ocal" else v
    x[key] = v
    assert_close(a, x)


def test_scalar_plus_one_element():
    assert (ocal.asarray(np.float32(2)) + ocal.ones(1)).shape == (1,)
    assert_close(ocal.asarray(np.float32(2)) + ocal.ones(1), np.ones(1, np.float32) + 2)


def test_index_of_another_context_is_refused():
    """A mask or index array of another context is refused, reading and assigning alike, as
    every operation that mixes contexts is; one of the array's own context is taken."""
    ctx = ocal.get_context()
    other = ocal.Context(ctx.device)             # same device, another OpenCL context
    x = np.arange(6, dtype=np.float32)
    a = ocal.asarray(x)
    mask = np.array([1, 0, 1, 1, 0, 0], bool)
    for key in (ocal.asarray(mask, ctx=other), ocal.asarray(np.array([4, 0]), ctx=other)):
        with pytest.raises(ocal.InvalidArgumentError, match="another context") as e:
            a[key]
        assert "ctx=" in str(e.value)             # says how to fix it
        with pytest.raises(ocal.InvalidArgumentError, match="another context"):
            a[key] = 7
        with pytest.raises(ocal.InvalidArgumentError, match="another context"):
            a[None, key]
    assert_close(a, x)                           # nothing was written
    assert_close(a[ocal.asarray(mask)], x[mask])
    assert_close(a[ocal.asarray(np.array([4, 0]))], x[[4, 0]])
