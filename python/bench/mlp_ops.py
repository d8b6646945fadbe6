#!/usr/bin/env python3
"""Where the MLP example's SGD step spends the host's time: each call of the step (as
python/examples/mlp_train.py makes it) timed on the host over many steps, then the same
calls on a batch of zero rows, where most C calls queue no kernel (the sums still clear
their outputs, the weight and bias updates still run): the Python layer and ocal's checks
without the enqueue. Prints microseconds per step for each call.

    python3 python/bench/mlp_ops.py [steps=200] [batch=256] [hidden=512]
"""
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


def profile(rows, hidden, steps):
    rng = np.random.default_rng(1)
    gen = ocal.random.default_rng(1)
    w1, w2 = gen.normal(0, 0.05, (784, hidden)), gen.normal(0, 0.05, (hidden, 10))
    b1, b2 = ocal.zeros(hidden), ocal.zeros(10)
    x = ocal.asarray(rng.random((rows, 784), dtype=np.float32))
    y = ocal.asarray(rng.integers(0, 10, rows).astype(np.int32))
    calls = step_calls(x, y, w1, w2, b1, b2, 0.1 / 256)
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


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    hidden = int(sys.argv[3]) if len(sys.argv) > 3 else 512
    real, queued, wall = profile(batch, hidden, steps)
    empty, _, _ = profile(0, hidden, steps)
    print("device: %s" % ocal.get_context().device.name)
    print("%-22s %10s %14s" % ("call", "us/step", "0 rows"))
    for name in real:
        print("%-22s %10.2f %14.2f" % (name, real[name] / steps * 1e6, empty[name] / steps * 1e6))
    print("%-22s %10.2f %14.2f" % ("sum of the calls", sum(real.values()) / steps * 1e6,
                                   sum(empty.values()) / steps * 1e6))
    print("step: queued in %.1f us, done in %.1f us (batch %d, hidden %d, %d steps)"
          % (queued * 1e6, wall * 1e6, batch, hidden, steps))


if __name__ == "__main__":
    main()
