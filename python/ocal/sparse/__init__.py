"""ocal.sparse: CSR matrices on the device (scipy.sparse's csr_array names)."""
import numpy as np

from ocal._core import Array, CSR, csr_from_host, csr_read_mtx, get_context
from ocal._errors import UnsupportedError


class csr_array:
    """A CSR matrix on the device. Made from a scipy.sparse matrix or array (any format, it
    is converted to CSR), or from (data, indices, indptr) with shape, as SciPy's. The device
    copy is immutable; the host arrays it was made from are kept for get()."""

    def __init__(self, arg, shape=None, dtype=None, ctx=None):
        if isinstance(arg, CSR):
            self._csr, self._host = arg, None
            self.shape, self.dtype, self.context = arg.shape, arg.dtype, arg.context
            return
        if isinstance(arg, tuple) and len(arg) == 3:
            data, indices, indptr = (np.asarray(v) for v in arg)
            if shape is None:
                raise ValueError("csr_array((data, indices, indptr)) needs shape=")
        else:
            import scipy.sparse as sp
            m = sp.csr_array(arg)
            data, indices, indptr, shape = m.data, m.indices, m.indptr, m.shape
        if dtype is not None:
            data = data.astype(dtype)
        self._host = (data, indices, indptr)
        self._csr = csr_from_host(indptr, indices, data, tuple(shape), ctx)
        self.shape = self._csr.shape
        self.dtype = self._csr.dtype
        self.context = self._csr.context

    @property
    def nnz(self):
        return self._csr.nnz

    def get(self):
        """The matrix as a scipy.sparse.csr_array."""
        import scipy.sparse as sp
        if self._host is None:
            raise NotImplementedError("ocal.sparse: a matrix read by mmread has no host copy")
        data, indices, indptr = self._host
        return sp.csr_array((data.astype(self.dtype), indices, indptr), shape=self.shape)

    def diagonal(self):
        return self._csr.diagonal()

    def __matmul__(self, x):
        if not isinstance(x, Array):
            raise TypeError("ocal.sparse: A @ x takes an ocal.Array (ocal.asarray(x) first)")
        return self._csr.matmul(x)

    def dot(self, x):
        return self @ x

    def rmatmul_T(self, x):
        """A.T @ x (ocal_spmv / ocal_spmm with the transpose, cached by the library)."""
        return self._csr.matmul(x, trans=True)

    def __repr__(self):
        return "<ocal.sparse.csr_array %dx%d, %d stored, %s>" % (self.shape + (self.nnz, self.dtype))


def mmread(path, dtype=np.float64, ctx=None):
    """A Matrix Market file read straight into a device csr_array (ocal_csr_read_mtx)."""
    return csr_array(csr_read_mtx(str(path), dtype, ctx))


def issparse(x):
    return isinstance(x, csr_array)


__all__ = ["csr_array", "issparse", "mmread"]
