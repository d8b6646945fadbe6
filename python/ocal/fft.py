"""ocal.fft: numpy.fft's names over ocal_fft (VkFFT, clFFT or ocal's kernels); plans are
cached by the library per context, so repeating a transform creates nothing.

Transforms run over the last axes (1 to 3 of them) with the leading axes as the batch, in
single precision for float32/complex64/float16 input and double for float64/complex128
and integer or bool input (numpy.fft's result types), with
NumPy's conventions and norm= values."""
import numpy as np

from ocal._core import (Array, asarray, fft_execute, FFT_C2C, FFT_R2C, FFT_C2R, FFT_FORWARD,
                        FFT_INVERSE, FFT_NORMS, _resize_trailing, get_context)
from ocal._errors import UnsupportedError, InvalidArgumentError


def _complex(a):
    a = a if isinstance(a, Array) else asarray(a)
    if a.dtype in (np.complex64, np.complex128):
        return a
    # NumPy's types: float64 and integer (or bool) input transform in double precision.
    double = a.dtype == np.float64 or a.dtype.kind in "biu"
    target = np.complex128 if double and a.context.fp64 else np.complex64
    # ocal_cast has no complex targets: go through the host for real input.
    return asarray(a.get().astype(target), ctx=a.context)


def _real(a):
    a = a if isinstance(a, Array) else asarray(a)
    if a.dtype in (np.float32, np.float64):
        return a
    if a.dtype.kind == "c":
        raise TypeError("ocal.fft: rfft of complex input; use fft")
    # NumPy's types: integer (or bool) input in double precision, float16 in single.
    return a.astype(np.float64 if a.dtype.kind in "biu" and a.context.fp64 else np.float32)


def _axes(a, s, axes, ndim, name):
    """(how many trailing axes are transformed, their lengths s or None, the call's name),
    numpy.fft's rules: s given without axes means the last len(s) axes."""
    if a.ndim == 0:
        raise InvalidArgumentError("ocal.fft.%s: a 0-d array has no axis to transform: pass "
                                   "an array of at least one dimension" % name)
    if s is not None:
        s = tuple(int(v) for v in ((s,) if np.ndim(s) == 0 else s))
        if any(v < 1 for v in s):
            raise InvalidArgumentError("ocal.fft.%s: invalid number of data points %r: every "
                                       "length must be at least 1" % (name, s))
        if axes is None:
            axes = tuple(range(-len(s), 0))
        elif len(axes) != len(s):
            raise InvalidArgumentError("ocal.fft.%s: s=%r and axes=%r differ in length"
                                       % (name, s, axes))
    if axes is not None:
        for ax in axes:
            if not -a.ndim <= ax < a.ndim:
                raise InvalidArgumentError("ocal.fft.%s: axis %d is out of bounds for an array "
                                           "of %d dimensions" % (name, ax, a.ndim))
        want = tuple(range(a.ndim - len(axes), a.ndim))
        if tuple(ax % a.ndim for ax in axes) != want:
            raise UnsupportedError("ocal.fft.%s: transforms run over the last axes only"
                                   % name)
        ndim = len(axes)
    if ndim > a.ndim or not 1 <= ndim <= 3:
        raise InvalidArgumentError("ocal.fft.%s: %d transform axes of a %d-D array"
                                   % (name, ndim, a.ndim))
    return ndim, s, name


def _points(lengths, name):
    """numpy.fft refuses a transform of no points (an empty axis, or irfft of one value)."""
    if any(v < 1 for v in lengths):
        raise InvalidArgumentError("ocal.fft.%s: invalid number of data points %r: every "
                                   "transformed length must be at least 1 (pass n= or s=)"
                                   % (name, tuple(lengths)))


def _norm(norm):
    """The ocal_fft_norm of numpy.fft's norm= value."""
    try:
        return FFT_NORMS[norm]
    except (KeyError, TypeError):
        raise InvalidArgumentError('ocal.fft: invalid norm value %r; should be None, "backward", '
                                   '"ortho" or "forward"' % (norm,)) from None


def _c2c(a, axes, direction, norm):
    ndim, s, name = axes
    a = _complex(a)
    if s is not None:                       # crop or zero-pad the input, as numpy.fft does
        a = _resize_trailing(a, s)
    lengths = a.shape[a.ndim - ndim:]
    _points(lengths, name)
    return fft_execute(a, tuple(lengths), FFT_C2C, direction, _norm(norm), a.shape, a.dtype)


def fft(a, n=None, axis=-1, norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _c2c(a, _axes(a, n, (axis,), 1, "fft"), FFT_FORWARD, norm)


def ifft(a, n=None, axis=-1, norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _c2c(a, _axes(a, n, (axis,), 1, "ifft"), FFT_INVERSE, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _c2c(a, _axes(a, s, axes, 2, "fft2"), FFT_FORWARD, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _c2c(a, _axes(a, s, axes, 2, "ifft2"), FFT_INVERSE, norm)


def fftn(a, s=None, axes=None, norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _c2c(a, _axes(a, s, axes, a.ndim, "fftn"), FFT_FORWARD, norm)


def ifftn(a, s=None, axes=None, norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _c2c(a, _axes(a, s, axes, a.ndim, "ifftn"), FFT_INVERSE, norm)


def _r2c(a, axes, norm):
    ndim, s, name = axes
    a = _real(a)
    if s is not None:
        a = _resize_trailing(a, s)
    lengths = a.shape[a.ndim - ndim:]
    _points(lengths, name)
    shape = a.shape[:-1] + (a.shape[-1] // 2 + 1,)
    out_dtype = np.complex128 if a.dtype == np.float64 else np.complex64
    return fft_execute(a, tuple(lengths), FFT_R2C, FFT_FORWARD, _norm(norm), shape, out_dtype)


def _c2r(a, axes, norm):
    """The inverse of _r2c: s (or n) gives the output's lengths; the input's last axis is
    cropped or padded to s[-1] // 2 + 1 (numpy.fft's irfft)."""
    ndim, s, name = axes
    a = _complex(a)
    if s is None:
        s = tuple(a.shape[a.ndim - ndim:-1]) + (2 * (a.shape[-1] - 1),)
    _points(s, name)
    a = _resize_trailing(a, s[:-1] + (s[-1] // 2 + 1,))
    lengths = s
    shape = a.shape[:-1] + (s[-1],)
    out_dtype = np.float64 if a.dtype == np.complex128 else np.float32
    return fft_execute(a, tuple(lengths), FFT_C2R, FFT_INVERSE, _norm(norm), shape, out_dtype)


def rfft(a, n=None, axis=-1, norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _r2c(a, _axes(a, n, (axis,), 1, "rfft"), norm)


def irfft(a, n=None, axis=-1, norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _c2r(a, _axes(a, n, (axis,), 1, "irfft"), norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _r2c(a, _axes(a, s, axes, 2, "rfft2"), norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _c2r(a, _axes(a, s, axes, 2, "irfft2"), norm)


def rfftn(a, s=None, axes=None, norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _r2c(a, _axes(a, s, axes, a.ndim, "rfftn"), norm)


def irfftn(a, s=None, axes=None, norm=None):
    a = a if isinstance(a, Array) else asarray(a)
    return _c2r(a, _axes(a, s, axes, a.ndim, "irfftn"), norm)


def _freq(f):
    """numpy.fft's float64 frequencies, or float32 on a device without doubles."""
    return asarray(f if get_context().fp64 else f.astype(np.float32))


def fftfreq(n, d=1.0):
    return _freq(np.fft.fftfreq(n, d))


def rfftfreq(n, d=1.0):
    return _freq(np.fft.rfftfreq(n, d))
