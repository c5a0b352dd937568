"""Test-suite wiring: the ``cluster`` marker, and subprocesses started early.

Tests that start a Dask ``LocalCluster`` (2 worker processes) are marked ``cluster``:
every test in ``test_cluster*.py``, every test using the ``client`` or ``dask_cluster``
fixtures, and the tests that run an example on a cluster.  Their cost is the cluster's
round trips, not computation (a few thousand rows, ten rounds, several round trips a
round), and together they took about a third of the suite's time on a 2-core machine.
The README's test command leaves them out (``-m "not cluster"`` in pyproject's addopts)
so that it stays within its 15-minute budget; CI runs them as its second step,
``python3 -m pytest -q -p no:cacheprovider -m cluster`` (``.ci/run``).

**Started early.**  A test marked ``early_subprocess(start)`` checks a long child
process that starts as soon as collection ends and runs on the second core while the
suite goes on (``tests/early.py``).
"""

from __future__ import annotations

import early
import pytest

_CLUSTER_FIXTURES = {"client", "dask_cluster"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name.startswith("test_cluster") or \
                _CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.cluster)


def pytest_collection_finish(session: pytest.Session) -> None:
    if not session.config.option.collectonly:  # (nothing will run)
        early.start_marked(session.items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    early.finish()
