#!/usr/bin/env python3
"""The Python layer's cost per call of the MLP example's preallocated SGD step: each call
of mlp_train.py --preallocated on a batch of zero rows (most calls queue no kernel) timed
alone, best of five loops, less an empty call's time; with MLP_CALLS (the program built
from mlp_calls.c), the same C calls beside it and the difference, the Python layer.

    python3 python/bench/step_calls.py [loops=20000] [hidden=512] [MLP_CALLS]
"""
import sys
import timeit

import numpy as np

import ocal
from mlp_ops import c_calls, step_calls_preallocated


def main():
    loops = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    hidden = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    gen = ocal.random.default_rng(1)
    w1, w2 = gen.normal(0, 0.05, (784, hidden)), gen.normal(0, 0.05, (hidden, 10))
    x, y = ocal.empty((0, 784)), ocal.empty(0, np.int32)
    calls = step_calls_preallocated(x, y, w1, w2, ocal.zeros(hidden), ocal.zeros(10), 0.1 / 256)

    def best(fn):
        return min(timeit.repeat(fn, number=loops, repeat=5)) / loops * 1e6

    empty = best(lambda: None)
    c = c_calls(sys.argv[3], hidden, loops, "best") if len(sys.argv) > 3 else {}
    print("device: %s; us per call, zero rows, an empty call's %.3f us taken off"
          % (ocal.get_context().device.name, empty))
    print("%-22s %8s %8s %8s" % ("call", "Python", "C", "layer"))
    total = [0.0, 0.0]
    for name, fn in calls:
        us = best(fn) - empty
        total[0] += us
        if name in c:
            total[1] += c[name]
            print("%-22s %8.3f %8.3f %8.3f" % (name, us, c[name], us - c[name]))
        else:
            print("%-22s %8.3f" % (name, us))
    print("%-22s %8.3f %8.3f %8.3f" % ("the step", total[0], total[1], total[0] - total[1]))


if __name__ == "__main__":
    main()
