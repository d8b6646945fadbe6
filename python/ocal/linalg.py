"""ocal.linalg: matrix products (numpy.linalg / cupy.linalg names)."""
from ocal._core import matmul, gemm, axpy, vdot, norm2, Array


def norm(x, axis=None, keepdims=False):
    """The 2-norm of the flattened array, or of each line along axis (ocal_norm2)."""
    return norm2(x, axis, keepdims)


__all__ = ["matmul", "gemm", "axpy", "vdot", "norm"]
