"""Each experiment's quick run, made once in a test process and shared by the tests
that check it: its paper's tests (the claims), ``test_experiments_telgarsky``'s
``test_quick_mode_plots_and_prints`` (the figure and the files) and the swap and
margins tests.  A quick ``swap-weak-learner`` alone took some 25 s of a 2-core
machine, and it ran twice.  A run is a frozen :class:`~oracleboost.experiments.base.
Curves`: no test changes it.

The runs take some 80 s of one core in all (swap-weak-learner alone 39 s): a test that
reads one is marked with :func:`reads_quick_runs`, which makes it ``slow`` (CI's step of
its own, ``pytest -m slow``; the README's test command leaves it out) and puts it in the
``quick-runs`` group of pytest-xdist (``--dist loadgroup``): one worker runs every such
test, so that each run is made once.  The Grubb & Bagnell runs are made with one BLAS
thread whichever test reads them first, as ``test_experiments_grubb`` makes its fits
(its ``one_blas_thread`` fixture: Figure 1's tiny products are many times slower on two
threads of a busy machine); the others with the default threads.
"""

from __future__ import annotations

import contextlib
import functools

import pytest
from threadpoolctl import threadpool_limits

from oracleboost.experiments import EXPERIMENTS
from oracleboost.experiments.base import Curves

#: The runs made under one BLAS thread, whichever test reads them first.
ONE_BLAS_THREAD = ("grubb2011-figure1", "grubb2011-figure2", "grubb2011-figure3-letter",
                   "grubb2011-figure3-pendigits", "grubb2011-figure3-satimage",
                   "grubb2011-figure3-splice")

#: The xdist group of the tests that read quick runs (one worker makes each run once).
GROUP = "quick-runs"


def reads_quick_runs(test):
    """Mark ``test`` as one that reads a quick run: ``slow``, in the :data:`GROUP`."""
    return pytest.mark.xdist_group(GROUP)(pytest.mark.slow(test))


@functools.cache
def quick_run(name: str) -> Curves:
    """``EXPERIMENTS[name](quick=True)``, made at its first use in this process."""
    with (threadpool_limits(limits=1, user_api="blas") if name in ONE_BLAS_THREAD
          else contextlib.nullcontext()):
        return EXPERIMENTS[name](quick=True)
