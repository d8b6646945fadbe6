"""The examples of python/examples run and pass their own checks (small sizes)."""
import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


@pytest.mark.parametrize("script,args", [
    ("mlp_train.py", ["--steps", "30", "--hidden", "128", "--batch", "128"]),
    ("lobpcg_laplacian.py", ["20", "3"]),
    ("raw_kernel.py", ["96"]),
])
def test_example(script, args):
    pytest.importorskip("scipy")
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, script)] + args,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mlp_preallocated_step_trains_the_same():
    """--preallocated (out=, gemm into c, the C example's calls) gives the same losses as the
    step that makes new arrays; in both, the timed steps build or load no kernel program and
    allocate no device memory (the warm-up ran their body). Both then time the step on one
    batch as the C example's --bench-steps and --bench-blocks do."""
    args = [sys.executable, os.path.join(EXAMPLES, "mlp_train.py"), "--steps", "21",
            "--hidden", "64", "--batch", "64", "--min-accuracy", "0", "--stats",
            "--bench-steps", "3", "--bench-blocks", "2"]
    runs = [subprocess.run(args + extra, capture_output=True, text=True, timeout=300)
            for extra in ([], ["--preallocated"])]
    losses = [[line for line in r.stdout.splitlines() if line.startswith("step")] for r in runs]
    assert all(r.returncode == 0 for r in runs), runs[1].stdout + runs[1].stderr
    assert len(losses[0]) == 2 and losses[0] == losses[1]
    for r in runs:
        stats = [line for line in r.stdout.splitlines() if line.startswith("over the timed")]
        assert len(stats) == 1
        for counter in ("compiles +0", "disk_hits +0", "misses +0", "device_allocs +0"):
            assert counter in stats[0], stats[0]
        assert "us per step at batch 64 (median of 2 blocks of 3 steps" in r.stdout, r.stdout


@pytest.mark.parametrize("bad", [["--bench-blocks", "0"], ["--bench-steps", "-1"]])
def test_mlp_refuses_bad_bench_options(bad):
    """As the C example does (exit 2, the option named), before any device work."""
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "mlp_train.py")] + bad,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "--bench-blocks" in r.stderr and "--bench-steps" in r.stderr, r.stderr


def _doc_blocks():
    """The ```python blocks of README.md and docs/python.md, with where each starts."""
    top = os.path.dirname(os.path.dirname(EXAMPLES))
    blocks = []
    for page in ("README.md", os.path.join("docs", "python.md")):
        path = os.path.join(top, page)
        if not os.path.exists(path):
            continue
        lines, block, start = open(path, encoding="utf-8").read().split("\n"), None, 0
        for number, line in enumerate(lines, 1):
            if block is None and line == "```python":
                block, start = [], number + 1
            elif block is not None and line == "```":
                blocks.append(pytest.param("\n".join(block), id="%s:%d" % (page, start)))
                block = None
            elif block is not None:
                block.append(line)
    return blocks


@pytest.mark.parametrize("source", _doc_blocks())
def test_doc_block_runs(source):
    """A reader who pastes a Python block of the README or docs/python.md into an interpreter
    gets no error."""
    r = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, source + "\n" + r.stdout + r.stderr


def test_script_ends_with_work_queued(tmp_path):
    """A script may end right after queuing work (its last line an FFT whose kernel the
    implementation compiles at launch): the interpreter waits for every context's queue
    before the process's exit handlers run, so the process ends with status 0. Fresh caches
    make the work include a compile; without the wait PoCL's thread died in LLVM (SIGSEGV)."""
    env = dict(os.environ, POCL_CACHE_DIR=str(tmp_path / "pocl"),
               OCAL_CACHE_DIR=str(tmp_path / "ocal"))
    source = ("import numpy as np, ocal\n"
              "x = ocal.asarray(np.ones((64, 64), np.float32))\n"
              "y = x @ x\n"
              "z = ocal.fft.rfft(ocal.asarray(np.sin(np.arange(64.0))))\n")
    r = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
