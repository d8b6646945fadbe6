"""Bad input raises the OcalError class that also is the matching built-in exception, with
ocal_last_error()'s message."""
import gc

import numpy as np
import pytest

import ocal


def test_tree():
    assert issubclass(ocal.ShapeMismatchError, ValueError)
    assert issubclass(ocal.TypeMismatchError, TypeError)
    assert issubclass(ocal.OutOfDeviceMemoryError, MemoryError)
    assert issubclass(ocal.UnsupportedError, NotImplementedError)
    for cls in (ocal.ShapeMismatchError, ocal.TypeMismatchError, ocal.OutOfDeviceMemoryError,
                ocal.UnsupportedError, ocal.InvalidHandleError, ocal.BuildError):
        assert issubclass(cls, ocal.OcalError)


def test_wrong_dtype():
    with pytest.raises(TypeError) as e:
        ocal.asarray(np.zeros(3, np.int8))
    assert isinstance(e.value, ocal.OcalError)
    with pytest.raises(TypeError):
        ocal.ones((2, 2), np.int32) @ ocal.ones((2, 2), np.int32)


def test_shape_mismatch():
    with pytest.raises(ValueError) as e:
        ocal.ones((3, 4)) + ocal.ones((5,))
    assert isinstance(e.value, ocal.ShapeMismatchError)
    with pytest.raises(ocal.ShapeMismatchError):
        ocal.ones(6).reshape(4, 2)


def test_c_error_carries_last_error():
    a = ocal.ones((2, 3))
    with pytest.raises(ocal.OcalError) as e:
        ocal.softmax(a, axis=5)
    assert "axis" in str(e.value)
    x = ocal.ones((4,), np.float32)
    with pytest.raises(ocal.OcalError) as e:
        ocal._core.random_fill(x, 1, 0, "uniform", 2.0, 1.0)  # low > high, C refuses
    assert e.value.status_name == "OCAL_INVALID_ARGUMENT"
    assert "ocal_random_uniform" in str(e.value) and str(e.value) == ocal.last_error()


def test_too_many_dims():
    with pytest.raises(NotImplementedError):
        ocal.zeros((1, 1, 1, 1, 1))


def test_no_implicit_numpy_conversion():
    a = ocal.ones(3)
    with pytest.raises(TypeError, match=r"\.get\(\)"):
        np.asarray(a)
    with pytest.raises(TypeError):
        a + np.ones(3)
    with pytest.raises(TypeError):
        np.ones(3) + a


def test_released_context():
    ctx = ocal.Context()
    a = ocal.ones(4, ctx=ctx)
    del a
    gc.collect()
    ctx.release()
    with pytest.raises(ValueError) as e:
        ocal.ones(4, ctx=ctx)
    assert isinstance(e.value, ocal.InvalidHandleError)
    ctx.release()  # twice is harmless


def test_bad_device_selector():
    with pytest.raises(LookupError) as e:
        ocal.Context("no-such-device-anywhere")
    assert isinstance(e.value, ocal.DeviceNotFoundError)
    assert "Devices:" in str(e.value)


def test_no_leak_over_many_small_arrays():
    ctx = ocal.get_context()
    a, b = ocal.ones(16), ocal.ones(16)
    for _ in range(1000):
        c = a + b
    ctx.finish()
    del c
    gc.collect()
    before = ctx.memory_stats()["bytes_in_use"]
    import resource
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for i in range(100_000):
        c = a + b
        if i % 1000 == 999:  # queued commands hold memory until they run: not a leak
            ctx.finish()
    del c
    ctx.finish()
    gc.collect()
    assert ctx.memory_stats()["bytes_in_use"] == before
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 20_000  # KiB


def test_context_refuses_a_non_string_device():
    for bad in (0, 1.5, b"cpu"):
        with pytest.raises(TypeError, match=r"ocal\.Context\(device\): device must be None.*"
                           r"selector string.*ocal\.Device, not %s" % type(bad).__name__):
            ocal.Context(bad)
