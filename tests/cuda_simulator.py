"""numba's CUDA simulator for the GPU tests (:mod:`oracleboost.cuda`): no GPU needed.

numba reads ``NUMBA_ENABLE_CUDASIM`` when its configuration loads, and its
``numba.core.config.ENABLE_CUDASIM`` is read again when ``numba.cuda`` is first imported,
so importing this module (numba imported, ``numba.cuda`` not yet) selects the simulator.
Where ``numba.cuda`` was already imported without it (:data:`IN_CHILD`), a test module
runs itself in a child process with the environment variable set
(:func:`run_in_a_child`).  A GPU test module imports :func:`simulator_here` and
:func:`test_in_a_child_process` from here: the first skips its tests where the simulator
is off, the second then runs the module in the child.  The switch stays on in this
process: only the GPU's own modules import ``numba.cuda``, so other tests do not see it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba.core.config
import pytest

ROOT = Path(__file__).resolve().parents[1]

#: ``numba.cuda`` was imported without the simulator: the GPU tests run in a child.
IN_CHILD = "numba.cuda" in sys.modules and not numba.core.config.ENABLE_CUDASIM
if not IN_CHILD:
    numba.core.config.ENABLE_CUDASIM = True


def run_in_a_child(path: str) -> None:
    """Run the test module ``path`` in a child process on the simulator; assert it
    passed."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p",
                           "no:cacheprovider", path], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]


@pytest.fixture(autouse=True)
def simulator_here(request: pytest.FixtureRequest) -> None:
    """Skip a GPU test where ``numba.cuda`` runs without the simulator (the module's
    :func:`test_in_a_child_process` runs it in a child instead)."""
    if IN_CHILD and request.node.name != "test_in_a_child_process":
        pytest.skip("numba.cuda was imported without the simulator: run in a child process")


def test_in_a_child_process(request: pytest.FixtureRequest) -> None:
    """The importing module's tests, in a child process on the simulator, where this
    process imported ``numba.cuda`` without it."""
    if not IN_CHILD:
        pytest.skip("the simulator is on in this process")
    run_in_a_child(str(request.path))
