"""Bad input gets a clear error naming the argument; nothing is silently changed."""

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor
from oracleboost.losses import Huber, get_loss
from oracleboost.oracles import (
    CachedOracle,
    LightGBMOracle,
    LinearOracle,
    MatrixOracle,
    OracleCapabilityError,
    SklearnOracle,
    StumpOracle,
    TreeOracle,
)

rng = np.random.RandomState(0)
X = rng.randn(40, 3)
Y_CLS = (X[:, 0] > 0).astype(int)
Y_REG = X[:, 0] + 0.1 * rng.randn(40)

BOOSTERS = [
    (CoordinateBoostingClassifier(n_estimators=3), Y_CLS),
    (FunctionalGradientRegressor(n_estimators=3), Y_REG),
]


def _with(arr, i, value):
    out = np.array(arr, dtype=float)
    out.flat[i] = value
    return out


@pytest.mark.parametrize("booster,y", BOOSTERS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X_is_rejected(booster, y, bad):
    with pytest.raises(ValueError, match="X"):
        booster.fit(_with(X, 5, bad), y)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_y_is_rejected(bad):
    with pytest.raises(ValueError, match="y"):
        FunctionalGradientRegressor(n_estimators=3).fit(X, _with(Y_REG, 2, bad))
    with pytest.raises(ValueError, match="y|[Ll]abel|NaN"):
        CoordinateBoostingClassifier(n_estimators=3).fit(X, _with(Y_CLS, 2, bad))


@pytest.mark.parametrize("booster,y", BOOSTERS)
def test_mismatched_shapes(booster, y):
    with pytest.raises(ValueError, match="samples|shape|length"):
        booster.fit(X, y[:-1])
    with pytest.raises(ValueError, match="sample_weight|shape"):
        booster.fit(X, y, sample_weight=np.ones(len(y) + 1))


@pytest.mark.parametrize("booster,y", BOOSTERS)
def test_negative_and_zero_weights(booster, y):
    with pytest.raises(ValueError, match="[Nn]egative"):
        booster.fit(X, y, sample_weight=_with(np.ones(len(y)), 0, -1.0))
    with pytest.raises(ValueError, match="sample_weight"):
        booster.fit(X, y, sample_weight=np.zeros(len(y)))


def test_single_class_and_multiclass_are_rejected():
    with pytest.raises(ValueError, match="y must contain exactly two classes.*only one class"):
        CoordinateBoostingClassifier(n_estimators=3).fit(X, np.zeros(len(X), dtype=int))
    with pytest.raises(ValueError, match="got 3"):
        CoordinateBoostingClassifier(n_estimators=3).fit(X, np.arange(len(X)) % 3)


def test_predict_checks_features():
    clf = CoordinateBoostingClassifier(n_estimators=3).fit(X, Y_CLS)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :2])
    with pytest.raises(ValueError, match="NaN|infinity"):
        clf.predict(_with(X, 0, np.nan))


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(n_estimators=0), "n_estimators"),
        (dict(learning_rate=0.0), "learning_rate"),
        (dict(learning_rate=1.5), "learning_rate"),
        (dict(loss="squared"), "loss"),
        (dict(step="newton"), "step"),
        (dict(oracle="stumps"), "oracle"),
    ],
)
def test_bad_parameters_are_named(params, match):
    with pytest.raises(ValueError, match=match):
        CoordinateBoostingClassifier(**params).fit(X, Y_CLS)


def test_bad_regressor_parameters_are_named():
    with pytest.raises(ValueError, match="loss"):
        FunctionalGradientRegressor(loss="exponential").fit(X, Y_REG)
    with pytest.raises(ValueError, match="delta"):
        Huber(delta=-1.0)
    with pytest.raises(ValueError, match="loss"):
        get_loss("hinge")


def test_oracle_queries_check_their_arguments():
    bound = StumpOracle().bind(X)
    with pytest.raises(ValueError, match="r has 39 rows"):
        bound.correlate(np.ones(39))
    with pytest.raises(ValueError, match="r contains NaN"):
        bound.correlate(_with(np.ones(40), 3, np.nan))
    with pytest.raises(ValueError, match="target contains inf"):
        bound.project(_with(np.ones(40), 3, np.inf))
    with pytest.raises(ValueError, match="sample_weight contains negative"):
        bound.project(np.ones(40), _with(np.ones(40), 3, -0.5))
    with pytest.raises(ValueError, match="r must be 1-D or 2-D"):
        bound.correlate(np.ones((40, 2, 2)))


