# bench/experiments/gemm_dmma_torch.py — PyTorch's float64 torch.matmul (C = A B, cuBLAS on the
# FP64 tensor cores) at 1024^3, 4096^3 and 8192^3, timed as gemm_dmma_probe times its variants:
# one warm-up, three rounds of about ROUND seconds of back-to-back calls (argument, default
# 0.25), the best round. One line, TFLOP/s:  torch f64  1024 T  4096 T  8192 T
import sys, time, torch
ROUND = float(sys.argv[1]) if len(sys.argv) > 1 else 0.25
line = "torch f64"
for n in (1024, 4096, 8192):
    a = torch.rand((n, n), device="cuda", dtype=torch.float64) * 2 - 1
    b = torch.rand((n, n), device="cuda", dtype=torch.float64) * 2 - 1
    c = torch.empty((n, n), device="cuda", dtype=torch.float64)
    f = lambda: torch.matmul(a, b, out=c)
    f(); torch.cuda.synchronize()
    t0 = time.perf_counter(); f(); torch.cuda.synchronize(); one = time.perf_counter() - t0
    reps = max(2, int(ROUND / max(one, 1e-6))); best = one
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps): f()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / reps)
    line += "  %d %.2f" % (n, 2 * n ** 3 / best * 1e-12)
    del a, b, c
print(line, flush=True)
