"""feature_importances_: where the ensemble's weight goes among the input features."""

import numpy as np
import pytest

from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.oracles import (
    HistTreeOracle,
    LightGBMOracle,
    LinearOracle,
    MatrixOracle,
    SklearnOracle,
    StumpOracle,
    TreeOracle,
)


def _data(seed: int, n: int = 600, d: int = 8):
    """Only features 0 and 1 matter; the other six are noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X[:, 0] + 0.8 * X[:, 1]
    return X, (score > 0).astype(int), score


#: The mass on features 0 and 1 each case must exceed.  Measured minima over seeds 0–9:
#: AdaBoost 0.912, MABoost 0.871 (its late rounds weigh the hardest rows, on which noise
#: features get spurious edges), the functional and linear cases 1.0.  The stump paths
#: are compiled and BLAS-free, so these hold on every machine.
FLOOR = {"maboost-stumps": 0.85}

CASES = {
    "adaboost-stumps": lambda: CoordinateBoostingClassifier(StumpOracle(), n_estimators=60),
    "maboost-stumps": lambda: MirrorBoostingClassifier(StumpOracle(), n_estimators=60),
    "gradient-stumps": lambda: FunctionalGradientClassifier(StumpOracle(), n_estimators=60),
    "gradient-lightgbm": lambda: FunctionalGradientClassifier(
        LightGBMOracle(num_leaves=4, params={"num_threads": 1}), n_estimators=30
    ),
    "gradient-hist-trees": lambda: FunctionalGradientClassifier(
        HistTreeOracle(num_leaves=4), n_estimators=30
    ),
    "adaboost-linear": lambda: CoordinateBoostingClassifier(LinearOracle(), n_estimators=60),
    "gradient-sklearn-trees": lambda: FunctionalGradientClassifier(
        TreeOracle(max_depth=2), n_estimators=30, random_state=0
    ),
}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", CASES)
def test_mass_goes_to_the_features_that_matter(name, seed):
    X, y, _ = _data(seed)
    imp = CASES[name]().fit(X, y).feature_importances_
    assert imp.shape == (X.shape[1],)
    assert np.all(imp >= 0) and imp.sum() == pytest.approx(1.0)
    assert imp[:2].sum() > FLOOR.get(name, 0.9), imp


def test_regressor_stumps():
    X, _, score = _data(0)
    imp = FunctionalGradientRegressor(StumpOracle(), n_estimators=80).fit(X, score)
    assert imp.feature_importances_[:2].sum() > 0.9


def test_classes_that_do_not_know_their_features_have_none():
    X, y, _ = _data(0)
    H = np.sign(X[:, :5] + 0.1)  # a fixed matrix: its columns are not input features
    model = CoordinateBoostingClassifier(MatrixOracle(H), n_estimators=10)
    model.fit(np.arange(len(X))[:, None], y)
    assert not hasattr(model, "feature_importances_")
    with pytest.raises(AttributeError, match="MatrixColumn.*do not say which input features"):
        _ = model.feature_importances_
    from sklearn.linear_model import Ridge

    ridge = FunctionalGradientClassifier(SklearnOracle(Ridge()), n_estimators=5).fit(X, y)
    with pytest.raises(AttributeError, match="FittedEstimator"):
        _ = ridge.feature_importances_
    linear = AcceleratedMarginClassifier(n_estimators=10).fit(X, y)
    with pytest.raises(AttributeError, match="not an ensemble of weak learners.*coef_"):
        _ = linear.feature_importances_


# -- importance_type="split" (LightGBM's split counts; issue 22) ------------------------
@pytest.mark.parametrize("make", [
    lambda: CoordinateBoostingClassifier(StumpOracle(), n_estimators=40,
                                         importance_type="split"),
    lambda: MirrorBoostingClassifier(TreeOracle(max_depth=3), n_estimators=15,
                                     importance_type="split"),
    lambda: FunctionalGradientClassifier(LightGBMOracle(num_leaves=5), n_estimators=15,
                                         importance_type="split"),
    lambda: MirrorBoostingClassifier(HistTreeOracle(num_leaves=5), n_estimators=15,
                                     importance_type="split"),
    lambda: FunctionalGradientRegressor(TreeOracle(max_depth=2), n_estimators=15,
                                        importance_type="split"),
])
@pytest.mark.parametrize("seed", [0, 1])
def test_split_counts_are_lightgbms_on_the_exported_trees(make, seed):
    import warnings

    X, y, score = _data(seed)
    model = make()
    model.fit(X, score if isinstance(model, FunctionalGradientRegressor) else y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stumps' covers
        lgb_counts = model.to_lightgbm().feature_importance("split")
    np.testing.assert_array_equal(model.feature_importances_, lgb_counts)
    assert model.feature_importances_.sum() >= model.n_estimators_  # a split a round at least


@pytest.mark.parametrize("scale", [1e-25, 1e-15, 1.0, 1e20])
def test_split_counts_are_lightgbms_at_any_scale_of_the_target(scale):
    """LightGBM reads a split's gain as float32 and counts the positive ones: a gain of
    targets near 1e-25 (1e-48) would read as 0, one near 1e20 as inf."""
    import warnings

    X, _, score = _data(3)
    model = FunctionalGradientRegressor(TreeOracle(max_depth=2), n_estimators=6,
                                        importance_type="split").fit(X, score * scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exported = model.to_lightgbm()
    np.testing.assert_array_equal(model.feature_importances_,
                                  exported.feature_importance("split"))
    gains = exported.feature_importance("gain")
    assert np.isfinite(gains).all() and (gains[model.feature_importances_ > 0] > 0).all()
    np.testing.assert_array_equal(exported.predict(X), model.predict(X))


def test_split_counts_of_stumps_count_the_rounds():
    X, y, _ = _data(2)
    model = CoordinateBoostingClassifier(StumpOracle(), n_estimators=30,
                                         importance_type="split").fit(X, y)
    features = [model.ensemble_.hypotheses[j].feature for j in model.ensemble_.round_index]
    np.testing.assert_array_equal(model.feature_importances_,
                                  np.bincount(features, minlength=X.shape[1]))
    weight = model.set_params(importance_type="weight").feature_importances_
    assert weight.sum() == pytest.approx(1.0)


def test_split_counts_of_linear_coordinates():
    X, y, _ = _data(3)
    model = CoordinateBoostingClassifier(LinearOracle(), loss="logistic", step="wolfe",
                                         n_estimators=10, importance_type="split").fit(X, y)
    features = [model.ensemble_.hypotheses[j].j for j in model.ensemble_.round_index]
    np.testing.assert_array_equal(model.feature_importances_,
                                  np.bincount(features, minlength=X.shape[1]))


def test_an_unknown_importance_type_is_refused():
    X, y, _ = _data(4)
    with pytest.raises(ValueError, match="importance_type"):
        CoordinateBoostingClassifier(importance_type="cover").fit(X, y)
