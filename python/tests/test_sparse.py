"""ocal.sparse against scipy.sparse: products, cg and lobpcg with SciPy's arguments."""
import numpy as np
import pytest

import ocal
import ocal.sparse.linalg as osl
from conftest import assert_close

sp = pytest.importorskip("scipy.sparse")
spl = pytest.importorskip("scipy.sparse.linalg")


def laplacian(n):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")


def test_roundtrip_and_products():
    rng = np.random.default_rng(5)
    m = sp.random(37, 23, density=0.2, random_state=1, format="csr")
    a = ocal.sparse.csr_array(m)
    assert a.shape == (37, 23) and a.nnz == m.nnz and a.dtype == np.float64
    assert (a.get() != m).nnz == 0
    x = rng.normal(size=23)
    assert_close(a @ ocal.asarray(x), m @ x)
    X = rng.normal(size=(23, 5))
    assert_close(a @ ocal.asarray(X), m @ X)
    y = rng.normal(size=37)
    assert_close(a.rmatmul_T(ocal.asarray(y)), m.T @ y)
    f = ocal.sparse.csr_array(m, dtype=np.float32)
    assert_close(f @ ocal.asarray(x.astype(np.float32)), (m @ x).astype(np.float32))
    sq = ocal.sparse.csr_array(laplacian(9))
    assert_close(sq.diagonal(), np.full(9, 2.0))
    with pytest.raises(ValueError):
        ocal.sparse.csr_array((np.ones(2), np.array([0, 5]), np.array([0, 1, 2])), shape=(2, 3))


@pytest.mark.parametrize("M", [None, "jacobi"])
def test_cg(M):
    A = laplacian(50) + sp.eye(50) * 0.1
    b = np.random.default_rng(2).normal(size=50)
    x, info = osl.cg(A, b, rtol=1e-10, M=M)
    want, winfo = spl.cg(A, b, rtol=1e-10)
    assert info == 0 and winfo == 0 and isinstance(x, np.ndarray)
    np.testing.assert_allclose(x, want, rtol=1e-7, atol=1e-8)
    xd, info = osl.cg(ocal.sparse.csr_array(A), ocal.asarray(b), rtol=1e-10)
    assert isinstance(xd, ocal.Array)
    np.testing.assert_allclose(xd.get(), want, rtol=1e-7, atol=1e-8)
    x, info = osl.cg(A, b, rtol=1e-12, maxiter=3)
    assert info > 0


def test_cg_python_operator():
    A = laplacian(40) + sp.eye(40)
    dev = ocal.sparse.csr_array(A)
    calls = []

    def matmat(X):
        calls.append(X.shape)
        return dev @ X

    op = osl.LinearOperator((40, 40), matmat=matmat)
    b = np.ones(40)
    x, info = osl.cg(op, b, rtol=1e-10)
    assert info == 0 and calls
    np.testing.assert_allclose(A @ x, b, atol=1e-8)

    def broken(X):
        raise KeyError("inside the operator")

    with pytest.raises(KeyError):
        osl.cg(osl.LinearOperator((40, 40), matmat=broken), b)


def spd_with_diagonal(n, seed):
    """A symmetric positive definite matrix whose diagonal spans 1-50 (a preconditioner
    from it matters), and a right-hand side."""
    rng = np.random.default_rng(seed)
    A = (laplacian(n) + sp.diags(rng.uniform(1, 50, n))).tocsr()
    return A, rng.normal(size=n)


