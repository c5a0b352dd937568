"""benchmarks/bench_cuda.py runs end to end: its ``--smoke`` mode on numba's CUDA
simulator (a few hundred rows; it times nothing worth reading), so that the script a GPU
session runs once, with minutes of device time, is known to run; and without a GPU or
``--smoke`` it says so and exits 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_cuda.py"


def _run(*args: str, simulator: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_every_section_runs_on_the_simulator():
    done = _run("--smoke", simulator=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for line in ("## Rounds on the GPU", "AdaBoost, n=400", "MABoost (entropy), n=400",
                 "functional regressor (squared), n=400", "## An AdaBoost round's kernels",
                 "histogram", "copies back", "## The CPU round",
                 "1 threads: ours", "scaling 1 -> 2 threads", "## Predictions",
                 "X on the device:", "through the device:"):
        assert line in done.stdout, line


def test_without_a_gpu_it_says_so():
    done = _run(simulator=True)  # the simulator without --smoke: nothing to time
    assert done.returncode == 0
    assert "skipped" in done.stdout
