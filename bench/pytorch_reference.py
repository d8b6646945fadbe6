#!/usr/bin/env python3
"""PyTorch's figures for the operations `ocal bench` times, written in the same results format
(ocal-bench-1, see tools/bench/bench.h), so that

    python3 bench/pytorch_reference.py --json torch.json
    ocal bench --compare torch.json

shows ocal beside PyTorch on the same card. Same suites, operations, sizes, byte counts and
FLOP counts as ocal's; CUDA when there is a CUDA device (timed with CUDA events), else the CPU
(timed with the wall clock). FP32 GEMMs run with TF32 off. Each figure is the best of three
rounds of back-to-back calls, each round about as long as ocal's.

    python3 bench/pytorch_reference.py [--quick] [--suite LIST] [--device cuda|cpu]
                                       [--json FILE] [--max-log2 N] [--gemm-max N]

Suites: bandwidth, elementwise, reduce, gemm, fft, sparse (ocal's cache suite has no PyTorch
peer). The sparse suite builds the matrices of tools/bench/sparse.c (the same hash for the
irregular one; it needs NumPy) and times torch.sparse CSR products (cuSPARSE), a CG loop
written with PyTorch operations and torch.lobpcg.
"""
import argparse
import datetime
import json
import math
import sys
import time

try:
    import torch
except ImportError:  # an optional script: say so plainly
    sys.exit("pytorch_reference.py: PyTorch is not installed (pip install torch)")

SUITES = ("bandwidth", "elementwise", "reduce", "gemm", "fft", "sparse")


