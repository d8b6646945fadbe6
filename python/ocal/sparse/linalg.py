"""ocal.sparse.linalg: SciPy's cg and lobpcg on the device (ocal_cg, ocal_lobpcg), taking
SciPy's arguments and giving SciPy's results. A is an ocal csr_array, a scipy.sparse matrix
(copied to the device), or a LinearOperator whose matmat runs on ocal arrays."""
import operator
import warnings

import numpy as np

from ocal._core import (Array, Operator, asarray, axpy, cg_solve, lobpcg_solve, get_context,
                        norm2, vdot, zeros, empty)
from ocal._errors import ShapeMismatchError, UnsupportedError
from ocal.sparse import csr_array


class LinearOperator:
    """scipy.sparse.linalg.LinearOperator's shape, matvec, matmat and dtype: the functions
    take and return ocal arrays ({n} vectors, {n, k} blocks)."""

    def __init__(self, shape, matvec=None, matmat=None, dtype=np.float64):
        if matvec is None and matmat is None:
            raise ValueError("LinearOperator needs matvec or matmat")
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self._matvec, self._matmat = matvec, matmat

    def matmat(self, X):
        if self._matmat is not None:
            return self._matmat(X)
        # One column at a time through matvec: the columns are rows of X.T (ocal's views
        # are contiguous ranges).
        XT = X.T
        YT = empty((X.shape[1], X.shape[0]), X.dtype, X.context)
        for j in range(X.shape[1]):
            YT[j] = asarray(self._matvec(XT[j])).reshape(-1)
        return YT.T

    def matvec(self, x):
        return self.matmat(x.reshape(-1, 1)).reshape(-1)

    def __matmul__(self, x):
        return self.matvec(x) if x.ndim == 1 else self.matmat(x)


def aslinearoperator(A):
    return A if isinstance(A, (LinearOperator, csr_array)) else csr_array(A)


def _operator(A, dtype, ctx):
    if A is None:
        return None
    if not isinstance(A, (LinearOperator, csr_array)):
        A = csr_array(A, dtype=dtype, ctx=ctx)
    if isinstance(A, csr_array):
        return Operator.of(A._csr, A.shape[0], A.dtype, A.context), A.dtype
    return Operator.of(A, A.shape[0], dtype or A.dtype, ctx), np.dtype(dtype or A.dtype)


def _device(x, dtype, ctx):
    return (asarray(x, ctx=ctx) if not isinstance(x, Array) else x).astype(dtype, copy=False)


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None):
    """Conjugate gradients, as scipy.sparse.linalg.cg: returns (x, info) with info 0 when the
    residual met max(rtol ||b||, atol), else the iterations run. M, the preconditioner
    (an approximation of A's inverse), may be None, "jacobi" (ocal_cg's own), or, as SciPy
    takes it, a LinearOperator, an ocal csr_array, a scipy.sparse matrix or a 2-D array:
    then the iterations run from Python on device arrays, SciPy's recurrence. x has b's kind:
    an ocal.Array for an ocal.Array b, else a NumPy array."""
    if callback is not None:
        raise UnsupportedError("ocal.sparse.linalg.cg: callback is not supported (the "
                               "iterations run in C)")
    ctx = b.context if isinstance(b, Array) else get_context()
    if M is None or (isinstance(M, str) and M == "jacobi"):
        op, dtype = _operator(A, None, ctx)
        bd = _device(b, dtype, ctx)
        x = _device(x0, dtype, ctx).copy() if x0 is not None else zeros(bd.shape, dtype, ctx)
        converged, iterations, _ = cg_solve(op, bd, x, rtol, atol, maxiter or 0, M == "jacobi",
                                            x0 is not None)
        info = 0 if converged else int(iterations)
    else:
        x, info = _pcg(A, b, x0, rtol, atol, maxiter, M, ctx)
    return (x if isinstance(b, Array) else x.get()), info


def _square(op, n, what):
    """op itself when it is n x n, else ShapeMismatchError naming what it is."""
    if tuple(op.shape) != (n, n):
        raise ShapeMismatchError("ocal.sparse.linalg.cg: %s has shape %r; it must be (%d, %d) "
                                 "for a b of %d elements" % (what, tuple(op.shape), n, n, n))
    return op


