#!/usr/bin/env python3
"""The smallest eigenpairs of the 2-D Laplacian (5-point stencil on an m x m grid), a
scipy.sparse matrix in, eigenpairs out: SciPy's lobpcg call, run on the device by
ocal.sparse.linalg.lobpcg, checked against the exact eigenvalues.

    python3 python/examples/lobpcg_laplacian.py [m=40] [k=4]
"""
import sys

import numpy as np
import scipy.sparse as sp

import ocal.sparse.linalg


def laplacian_2d(m):
    t = sp.diags([-np.ones(m - 1), 2 * np.ones(m), -np.ones(m - 1)], [-1, 0, 1])
    return (sp.kron(t, sp.eye(m)) + sp.kron(sp.eye(m), t)).tocsr()


def main():
    m = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    A = laplacian_2d(m)
    X = np.random.default_rng(0).normal(size=(m * m, k))
    w, v = ocal.sparse.linalg.lobpcg(A, X, tol=1e-6, maxiter=500, largest=False)
    one = 2 - 2 * np.cos(np.arange(1, m + 1) * np.pi / (m + 1))
    exact = np.sort(np.add.outer(one, one).ravel())[:k]
    print("eigenvalues:", w)
    print("exact:      ", exact)
    print("max |A v - w v|:", np.abs(A @ v - v * w).max())
    return 0 if np.allclose(w, exact, rtol=1e-5) else 1


if __name__ == "__main__":
    sys.exit(main())
