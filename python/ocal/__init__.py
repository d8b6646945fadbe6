"""ocal: NumPy-like arrays on any OpenCL device (NVIDIA, AMD, Intel GPUs, PoCL's CPU
device), over the ocal C library.

    import ocal
    a = ocal.asarray(numpy_array)        # to the device
    b = ocal.exp(a) @ a.T + 1            # queued on the device, returns at once
    b.get()                              # back to NumPy (waits)
"""
import numpy as _np

from ocal._errors import (OcalError, InvalidArgumentError, InvalidHandleError,
                          ShapeMismatchError, TypeMismatchError, SizeOverflowError,
                          NoDeviceError, DeviceNotFoundError, UnsupportedError,
                          OutOfHostMemoryError, OutOfDeviceMemoryError, BuildError,
                          OpenCLError, FileError, InternalError, NotConvergedError)
from ocal._core import (Array, Context, Device, devices, get_context, set_context,
                        last_error, version, bfloat16,
                        asarray, array, empty, zeros, ones, full, empty_like, zeros_like,
                        ones_like, full_like, arange, linspace, broadcast_to, where,
                        add, subtract, multiply, divide, true_divide, floor_divide, remainder,
                        mod, power, minimum, maximum, arctan2, fmod, equal, not_equal, less,
                        less_equal, greater, greater_equal,
                        negative, abs, absolute, sqrt, rsqrt, exp, log, log1p, expm1, sin, cos,
                        tanh, sigmoid, relu, gelu, floor, ceil, round, rint, sign, square,
                        reciprocal,
                        sum, prod, min, max, amin, amax, argmin, argmax, mean, var, std,
                        vdot, norm2, cumsum, softmax, log_softmax, softmax_cross_entropy,
                        matmul, transpose, from_pyopencl)
from ocal import fft, kernels, linalg, random, sparse  # noqa: E402
import ocal.sparse.linalg  # noqa: E402

float16, float32, float64 = _np.float16, _np.float32, _np.float64
int32, int64, uint8, uint32, uint64 = _np.int32, _np.int64, _np.uint8, _np.uint32, _np.uint64
complex64, complex128, bool_ = _np.complex64, _np.complex128, _np.bool_
__version__ = version()


def from_dlpack(x):
    """An ocal.Array from a host DLPack producer (a NumPy array, a CPU PyTorch tensor, ...),
    copied to the device."""
    return asarray(_np.from_dlpack(x))
