"""ocal.fft against numpy.fft."""
import numpy as np
import pytest

import ocal
from conftest import assert_close

rng = np.random.default_rng(3)


def cplx(shape, dtype=np.complex64):
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("shape", [(12,), (3, 10), (2, 3, 7)])
def test_c2c(shape, norm):
    x = cplx(shape)
    a = ocal.asarray(x)
    assert_close(ocal.fft.fft(a, norm=norm), np.fft.fft(x, norm=norm).astype(np.complex64))
    assert_close(ocal.fft.ifft(a, norm=norm), np.fft.ifft(x, norm=norm).astype(np.complex64))
    if len(shape) >= 2:
        assert_close(ocal.fft.fft2(a, norm=norm), np.fft.fft2(x, norm=norm).astype(np.complex64))


def test_double_and_nd():
    x = cplx((4, 6, 5), np.complex128)
    assert_close(ocal.fft.fftn(ocal.asarray(x)), np.fft.fftn(x))
    assert_close(ocal.fft.ifftn(ocal.asarray(x)), np.fft.ifftn(x))


@pytest.mark.parametrize("n", [8, 15])
def test_real(n):
    x = rng.normal(size=(3, n)).astype(np.float32)
    r = ocal.fft.rfft(ocal.asarray(x))
    assert_close(r, np.fft.rfft(x).astype(np.complex64))
    assert_close(ocal.fft.irfft(r, n=n), np.fft.irfft(np.fft.rfft(x), n=n).astype(np.float32))
    assert_close(ocal.fft.rfft2(ocal.asarray(x)), np.fft.rfft2(x).astype(np.complex64))


def test_real_input_to_c2c():
    x = rng.normal(size=16).astype(np.float32)
    assert_close(ocal.fft.fft(ocal.asarray(x)), np.fft.fft(x).astype(np.complex64))


def test_unsupported_axes():
    with pytest.raises(NotImplementedError):
        ocal.fft.fft(ocal.asarray(cplx((4, 4))), axis=0)
