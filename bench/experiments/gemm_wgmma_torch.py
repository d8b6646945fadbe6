# bench/experiments/gemm_wgmma_torch.py — PyTorch (cuBLAS) beside gemm_wgmma_probe: the same
# products, timed the same way (wall time of back-to-back calls, best of three rounds of about
# 0.1 s, random inputs in [-1, 1)): NN and NT squares in TF32, f16 and bf16, then the MLP's
# products and 512^3 in TF32 and FP32.  Run: python3 bench/experiments/gemm_wgmma_torch.py
import time, torch
torch.backends.cuda.matmul.allow_tf32 = True
dev = "cuda"
def best(fn):
    fn(); torch.cuda.synchronize()
    t0 = time.perf_counter(); fn(); torch.cuda.synchronize(); one = time.perf_counter() - t0
    reps = max(2, int(0.1 / max(one, 1e-6))); b = one
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps): fn()
        torch.cuda.synchronize()
        b = min(b, (time.perf_counter() - t0) / reps)
    return b
def rnd(shape, dt): return (torch.rand(shape, device=dev) * 2 - 1).to(dt)
for name, dt in (("tf32", torch.float32), ("f16", torch.float16), ("bf16", torch.bfloat16)):
    for layout in ("NN", "NT"):
        line = "torch %s %s" % (name, layout)
        for n in (1024, 4096, 8192):
            a, b = rnd((n, n), dt), rnd((n, n), dt)
            c = torch.empty((n, n), device=dev, dtype=dt)
            bb = b.t() if layout == "NT" else b
            s = best(lambda: torch.matmul(a, bb, out=c))
            line += "  %d %.1f" % (n, 2 * n ** 3 / s * 1e-12)
            del a, b, c, bb
        print(line, flush=True)
for label, m, n, k, ta, tb in (("fc1_forward_NN", 256, 512, 784, 0, 0), ("fc1_dW_TN", 784, 512, 256, 1, 0),
                               ("fc1_dX_NT", 256, 784, 512, 0, 1), ("square_NN", 512, 512, 512, 0, 0)):
    for tf in (True, False):
        torch.backends.cuda.matmul.allow_tf32 = tf
        a = rnd((k, m) if ta else (m, k), torch.float32); b = rnd((n, k) if tb else (k, n), torch.float32)
        aa = a.t() if ta else a; bb = b.t() if tb else b
        c = torch.empty((m, n), device=dev)
        s = best(lambda: torch.matmul(aa, bb, out=c))
        print("torch mlp %s %s %dx%dx%d %.2f TFLOP/s" % ("tf32" if tf else "f32", label, m, n, k, 2 * m * n * k / s * 1e-12), flush=True)
torch.backends.cuda.matmul.allow_tf32 = True
