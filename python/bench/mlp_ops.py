#!/usr/bin/env python3
"""Where the MLP example's SGD step spends the host's time: each call of the step (as
python/examples/mlp_train.py makes it) timed on the host over many steps, then the same
calls on a batch of zero rows, where most C calls queue no kernel (the sums still clear
their outputs, the weight and bias updates still run): the Python layer and ocal's checks
without the enqueue. Prints microseconds per step for each call, for the step that makes new arrays and for the
one that writes into arrays made once (out=, mlp_train.py --preallocated: the C example's
calls).

    python3 python/bench/mlp_ops.py [steps=200] [batch=256] [hidden=512] [MLP_CALLS]

MLP_CALLS: the program built from mlp_calls.c; with it, the preallocated step's table gains
the same C calls on zero rows and the difference, the Python layer's cost per call.
"""
import subprocess
import sys
import time

import numpy as np

import ocal
from ocal.linalg import axpy, gemm


def step_calls(x, y, w1, w2, b1, b2, step):
    """The calls of one SGD step, as (name, function) pairs run in order."""
    r = {}
    return [
        ("x @ w1", lambda: r.__setitem__("a", x @ w1)),
        ("+ b1", lambda: r.__setitem__("a", r["a"] + b1)),
        ("relu", lambda: r.__setitem__("h", ocal.relu(r["a"]))),
        ("h @ w2", lambda: r.__setitem__("z", r["h"] @ w2)),
        ("+ b2", lambda: r.__setitem__("z", r["z"] + b2)),
        ("softmax_cross_entropy", lambda: r.__setitem__("lg", ocal.softmax_cross_entropy(r["z"], y))),
        ("gemm dz w2^T", lambda: r.__setitem__("dh", gemm(r["lg"][1], w2, transb=True))),
        ("h > 0", lambda: r.__setitem__("m", r["h"] > 0)),
        ("where", lambda: r.__setitem__("dh", ocal.where(r["m"], r["dh"], 0.0))),
        ("gemm w2 update", lambda: gemm(r["h"], r["lg"][1], w2, transa=True, alpha=-step, beta=1.0)),
        ("gemm w1 update", lambda: gemm(x, r["dh"], w1, transa=True, alpha=-step, beta=1.0)),
        ("sum dz", lambda: r.__setitem__("s2", r["lg"][1].sum(axis=0))),
        ("axpy b2", lambda: axpy(-step, r["s2"], b2)),
        ("sum dh", lambda: r.__setitem__("s1", r["dh"].sum(axis=0))),
        ("axpy b1", lambda: axpy(-step, r["s1"], b1)),
        ("(results freed)", lambda: r.clear()),
    ]


def step_calls_preallocated(x, y, w1, w2, b1, b2, step):
    """The calls of one SGD step into arrays made once, as mlp_train.py --preallocated."""
    rows, hidden = x.shape[0], w1.shape[1]
    h, z, dh = ocal.empty((rows, hidden)), ocal.empty((rows, 10)), ocal.empty((rows, hidden))
    mask, loss = ocal.empty((rows, hidden), bool), ocal.empty(rows)
    db1, db2 = ocal.empty(hidden), ocal.empty(10)
    lz = (loss, z)
    return [
        ("gemm x w1", lambda: gemm(x, w1, h)),
        ("add(h, b1, out=h)", lambda: ocal.add(h, b1, out=h)),
        ("relu(h, out=h)", lambda: ocal.relu(h, out=h)),
        ("gemm h w2", lambda: gemm(h, w2, z)),
        ("add(z, b2, out=z)", lambda: ocal.add(z, b2, out=z)),
        ("softmax_cross_entropy", lambda: ocal.softmax_cross_entropy(z, y, out=lz)),
        ("gemm dz w2^T", lambda: gemm(z, w2, dh, transb=True)),
        ("gemm w2 update", lambda: gemm(h, z, w2, transa=True, alpha=-step, beta=1.0)),
        ("sum(z, axis=0, out=)", lambda: ocal.sum(z, axis=0, out=db2)),
        ("axpy b2", lambda: axpy(-step, db2, b2)),
        ("greater(h, 0, out=)", lambda: ocal.greater(h, 0, out=mask)),
        ("where(.., out=dh)", lambda: ocal.where(mask, dh, 0.0, out=dh)),
        ("gemm w1 update", lambda: gemm(x, dh, w1, transa=True, alpha=-step, beta=1.0)),
        ("sum(dh, axis=0, out=)", lambda: ocal.sum(dh, axis=0, out=db1)),
        ("axpy b1", lambda: axpy(-step, db1, b1)),
    ]


