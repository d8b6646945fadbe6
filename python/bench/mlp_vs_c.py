#!/usr/bin/env python3
"""The MLP example's SGD step from Python against the C example's, same run: alternates
examples/mlp_train (C) with python/examples/mlp_train.py (--preallocated, the C example's
calls into arrays made once, and the default step, new arrays per call), each timing the
same step on one batch in BLOCKS blocks of STEPS steps (--bench-steps, --bench-blocks), and
prints each alternation's figures and ratios to C, then the medians over the alternations.
Three figures per program, each the median of its blocks: the step's time (queued and done),
the host's time to queue it, and the thread's CPU time per step (the host's own cost,
whatever else the machine runs).

    python3 python/bench/mlp_vs_c.py C_EXAMPLE [pairs=9] [steps=100] [batch=256] [hidden=512] [blocks=10]
"""
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PY_EXAMPLE = os.path.join(HERE, "..", "examples", "mlp_train.py")
TIMES = re.compile(r"SGD step time: ([\d.]+) us per step.*queued a step in ([\d.]+) us, "
                   r"([\d.]+) us of its thread's CPU time")
FIGURES = ("step", "queueing", "CPU")


def run(cmd):
    """(us per step, us to queue a step, CPU us per step) of one run."""
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    found = TIMES.findall(out)
    if not found:
        raise SystemExit("mlp_vs_c: no step time in the output of %s:\n%s" % (cmd, out))
    return tuple(map(float, found[-1]))


def main():
    c_example = sys.argv[1]
    pairs, steps, batch, hidden, blocks = (
        list(map(int, sys.argv[2:7])) + [9, 100, 256, 512, 10][len(sys.argv) - 2:])[:5]
    size = ["--batch", str(batch), "--hidden", str(hidden)]
    bench = ["--bench-steps", str(steps), "--bench-blocks", str(blocks), "--min-accuracy", "0"]
    py = [sys.executable, PY_EXAMPLE, "--steps", "20", "--warmup", "2"]
    cmds = {
        "C": [c_example, "--epochs", "0", "--check-host", "0"] + bench + size,
        "preallocated": py + ["--preallocated"] + bench + size,
        "default": py + bench + size,
    }
    ratios = {k: tuple([] for _ in FIGURES) for k in cmds if k != "C"}
    print("batch %d, hidden %d, %d blocks of %d steps; us per step, us to queue it, CPU us "
          "per step; ratios to C" % (batch, hidden, blocks, steps))
    for i in range(pairs):
        t = {k: run(cmd) for k, cmd in cmds.items()}
        line = "%d: C %.1f %.1f %.1f" % (i + 1, *t["C"])
        for k, r in ratios.items():
            for j in range(len(FIGURES)):
                r[j].append(t[k][j] / t["C"][j])
            line += "  %s %.1f %.1f %.1f (%.3fx %.3fx %.3fx)" % (k, *t[k], *(x[-1] for x in r))
        print(line, flush=True)
    for k, r in ratios.items():
        print("median %s / C: " % k + ", ".join(
            "%s %.3fx" % (name, statistics.median(x)) for name, x in zip(FIGURES, r)))


if __name__ == "__main__":
    main()