def _preconditioner(M, dtype, ctx):
    """M as something whose @ takes and gives device vectors."""
    if isinstance(M, (LinearOperator, csr_array)):
        return M
    if isinstance(M, Array) and M.ndim == 2:
        return M.astype(dtype, copy=False)
    if isinstance(M, np.ndarray) and M.ndim == 2:
        return asarray(M.astype(dtype, copy=False), ctx=ctx)
    if hasattr(M, "tocsr"):     # a scipy.sparse matrix or array
        return csr_array(M, dtype=dtype, ctx=ctx)
    raise UnsupportedError("ocal.sparse.linalg.cg: M must be None, 'jacobi', an "
                           "ocal.sparse.linalg.LinearOperator, a csr_array, a scipy.sparse "
                           "matrix or a 2-D array (got %s)" % type(M).__name__)


def _pcg(A, b, x0, rtol, atol, maxiter, M, ctx):
    """Preconditioned CG from Python on device arrays, scipy.sparse.linalg.cg's recurrence
    and stopping rule (||r|| < max(rtol ||b||, atol), checked before each iteration), for a
    preconditioner ocal_cg does not take: z = M r is the caller's operator."""
    if not isinstance(A, (LinearOperator, csr_array)):
        A = csr_array(A, ctx=ctx)
    dtype = np.dtype(A.dtype)
    bd = _device(b, dtype, ctx)
    n = bd.shape[0]
    _square(A, n, "A")
    M = _square(_preconditioner(M, dtype, ctx), n, "M")
    x = _device(x0, dtype, ctx).copy() if x0 is not None else zeros(bd.shape, dtype, ctx)
    bnorm = float(norm2(bd).get())
    if bnorm == 0.0:
        return zeros(bd.shape, dtype, ctx), 0
    tol = max(atol, rtol * bnorm)
    r = bd - _device(A @ x, dtype, ctx) if x0 is not None else bd.copy()
    p, rho_prev = None, 0.0
    for _ in range(10 * n if maxiter is None else maxiter):
        if float(norm2(r).get()) < tol:
            return x, 0
        z = _device(M @ r, dtype, ctx)
        rho = float(vdot(r, z).get())
        if p is None:
            p = z.copy()
        else:
            p *= rho / rho_prev             # p = z + (rho / rho_prev) p
            axpy(1.0, z, p)
        q = _device(A @ p, dtype, ctx)
        alpha = rho / float(vdot(p, q).get())
        axpy(alpha, p, x)
        axpy(-alpha, q, r)
        rho_prev = rho
    return x, (10 * n if maxiter is None else maxiter)


def lobpcg(A, X, B=None, M=None, Y=None, tol=None, maxiter=None, largest=True,
           verbosityLevel=0, retLambdaHistory=False, retResidualNormsHistory=False,
           restartControl=20):
    """The LOBPCG eigensolver, as scipy.sparse.linalg.lobpcg: returns (w, v), the eigenvalues
    (a NumPy array; ascending for the smallest, descending for the largest, as SciPy) and the
    eigenvectors (X's kind). Not converging warns, as SciPy does.

    maxiter means what it means to SciPy (default 20): SciPy's loop counter runs from 0 to
    maxiter, so a run to the limit makes maxiter + 1 block updates, and so does this one
    (ocal_lobpcg's max_iter counts the updates themselves and gets maxiter + 1). A negative
    maxiter, with which SciPy makes no update, is a ValueError."""
    if retLambdaHistory or retResidualNormsHistory:
        raise UnsupportedError("ocal.sparse.linalg.lobpcg: the histories are not recorded")
    maxiter = 20 if maxiter is None else operator.index(maxiter)
    if maxiter < 0:
        raise ValueError("ocal.sparse.linalg.lobpcg: maxiter is %d; use 0 or more (SciPy's "
                         "maxiter: maxiter + 1 block updates at most)" % maxiter)
    ctx = X.context if isinstance(X, Array) else get_context()
    op, dtype = _operator(A, None, ctx)
    Xd = _device(X, dtype, ctx).copy()
    if Xd.ndim == 1:
        Xd = Xd.reshape(-1, 1)
    opB = _operator(B, dtype, ctx)[0] if B is not None else None
    opM = _operator(M, dtype, ctx)[0] if M is not None else None
    Yd = _device(Y, dtype, ctx) if Y is not None else None
    w, r, stop = lobpcg_solve(op, Xd, opB, opM, Yd, tol or 0.0, maxiter + 1, largest,
                              restartControl, True)
    if stop != "converged":
        warnings.warn("ocal.sparse.linalg.lobpcg: not converged (%s); residual norms %s"
                      % (stop, r), UserWarning, stacklevel=2)
    return w, (Xd if isinstance(X, Array) else Xd.get())


__all__ = ["cg", "lobpcg", "LinearOperator", "aslinearoperator"]
