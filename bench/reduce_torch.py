#!/usr/bin/env python3
"""PyTorch peer figures for bench/reduce: the same ops, sizes and byte conventions.

One JSON line per (op, size): GB/s and the ratio to a device copy (dst.copy_(src), bytes read
plus written) measured at the same size in the same run; axis sums and maxima of a square
matrix; the per-call time of a 1024-element sum (queued back to back, and waited for each
time). Times come from CUDA events over back-to-back calls, the best of three trials.

    python3 bench/reduce_torch.py [--quick] [--max-log2 N] [--matrix N]
"""
import argparse
import json
import time

import torch


def time_call(fn, target):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    one = time.perf_counter() - t0
    reps = int(min(2000, max(3, target / one if one > 0 else 1000)))
    best = float("inf")
    for _ in range(3):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3 / reps)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--max-log2", type=int, default=28)
    ap.add_argument("--matrix", type=int, default=16384)
    a = ap.parse_args()
    if a.quick:
        a.max_log2 = min(a.max_log2, 16)
        a.matrix = min(a.matrix, 512)
    target = 0.002 if a.quick else 0.05
    dev = torch.cuda.get_device_name(0)
    torch.backends.cuda.matmul.allow_tf32 = False

    def line(**kw):
        print(json.dumps(dict(bench="reduce", impl="torch", device=dev, dtype="f32", **kw)),
              flush=True)

    for lg in range(10, a.max_log2 + 1, 2):
        n = 1 << lg
        x = torch.full((n,), 0.5, device="cuda", dtype=torch.float32)
        y = torch.full((n,), -0.25, device="cuda", dtype=torch.float32)
        out = torch.empty_like(x)
        e = 4.0 * n
        ct = time_call(lambda: out.copy_(x), target)
        copy_gbps = 2 * e / ct / 1e9
        line(op="copy", n=n, us=round(ct * 1e6, 2), gbps=round(copy_gbps, 1), ratio=1.0)
        ops = [
            ("sum", lambda: torch.sum(x), e),
            ("dot", lambda: torch.dot(x, y), 2 * e),
            ("amax", lambda: torch.amax(x), e),
            ("argmax", lambda: torch.argmax(x), e),
            ("mean", lambda: torch.mean(x), e),
            ("norm2", lambda: torch.linalg.vector_norm(x), e),
            ("var", lambda: torch.var(x, correction=0), e),
            ("cumsum", lambda: torch.cumsum(x, 0, out=out), 2 * e),
        ]
        for name, fn, nbytes in ops:
            t = time_call(fn, target)
            g = nbytes / t / 1e9
            line(op=name, n=n, us=round(t * 1e6, 2), gbps=round(g, 1),
                 copy_gbps=round(copy_gbps, 1), ratio=round(g / copy_gbps, 3))
        del x, y, out
        torch.cuda.empty_cache()

    m = a.matrix
    x = torch.full((m, m), 0.5, device="cuda", dtype=torch.float32)
    dst = torch.empty_like(x)
    e = 4.0 * m * m
    copy_gbps = 2 * e / time_call(lambda: dst.copy_(x), target) / 1e9
    for axis in (0, 1):
        for name, fn in (("sum", lambda: torch.sum(x, dim=axis)),
                         ("amax", lambda: torch.amax(x, dim=axis))):
            t = time_call(fn, target)
            g = e / t / 1e9
            line(op=name, shape=[m, m], axis=axis, us=round(t * 1e6, 2), gbps=round(g, 1),
                 copy_gbps=round(copy_gbps, 1), ratio=round(g / copy_gbps, 3))
    del x, dst
    torch.cuda.empty_cache()

    x = torch.full((1024,), 0.5, device="cuda", dtype=torch.float32)
    queued = time_call(lambda: torch.sum(x), 0.002 if a.quick else 0.05)
    reps = 50 if a.quick else 2000
    total, best = 0.0, float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.sum(x)
        torch.cuda.synchronize()
        t = time.perf_counter() - t0
        total += t
        best = min(best, t)
    line(op="sum_latency", n=1024, queued_us=round(queued * 1e6, 2),
         roundtrip_us=round(total / reps * 1e6, 2), roundtrip_best_us=round(best * 1e6, 2))


if __name__ == "__main__":
    main()
