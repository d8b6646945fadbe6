#!/usr/bin/env python3
"""Trains a two-layer perceptron, 784 -> 512 (ReLU) -> 10, with softmax cross-entropy and
mini-batch SGD, every step on the device: the Python form of examples/mlp_train.c.

The data is a synthetic 10-class problem (class means plus noise), made on the host from
--seed. Prints the loss every few steps and the held-out accuracy, and the time of one SGD
step; exits 1 when the final accuracy is below --min-accuracy.

    python3 python/examples/mlp_train.py [--steps 60] [--batch 256] [--device cpu]
"""
import argparse
import statistics
import sys
import time

import numpy as np

import ocal
from ocal.linalg import axpy, gemm


def data(rng, n, means):
    labels = rng.integers(0, 10, n)
    x = means[labels] + rng.normal(scale=1.0, size=(n, means.shape[1]))
    return x.astype(np.float32), labels.astype(np.int64)  # i64, as the C example's


def counters():
    """Counters whose change over the timed steps says what besides the step ran in them:
    kernel programs built or loaded, pool misses, and (Linux) the thread's context switches."""
    ctx = ocal.get_context()
    cache, pool = ctx.cache_stats(), ctx.memory_stats()
    out = {k: cache[k] for k in ("compiles", "disk_hits", "memory_hits")}
    out.update((k, pool[k]) for k in ("hits", "misses", "device_allocs"))
    try:
        with open("/proc/thread-self/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.endswith("ctxt_switches"):
                    out[key] = int(value)
    except OSError:
        pass
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default=None)
    ap.add_argument("--min-accuracy", type=float, default=0.9)
    ap.add_argument("--warmup", type=int, default=2,
                    help="steps run before the timed ones (kernel builds, first allocations)")
    ap.add_argument("--preallocated", action="store_true",
                    help="write every step into arrays made once (out=, in-place operators), "
                         "as the C example does, instead of new arrays per call")
    ap.add_argument("--bench-steps", type=int, default=0,
                    help="after training, time the same step on one batch, as the C example's "
                         "--bench-steps does")
    ap.add_argument("--bench-blocks", type=int, default=1,
                    help="... in this many blocks of --bench-steps steps, printing the median "
                         "block (the C example's --bench-blocks)")
    ap.add_argument("--stats", action="store_true",
                    help="print how the kernel caches, the memory pool and the thread's context "
                         "switches counted over the timed steps (all 0 but the switches when "
                         "warm)")
    args = ap.parse_args()
    if args.bench_steps < 0 or args.bench_blocks < 1:
        ap.error("--bench-steps wants a whole number >= 0 and --bench-blocks one >= 1, not %d "
                 "and %d" % (args.bench_steps, args.bench_blocks))
    if args.device:
        ocal.set_context(ocal.Context(args.device))
    rng = np.random.default_rng(args.seed)
    dim, classes, B = 784, 10, args.batch
    means = rng.normal(scale=0.3, size=(classes, dim))
    gen = ocal.random.default_rng(args.seed)
    w1 = gen.normal(0, np.sqrt(2 / dim), (dim, args.hidden))
    w2 = gen.normal(0, np.sqrt(2 / args.hidden), (args.hidden, classes))
    b1, b2 = ocal.zeros(args.hidden), ocal.zeros(classes)
    step = args.lr / B

    def sgd_step(x, y):
        h = ocal.relu(x @ w1 + b1)                       # forward
        z = h @ w2 + b2
        loss, dz = ocal.softmax_cross_entropy(z, y)      # loss and softmax(z) - onehot
        dh = gemm(dz, w2, transb=True)                   # backward: dz W2^T
        dh = ocal.where(h > 0, dh, 0.0)
        gemm(h, dz, w2, transa=True, alpha=-step, beta=1.0)   # W2 -= step h^T dz, in place
        gemm(x, dh, w1, transa=True, alpha=-step, beta=1.0)
        axpy(-step, dz.sum(axis=0), b2)                  # b2 -= step * sum(dz), in place
        axpy(-step, dh.sum(axis=0), b1)
        return loss

    # The same step into arrays made once: fewer objects per step, the C example's calls.
    h, z, dh = ocal.empty((B, args.hidden)), ocal.empty((B, classes)), ocal.empty((B, args.hidden))
    mask, loss = ocal.empty((B, args.hidden), bool), ocal.empty(B)
    db1, db2 = ocal.empty(args.hidden), ocal.empty(classes)

    def sgd_step_preallocated(x, y):
        gemm(x, w1, h)                                   # h = relu(x W1 + b1)
        ocal.add(h, b1, out=h)
        ocal.relu(h, out=h)
        gemm(h, w2, z)                                   # z = h W2 + b2
        ocal.add(z, b2, out=z)
        ocal.softmax_cross_entropy(z, y, out=(loss, z))  # z becomes dz
        gemm(z, w2, dh, transb=True)
        gemm(h, z, w2, transa=True, alpha=-step, beta=1.0)
        axpy(-step, ocal.sum(z, axis=0, out=db2), b2)
        ocal.where(ocal.greater(h, 0, out=mask), dh, 0.0, out=dh)
        gemm(x, dh, w1, transa=True, alpha=-step, beta=1.0)
        axpy(-step, ocal.sum(dh, axis=0, out=db1), b1)
        return loss

    if args.preallocated:
        sgd_step = sgd_step_preallocated

    batches = [tuple(map(ocal.asarray, data(rng, B, means))) for _ in range(8)]
    test_x, test_y = data(rng, 1000, means)

    def train(steps):
        """Runs steps SGD steps; returns the steps whose mean loss was kept, and those means
        (a device array written in the loop: no allocation and no wait in it)."""
        reads = [s for s in range(steps) if s % 20 == 0 or s == steps - 1]
        means, k = ocal.empty(len(reads)), 0
        for s in range(steps):
            x, y = batches[s % len(batches)]
            loss = sgd_step(x, y)
            if s % 20 == 0 or s == steps - 1:
                ocal.mean(loss, out=means[k])
                k += 1
        return reads, means

    # The warm-up runs the timed loop's own body, the loss read included: the first call of
    # each kernel loads or builds its program (milliseconds on a GPU driver), which must not
    # land in the timed steps.
    train(args.warmup)
    ocal.get_context().finish()
    before = counters() if args.stats else None
    t0 = time.perf_counter()
    reads, means = train(args.steps)  # the losses stay on the device until after the timed loop
    queued = (time.perf_counter() - t0) / args.steps  # host time to queue a step
    ocal.get_context().finish()
    per_step = (time.perf_counter() - t0) / args.steps
    if args.stats:
        after = counters()
        print("over the timed steps: " + ", ".join("%s %+d" % (k, after[k] - before[k])
                                                   for k in before))
    losses = means.get()
    for s, mean in zip(reads, losses):
        print("step %4d  loss %.4f" % (s, mean))
    first, mean = losses[0], losses[-1]
    logits = ocal.relu(ocal.asarray(test_x) @ w1 + b1) @ w2 + b2
    acc = float((logits.argmax(axis=1) == ocal.asarray(test_y)).mean().get())
    print("held-out accuracy %.3f; %.1f us per SGD step (batch %d; the host queued a step in "
          "%.1f us) on %s" % (acc, per_step * 1e6, B, queued * 1e6, ocal.get_context().device.name))
    if args.bench_steps > 0:
        bench(sgd_step, batches[0], args.bench_steps, args.bench_blocks)
    return 0 if acc >= args.min_accuracy and mean < first else 1


def bench(sgd_step, batch, steps, blocks):
    """The C example's --bench-steps and --bench-blocks: the same step on one batch, timed
    between two waits in blocks; prints the median block, the fastest, the host's time to
    queue a step and its thread's CPU time per step."""
    ctx = ocal.get_context()
    x, y = batch
    for _ in range(5):
        sgd_step(x, y)
    block, queue, cpu = [], [], []
    for _ in range(blocks):
        ctx.finish()
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(steps):
            sgd_step(x, y)
        queue.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
        ctx.finish()
        block.append(time.perf_counter() - t0)
    per = 1e6 / steps
    print("SGD step time: %.1f us per step at batch %d (median of %d blocks of %d steps, "
          "fastest block %.1f; the host queued a step in %.1f us, %.1f us of its thread's CPU "
          "time)" % (per * statistics.median(block), x.shape[0], blocks, steps, per * min(block),
                     per * statistics.median(queue), per * statistics.median(cpu)))


if __name__ == "__main__":
    sys.exit(main())
