"""Each experiment's quick run, made once and shared by the files that check it: its
paper's tests (the claims), ``test_experiments_telgarsky``'s
``test_quick_mode_plots_and_prints`` (the figure and the files) and the swap and
margins tests.  A quick ``swap-weak-learner`` alone took some 25 s of a 2-core
machine, and it ran twice.  A run is a frozen :class:`~oracleboost.experiments.base.
Curves`: no test changes it.

The runs are made by a child process that starts when collection ends and runs on the
second core beside the suite (tests/early.py; the files that read them are marked
``early_subprocess(start)``): the same ``EXPERIMENTS[name](quick=True)`` call, one run
after the other in the order the suite reads them, each pickled as soon as it is made
(the suite waits for the one it needs).  The Grubb & Bagnell runs are made with one BLAS
thread, as ``test_experiments_grubb`` (which reads them first) made them in-process; the
others with the default threads, as their first readers did.  In-process they took some
80 s of the suite's one busy core (swap-weak-learner alone 39 s).
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import early
import pytest

from oracleboost.experiments import EXPERIMENTS
from oracleboost.experiments.base import Curves

#: The runs the child makes, in the order the suite first reads them (test files in
#: alphabetical order; test_experiments_telgarsky reads every experiment, in sorted
#: order, after its threshold test has read telgarsky2013-threshold).
EARLY = (
    "grubb2011-figure1",
    "grubb2011-figure2",
    "grubb2011-figure3-letter",
    "grubb2011-figure3-pendigits",
    "grubb2011-figure3-satimage",
    "grubb2011-figure3-splice",
    "ji2021-figure1",
    "ji2021-figure2",
    "lpboost-margins",
    "naghibi2014-label-noise",
    "swap-weak-learner",
    "telgarsky2013-threshold",
    "grubb2011-counterexample",
    "telgarsky2012-lower-bound",
    "telgarsky2013-figure2",
    "telgarsky2013-figure3",
)
#: The runs test_experiments_grubb reads first, under its one-BLAS-thread fixture.
ONE_BLAS_THREAD = tuple(n for n in EARLY if n.startswith("grubb2011-figure"))

_RUNS = early.DUMP + """
import contextlib, sys
from threadpoolctl import threadpool_limits
from oracleboost.experiments import EXPERIMENTS
folder, one_blas_thread = sys.argv[1], sys.argv[2].split(",")
for name in sys.argv[3:]:
    with (threadpool_limits(limits=1, user_api="blas") if name in one_blas_thread
          else contextlib.nullcontext()):
        dump(folder, name, EXPERIMENTS[name](quick=True))
"""


def start(folder: Path) -> subprocess.Popen:
    """The child that makes the :data:`EARLY` runs, pickled into ``folder``."""
    return early.python_child(_RUNS, folder, str(folder), ",".join(ONE_BLAS_THREAD), *EARLY)


#: A file that reads quick runs sets ``pytestmark = MARK`` (or adds it to its marks).
MARK = pytest.mark.early_subprocess.with_args(start)


@functools.cache
def quick_run(name: str) -> Curves:
    """``EXPERIMENTS[name](quick=True)``: made by the early child for the names of
    :data:`EARLY`, else in this process at its first use."""
    if name in EARLY:
        return early.result(start, name)
    return EXPERIMENTS[name](quick=True)
