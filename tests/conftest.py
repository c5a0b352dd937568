"""Test-suite wiring: the ``cluster`` and ``slow`` markers, and pytest-xdist's workers.

Tests that start a Dask ``LocalCluster`` (2 worker processes) are marked ``cluster``:
every test in ``test_cluster*.py``, every test using the ``client`` or ``dask_cluster``
fixtures, and the tests that run an example on a cluster.  Their cost is the cluster's
round trips, not computation (a few thousand rows, ten rounds, several round trips a
round).  The README's test command leaves them out (``-m "not cluster and not slow"`` in
pyproject's addopts); CI runs them as a step of their own,
``python3 -m pytest -q -p no:cacheprovider -m cluster`` (``.ci/run``).

Tests marked ``slow`` (the documentation's build, the gallery's scripts, the examples
at their defaults, the experiments' quick runs and the long margin runs) are left out of
the README's test command too; CI runs them in their own step,
``python3 -m pytest -q -p no:cacheprovider -m slow``.

**Workers.**  pyproject's addopts run the suite on pytest-xdist's workers, one a core
(``-n auto --dist loadgroup``).  A test that starts a child process simply starts it:
the other workers keep the other cores busy.  Tests that share an expensive result made
once in a process (a module's fixture, :mod:`quick_runs`) carry one ``xdist_group``
mark, so that one worker makes it once; each file's cluster tests are one group here
(their LocalCluster is a module fixture).  The files of :data:`_ALONE` fit on dask arrays
three times larger than their workers' memory and assert what each worker held: each
of their tests runs while no other cluster test runs on another worker (a file lock,
shared by the other cluster tests: :func:`pytest_runtest_protocol`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import pytest

try:
    import fcntl
except ImportError:  # (not on Windows: there the cluster tests do not wait for each other)
    fcntl = None

# Each xdist worker's OpenMP and BLAS pools sized to its share of the cores (as
# scikit-learn's conftest does), before any test imports NumPy or LightGBM: two workers'
# pools of a thread a core each oversubscribe the cores, and OpenMP's spinning threads
# then made a 0.6 s LightGBM fit take a minute.  A test about thread counts sets its own.
if _workers := os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _share = str(max((os.cpu_count() or 1) // int(_workers), 1))
    for _pool in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_pool, _share)

_CLUSTER_FIXTURES = {"client", "dask_cluster"}

#: The cluster tests' files that run alone among the cluster tests: their workers hold
#: dask arrays near their memory limit (test_cluster_memory asserts each worker's peak
#: memory; test_cluster_big's workers spill and pause near it).
_ALONE = {"test_cluster_memory.py", "test_cluster_big.py"}


# (tryfirst: xdist's own hook reads the xdist_group marks added here)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name.startswith("test_cluster") or \
                _CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.cluster)
        if item.get_closest_marker("cluster") is not None:
            # one worker a file: the file's LocalCluster (a module fixture) starts once
            item.add_marker(pytest.mark.xdist_group(f"cluster-{item.path.name}"))


@contextlib.contextmanager
def _cluster_lock(config: pytest.Config, exclusive: bool):
    """Held by a cluster test on an xdist worker, shared or exclusive, for the whole of
    its setup, call and teardown (its module's LocalCluster starts and stops in them)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or fcntl is None:  # (one process: nothing runs beside it)
        yield
        return
    # one name for every run on the machine: two runs' memory tests would not share it
    # either (the file stays, empty, for the next run)
    path = Path(tempfile.gettempdir()) / "oracleboost-cluster-tests.lock"
    # (read-only: flock needs no more, and another user's file opens so too)
    lock = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(lock)  # (closing lets go of the lock)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    if item.get_closest_marker("cluster") is None:
        yield
        return
    with _cluster_lock(item.config, exclusive=item.path.name in _ALONE):
        yield