def profile(rows, hidden, steps, make_calls=step_calls):
    rng = np.random.default_rng(1)
    gen = ocal.random.default_rng(1)
    w1, w2 = gen.normal(0, 0.05, (784, hidden)), gen.normal(0, 0.05, (hidden, 10))
    b1, b2 = ocal.zeros(hidden), ocal.zeros(10)
    x = ocal.asarray(rng.random((rows, 784), dtype=np.float32))
    y = ocal.asarray(rng.integers(0, 10, rows).astype(np.int32))
    calls = make_calls(x, y, w1, w2, b1, b2, 0.1 / 256)
    total = dict.fromkeys([n for n, _ in calls], 0.0)
    ctx = ocal.get_context()
    for s in range(steps + 5):
        if s == 5:
            ctx.finish()
            total = dict.fromkeys(total, 0.0)
            t0 = time.perf_counter()
        for name, fn in calls:
            c0 = time.perf_counter()
            fn()
            total[name] += time.perf_counter() - c0
    queued = time.perf_counter() - t0
    ctx.finish()
    return total, queued / steps, (time.perf_counter() - t0) / steps


def c_calls(program, hidden, steps, *mode):
    """{call: us per step} of the C calls on zero rows (mlp_calls.c's table)."""
    out = subprocess.run([program, str(steps), "0", str(hidden), *mode], capture_output=True,
                         text=True, check=True).stdout
    rows = [line.rsplit(None, 1) for line in out.splitlines()[2:]
            if not line.startswith(("sum of", "step:"))]
    return {name.strip(): float(us) for name, us in rows}


def report(make_calls, batch, hidden, steps, program=None):
    real, queued, wall = profile(batch, hidden, steps, make_calls)
    empty, _, _ = profile(0, hidden, steps, make_calls)
    if program:
        c = c_calls(program, hidden, steps)
        print("%-22s %10s %14s %10s %10s" % ("call", "us/step", "0 rows", "C 0 rows", "Python"))
        for name in real:
            e = empty[name] / steps * 1e6
            print("%-22s %10.2f %14.2f %10.2f %10.2f" % (name, real[name] / steps * 1e6, e, c[name], e - c[name]))
        e = sum(empty.values()) / steps * 1e6
        print("%-22s %10.2f %14.2f %10.2f %10.2f" % ("sum of the calls", sum(real.values()) / steps * 1e6,
                                                     e, sum(c.values()), e - sum(c.values())))
        print("step: queued in %.1f us, done in %.1f us (batch %d, hidden %d, %d steps)"
              % (queued * 1e6, wall * 1e6, batch, hidden, steps))
        return
    print("%-22s %10s %14s" % ("call", "us/step", "0 rows"))
    for name in real:
        print("%-22s %10.2f %14.2f" % (name, real[name] / steps * 1e6, empty[name] / steps * 1e6))
    print("%-22s %10.2f %14.2f" % ("sum of the calls", sum(real.values()) / steps * 1e6,
                                   sum(empty.values()) / steps * 1e6))
    print("step: queued in %.1f us, done in %.1f us (batch %d, hidden %d, %d steps)"
          % (queued * 1e6, wall * 1e6, batch, hidden, steps))


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    hidden = int(sys.argv[3]) if len(sys.argv) > 3 else 512
    print("device: %s" % ocal.get_context().device.name)
    print("new arrays per call:")
    report(step_calls, batch, hidden, steps)
    print("preallocated (out=):")
    report(step_calls_preallocated, batch, hidden, steps, sys.argv[4] if len(sys.argv) > 4 else None)


if __name__ == "__main__":
    main()
