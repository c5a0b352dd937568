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
suite goes on (``tests/early.py``).  The files that read such children run after the
others (their own order kept, and each file's tests together): the children, started
when collection ends, have the rest of the suite's time to finish on the second core.
Read in alphabetical order, the suite reached the swap and Telgarsky files some 3
minutes in and waited nearly 2 minutes for their children (measured on 2 cores).
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
    # the files that read early children last (a stable sort: every other order kept)
    reading = {item.path for item in items if item.get_closest_marker("early_subprocess")}
    items.sort(key=lambda item: item.path in reading)


def pytest_collection_finish(session: pytest.Session) -> None:
    if not session.config.option.collectonly:  # (nothing will run)
        early.start_marked(session.items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    early.finish()
