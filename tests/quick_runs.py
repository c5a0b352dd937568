"""Each experiment's quick run, made once per test process and shared by the files that
check it: its paper's tests (the claims), ``test_experiments_telgarsky``'s
``test_quick_mode_plots_and_prints`` (the figure and the files) and the swap and
margins tests.  A quick ``swap-weak-learner`` alone took some 25 s of a 2-core
machine, and it ran twice.  A run is a frozen :class:`~oracleboost.experiments.base.
Curves`: no test changes it."""

from __future__ import annotations

import functools

from oracleboost.experiments import EXPERIMENTS
from oracleboost.experiments.base import Curves


@functools.cache
def quick_run(name: str) -> Curves:
    """``EXPERIMENTS[name](quick=True)``, made at its first use in this process."""
    return EXPERIMENTS[name](quick=True)
