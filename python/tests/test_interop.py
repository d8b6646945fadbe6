"""Zero-copy interop with PyOpenCL both ways, and DLPack's host copy (test_dlpack.py has the
device export)."""
import gc

import numpy as np
import pytest

import ocal
from conftest import assert_close


def test_to_pyopencl_shares_memory():
    cla = pytest.importorskip("pyopencl.array")
    x = ocal.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    view = x[1:]
    p = view.to_pyopencl()
    assert p.base_data.int_ptr == x.int_ptr and p.offset == 4 * 4 == view.offset
    assert p.shape == (2, 4) and p.dtype == np.float32
    np.testing.assert_array_equal(p.get(), x.get()[1:])
    p += 100                      # PyOpenCL writes, ocal sees it
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    want[1:] += 100
    assert_close(x, want)
    x *= 2                        # ocal writes, PyOpenCL sees it
    np.testing.assert_array_equal(p.get(), 2 * want[1:])
    assert isinstance(p, cla.Array)


def test_to_pyopencl_keeps_ocal_memory():
    pytest.importorskip("pyopencl")
    x = ocal.asarray(np.full(1000, 7, np.int32))
    p = x.to_pyopencl()
    del x
    gc.collect()
    # The pool may not give the memory to a new array while p holds it.
    others = [ocal.zeros(1000, np.int32) for _ in range(4)]
    np.testing.assert_array_equal(p.get(), np.full(1000, 7, np.int32))
    assert all(o.int_ptr != p.base_data.int_ptr for o in others)


def test_from_pyopencl_shares_memory():
    cl = pytest.importorskip("pyopencl")
    import pyopencl.array as cla
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    h = np.linspace(0, 1, 30).astype(np.float32)
    p = cla.to_device(queue, h)
    a = ocal.from_pyopencl(p)
    stats = a.context.memory_stats()
    assert a.int_ptr == p.base_data.int_ptr and a.shape == (30,)
    assert_close(a, h)
    b = ocal.from_pyopencl(p[5:])                      # a PyOpenCL view: a byte offset
    assert b.offset == 20
    assert_close(b, h[5:])
    a *= 3                                             # ocal writes, PyOpenCL sees it
    np.testing.assert_allclose(p.get(), 3 * h, rtol=1e-6)
    p.fill(2.5)                                        # PyOpenCL writes, ocal sees it
    assert_close(a.sum(), np.float32(75))
    assert a.context.memory_stats()["bytes_in_use"] >= stats["bytes_in_use"]
    c = ocal.from_pyopencl(p)
    assert c.context is a.context                      # one adopted context per queue
    after = a.context.memory_stats()
    del c
    assert a.context.memory_stats()["device_allocs"] == after["device_allocs"]


def test_wrapping_allocates_nothing():
    cl = pytest.importorskip("pyopencl")
    import pyopencl.array as cla
    x = ocal.asarray(np.ones(64, np.float32))
    p = x.to_pyopencl()
    ctx = ocal.get_context()
    before = ctx.memory_stats()
    y = ocal.from_pyopencl(p)                          # ocal's own context: found, not adopted
    assert y.context is ctx and y.int_ptr == x.int_ptr
    assert ctx.memory_stats() == before
    del y
    gc.collect()
    assert ctx.memory_stats() == before


def test_dlpack_host_copy():
    x = ocal.asarray(np.arange(6, dtype=np.float64).reshape(2, 3))
    assert x.__dlpack_device__()[0] == 4
    h = np.from_dlpack(x, device="cpu")
    np.testing.assert_array_equal(h, np.arange(6.0).reshape(2, 3))
    with pytest.raises(BufferError):
        np.from_dlpack(x, device="cpu", copy=False)
    with pytest.raises((BufferError, RuntimeError), match="[Dd]evice"):  # NumPy takes no cl_mem
        np.from_dlpack(x)


def test_from_dlpack_host():
    y = ocal.from_dlpack(np.arange(5, dtype=np.int32))
    assert_close(y, np.arange(5, dtype=np.int32))


def test_get_without_blocking():
    x = ocal.asarray(np.arange(5000, dtype=np.float32))
    y = ocal.exp(x * 0.001)
    h, ev = y.get(blocking=False)
    assert isinstance(ev, ocal.Event)
    ev.wait()
    np.testing.assert_allclose(h, np.exp(np.arange(5000, dtype=np.float32) * 0.001), rtol=1e-6)
    ev.wait()                                    # again: still done
    h2, ev2 = ocal.zeros(0).get(blocking=False)  # nothing to copy
    ev2.wait()
    assert h2.shape == (0,)
    for _ in range(50):                          # dropped events finish their copies first
        ocal.ones(1000).get(blocking=False)