class Bench:
    def __init__(self, args):
        self.quick = args.quick
        self.dev = torch.device(args.device)
        self.cuda = self.dev.type == "cuda"
        self.max_log2 = args.max_log2 or (16 if args.quick else 28)
        self.gemm_max = args.gemm_max or (256 if args.quick else 8192)
        self.records = []
        self.copy = {}

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def time(self, fn, target):
        """Seconds per call: warm-up, one timed call to size the rounds, best of three."""
        fn()
        self.sync()
        t0 = time.perf_counter()
        fn()
        self.sync()
        one = time.perf_counter() - t0
        reps = int(min(100000, max(3, target / max(one, 1e-7))))
        best = one
        for _ in range(3):
            if self.cuda:
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(reps):
                    fn()
                end.record()
                end.synchronize()
                each = start.elapsed_time(end) / 1e3 / reps
            else:
                t0 = time.perf_counter()
                for _ in range(reps):
                    fn()
                each = (time.perf_counter() - t0) / reps
            best = min(best, each)
        return best

    def target(self):
        return 0.002 if self.quick else 0.02

    def add(self, suite, op, dtype, size, n, metric, value, unit, ratio=None, us=None, note=""):
        rec = {"suite": suite, "op": op, "dtype": dtype, "size": str(size), "n": n,
               "metric": metric, "value": float("%.6g" % value), "unit": unit}
        if ratio is not None:
            rec["ratio_to_copy"] = float("%.6g" % ratio)
        if us is not None:
            rec["us"] = float("%.6g" % us)
        if note:
            rec["note"] = note
        self.records.append(rec)
        print("pytorch_reference: %s %s %s %s" % (suite, op, size, metric), file=sys.stderr,
              end="\r" if sys.stderr.isatty() else "\n", flush=True)

    def sizes(self):
        return [1 << lg for lg in range(10, self.max_log2 + 1, 2)]

    def copy_gbps(self, n):
        if n not in self.copy:
            src = torch.full((n,), 0.5, device=self.dev)
            dst = torch.empty_like(src)
            t = self.time(lambda: dst.copy_(src), self.target())
            self.copy[n] = 8.0 * n / t / 1e9
        return self.copy[n]

    # ---- suites ------------------------------------------------------------------------

    def bandwidth(self):
        for n in self.sizes():
            g = self.copy_gbps(n)
            self.add("bandwidth", "copy", "f32", n, n, "bandwidth", g, "GB/s", 1.0,
                     8.0 * n / g / 1e3, "device to device, bytes read + written")
        if not self.cuda:
            return
        n = 1 << min(self.max_log2, 26)
        host = torch.zeros(n)  # pageable, as ocal's malloc'ed array
        dev = torch.empty(n, device=self.dev)
        for op, fn in (("h2d", lambda: dev.copy_(host)), ("d2h", lambda: host.copy_(dev))):
            t = self.time(fn, 0.005 if self.quick else 0.1)
            self.add("bandwidth", op, "f32", n, n, "bandwidth", 4.0 * n / t / 1e9, "GB/s",
                     us=t * 1e6, note="pageable host memory, blocking")

    def elementwise(self):
        nmax = 1 << self.max_log2
        x = torch.rand(nmax, device=self.dev) * 2 - 1
        y = torch.rand(nmax, device=self.dev) * 2 - 1
        z = torch.empty(nmax, device=self.dev)
        bias = torch.rand(1024, device=self.dev)

        def ops(n):
            xs, ys, zs = x[:n], y[:n], z[:n]
            xm, ym = xs.view(-1, 1024), ys.view(-1, 1024)
            return [("add", lambda: torch.add(xs, ys, out=zs), 3),
                    ("mul_scalar", lambda: torch.mul(xs, 1.5, out=ys), 2),
                    ("relu", lambda: torch.clamp_min(xs, 0, out=ys), 2),
                    ("exp", lambda: torch.exp(xs, out=ys), 2),
                    ("axpy", lambda: ys.add_(xs, alpha=0.5), 3),
                    ("bias_add", lambda: torch.add(xm, bias, out=ym), 2)]

        for n in self.sizes():
            copy = self.copy_gbps(n)
            for op, fn, traffic in ops(n):
                t = self.time(fn, self.target())
                g = traffic * 4.0 * n / t / 1e9
                self.add("elementwise", op, "f32", n, n, "bandwidth", g, "GB/s", g / copy, t * 1e6)
        small = {op: fn for op, fn, _ in ops(1024)}
        for op in ("add", "relu", "axpy"):
            self.small_call("elementwise", op, small[op])

    def small_call(self, suite, op, fn):
        queued = self.time(fn, 0.002 if self.quick else 0.05)
        best = math.inf
        for _ in range(20 if self.quick else 200):
            t0 = time.perf_counter()
            fn()
            self.sync()
            best = min(best, time.perf_counter() - t0)
        self.add(suite, op, "f32", 1024, 1024, "call_queued", queued * 1e6, "us",
                 note="calls back to back")
        self.add(suite, op, "f32", 1024, 1024, "call_roundtrip", best * 1e6, "us",
                 note="one call and a synchronize, best")

    def reduce(self):
        nmax = 1 << self.max_log2
        x = torch.full((nmax,), 0.5, device=self.dev)
        y = torch.full((nmax,), -0.25, device=self.dev)
        out = torch.empty(nmax, device=self.dev)
        for n in self.sizes():
            xs, ys, outs = x[:n], y[:n], out[:n]
            copy = self.copy_gbps(n)
            for op, fn, traffic in [
                    ("sum", lambda: torch.sum(xs), 1), ("dot", lambda: torch.dot(xs, ys), 2),
                    ("amax", lambda: torch.amax(xs), 1), ("argmax", lambda: torch.argmax(xs), 1),
                    ("mean", lambda: torch.mean(xs), 1),
                    ("norm2", lambda: torch.linalg.vector_norm(xs), 1),
                    ("var", lambda: torch.var(xs, correction=0), 1),
                    ("cumsum", lambda: torch.cumsum(xs, 0, out=outs), 2)]:
                t = self.time(fn, self.target())
                g = traffic * 4.0 * n / t / 1e9
                self.add("reduce", op, "f32", n, n, "bandwidth", g, "GB/s", g / copy, t * 1e6)
        m = 512 if self.quick else 16384
        if m * m <= nmax:
            xm = x[:m * m].view(m, m)
            copy = self.copy_gbps(m * m)
            for axis in (0, 1):
                for op, fn in (("sum", lambda: torch.sum(xm, dim=axis)),
                               ("amax", lambda: torch.amax(xm, dim=axis))):
                    t = self.time(fn, self.target())
                    g = 4.0 * m * m / t / 1e9
                    self.add("reduce", "%s_axis%d" % (op, axis), "f32", "%dx%d" % (m, m), m * m,
                             "bandwidth", g, "GB/s", g / copy, t * 1e6)
        xs = x[:1024]
        self.small_call("reduce", "sum", lambda: torch.sum(xs))

    def gemm(self):
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        shapes = []
        s = 128 if self.quick else 256
        while s <= self.gemm_max:
            shapes.append(("square", s, s, s, "n", "n"))
            s *= 2
        if not self.quick:
            shapes += [("MLP fc1 forward", 256, 512, 784, "n", "n"),
                       ("MLP fc2 forward", 256, 10, 512, "n", "n"),
                       ("MLP fc1 dW", 784, 512, 256, "t", "n"),
                       ("MLP fc2 dW", 512, 10, 256, "t", "n"),
                       ("MLP fc2 dX", 256, 512, 10, "n", "t"),
                       ("MLP fc1 dX", 256, 784, 512, "n", "t")]
        for label, m, n, k, ta, tb in shapes:
            a = torch.rand((k, m) if ta == "t" else (m, k), device=self.dev) - 0.5
            b = torch.rand((n, k) if tb == "t" else (k, n), device=self.dev) - 0.5
            c = torch.empty((m, n), device=self.dev)
            opa = a.t() if ta == "t" else a
            opb = b.t() if tb == "t" else b
            t = self.time(lambda: torch.matmul(opa, opb, out=c), 0.01 if self.quick else 0.2)
            self.add("gemm", "gemm_" + ta + tb, "f32", "%dx%dx%d" % (m, n, k), m, "gflops",
                     2.0 * m * n * k / t * 1e-9, "GFLOP/s", us=t * 1e6,
                     note=label + "; TF32 off")
        # The same products with TF32 on (ocal's OCAL_GEMM_PRECISION=tf32 rows, dtype "tf32"):
        # 1024^3, 4096^3, 8192^3 and the MLP's shapes. Only on CUDA, where TF32 means
        # something; ocal prints its rows only where its tensor-core probe passes.
        if self.dev.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = True
            tf32 = [sh for sh in shapes if sh[0] != "square" or sh[1] in (1024, 4096, 8192)]
            for label, m, n, k, ta, tb in tf32:
                a = torch.rand((k, m) if ta == "t" else (m, k), device=self.dev) - 0.5
                b = torch.rand((n, k) if tb == "t" else (k, n), device=self.dev) - 0.5
                c = torch.empty((m, n), device=self.dev)
                opa = a.t() if ta == "t" else a
                opb = b.t() if tb == "t" else b
                t = self.time(lambda: torch.matmul(opa, opb, out=c), 0.01 if self.quick else 0.2)
                self.add("gemm", "gemm_" + ta + tb, "tf32", "%dx%dx%d" % (m, n, k), m, "gflops",
                         2.0 * m * n * k / t * 1e-9, "GFLOP/s", us=t * 1e6,
                         note=label + "; TF32 on")
            torch.backends.cuda.matmul.allow_tf32 = False
            # f16 and bf16 (ocal's rows where its tensor-core probe passed): C of the same type.
            for name, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
                for sq in (1024, 4096, 8192):
                    if sq > self.gemm_max:
                        continue
                    a = (torch.rand((sq, sq), device=self.dev) - 0.5).to(dt)
                    b = (torch.rand((sq, sq), device=self.dev) - 0.5).to(dt)
                    c = torch.empty((sq, sq), device=self.dev, dtype=dt)
                    t = self.time(lambda: torch.matmul(a, b, out=c), 0.2)
                    self.add("gemm", "gemm_nn", name, "%dx%dx%d" % (sq, sq, sq), sq, "gflops",
                             2.0 * sq ** 3 / t * 1e-9, "GFLOP/s", us=t * 1e6,
                             note="square; %s" % name)
        # f64 squares (ocal's "f64" rows; its note names the engine).
        if not self.quick:
            for sq in (1024, 4096, 8192):
                if sq > self.gemm_max:
                    continue
                a = torch.rand((sq, sq), device=self.dev, dtype=torch.float64) - 0.5
                b = torch.rand((sq, sq), device=self.dev, dtype=torch.float64) - 0.5
                c = torch.empty((sq, sq), device=self.dev, dtype=torch.float64)
                t = self.time(lambda: torch.matmul(a, b, out=c), 0.2)
                self.add("gemm", "gemm_nn", "f64", "%dx%dx%d" % (sq, sq, sq), sq, "gflops",
                         2.0 * sq ** 3 / t * 1e-9, "GFLOP/s", us=t * 1e6, note="square; f64")
        n = 1 << (16 if self.quick else 26)
        x = torch.rand(n, device=self.dev) - 0.5
        y = torch.rand(n, device=self.dev) - 0.5
        rows, cols = 4096, n // 4096
        am, xs, ys = y.view(rows, cols), x[:cols], torch.empty(rows, device=self.dev)
        copy = self.copy_gbps(n)
        ops = [("blas_axpy", lambda: y.add_(x, alpha=0.5), 3),
               ("blas_scal", lambda: x.mul_(0.999), 2),
               ("blas_dot", lambda: torch.dot(x, y), 2),
               ("blas_nrm2", lambda: torch.linalg.vector_norm(x), 1),
               ("gemv", lambda: torch.mv(am, xs, out=ys), 1)]
        for op, fn, passes in ops:
            if self.quick and op in ("blas_scal", "blas_nrm2"):
                continue
            t = self.time(fn, 0.005 if self.quick else 0.05)
            g = passes * 4.0 * n / t / 1e9
            self.add("gemm", op, "f32", n, n, "bandwidth", g, "GB/s", g / copy, t * 1e6)

    def fft(self):
        shapes = ([(1, (256,), 64), (1, (1024,), 16), (2, (64, 64), 2)] if self.quick else
                  [(1, (1024,), 65536), (1, (4096,), 32768), (1, (1 << 20,), 128),
                   (1, (1 << 24,), 8), (2, (4096, 4096), 1)])
        for ndim, lens, batch in shapes:
            x = torch.randn(batch, *lens, dtype=torch.complex64, device=self.dev)
            f = torch.fft.fft if ndim == 1 else torch.fft.fft2
            t = self.time(lambda: f(x), 0.01 if self.quick else 0.2)
            points = math.prod(lens)
            size = ("2d:%dx%d" % lens) if ndim == 2 else "%dx%d" % (lens[0], batch)
            flops = 5.0 * points * math.log2(points) * batch
            self.add("fft", "c2c", "c64", size, points, "gflops", flops / t * 1e-9, "GFLOP/s",
                     us=t * 1e6, note="torch.fft; c2c forward; batch %d" % batch)
            del x
            if self.cuda:
                torch.cuda.empty_cache()

    # ---- sparse (tools/bench/sparse.c builds the same matrices) -------------------------

    @staticmethod
    def _unit(x):
        import numpy as np
        with np.errstate(over="ignore"):
            z = x + np.uint64(0x9E3779B97F4A7C15)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
        return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)

    def _laplacian(self, d, g, dtype=torch.float32):
        """The d-D Laplacian of side g as a CSR tensor with int32 indices."""
        import numpy as np
        n = g ** d
        p = np.arange(n, dtype=np.int64)
        rows, cols, vals = [p], [p], [np.full(n, 2.0 * d)]
        stride = 1
        for _ in range(d):
            c = (p // stride) % g
            for sgn, ok in ((-1, c > 0), (1, c + 1 < g)):
                rows.append(p[ok])
                cols.append(p[ok] + sgn * stride)
                vals.append(np.full(int(ok.sum()), -1.0))
            stride *= g
        r = torch.from_numpy(np.concatenate(rows))
        c = torch.from_numpy(np.concatenate(cols))
        v = torch.from_numpy(np.concatenate(vals)).to(dtype)
        a = torch.sparse_coo_tensor(torch.stack([r, c]), v, (n, n)).coalesce()
        a = a.to(self.dev).to_sparse_csr()
        return torch.sparse_csr_tensor(a.crow_indices().to(torch.int32),
                                       a.col_indices().to(torch.int32), a.values(), (n, n))

    def _powerlaw(self, rows):
        import numpy as np
        u = self._unit(np.arange(rows, dtype=np.uint64))
        lens = np.minimum(np.floor(4.0 / np.power(1.0 - u, 1.0 / 1.6)), rows // 8).astype(np.int64)
        crow = np.zeros(rows + 1, dtype=np.int64)
        np.cumsum(lens, out=crow[1:])
        nnz = int(crow[-1])
        e = np.arange(nnz, dtype=np.uint64)
        with np.errstate(over="ignore"):
            col = (self._unit_raw(e ^ np.uint64(0x5BD1E995)) % np.uint64(rows)).astype(np.int32)
        del e
        val = (self._unit(np.arange(nnz, dtype=np.uint64) + np.uint64(0x1234567)) - 0.5).astype(np.float32)
        return torch.sparse_csr_tensor(torch.from_numpy(crow.astype(np.int32)).to(self.dev),
                                       torch.from_numpy(col).to(self.dev),
                                       torch.from_numpy(val).to(self.dev), (rows, rows))

    @staticmethod
    def _unit_raw(x):
        import numpy as np
        with np.errstate(over="ignore"):
            z = x + np.uint64(0x9E3779B97F4A7C15)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            return z ^ (z >> np.uint64(31))

    def _spmv(self, name, a):
        n = a.shape[0]
        nnz = a.values().numel()
        x = torch.rand(n, device=self.dev) * 2 - 1
        t = self.time(lambda: torch.mv(a, x), 0.005 if self.quick else 0.2)
        byts = 4.0 * (n + 1) + 8.0 * nnz + 8.0 * n
        g = byts / t / 1e9
        copy = self.copy_gbps(int(byts / 8))
        self.add("sparse", "spmv", "f32", "%s:%d" % (name, n), nnz, "bandwidth", g, "GB/s",
                 g / copy, t * 1e6, "torch.sparse CSR (cuSPARSE); nnz %d" % nnz)

    def _cg(self, a):
        n = a.shape[0]
        b = torch.rand(n, device=self.dev) * 2 - 1
        iters = 20 if self.quick else 200

        def cg():
            # The same work per iteration as ocal_cg: A p, two dot products, three updates,
            # one scalar brought to the host for the stopping test.
            x = torch.zeros_like(b)
            r = b.clone()
            p = r.clone()
            rr = torch.dot(r, r)
            for _ in range(iters):
                q = torch.mv(a, p)
                alpha = rr / torch.dot(p, q)
                x.add_(alpha * p)
                r.sub_(alpha * q)
                rr_new = torch.dot(r, r)
                if math.sqrt(rr_new.item()) <= 1e-30:
                    break
                p = r + (rr_new / rr) * p
                rr = rr_new
            return x
        cg()
        best = 1e30
        for _ in range(3):
            self.sync()
            t0 = time.perf_counter()
            cg()
            self.sync()
            best = min(best, time.perf_counter() - t0)
        self.add("sparse", "cg_iteration", "f32", "lap2d:%d" % n, n, "time", best / iters * 1e6,
                 "us", us=best / iters * 1e6, note="CG loop of torch ops on cuSPARSE")

    def _lobpcg(self, g):
        import numpy as np
        a = self._laplacian(2, g, torch.float64)
        n = g * g
        x0 = torch.from_numpy((self._unit(np.arange(n * 8, dtype=np.uint64)) * 2 - 1)
                              .reshape(n, 8)).to(self.dev)
        steps = [0]

        def tracker(worker):
            steps[0] = int(worker.ivars["istep"])

        def run():
            try:
                return torch.lobpcg(a, k=8, X=x0.clone(), largest=False, tol=1e-7, niter=1000,
                                    tracker=tracker)
            except Exception:  # older PyTorch without CSR support here: COO
                return torch.lobpcg(a.to_sparse_coo(), k=8, X=x0.clone(), largest=False,
                                    tol=1e-7, niter=1000, tracker=tracker)
        run()
        best = 1e30
        for _ in range(1 if self.quick else 2):
            self.sync()
            t0 = time.perf_counter()
            e, v = run()
            self.sync()
            best = min(best, time.perf_counter() - t0)
        r = torch.sparse.mm(a, v) if a.layout == torch.sparse_coo else a @ v
        res = (r - v * e).norm(dim=0).max().item()
        size = "lap2d:%dx%d:k8" % (g, g)
        self.add("sparse", "lobpcg", "f64", size, n, "time", best * 1e3, "ms", us=best * 1e6,
                 note="torch.lobpcg; %d steps; lambda0 %.10f; max res %.1e"
                 % (steps[0], e[0].item(), res))
        self.add("sparse", "lobpcg", "f64", size, n, "iterations", steps[0], "iter",
                 note="torch.lobpcg istep (tol 1e-7 relative)")

    def sparse(self):
        g2, g3 = (64, 16) if self.quick else (4096, 256)
        prow = 4096 if self.quick else 9 << 20
        a = self._laplacian(2, g2)
        self._spmv("lap2d", a)
        self._cg(a)
        del a
        self._spmv("lap3d", self._laplacian(3, g3))
        self._spmv("powerlaw", self._powerlaw(prow))
        if self.cuda:
            torch.cuda.empty_cache()
        for g in ((20,) if self.quick else (64, 100)):
            self._lobpcg(g)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI sizes")
    ap.add_argument("--suite", default=",".join(SUITES), help="comma-separated suites")
    ap.add_argument("--device", choices=("cuda", "cpu"),
                    default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--json", default="-", help="results file ('-': stdout)")
    ap.add_argument("--max-log2", type=int, default=0)
    ap.add_argument("--gemm-max", type=int, default=0)
    args = ap.parse_args()
    suites = [s for s in args.suite.split(",") if s]
    bad = [s for s in suites if s not in SUITES]
    if bad or not suites:
        ap.error("unknown suite %s (suites: %s)" % (",".join(bad), ", ".join(SUITES)))
    if args.device == "cuda" and not torch.cuda.is_available():
        ap.error("no CUDA device")
    torch.manual_seed(0)
    b = Bench(args)
    for s in SUITES:
        if s in suites:
            t0 = time.perf_counter()
            getattr(b, s)()
            print("pytorch_reference: %s done in %.1f s" % (s, time.perf_counter() - t0),
                  file=sys.stderr, flush=True)
    if b.cuda:
        device = torch.cuda.get_device_name(0)
        platform = "CUDA %s" % torch.version.cuda
    else:
        import platform as pf
        device = pf.processor() or pf.machine()
        platform = "CPU, %d threads" % torch.get_num_threads()
    doc = {"format": "ocal-bench-1", "impl": "pytorch", "ocal_version": "",
           "torch_version": torch.__version__, "device": device, "platform": platform,
           "driver": "CUDA %s" % torch.version.cuda if b.cuda else "",
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "quick": args.quick, "records": b.records}
    text = json.dumps(doc, indent=1) + "\n"
    if args.json == "-":
        sys.stdout.write(text)
    else:
        with open(args.json, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
