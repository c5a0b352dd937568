"""Every booster's and every oracle's docstring has an Examples section, and its examples
run and print what they say (run as doctests here, by the test command; the values
printed are exact or rounded, so that they hold on every machine)."""

from __future__ import annotations

import doctest
import inspect
import io

import pytest

import oracleboost.oracles as oracles
from oracleboost.boosters import BOOSTERS
from oracleboost.oracles import Oracle

BOOSTER_CLASSES = list(dict.fromkeys(spec.estimator for spec in BOOSTERS.values()))
# every concrete hypothesis class (and wrapper) that oracleboost.oracles exports
ORACLE_CLASSES = [obj for obj in map(oracles.__dict__.get, oracles.__all__)
                  if inspect.isclass(obj) and issubclass(obj, Oracle)
                  and not inspect.isabstract(obj)]


def test_every_oracle_class_is_listed():
    assert len(ORACLE_CLASSES) == 12, [cls.__name__ for cls in ORACLE_CLASSES]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("cls", BOOSTER_CLASSES + ORACLE_CLASSES, ids=lambda cls: cls.__name__)
def test_the_examples_run(cls):
    assert "\n    Examples\n    --------\n" in cls.__doc__, f"{cls.__name__} has no Examples"
    (test,) = doctest.DocTestFinder(recurse=False).find(cls, cls.__name__, globs={})
    assert len(test.examples) >= 4
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()
