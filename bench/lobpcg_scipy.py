#!/usr/bin/env python3
"""SciPy's lobpcg on the problem of `ocal bench --suite sparse`'s LOBPCG rows: the 8 smallest
eigenpairs of the 2-D Dirichlet Laplacian on a g x g grid (f64), from the same initial block
(x0[i][j] = unit(i * 8 + j) * 2 - 1, unit being splitmix64 as in tools/bench/sparse.c) and the
same absolute residual tolerance (8e-7), so that its iteration count can be set beside ocal's.

    python3 bench/lobpcg_scipy.py [--grid G ...] [--tol T] [--json FILE]

Prints one line per grid: iterations (SciPy's iterationNumber, counted as the applications of
A less the first and the last), the smallest eigenvalue, the largest final residual norm and
the host wall time.
"""
import argparse
import json
import sys
import time
import warnings

try:
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.linalg import LinearOperator, lobpcg
except ImportError:
    sys.exit("lobpcg_scipy.py: needs NumPy and SciPy (Debian: python3-scipy)")


def mix(x):
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def unit(x):
    return (mix(x) >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def laplacian_2d(g):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(g, g))
    return (sp.kron(sp.eye(g), t) + sp.kron(t, sp.eye(g))).tocsr()


def run(g, tol, k=8):
    a = laplacian_2d(g)
    n = a.shape[0]
    x0 = (unit(np.arange(n * k, dtype=np.uint64)) * 2 - 1).reshape(n, k)
    calls = [0]

    def matmat(x):
        calls[0] += 1
        return a @ x

    def matvec(x):  # SciPy applies a one-column block through matvec
        calls[0] += 1
        return a @ x

    op = LinearOperator((n, n), matmat=matmat, matvec=matvec, dtype=np.float64)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w, v = lobpcg(op, x0, tol=tol, maxiter=5000, largest=False)
    t = time.perf_counter() - t0
    r = a @ v - v * w
    res = np.sqrt((r * r).sum(axis=0))
    return {"grid": g, "n": n, "iterations": calls[0] - 2, "lambda0": float(w[0]),
            "max_residual": float(res.max()), "seconds": t}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", type=int, nargs="+", default=[20, 64, 100])
    ap.add_argument("--tol", type=float, default=8e-7)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    out = []
    for g in args.grid:
        r = run(g, args.tol)
        out.append(r)
        print("lobpcg_scipy: %dx%d grid (n = %d): %d iterations, lambda0 %.10f, max residual "
              "%.2e, %.2f s" % (g, g, r["n"], r["iterations"], r["lambda0"], r["max_residual"],
                                r["seconds"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
