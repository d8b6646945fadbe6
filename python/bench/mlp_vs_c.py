#!/usr/bin/env python3
"""The MLP example's SGD step from Python against the C example's, same run: alternates
examples/mlp_train (C, --bench-steps) with python/examples/mlp_train.py (--preallocated, the
C example's calls into arrays made once, and the default step, new arrays per call), and
prints each alternation's times and ratios to C, then the medians. Two figures per program:
the step's time (queued and done) and the host's time to queue it; at a tiny batch the
second is the host cost of the calls, the Python layer's beside C's.

    python3 python/bench/mlp_vs_c.py C_EXAMPLE [pairs=9] [steps=500] [batch=256] [hidden=512]
"""
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PY_EXAMPLE = os.path.join(HERE, "..", "examples", "mlp_train.py")
TIMES = re.compile(r"([\d.]+) us per (?:SGD )?step.*queued a step in ([\d.]+) us")


def run(cmd):
    """(us per step, us to queue a step) of one run, from its last matching line."""
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    found = TIMES.findall(out)
    if not found:
        raise SystemExit("mlp_vs_c: no step time in the output of %s:\n%s" % (cmd, out))
    return tuple(map(float, found[-1]))


def main():
    c_example = sys.argv[1]
    pairs, steps, batch, hidden = (list(map(int, sys.argv[2:6])) + [9, 500, 256, 512][len(sys.argv) - 2:])[:4]
    size = ["--batch", str(batch), "--hidden", str(hidden)]
    cmds = {
        "C": [c_example, "--epochs", "0", "--min-accuracy", "0", "--bench-steps", str(steps)] + size,
        "preallocated": [sys.executable, PY_EXAMPLE, "--preallocated", "--steps", str(steps),
                         "--warmup", "20", "--min-accuracy", "0"] + size,
        "default": [sys.executable, PY_EXAMPLE, "--steps", str(steps), "--warmup", "20",
                    "--min-accuracy", "0"] + size,
    }
    ratios = {k: ([], []) for k in cmds if k != "C"}
    print("batch %d, hidden %d, %d steps; us per step (us to queue it), ratio to C" % (batch, hidden, steps))
    for i in range(pairs):
        t = {k: run(cmd) for k, cmd in cmds.items()}
        line = "%d: C %.1f (%.1f)" % (i + 1, *t["C"])
        for k in ratios:
            ratios[k][0].append(t[k][0] / t["C"][0])
            ratios[k][1].append(t[k][1] / t["C"][1])
            line += "  %s %.1f (%.1f) %.3fx (%.3fx)" % (k, *t[k], ratios[k][0][-1], ratios[k][1][-1])
        print(line, flush=True)
    for k, (step, queue) in ratios.items():
        print("median %s / C: step %.3fx, queueing %.3fx" % (k, statistics.median(step), statistics.median(queue)))


if __name__ == "__main__":
    main()
