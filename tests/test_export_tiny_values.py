"""Values LightGBM reads as 0: ``to_lightgbm`` predicts as the model, bit for bit, for
every finite row, or refuses by name.

LightGBM's prediction on a dense row reads every value of magnitude at most
``kZeroThreshold`` (``1e-35f``) as 0.  A stump or scikit-learn tree compares the values
themselves, so a split within 1e-35 of 0 (a scikit-learn tree on a feature coded ±1
splits at 0.0) has no LightGBM equivalent; LightGBM's own trees read such values as
LightGBM does, and the stump oracle puts its thresholds off that range (at LightGBM's
own, ±1e-35f) unless two training values lie within it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor
from oracleboost.export import lightgbm as export
from oracleboost.export.lightgbm import ExportWarning, lightgbm_model_string
from oracleboost.oracles import LightGBMOracle, StumpOracle, TreeOracle
from oracleboost.oracles.trees import ZERO_THRESHOLD as KZ

TINY = [0.0, -0.0, 1e-36, -1e-36, 5e-36, -5e-36, 1e-35, -1e-35, KZ, -KZ,
        float(np.nextafter(KZ, 1.0)), -float(np.nextafter(KZ, 1.0)),
        float(np.nextafter(KZ, 0.0)), -float(np.nextafter(KZ, 0.0)), 2e-35, -2e-35,
        5e-324, -5e-324, 1e-320, -1e-320, 1e-300, -1e-300, 1e-45, -1e-45]
#: Rows to predict: every tiny value, NaN, and values well away from 0.
GRID = np.array(TINY + [np.nan, 1.0, -1.0, 0.5, -0.5, 1e-30, -1e-30])

ORACLES = {
    "stumps": lambda: StumpOracle(),
    "sklearn_trees": lambda: TreeOracle(max_depth=2),
    "lightgbm_trees": lambda: LightGBMOracle(num_leaves=4, min_data_in_leaf=2,
                                             params={"num_threads": 1}),
    # zeros (and values LightGBM reads as 0) and NaN missing together: the default side
    "lightgbm_zero_as_missing": lambda: LightGBMOracle(
        num_leaves=4, min_data_in_leaf=2, params={"num_threads": 1, "zero_as_missing": True}),
}

#: Pairs of training values: a split between the two falls at their midpoint (or
#: wherever the oracle puts it), tiny or not.
PAIRS = [(-1.0, 1.0), (0.0, 1e-36), (-1e-36, 1e-36), (-1e-35, 1e-35), (-KZ, KZ),
         (1e-36, 2e-35), (-2e-35, -1e-36), (-5e-324, 5e-324), (0.0, 5e-324),
         (-3e-35, 3e-35), (KZ, 1.0), (-1.0, -KZ), (-1.0, 0.0), (0.0, 1.0)]


def _fit(oracle: str, a: float, b: float, seed: int, nan: bool):
    """A regressor on one feature of values a and b (and NaN), a second of noise."""
    rng = np.random.default_rng(seed)
    n = 60
    x = np.where(rng.random(n) < 0.5, a, b)
    if nan:
        x[rng.random(n) < 0.2] = np.nan
    X = np.column_stack([x, rng.normal(size=n)])
    y = np.where(x == a, 1.0, -1.0) + np.where(np.isnan(x), 3.0, 0.0) + 0.1 * rng.normal(size=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TreeOracle warns of features spanning 1e-7
        return FunctionalGradientRegressor(ORACLES[oracle](), n_estimators=4).fit(X, y)


def _rows(nan: bool = True):
    """Every value of GRID (without NaN for an oracle that refuses it) beside three of
    the noise feature."""
    grid = GRID if nan else GRID[~np.isnan(GRID)]
    return np.ascontiguousarray(np.array(np.meshgrid(grid, [0.0, -2.0, 2.0])).reshape(2, -1).T)


def _export_text(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWarning)
        return lightgbm_model_string(model)


def _unchecked(model, monkeypatch):
    """The model string the export would write without its check."""
    with monkeypatch.context() as m:
        m.setattr(export, "_check_zero_splits", lambda *args: None)
        return _export_text(model)


@pytest.mark.parametrize("oracle", ORACLES)
@pytest.mark.parametrize("pair", PAIRS, ids=[f"{a!r}|{b!r}" for a, b in PAIRS])
@pytest.mark.parametrize("nan", [False, True])
def test_tiny_values_export_bit_for_bit_or_are_refused_by_name(oracle, pair, nan,
                                                               monkeypatch):
    import lightgbm as lgb

    takes_nan = oracle != "sklearn_trees"  # scikit-learn's trees refuse NaN
    if nan and not takes_nan:
        pytest.skip("scikit-learn's trees refuse NaN")
    X = _rows(nan=takes_nan)
    for seed in (0, 1):
        model = _fit(oracle, *pair, seed=seed, nan=nan)
        ours = model.predict(X)
        try:
            text = _export_text(model)
        except ValueError as exc:
            message = str(exc)
            assert "feature 0" in message and "within 1e-35 of 0" in message
            assert not oracle.startswith("lightgbm")  # LightGBM's trees always export
            if oracle == "stumps":  # only a gap between two values LightGBM reads as 0
                assert max(abs(pair[0]), abs(pair[1])) <= KZ
            # the refusal is needed: the export without it predicts otherwise
            unchecked = lgb.Booster(model_str=_unchecked(model, monkeypatch))
            assert not np.array_equal(unchecked.predict(X, raw_score=True), ours)
            continue
        exported = lgb.Booster(model_str=text).predict(X, raw_score=True)
        np.testing.assert_array_equal(exported, ours)


def test_a_feature_coded_pm1_exports_with_stumps_and_is_refused_with_sklearn_trees():
    """±1 features: the stump splits at 1e-35f (LightGBM's own threshold), so 1e-36 goes
    left in both; a scikit-learn tree splits at 0.0, which LightGBM cannot write."""
    rng = np.random.default_rng(3)
    X = np.where(rng.random((80, 3)) < 0.5, -1.0, 1.0)
    y = np.where(X[:, 2] > 0, 1, -1)
    y[:8] *= -1
    rows = np.tile(_rows()[:, :1], (1, 3))
    model = CoordinateBoostingClassifier(StumpOracle(), n_estimators=3).fit(X, y)
    assert model.estimators_[0].threshold == KZ
    np.testing.assert_array_equal(model.to_lightgbm(X).predict(rows, raw_score=True),
                                  model.decision_function(rows))
    model = CoordinateBoostingClassifier(TreeOracle(max_depth=1), n_estimators=3).fit(X, y)
    # (its float32 comparison at 0.0 is the float64 threshold 7e-46)
    with pytest.raises(ValueError, match=r"weak learner 0 splits feature 2 at \S+, within "):
        model.to_lightgbm(X)
    # coded 0/1 it exports, and predicts tiny values as the model does
    X01 = (X + 1.0) / 2.0
    model = CoordinateBoostingClassifier(TreeOracle(max_depth=1), n_estimators=3).fit(X01, y)
    rows = rows[~np.isnan(rows).any(axis=1)]
    np.testing.assert_array_equal(model.to_lightgbm(X01).predict(rows, raw_score=True),
                                  model.decision_function(rows))


def test_the_refusal_names_a_dataframe_column():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"sign": np.tile([-1.0, 1.0], 30), "noise": np.arange(60.0)})
    y = np.where(X["sign"] > 0, 1, -1)
    y[:6] *= -1
    model = CoordinateBoostingClassifier(TreeOracle(max_depth=1), n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match=r"splits feature 0 \('sign'\) at \S+, within"):
        model.to_lightgbm(X)


# scikit-learn's finiteness check sums X: rows holding +max and -max make that sum NaN
@pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")
@pytest.mark.parametrize("oracle", ["stumps", "lightgbm_trees"])
@pytest.mark.parametrize("scale_x, scale_y", [(1.6e308 / 3, 1.0), (1.0, 1e-310), (1.0, 1e-30),
                                              (1.0, 1e150)])
def test_extreme_thresholds_and_leaves_are_read_back_as_written(oracle, scale_x, scale_y):
    """Thresholds near float64's largest value, the +inf of a split isolating NaN, and
    leaf values subnormal, below float32's range or far above it: LightGBM's model
    reader keeps every one, so the export predicts as the model on rows up to ±max."""
    import lightgbm as lgb

    big = np.finfo(float).max
    edge = np.array([big, -big, 1e308, -1e308, 1.5e308, -1.5e308, 1e300, -1e300,
                     float(np.nextafter(1e300, np.inf)), 0.0, 1.0, -1.0, np.nan])
    for seed in (0, 1):
        rng = np.random.default_rng(seed)
        X = np.clip(rng.normal(size=(200, 2)), -2.9, 2.9) * scale_x
        X[rng.random(200) < 0.1, 1] = np.nan
        y = (np.sign(X[:, 0]) + np.nan_to_num(X[:, 1] / scale_x, nan=2.0)
             + 0.1 * rng.normal(size=200)) * scale_y
        model = FunctionalGradientRegressor(ORACLES[oracle](), n_estimators=5).fit(X, y)
        rows = np.vstack([np.column_stack([edge, edge[::-1]]), X[:20]])
        exported = lgb.Booster(model_str=_export_text(model))
        np.testing.assert_array_equal(exported.predict(rows, raw_score=True),
                                      model.predict(rows))


def test_a_split_at_zero_whose_coefficient_is_zero_exports():
    """A term of coefficient 0 sends nothing anywhere: its stump at 0.0 is no reason to
    refuse the model, and the export still predicts as the model."""
    from oracleboost.engine.model import Ensemble
    from oracleboost.oracles.stumps import SignStump

    rng = np.random.default_rng(5)
    X = np.column_stack([np.where(rng.random(80) < 0.5, -1.0, 1.0), rng.normal(size=80)])
    y = np.where(X[:, 1] > 0.3, 1, -1)
    model = CoordinateBoostingClassifier(StumpOracle(), n_estimators=2).fit(X, y)
    fitted = model.ensemble_
    at_zero = SignStump(feature=0, threshold=0.0, sign=1, n_features=2)  # (an older fit's)
    ensemble = Ensemble(fitted.intercept)
    for h, coef in zip(fitted.hypotheses, fitted.coef, strict=True):
        ensemble.add(h, coef, 1.0)
    j = ensemble.add(at_zero, 0.0, 1.0)
    model.ensemble_ = ensemble
    rows = np.column_stack([GRID[~np.isnan(GRID)], np.linspace(-1, 1, GRID.size - 1)])
    exported = model.to_lightgbm(X)
    np.testing.assert_array_equal(exported.predict(rows, raw_score=True),
                                  model.decision_function(rows))
    ensemble.add(at_zero, 0.5, 1.0)  # a term that counts is refused
    with pytest.raises(ValueError, match=rf"weak learner {j} splits feature 0 at 0\.0"):
        model.to_lightgbm(X)
