"""How the gallery runs the scripts of ``examples/``: quick arguments, and which run.

sphinx-gallery runs each script as ``__main__`` inside the build, with ``sys.argv`` set
by :func:`quick_argv` (its ``reset_argv`` option): the scripts keep their own defaults
when run by hand, and the gallery passes each a smaller budget and ``--show`` (draw the
figure and leave it open: under the build's Agg backend ``plt.show()`` does nothing, and
sphinx-gallery's scraper takes the open figures).  ``tests/test_gallery.py`` runs every
script with these arguments the way the gallery does, so the test command checks them
without building the documentation.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: The gallery's arguments for each script it runs (a few seconds each on 2 cores).
QUICK_ARGV: dict[str, list[str]] = {
    "swap_weak_learner.py": ["--rounds", "30", "--show"],
    "watch_margins_and_gap.py": ["--rounds", "400", "--accelerated-rounds", "400", "--show"],
    "early_stopping.py": ["--rounds", "300", "--show"],
    "boost_any_regressor.py": ["--rounds", "100", "--show"],
    "cache_oracle_calls.py": ["--rounds", "10", "--samples", "1000", "--features", "50"],
    "explain_with_shap.py": ["--rounds", "100", "--show"],
    "plot_history_importance_margins.py": ["--rounds", "100", "--show"],
    "optuna_pruning_callback.py": ["--trials", "10", "--rounds", "40"],
    "mlflow_log_history.py": ["--rounds", "50"],
}

#: Scripts the gallery shows without running them, and why (said on the gallery's page,
#: ``examples/GALLERY_HEADER.rst``).
NOT_RUN: dict[str, str] = {
    "fit_on_dask_array.py": "starts a Dask cluster of two worker processes (about 40 s)",
    "experiment_grid_dask.py": "starts a Dask cluster of two worker processes (about 40 s)",
}

#: Optional packages a script needs: without any of them the gallery shows it without
#: running it.
NEEDS: dict[str, tuple[str, ...]] = {
    "explain_with_shap.py": ("shap",),
    "optuna_pruning_callback.py": ("optuna",),
    "mlflow_log_history.py": ("mlflow", "skops"),
}


def quick_argv(gallery_conf, script_vars) -> list[str]:
    """sphinx-gallery's ``reset_argv``: the arguments of the script being run."""
    return list(QUICK_ARGV[Path(script_vars["src_file"]).name])


def runnable() -> list[str]:
    """The scripts this build runs: those of :data:`QUICK_ARGV` whose needs import."""
    return [name for name in QUICK_ARGV
            if all(importlib.util.find_spec(package) is not None
                   for package in NEEDS.get(name, ()))]


def filename_pattern() -> str:
    """sphinx-gallery's ``filename_pattern``: the paths of :func:`runnable` scripts."""
    return "(" + "|".join(r"[\\/]" + re.escape(name) + "$" for name in runnable()) + ")"
