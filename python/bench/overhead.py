#!/usr/bin/env python3
"""The cost of `c = a + b` on small float arrays from Python, in one run: ocal from Python,
the same C calls from C (ocal_buffer_create + ocal_binary + ocal_buffer_release in a C loop),
and PyOpenCL's Array on the same device. Each loop queues `iters` additions and then waits
for the queue; the figure is the wall time per addition (best of `repeats`).

    python3 python/bench/overhead.py [n=1000] [iters=2000] [repeats=40]

Prints one line per measurement, then the Python overhead over C and the ratio to PyOpenCL.
Last, the same two loops on empty arrays, where the C calls queue no kernel: their
difference is the Python layer's own cost without the device's noise around it."""
import sys
import time

import numpy as np

import ocal


def best(fns, repeats):
    """The best time of each function, run interleaved so that a slow moment of a shared
    machine falls on all of them."""
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, t in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            t.append(time.perf_counter() - t0)
    return [min(t) for t in times]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    ctx = ocal.get_context()
    h = np.random.default_rng(0).random(n, dtype=np.float32)
    a, b = ocal.asarray(h), ocal.asarray(h)

    def python_loop():
        for _ in range(iters):
            c = a + b
        ctx.finish()

    def c_loop():
        ocal._core._bench_c_add(a, b, iters)

    loops = [python_loop, c_loop]
    try:
        import pyopencl as cl
        import pyopencl.array as cla
    except ImportError:
        cl = None
    # The same device, in a context of PyOpenCL's own (with its default memory allocator).
    if cl is not None:
        queue = cl.CommandQueue(cl.Context.from_int_ptr(ctx.int_ptr, retain=True))
        pa, pb = cla.to_device(queue, h), cla.to_device(queue, h)

        def pyopencl_loop():
            for _ in range(iters):
                pc = pa + pb
            queue.finish()

        loops.append(pyopencl_loop)
    for fn in loops:
        fn()
    t = [x / iters for x in best(loops, repeats)]
    print("device: %s" % ctx.device.name)
    print("ocal from Python: %.3f us per c = a + b (n=%d)" % (t[0] * 1e6, n))
    print("ocal from C:      %.3f us per create + ocal_binary + release" % (t[1] * 1e6))
    print("Python overhead:  %.3f us" % ((t[0] - t[1]) * 1e6))
    if cl is None:
        print("PyOpenCL: not installed")
    else:
        print("PyOpenCL Array:   %.3f us per c = a + b" % (t[2] * 1e6))
        print("ocal is %.1fx faster than PyOpenCL's Array" % (t[2] / t[0]))
    a, b = ocal.empty(0), ocal.empty(0)
    e = [x / iters for x in best(loops[:2], repeats)]
    print("empty arrays:     Python %.3f us, C %.3f us: the Python layer costs %.3f us"
          % (e[0] * 1e6, e[1] * 1e6, (e[0] - e[1]) * 1e6))


if __name__ == "__main__":
    main()
