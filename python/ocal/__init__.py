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
                          OpenCLError, FileError, InternalError, NotConvergedError,
                          ContextMismatchError)
from ocal._core import _from_dlpack_capsule
from ocal._core import (Array, Context, Device, Event, devices, get_context, set_context,
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


def from_dlpack(x, *, ctx=None):
    """An ocal.Array from a DLPack producer or capsule. OpenCL memory (kDLOpenCL: another
    ocal array, a library exporting cl_mem) of ctx's OpenCL context is used without a copy
    (ctx: the default context unless given; memory of another context raises
    ContextMismatchError); host memory (a NumPy array, a CPU PyTorch tensor) is copied to
    the device."""
    c = get_context() if ctx is None else ctx
    if type(x).__name__ == "PyCapsule":
        return _from_dlpack_capsule(x, c)
    dev = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
    if dev[0] != 4:
        return asarray(_np.from_dlpack(x), ctx=ctx)
    try:
        capsule = x.__dlpack__(stream=c.queue_int_ptr, max_version=(1, 0))
    except TypeError:  # a producer of DLPack before 1.0
        capsule = x.__dlpack__(stream=c.queue_int_ptr)
    return _from_dlpack_capsule(capsule, c)