def test_oracle_that_cannot_take_weights_is_named():
    # A classifier always needs weights (|r|) for correlate: refused at bind.
    with pytest.raises(TypeError, match="KNeighborsClassifier cannot take sample_weight"):
        SklearnOracle(KNeighborsClassifier()).bind(X)
    # A regressor needs them only for weighted projections: refused then, by name.
    bound = SklearnOracle(KNeighborsRegressor()).bind(X)
    bound.project(Y_REG)  # unweighted is fine
    with pytest.raises(TypeError, match="KNeighborsRegressor cannot take sample_weight"):
        bound.project(Y_REG, np.linspace(0.1, 1, 40))
    with pytest.raises(TypeError, match="KNeighborsRegressor cannot take sample_weight"):
        FunctionalGradientRegressor(SklearnOracle(KNeighborsRegressor())).fit(
            X, Y_REG, sample_weight=np.linspace(0.1, 1, 40)
        )
    with pytest.raises(TypeError, match="regressor or classifier"):
        SklearnOracle(object()).bind(X)


def test_queries_a_class_cannot_answer_are_refused_by_name():
    with pytest.raises(OracleCapabilityError, match="SklearnOracle cannot answer project"):
        SklearnOracle(_WeightedClassifier()).bind(X).project(Y_REG)
    with pytest.raises(OracleCapabilityError, match="SklearnOracle cannot answer correlate"):
        SklearnOracle(_WeightedClassifier()).bind(X).correlate(np.ones((40, 3)))
    with pytest.raises(OracleCapabilityError, match="LightGBMOracle"):
        LightGBMOracle().bind(X).project(np.ones((40, 2)))
    with pytest.raises(OracleCapabilityError, match="TreeOracle cannot give the whole"):
        TreeOracle().bind(X).correlation_vector(np.ones(40))


def test_matrix_and_linear_oracles_check_their_inputs():
    H = np.sign(rng.randn(10, 4))
    with pytest.raises(ValueError, match="row indices"):
        MatrixOracle(H).bind(np.array([[0.5], [1.0]]))
    with pytest.raises(ValueError, match="row indices"):
        MatrixOracle(H).bind(np.array([0, 10]))
    with pytest.raises(ValueError, match="H contains NaN"):
        MatrixOracle(_with(H, 0, np.nan)).bind(np.arange(10))
    with pytest.raises(ValueError, match="X"):
        LinearOracle().bind(_with(X, 0, np.inf))
    with pytest.raises(ValueError, match="X contains NaN"):
        CachedOracle(StumpOracle(), None).bind(_with(X, 0, np.nan))


def test_inputs_are_not_modified():
    Xc, yc, w = X.copy(), Y_REG.copy(), np.linspace(0.5, 1.5, 40)
    wc = w.copy()
    FunctionalGradientRegressor(StumpOracle(), n_estimators=5).fit(Xc, yc, sample_weight=w)
    CoordinateBoostingClassifier(n_estimators=5).fit(Xc, Y_CLS, sample_weight=w)
    np.testing.assert_array_equal(Xc, X)
    np.testing.assert_array_equal(yc, Y_REG)
    np.testing.assert_array_equal(w, wc)


class _WeightedClassifier(KNeighborsClassifier):
    """A classifier whose fit accepts sample_weight (and ignores it): correlate-only."""

    def fit(self, X, y, sample_weight=None):
        return super().fit(X, y)


# -- the hostile inputs that used to get through (issue: what users expect) -------------
class _NaNOutsideTraining(KNeighborsRegressor):
    """A weak learner that is finite on its training rows and NaN beyond their range."""

    def fit(self, X, y, sample_weight=None):
        self.top_ = float(np.max(X[:, 0]))
        return super().fit(X, y)

    def predict(self, X):
        out = super().predict(X)
        return np.where(np.asarray(X)[:, 0] > self.top_, np.nan, out)


def _nan_on_new_rows():
    model = FunctionalGradientRegressor(SklearnOracle(_NaNOutsideTraining(3)), n_estimators=3)
    model.fit(X, Y_REG)
    X_new = X.copy()
    X_new[:5, 0] = 100.0  # beyond the training range
    model.predict(X_new)


def _string_y_to_a_regressor():
    FunctionalGradientRegressor(n_estimators=3).fit(X, np.where(Y_CLS == 1, "yes", "no"))


def _non_oracle_to_the_cache():
    CachedOracle(object(), None).bind(X)


@pytest.mark.parametrize(
    "hostile, error, match",
    [
        (_nan_on_new_rows, FloatingPointError,
         r"FunctionalGradientRegressor: a weak learner of SklearnOracle\(.*\) .*NaN on 5 of 40"),
        (_string_y_to_a_regressor, ValueError, r"y must be numeric"),
        (_non_oracle_to_the_cache, TypeError, r"CachedOracle.*oracle"),
    ],
    ids=["nan-on-new-rows", "string-y", "cached-non-oracle"],
)
def test_hostile_inputs_get_a_clear_error(hostile, error, match):
    with pytest.raises(error, match=match):
        hostile()
    # and staged predictions say the same, instead of yielding NaN
    if hostile is _nan_on_new_rows:
        model = FunctionalGradientRegressor(SklearnOracle(_NaNOutsideTraining(3)),
                                            n_estimators=3).fit(X, Y_REG)
        with pytest.raises(FloatingPointError, match="NaN"):
            list(model.staged_predict(np.full((2, 3), 100.0)))
