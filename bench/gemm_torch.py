#!/usr/bin/env python3
"""PyTorch peer figures for bench/gemm: the same GEMM shapes in FP32 with TF32 off, timed
with CUDA events (best of three rounds of >= 0.2 s), printed as the same JSON lines.

    python3 bench/gemm_torch.py [--max 8192]
"""
import argparse
import json

import torch


def rate(fn, flops):
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    one = start.elapsed_time(end) / 1e3
    reps = max(3, min(100000, int(0.2 / max(one, 1e-7)) + 1))
    best = one
    for _ in range(3):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3 / reps)
    return best, flops / best * 1e-9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=8192)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    print(json.dumps({"bench": "info", "impl": "torch", "torch": torch.__version__,
                      "device": torch.cuda.get_device_name(0), "allow_tf32": False}))
    shapes = []
    s = 256
    while s <= args.max:
        shapes.append(("square", s, s, s, "N", "N"))
        s *= 2
    shapes += [("fc1-fwd", 256, 512, 784, "N", "N"), ("fc2-fwd", 256, 10, 512, "N", "N"),
               ("fc1-dW", 784, 512, 256, "T", "N"), ("fc2-dW", 512, 10, 256, "T", "N"),
               ("fc2-dX", 256, 512, 10, "N", "T"), ("fc1-dX", 256, 784, 512, "N", "T")]
    for label, m, n, k, ta, tb in shapes:
        a = torch.rand((k, m) if ta == "T" else (m, k), device=dev) - 0.5
        b = torch.rand((n, k) if tb == "T" else (k, n), device=dev) - 0.5
        c = torch.empty((m, n), device=dev)
        opa = a.t() if ta == "T" else a
        opb = b.t() if tb == "T" else b
        sec, gflops = rate(lambda: torch.matmul(opa, opb, out=c), 2.0 * m * n * k)
        print(json.dumps({"bench": "gemm", "impl": "torch", "shape": label, "dtype": "f32",
                          "m": m, "n": n, "k": k, "ta": ta, "tb": tb, "us": round(sec * 1e6, 2),
                          "gflops": round(gflops, 1)}), flush=True)
    n = 1 << 26
    x = torch.rand(n, device=dev)
    y = torch.rand(n, device=dev)
    for op, fn, passes in [("copy", lambda: y.copy_(x), 2), ("axpy", lambda: y.add_(x, alpha=0.5), 3),
                           ("scal", lambda: x.mul_(0.999), 2), ("dot", lambda: torch.dot(x, y), 2),
                           ("nrm2", lambda: torch.linalg.vector_norm(x), 1)]:
        sec, _ = rate(fn, 1.0)
        print(json.dumps({"bench": "blas1", "impl": "torch", "op": op, "dtype": "f32", "n": n,
                          "us": round(sec * 1e6, 2), "gbps": round(passes * n * 4 / sec * 1e-9, 1)}),
              flush=True)


if __name__ == "__main__":
    main()
