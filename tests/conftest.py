"""Test-suite wiring: the ``cluster`` marker, and subprocesses started early.

Tests that start a Dask ``LocalCluster`` (2 worker processes) are marked ``cluster``:
every test in ``test_cluster*.py``, every test using the ``client`` or ``dask_cluster``
fixtures, and the tests that run an example on a cluster.  Their cost is the cluster's
round trips, not computation (a few thousand rows, ten rounds, several round trips a
round), and together they took about a third of the suite's time on a 2-core machine.
The README's test command leaves them out (``-m "not cluster"`` in pyproject's addopts)
so that it stays within its 15-minute budget; CI runs them as its second step,
``python3 -m pytest -q -p no:cacheprovider -m cluster`` (``.ci/run``).

**Started early.**  A test marked ``early_subprocess(start)`` runs a long child process
(the README's main job, offline: about 100 s on a 2-core machine) whose result it only
checks.  The process starts as soon as collection ends (``start(folder)`` with a new
folder), and runs on the second core while the suite goes on in this process; the test
fixture ``early_child`` then waits for it.  The test asserts the same as it would on a
child it started itself.  A child still running when the session ends is killed.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

_CLUSTER_FIXTURES = {"client", "dask_cluster"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name.startswith("test_cluster") or \
                _CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.cluster)


_EARLY: dict[str, tuple[subprocess.Popen, Path]] = {}


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        marker = item.get_closest_marker("early_subprocess")
        if marker is not None and item.nodeid not in _EARLY:
            folder = Path(tempfile.mkdtemp(prefix="oracleboost-early-"))
            _EARLY[item.nodeid] = (marker.args[0](folder), folder)


@pytest.fixture
def early_child(request: pytest.FixtureRequest) -> tuple[subprocess.Popen, Path]:
    """The test's child process started when collection ended (its ``early_subprocess``
    marker's ``start``), and the folder it was given."""
    return _EARLY[request.node.nodeid]


def pytest_sessionfinish(session: pytest.Session) -> None:
    for child, folder in _EARLY.values():
        if child.poll() is None:
            child.kill()
            child.wait()
        shutil.rmtree(folder, ignore_errors=True)
    _EARLY.clear()
