"""ocal.fft against numpy.fft."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

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


def test_integer_input_and_bad_norm():
    """Integer and bool input transform in double precision, as numpy.fft does (as rfft did);
    float16 in single; a norm= numpy.fft does not know raises a ValueError."""
    if not ocal.get_context().fp64:
        pytest.skip("the device has no fp64")
    # The shapes of test_double_and_nd and test_real: no new plan is built.
    i = rng.integers(-9, 9, (4, 6, 5)).astype(np.int32)
    assert_close(ocal.fft.fftn(ocal.asarray(i)), np.fft.fftn(i))
    assert_close(ocal.fft.fftn(ocal.asarray(i > 2)), np.fft.fftn(i > 2))
    h = rng.integers(-9, 9, (3, 8)).astype(np.float16)
    assert_close(ocal.fft.rfft(ocal.asarray(h)), np.fft.rfft(h))
    for bad in ("foo", 3):
        with pytest.raises(ValueError, match="norm"):
            ocal.fft.fft(ocal.asarray(i), norm=bad)
        with pytest.raises(ValueError, match="norm"):
            ocal.fft.irfft(ocal.asarray(cplx((9,))), norm=bad)


def test_unsupported_axes():
    with pytest.raises(NotImplementedError):
        ocal.fft.fft(ocal.asarray(cplx((4, 4))), axis=0)


# The transform lengths of the tests above (7, 15; 3 x 10), so that no new plan is built.
@settings(max_examples=10)
@given(m=st.integers(1, 20), kind=st.sampled_from(["fft", "ifft", "rfft", "irfft"]))
def test_n_pads_and_crops_as_numpy(m, kind):
    """n= crops or zero-pads the last axis (irfft: the output's length), on odd sizes."""
    if kind == "irfft":   # a real signal's spectrum: irfft reads no imaginary part of bin 0
        x, n = np.fft.rfft(rng.normal(size=(3, 2 * m - 1))).astype(np.complex64), 15
    elif kind == "rfft":
        x, n = rng.normal(size=(3, m)).astype(np.float32), 15
    else:
        x, n = cplx((2, 3, m)), 7
    want = getattr(np.fft, kind)(x, n=n)
    want = want.astype(np.complex64 if want.dtype.kind == "c" else np.float32)
    got = getattr(ocal.fft, kind)(ocal.asarray(x), n=n)
    np.testing.assert_allclose(got.get(), want, rtol=1e-4, atol=1e-4 * max(m, n))


def test_s_pads_and_crops_as_numpy():
    s = (3, 10)                                  # the rows cropped, the columns padded
    x = cplx((5, 7))
    tol = dict(rtol=1e-4, atol=5e-3)
    np.testing.assert_allclose(ocal.fft.fft2(ocal.asarray(x), s=s).get(),
                               np.fft.fft2(x, s=s), **tol)
    np.testing.assert_allclose(ocal.fft.ifftn(ocal.asarray(x), s=s).get(),
                               np.fft.ifftn(x, s=s, axes=(0, 1)), **tol)
    r = x.real.astype(np.float32)
    np.testing.assert_allclose(ocal.fft.rfftn(ocal.asarray(r), s=(3, 15)).get(),
                               np.fft.rfftn(r, s=(3, 15), axes=(0, 1)), **tol)
    spectrum = np.fft.rfft2(rng.normal(size=(5, 11))).astype(np.complex64)   # 6 bins
    np.testing.assert_allclose(ocal.fft.irfft2(ocal.asarray(spectrum), s=(3, 15)).get(),
                               np.fft.irfft2(spectrum, s=(3, 15)), **tol)
    with pytest.raises(ValueError):
        ocal.fft.fft2(ocal.asarray(x), s=(0, 3))


def test_fft_refuses_bad_axes_and_sizes():
    """Axes out of range, 0-d input and transforms of no points raise (numpy.fft raises
    too), naming the call."""
    x = cplx((3, 7))
    a = ocal.asarray(x)
    for ax in (5, -3, 2):
        with pytest.raises(ocal.InvalidArgumentError, match=r"ocal\.fft\.fft: axis %d is out of "
                           r"bounds for an array of 2 dimensions" % ax):
            ocal.fft.fft(a, axis=ax)
    with pytest.raises(ocal.InvalidArgumentError, match=r"ocal\.fft\.fftn: axis 5 is out"):
        ocal.fft.fftn(a, axes=(0, 5))
    with pytest.raises(ocal.InvalidArgumentError, match=r"ocal\.fft\.irfft2: axis 7"):
        ocal.fft.irfft2(a, axes=(7,))
    with pytest.raises(ocal.InvalidArgumentError, match=r"ocal\.fft\.fft: a 0-d array"):
        ocal.fft.fft(ocal.asarray(np.array(1 + 2j, np.complex64)))
    with pytest.raises(ocal.InvalidArgumentError, match=r"ocal\.fft\.fft: invalid number of "
                       r"data points \(0,\)"):
        ocal.fft.fft(ocal.asarray(np.zeros(0, np.complex64)))
    with pytest.raises(ocal.InvalidArgumentError, match=r"ocal\.fft\.rfft: invalid number"):
        ocal.fft.rfft(ocal.asarray(np.zeros((3, 0), np.float32)))
    with pytest.raises(ocal.InvalidArgumentError, match=r"ocal\.fft\.irfft: invalid number of "
                       r"data points \(0,\)"):
        ocal.fft.irfft(ocal.asarray(np.ones(1, np.complex64)))
    assert_close(ocal.fft.fft(a, axis=-2 + 1), np.fft.fft(x, axis=-1).astype(np.complex64))
    assert_close(ocal.fft.irfft(ocal.asarray(np.ones(1, np.complex64)), n=3),
                 np.fft.irfft(np.ones(1, np.complex64), n=3))
    f = ocal.fft.fftfreq(7, 0.5)
    assert f.dtype == (np.float64 if ocal.get_context().fp64 else np.float32)
    np.testing.assert_allclose(f.get(), np.fft.fftfreq(7, 0.5))
    np.testing.assert_allclose(ocal.fft.rfftfreq(9).get(), np.fft.rfftfreq(9))


def test_irfft_of_non_hermitian_batches():
    """numpy.fft ignores the imaginary parts of each row's DC and Nyquist bins (and reads
    only the Hermitian part of those columns in 2-D): batched rows must not leak them into
    their neighbours."""
    X = np.zeros((2, 5), complex)
    X[0, 1], X[1, 0] = 1, 1j
    assert_close(ocal.fft.irfft(ocal.asarray(X)), np.fft.irfft(X))
    r = np.random.default_rng(41)
    for shape, n in (((3, 7), None), ((4, 6), 10), ((2, 5), 9)):
        Y = r.standard_normal(shape) + 1j * r.standard_normal(shape)
        a = ocal.asarray(Y)
        assert_close(ocal.fft.irfft(a, n=n), np.fft.irfft(Y, n=n))
        assert_close(ocal.fft.irfft2(a), np.fft.irfft2(Y))
        assert_close(a, Y)                              # the input is left as it was
    Z = (r.standard_normal((3, 5)) + 1j * r.standard_normal((3, 5))).astype(np.complex64)
    assert_close(ocal.fft.irfft2(ocal.asarray(Z)), np.fft.irfft2(Z).astype(np.float32))
