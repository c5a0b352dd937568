"""``tools/cuda_ptx_check.py``, the check of the GPU kernels for a real GPU without one:
its occupancy arithmetic (an SM of compute capability 9.0), and (slow) its record of a
GPU test's launches made in pytest workers on the simulator, then compiled and
assembled where numba finds libNVVM (the assembly where ``ptxas`` is found too).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("cuda_ptx_check",
                                               ROOT / "tools" / "cuda_ptx_check.py")
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)


@pytest.mark.parametrize("registers, shared, expected", [
    (32, 0, 1.0),        # 8 blocks of 256 threads: the SM's 2,048 threads
    (64, 0, 0.5),        # 16 K registers a block: 4 blocks
    (68, 16384, 0.375),  # 68 -> 72 a thread (a warp's 256-register unit): 3 blocks
    (90, 192, 0.25),     # 96 a thread: 2 blocks
    (255, 0, 0.125),     # one block
    (32, 49152, 0.5),    # 48 KiB (+ 1 KiB kept) a block of 228 KiB: 4 blocks
])
def test_occupancy_is_the_sm_s_arithmetic(registers, shared, expected):
    assert check.occupancy(registers, shared) == expected


def test_a_record_names_nothing_else_to_import_or_call():
    """A record is data: a module that is not a kernel module, a name its factory does
    not make, sizes that are not three ints, a type that is not a number: refused
    before anything is imported or built."""
    for entry, what in [
        ({"module": "os", "name": "system", "key": None}, "not a kernel module"),
        ({"module": "oracleboost.cuda.stump_kernels", "name": "histogram",
          "key": ["rm -rf", 1, 1]}, "three ints"),
    ]:
        with pytest.raises(ValueError, match=what):
            check._kernel(entry)
    with pytest.raises(ValueError, match="not a number"):
        check._signature([["scalar", "Array"]])


def _without_simulator() -> dict:
    return {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}


@pytest.mark.slow
def test_a_record_made_in_workers_is_compiled_where_libnvvm_is_found(tmp_path):
    path = tmp_path / "launches.json"
    code = check.record(str(path), ["tests/test_cuda_sums.py"], "histograms", jobs=2)
    assert code == 0
    entries = json.loads(path.read_text())
    names = {e["name"] for e in entries}
    assert {"start_query", "settle", "histogram", "scan_and_pick"} <= names
    assert all(e["key"] is not None for e in entries if e["name"] == "histogram")
    found = subprocess.run(
        [sys.executable, "-c", "from numba.cuda.cudadrv import nvvm; "
         "print(nvvm.is_available())"], env=_without_simulator(), capture_output=True,
        text=True)
    if found.stdout.strip() != "True":
        pytest.skip("numba finds no libNVVM here: the record is not compiled")
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "cuda_ptx_check.py"),
                           "--launches", str(path)], cwd=ROOT, env=_without_simulator(),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    total = len(entries) + 2  # and the histogram at a GPU's two shapes
    assert f"{total} of {total} signatures compiled" in done.stdout
