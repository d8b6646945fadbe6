"""PyTorch peer figures for bench/elementwise: the same operations, sizes and byte counts,
timed with CUDA events (best of 5 batches). Prints one JSON object per line."""
import json
import sys

import torch


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3 / reps)
    return best


def main():
    max_log2 = int(sys.argv[1]) if len(sys.argv) > 1 else 28
    dev = torch.device("cuda")
    name = torch.cuda.get_device_name(0)
    n_max = 1 << max_log2
    x = torch.rand(n_max, device=dev) * 2 - 1
    y = torch.rand(n_max, device=dev) * 2 - 1
    z = torch.empty(n_max, device=dev)
    bias = torch.rand(1024, device=dev)
    for lg in range(10, max_log2 + 1, 2):
        n = 1 << lg
        xs, ys, zs = x[:n], y[:n], z[:n]
        ops = {
            "copy": (lambda: ys.copy_(xs), 2),
            "add": (lambda: torch.add(xs, ys, out=zs), 3),
            "mul_scalar": (lambda: torch.mul(xs, 1.5, out=ys), 2),
            "relu": (lambda: torch.clamp_min(xs, 0, out=ys), 2),
            "exp": (lambda: torch.exp(xs, out=ys), 2),
            "axpy": (lambda: ys.add_(xs, alpha=0.5), 3),
        }
        if n >= 1024:
            xm, ym = xs.view(-1, 1024), ys.view(-1, 1024)
            ops["bias_add"] = (lambda: torch.add(xm, bias, out=ym), 2)
        t_copy = timed(ops["copy"][0], 20)
        reps = int(min(max(0.02 / t_copy, 20), 20000))
        copy_t = timed(ops["copy"][0], reps)
        copy_gbps = 2 * 4 * n / copy_t / 1e9
        for op, (fn, traffic) in ops.items():
            t = copy_t if op == "copy" else timed(fn, reps)
            gbps = traffic * 4 * n / t / 1e9
            print(json.dumps({"bench": "elementwise_torch", "device": name, "op": op, "n": n,
                              "us_per_call": round(t * 1e6, 3), "gbps": round(gbps, 1),
                              "copy_gbps": round(copy_gbps, 1),
                              "ratio_to_copy": round(gbps / copy_gbps, 3)}), flush=True)
    import time
    xs, ys, zs = x[:1024], y[:1024], z[:1024]
    for op, fn in {"add": lambda: torch.add(xs, ys, out=zs), "relu": lambda: torch.clamp_min(xs, 0, out=ys),
                   "axpy": lambda: ys.add_(xs, alpha=0.5)}.items():
        best = float("inf")
        for _ in range(200):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t0)
        print(json.dumps({"bench": "elementwise_small_torch", "device": name, "op": op, "n": 1024,
                          "us_per_call_sync_best": round(best * 1e6, 2)}), flush=True)


if __name__ == "__main__":
    main()
