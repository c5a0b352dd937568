"""Warnings an oracle silences around a fit: safe when threads overlap."""

import itertools
import threading
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from oracleboost._warnings import silenced
from oracleboost.oracles import MLPOracle

_PROBES = itertools.count()


def _shown(category):
    """Whether a warning of ``category`` is shown now (a new message each time: a shown
    one is not shown twice from one place)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.warn(f"probe {next(_PROBES)}", category, stacklevel=2)
    return len(caught)


def test_silenced_blocks_that_overlap_leave_the_filters_as_they_were():
    """A enters, B enters, A leaves, B leaves: the order in which two threads'
    ``catch_warnings`` leave its filter behind for good (B restores the list it saved,
    which holds A's).  ``silenced`` removes its filter when the last block leaves."""
    before = list(warnings.filters)
    a, b = silenced(ConvergenceWarning), silenced(ConvergenceWarning)
    a.__enter__()
    b.__enter__()
    assert _shown(ConvergenceWarning) == 0
    a.__exit__(None, None, None)
    assert _shown(ConvergenceWarning) == 0  # B is still inside
    warnings.filterwarnings("error", category=FutureWarning)  # the user's, meanwhile
    users = warnings.filters[0]
    b.__exit__(None, None, None)
    assert warnings.filters == [users, *before]  # ours gone, the user's kept
    warnings.filters.remove(users)
    assert warnings.filters == before
    assert _shown(ConvergenceWarning) == 1
    assert _shown(UserWarning) == 1  # only the category was ever silenced


def test_mlp_fits_on_threads_leave_the_filters_as_they_were():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    bound = MLPOracle(max_iter=3).bind(X)  # stops early: a ConvergenceWarning silenced
    before = list(warnings.filters)
    errors = []

    def fit(seed):
        try:
            for k in range(3):
                bound.project(np.sin(X[:, 0] + seed + k), random_state=seed)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=fit, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert warnings.filters == before
    assert _shown(ConvergenceWarning) == 1


@pytest.mark.parametrize("category", [Warning, ConvergenceWarning])
def test_silenced_takes_its_filter_away_after_an_error(category):
    before = list(warnings.filters)
    with pytest.raises(KeyError), silenced(category):
        raise KeyError
    assert warnings.filters == before
