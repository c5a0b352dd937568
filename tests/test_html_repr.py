"""A booster's notebook drawing (scikit-learn's HTML repr) shows its oracle as a nested
estimator with its own parameters, and a wrapping oracle what it wraps (issue 22),
instead of flattening them into the booster's (``oracle__oracle__lambda_l2``)."""

from __future__ import annotations

import re

import pytest
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import estimator_html_repr

from oracleboost.boosters import BOOSTERS, CoordinateBoostingClassifier
from oracleboost.oracles import CachedOracle, LightGBMOracle, SklearnOracle


def _boxes(html: str) -> list[str]:
    return re.findall(r"(?:oracle|estimator): [A-Za-z]+(?: \(default\))?", html)


def test_the_oracle_and_what_it_wraps_are_nested_boxes(tmp_path):
    model = CoordinateBoostingClassifier(
        CachedOracle(LightGBMOracle(params={"lambda_l2": 1.0}), tmp_path))
    html = estimator_html_repr(model)
    assert _boxes(html) == ["oracle: CachedOracle", "oracle: LightGBMOracle"]
    assert "lambda_l2" in html
    assert "oracle__oracle__lambda_l2" not in html  # not flattened into the booster's table
    ridge = estimator_html_repr(CoordinateBoostingClassifier(SklearnOracle(Ridge(alpha=3.0))))
    assert _boxes(ridge) == ["oracle: SklearnOracle", "estimator: Ridge"]


@pytest.mark.parametrize("name", sorted(BOOSTERS))
def test_every_booster_draws_its_default_oracle(name):
    html = estimator_html_repr(BOOSTERS[name].make())
    assert len(_boxes(html)) == 1 and _boxes(html)[0].endswith("(default)")


def test_in_a_pipeline():
    pipe = make_pipeline(StandardScaler(), CoordinateBoostingClassifier(LightGBMOracle()))
    html = estimator_html_repr(pipe)
    assert "StandardScaler" in html and _boxes(html) == ["oracle: LightGBMOracle"]