@pytest.mark.parametrize("kind", ["operator", "csr_array", "scipy", "dense"])
def test_cg_preconditioner_as_scipy_takes_it(kind):
    n = 47
    A, b = spd_with_diagonal(n, 3)
    inv = 1.0 / A.diagonal()
    Minv = sp.diags(inv).tocsr()
    dev_inv = ocal.asarray(inv)
    M = {"operator": lambda: osl.LinearOperator((n, n), matvec=lambda r: r * dev_inv),
         "csr_array": lambda: ocal.sparse.csr_array(Minv),
         "scipy": lambda: Minv,
         "dense": lambda: Minv.toarray()}[kind]()
    scipy_M = spl.aslinearoperator(Minv)
    # A few iterations: the same recurrence gives SciPy's iterate, not only a solution.
    x, info = osl.cg(A, b, rtol=1e-12, maxiter=4, M=M)
    want, winfo = spl.cg(A, b, rtol=1e-12, maxiter=4, M=scipy_M)
    assert info == winfo == 4
    np.testing.assert_allclose(x, want, rtol=1e-9, atol=1e-12)
    x0 = np.linspace(-1, 1, n)
    x, info = osl.cg(A, ocal.asarray(b), x0, rtol=1e-10, M=M)
    want, winfo = spl.cg(A, b, x0, rtol=1e-10, M=scipy_M)
    assert info == winfo == 0 and isinstance(x, ocal.Array)
    np.testing.assert_allclose(x.get(), want, rtol=1e-8, atol=1e-10)


def test_cg_preconditioner_errors():
    A, b = spd_with_diagonal(21, 4)
    with pytest.raises(ValueError):             # ShapeMismatchError
        osl.cg(A, b, M=sp.eye(20).tocsr())
    with pytest.raises(NotImplementedError):
        osl.cg(A, b, M="ilu")
    with pytest.raises(NotImplementedError):
        osl.cg(A, b, M={"not": "an operator"})
    x, info = osl.cg(A, np.zeros(21), M=sp.eye(21).tocsr())
    assert info == 0 and not x.any()


@pytest.mark.parametrize("largest", [False, True])
def test_lobpcg_laplacian(largest):
    n, k = 60, 3
    A = laplacian(n)
    X = np.random.default_rng(0).normal(size=(n, k))
    w, v = osl.lobpcg(A, X, tol=1e-8, maxiter=200, largest=largest)
    exact = np.sort(2 - 2 * np.cos(np.arange(1, n + 1) * np.pi / (n + 1)))
    want = exact[:k] if not largest else exact[::-1][:k]
    np.testing.assert_allclose(w, want, rtol=1e-6)
    assert v.shape == (n, k)
    np.testing.assert_allclose(A @ v, v * w, atol=1e-5)


def test_lobpcg_with_matvec_operator():
    n = 40
    A = laplacian(n)
    dev = ocal.sparse.csr_array(A)
    op = osl.LinearOperator((n, n), matvec=lambda x: dev @ x)
    X = np.random.default_rng(1).normal(size=(n, 2))
    w, v = osl.lobpcg(op, X, tol=1e-8, maxiter=200, largest=False)
    exact = np.sort(2 - 2 * np.cos(np.arange(1, n + 1) * np.pi / (n + 1)))
    np.testing.assert_allclose(w, exact[:2], rtol=1e-6)


@pytest.mark.parametrize("maxiter", [0, 1, 3])
def test_lobpcg_maxiter_as_scipy(maxiter):
    # SciPy's maxiter: its loop counter runs from 0 to maxiter, maxiter + 1 block updates at
    # the limit. From the same block, the same eigenvalues as SciPy's, and not those of one
    # update fewer.
    n, k = 50, 2
    A = laplacian(n)
    X = np.random.default_rng(3).normal(size=(n, k))
    with pytest.warns(UserWarning):
        w, _ = osl.lobpcg(A, X, tol=1e-12, maxiter=maxiter, largest=False)
    with pytest.warns(UserWarning):
        want, _ = spl.lobpcg(A, X.copy(), tol=1e-12, maxiter=maxiter, largest=False)
    np.testing.assert_allclose(w, want, rtol=1e-9)
    if maxiter:
        with pytest.warns(UserWarning):
            fewer, _ = spl.lobpcg(A, X.copy(), tol=1e-12, maxiter=maxiter - 1, largest=False)
        assert not np.allclose(w, fewer, rtol=1e-6)
    else:  # SciPy makes no update with a negative maxiter, which ocal_lobpcg cannot
        with pytest.raises(ValueError, match="maxiter is -1"):
            osl.lobpcg(A, X, maxiter=-1)
