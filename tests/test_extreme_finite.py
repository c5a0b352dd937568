"""Rows holding both +max and −max float64 are finite: fit and predict take them without
a RuntimeWarning (scikit-learn's quick finiteness test sums X, inf − inf), and ±inf is
still refused by name."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor
from oracleboost.oracles import StumpOracle

BIG = np.finfo(np.float64).max


def _data() -> tuple[np.ndarray, np.ndarray]:
    X = np.array([[BIG, -BIG]] * 10 + [[0.0, 1.0]] * 10)
    return X, np.array([0, 1] * 10)


@pytest.mark.parametrize("make", [
    lambda: CoordinateBoostingClassifier(StumpOracle(), n_estimators=3),
    lambda: FunctionalGradientRegressor(StumpOracle(), n_estimators=3),
])
def test_rows_of_plus_and_minus_max_fit_and_predict_without_a_warning(make):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = make().fit(X, y)
        assert np.all(np.isfinite(model.predict(X)))


def test_infinity_is_still_refused_by_name():
    X, y = _data()
    X[13, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        CoordinateBoostingClassifier(StumpOracle(), n_estimators=3).fit(X, y)
