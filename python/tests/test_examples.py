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
