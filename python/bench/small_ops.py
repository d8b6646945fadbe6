#!/usr/bin/env python3
"""A small elementwise operation and a small reduction from Python, ocal against CuPy and
PyTorch in the same run (those that import): `c = a + b` and `s = a.sum()` on n floats,
queued (iters calls, then one wait) and waited (a wait after every call), best of repeats
interleaved loops. Prints one line per library, operation and mode, in microseconds per call.

    python3 python/bench/small_ops.py [n=1000] [iters=2000] [repeats=20]
"""
import sys
import time

import numpy as np


def best(loops, repeats):
    times = {k: [] for k in loops}
    for _ in range(repeats):
        for k, fn in loops.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: min(v) for k, v in times.items()}


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    h = np.random.default_rng(0).random(n, dtype=np.float32)
    libs = {}
    import ocal
    ctx = ocal.get_context()
    libs["ocal"] = (ocal.asarray(h), ocal.asarray(h), ctx.finish)
    print("ocal device: %s" % ctx.device.name)
    try:
        import cupy
        libs["cupy"] = (cupy.asarray(h), cupy.asarray(h), cupy.cuda.Stream.null.synchronize)
    except Exception as e:  # not installed, or no CUDA device
        print("cupy: %s" % e)
    try:
        import torch
        if torch.cuda.is_available():
            libs["torch"] = (torch.tensor(h, device="cuda"), torch.tensor(h, device="cuda"),
                             torch.cuda.synchronize)
    except Exception as e:
        print("torch: %s" % e)
    loops = {}
    for name, (a, b, sync) in libs.items():
        def add_queued(a=a, b=b, sync=sync):
            for _ in range(iters):
                c = a + b
            sync()

        def add_waited(a=a, b=b, sync=sync):
            for _ in range(iters):
                c = a + b
                sync()

        def sum_queued(a=a, sync=sync):
            for _ in range(iters):
                s = a.sum()
            sync()

        def sum_waited(a=a, sync=sync):
            for _ in range(iters):
                s = a.sum()
                sync()

        for op, fn in (("add queued", add_queued), ("add waited", add_waited),
                       ("sum queued", sum_queued), ("sum waited", sum_waited)):
            fn()
            loops[(name, op)] = fn
    t = best(loops, repeats)
    for (name, op), sec in sorted(t.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print("%-6s %-11s %8.2f us per call (n=%d)" % (name, op, sec / iters * 1e6, n))


if __name__ == "__main__":
    main()
