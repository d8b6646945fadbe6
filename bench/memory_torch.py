#!/usr/bin/env python3
"""PyTorch peer figures for bench/memory: the same allocation pattern and transfer sizes.

alloc: 10,000 torch.empty(uint8) of mixed sizes (log-uniform 64 B to 64 MiB, up to 16 alive,
the same xorshift sequence as bench/memory), through PyTorch's caching allocator, and with the
cache emptied after every release (torch.cuda.empty_cache(), the nearest to OCAL_POOL=0), each
after a warm-up pass; "touch" also writes one byte into each new tensor.
transfer: host-to-device and device-to-host GB/s of a blocking copy from pageable memory and
from pin_memory() tensors, 1 MiB to 1 GiB, median of the repetitions.

    python3 bench/memory_torch.py [--quick]
"""
import argparse
import json
import math
import time

import torch

MASK = (1 << 64) - 1


def rng(state):
    x = state[0]
    x ^= x >> 12
    x ^= (x << 25) & MASK
    x ^= x >> 27
    state[0] = x
    return (x * 0x2545F4914F6CDD1D) & MASK


def alloc_pass(ops, touch, empty_cache, max_log2):
    live = [None] * 16
    state = [12345]
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(ops):
        slot = rng(state) % 16
        if live[slot] is not None:
            live[slot] = None
            if empty_cache:
                torch.cuda.empty_cache()
        l2 = 6.0 + (max_log2 - 6.0) * (rng(state) >> 11) / 9007199254740992.0
        n = int(math.pow(2.0, l2))
        t = torch.empty(n, dtype=torch.uint8, device="cuda")
        if touch:
            t[0] = 0
        live[slot] = t
    live = None
    if empty_cache:
        torch.cuda.empty_cache()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def median_time(fn, reps):
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    ops = 300 if a.quick else 10000
    max_log2 = 20.0 if a.quick else 26.0
    max_bytes = (4 << 20) if a.quick else (1 << 30)
    dev = torch.cuda.get_device_name(0)

    def line(**kw):
        print(json.dumps(dict(impl="torch", device=dev, **kw)), flush=True)

    for touch in (False, True):
        us = {}
        for mode, empty in (("pooled", False), ("unpooled", True)):
            alloc_pass(ops, touch, empty, max_log2)
            # The best of 5 passes, as bench/memory takes.
            t = min(alloc_pass(ops, touch, empty, max_log2) for _ in range(5))
            us[mode] = t / ops * 1e6
            line(bench="alloc", mode=mode + ("_touch" if touch else ""), buffers=ops,
                 us_per_alloc_release=round(us[mode], 3), best_pass_ms=round(t * 1e3, 2))
        line(bench="alloc_speedup", mode="touch" if touch else "plain",
             pooled_vs_unpooled=round(us["unpooled"] / us["pooled"], 1))

    pageable = torch.ones(max_bytes, dtype=torch.uint8)
    pinned = torch.ones(max_bytes, dtype=torch.uint8).pin_memory()
    nbytes = 1 << 20
    while nbytes <= max_bytes:
        reps = 5 if nbytes >= (256 << 20) else 11
        d = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        hp, hq = pageable[:nbytes], pinned[:nbytes]
        tp = median_time(lambda: d.copy_(hp), reps)
        tq = median_time(lambda: d.copy_(hq), reps)
        line(bench="transfer", dir="h2d", bytes=nbytes, pageable_gbs=round(nbytes / tp / 1e9, 2),
             pinned_gbs=round(nbytes / tq / 1e9, 2), pinned_vs_pageable=round(tp / tq, 2))
        tp = median_time(lambda: hp.copy_(d), reps)
        tq = median_time(lambda: hq.copy_(d), reps)
        line(bench="transfer", dir="d2h", bytes=nbytes, pageable_gbs=round(nbytes / tp / 1e9, 2),
             pinned_gbs=round(nbytes / tq / 1e9, 2), pinned_vs_pageable=round(tp / tq, 2))
        del d
        nbytes *= 4


if __name__ == "__main__":
    main()
