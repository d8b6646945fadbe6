"""DLPack export of device memory (kDLOpenCL: the cl_mem and the view's byte offset) and its
import without a copy, both capsule forms; refusal of memory of another OpenCL context; the
lifetime of exported memory."""
import gc

import numpy as np
import pytest

import ocal
from conftest import assert_close

KINDS = [(1, 0), None]   # a versioned (DLPack 1.x) capsule, an unversioned one


def capsule(x, max_version):
    if max_version is None:
        return x.__dlpack__(stream=-1)
    return x.__dlpack__(stream=-1, max_version=max_version)


@pytest.mark.parametrize("max_version", KINDS)
def test_round_trip_shares_memory(ctx, max_version):
    h = np.random.default_rng(3).random((5, 7)).astype(np.float32)
    x = ocal.asarray(h)
    ctx.finish()
    before = ctx.memory_stats()
    cap = capsule(x, max_version)
    assert type(cap).__name__ == "PyCapsule"
    kind, index = x.__dlpack_device__()         # kDLOpenCL, the device's place in devices()
    dev = ocal.devices()[index]
    assert kind == 4 and (dev.platform_index, dev.device_index, dev.name) == \
        (ctx.device.platform_index, ctx.device.device_index, ctx.device.name)
    y = ocal.from_dlpack(cap)
    assert y.int_ptr == x.int_ptr and y.offset == x.offset and y.shape == (5, 7)
    assert y.dtype == np.float32 and y.context is ctx
    assert ctx.memory_stats() == before          # nothing allocated, nothing pooled
    y += 1                                       # the consumer writes, the producer sees it
    assert_close(x, h + 1)
    x *= 2                                       # and the other way
    assert_close(y, 2 * (h + 1))
    with pytest.raises(BufferError):             # a capsule is consumed once
        ocal.from_dlpack(cap)


def test_from_dlpack_of_an_array(ctx):
    x = ocal.arange(11, dtype=np.int64)
    y = ocal.from_dlpack(x)                      # through __dlpack__, no copy
    assert y.int_ptr == x.int_ptr and y is not x
    assert_close(y, np.arange(11))


@pytest.mark.parametrize("max_version", KINDS)
def test_views_keep_their_offset(max_version):
    h = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    x = ocal.asarray(h)
    v = x[1, 2:]
    y = ocal.from_dlpack(capsule(v, max_version))
    assert y.offset == v.offset == (20 + 10) * 4 and y.int_ptr == x.int_ptr
    assert y.shape == (2, 5)
    assert_close(y, h[1, 2:])
    y.fill(-1)
    want = h.copy()
    want[1, 2:] = -1
    assert_close(x, want)


@pytest.mark.parametrize("dtype", [np.float64, np.uint8, np.bool_, np.complex64, np.float16])
def test_dtypes_and_scalars(dtype):
    h = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    y = ocal.from_dlpack(ocal.asarray(h))
    assert y.dtype == h.dtype
    assert_close(y, h)
    z = ocal.from_dlpack(ocal.asarray(np.array(5, dtype)))
    assert z.shape == ()
    e = ocal.from_dlpack(ocal.zeros((0, 4), dtype))
    assert e.shape == (0, 4) and e.get().shape == (0, 4)


def test_copy_and_devices():
    x = ocal.asarray(np.ones(4, np.float32))
    y = ocal.from_dlpack(x.__dlpack__(copy=True, max_version=(1, 0)))
    assert y.int_ptr != x.int_ptr
    y += 1
    assert_close(x, np.ones(4, np.float32))
    h = np.from_dlpack(x, device="cpu")          # a host copy for a CPU consumer
    np.testing.assert_array_equal(h, np.ones(4, np.float32))
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(4, x.__dlpack_device__()[1] + 1))
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(1, 0), copy=False)


def test_another_context_is_refused(ctx):
    other = ocal.Context(ctx.device)             # same device, another OpenCL context
    x = ocal.asarray(np.arange(8, dtype=np.float32), ctx=other)
    with pytest.raises(ocal.ContextMismatchError, match="another OpenCL context") as e:
        ocal.from_dlpack(x)
    assert isinstance(e.value, BufferError) and isinstance(e.value, ocal.InvalidArgumentError)
    y = ocal.from_dlpack(x, ctx=other)           # its own context takes it
    assert y.int_ptr == x.int_ptr
    assert_close(y, np.arange(8, dtype=np.float32))


def test_consumer_outlives_producer(ctx):
    gc.collect()
    ctx.finish()
    base = ctx.memory_stats()["bytes_in_use"]
    x = ocal.asarray(np.full(1000, 3, np.int32))
    y = ocal.from_dlpack(capsule(x, (1, 0)))
    del x
    gc.collect()
    others = [ocal.zeros(1000, np.int32) for _ in range(4)]   # the pool must not reuse it
    assert all(o.int_ptr != y.int_ptr for o in others)
    assert_close(y, np.full(1000, 3, np.int32))
    del others, y
    gc.collect()
    assert ctx.memory_stats()["bytes_in_use"] == base          # the deleter let go of it


@pytest.mark.parametrize("max_version", KINDS)
def test_unconsumed_capsules_do_not_leak(ctx, max_version):
    gc.collect()
    ctx.finish()
    base = ctx.memory_stats()["bytes_in_use"]
    x = ocal.zeros(256, np.float32)
    for _ in range(200):
        capsule(x, max_version)                  # dropped at once: its destructor frees it
        ocal.from_dlpack(capsule(x, max_version))
    import sys
    assert sys.getrefcount(x) == 2               # x, and getrefcount's own argument
    del x
    gc.collect()
    assert ctx.memory_stats()["bytes_in_use"] == base
