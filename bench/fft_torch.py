#!/usr/bin/env python3
"""cuFFT's figures through PyTorch, for the shapes bench/fft prints (the peer of ocal's FFT).

Single-precision complex-to-complex, out of place, forward: torch.fft.fft (1-D, batched) and
torch.fft.fft2 (2-D). One JSON line per shape, with the same fields as bench/fft:
milliseconds per call, GFLOP/s (5 N log2 N per transform), GB/s (bytes read + written).
"""
import json
import math
import sys

import torch

SHAPES = [(1, (1024,), 65536), (1, (4096,), 32768), (1, (1 << 20,), 128), (1, (1 << 24,), 8),
          (2, (4096, 4096), 1)]


def bench(ndim, lens, batch):
    x = torch.randn(batch, *lens, dtype=torch.complex64, device="cuda")
    f = torch.fft.fft if ndim == 1 else torch.fft.fft2
    for _ in range(3):
        y = f(x)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    y = f(x)
    end.record()
    torch.cuda.synchronize()
    one = start.elapsed_time(end)
    reps = max(10, min(2000, int(500 / max(one, 1e-3))))
    start.record()
    for _ in range(reps):
        y = f(x)
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / reps
    del y
    n = math.prod(lens)
    flops = 5 * n * math.log2(n) * batch
    nbytes = 2 * n * batch * 8
    shape = ("2d:" if ndim == 2 else "") + "x".join(str(v) for v in lens)
    return {"bench": "fft", "engine": "cufft (torch.fft)", "device": torch.cuda.get_device_name(),
            "kind": "c2c", "precision": "f32", "shape": shape, "batch": batch,
            "ms": round(ms, 4), "gflops": round(flops / (ms * 1e-3) / 1e9, 1),
            "gbs": round(nbytes / (ms * 1e-3) / 1e9, 1)}


def main():
    if not torch.cuda.is_available():
        print(json.dumps({"bench": "fft", "engine": "cufft (torch.fft)", "error": "no CUDA"}))
        return 1
    for ndim, lens, batch in SHAPES:
        print(json.dumps(bench(ndim, lens, batch)), flush=True)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
