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
once in a process (a module's fixture, :mod:`quick_runs`) carry one
``xdist_group`` mark, so that one worker makes it once.  The cluster step runs on one
worker (:func:`pytest_xdist_auto_num_workers`): its tests start LocalClusters of two
processes each, and ``test_cluster_memory`` asserts each Dask worker's peak memory,
which must not share the machine with another cluster's fit.
"""

from __future__ import annotations

import pytest

_CLUSTER_FIXTURES = {"client", "dask_cluster"}


def _selects_cluster_tests(config: pytest.Config) -> bool:
    """Whether the run's ``-m`` expression can select ``cluster`` tests (the last ``-m``
    given wins: addopts' ``not cluster and not slow``, or the command line's)."""
    markexpr = config.getoption("markexpr", "") or ""
    return "cluster" in markexpr and "not cluster" not in markexpr


@pytest.hookimpl(optionalhook=True)  # (xdist's hook: unknown under -p no:xdist)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``'s worker count: none for the cluster step (pytest then runs in one
    process, as without xdist); otherwise xdist's own choice (one a core)."""
    if _selects_cluster_tests(config):
        return 0
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name.startswith("test_cluster") or \
                _CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.cluster)
