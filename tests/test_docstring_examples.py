"""Every booster's docstring has an Examples section, and its examples run and print
what they say (run as doctests here; the values printed are rounded so that they hold
on every machine)."""

from __future__ import annotations

import doctest
import io

import pytest

from oracleboost.boosters import BOOSTERS

CLASSES = list(dict.fromkeys(spec.estimator for spec in BOOSTERS.values()))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_the_examples_run(cls):
    assert "\n    Examples\n    --------\n" in cls.__doc__, f"{cls.__name__} has no Examples"
    (test,) = doctest.DocTestFinder(recurse=False).find(cls, cls.__name__, globs={})
    assert len(test.examples) >= 4
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()
