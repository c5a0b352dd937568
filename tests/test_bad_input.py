"""Bad input gets a clear error naming the argument; nothing is silently changed."""

import warnings

import numpy as np
import pytest
from instances import BOOSTERS as INSTANCES
from instances import REGISTERED_BOOSTERS
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.tree import DecisionTreeRegressor

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.losses import Huber, get_loss
from oracleboost.oracles import (
    BinaryOnlyOracleError,
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

#: A classifier and a regressor of the registry of small instances (tests/instances.py),
#: on their default oracles (stumps, which take missing values; trees, which do not).
BOOSTERS = [pytest.param(INSTANCES[name].make(n_estimators=3), y, id=name)
            for name, y in (("adaboost", Y_CLS), ("gradient-regression", Y_REG))]


def _with(arr, i, value):
    out = np.array(arr, dtype=float)
    out.flat[i] = value
    return out


@pytest.mark.parametrize("booster,y", BOOSTERS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X_is_rejected(booster, y, bad):
    if np.isnan(bad) and booster.__sklearn_tags__().input_tags.allow_nan:
        # a missing value to this booster's oracle (the default stumps:
        # test_stump_missing); the default trees of project refuse it
        assert np.isfinite(booster.fit(_with(X, 5, bad), y).predict_proba(X)).all()
        return
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


@pytest.mark.parametrize("booster,oracle", [
    (MirrorBoostingClassifier(TreeOracle(max_depth=1), n_estimators=3), "TreeOracle"),
    (FunctionalGradientClassifier(LinearOracle(), loss="softmax", n_estimators=3),
     "LinearOracle"),
], ids=["mirror", "functional"])
def test_multiclass_over_a_binary_only_oracle_is_refused_by_a_public_error(booster, oracle):
    # the public class, caught as what it is: a capability the oracle lacks, and a
    # ValueError of y (as scikit-learn's binary-only classifiers raise)
    with pytest.raises(BinaryOnlyOracleError, match=f"{oracle}: y has 3 classes") as info:
        booster.fit(X, np.arange(len(X)) % 3)
    assert isinstance(info.value, OracleCapabilityError)
    assert isinstance(info.value, ValueError)
    assert not hasattr(booster, "classes_")  # nothing half-fitted


def test_predict_checks_features():
    clf = CoordinateBoostingClassifier(n_estimators=3).fit(X, Y_CLS)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :2])
    with pytest.raises(ValueError, match="infinity"):  # NaN is missing to stumps
        clf.predict(_with(X, 0, np.inf))


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
    # the stump oracle finds a bad entry of r in its histograms (no pass of its own):
    # the same errors, for one or K columns, and for finite entries whose sums overflow
    for shape in ((40,), (40, 3)):
        for bad, word in ((np.nan, "NaN"), (-np.inf, "inf")):
            r = np.ones(shape)
            r[7] = bad
            with pytest.raises(ValueError, match=f"r contains {word}"):
                bound.correlate(r)
        with pytest.raises(ValueError, match="r's sums over the rows overflow"):
            bound.correlate(np.full(shape, 1e308))
    # a projection's sums that overflow (each bin's sum finite): named, with the remedy
    with pytest.raises(ValueError, match="target's sums over the rows overflow"):
        StumpOracle().bind(np.arange(40.0)[:, None]).project(np.full(40, 1e307))
    # ... and, as for r, a bad entry of project's target found in the histograms: the
    # same errors for one or K columns, with and without weights
    for shape in ((40,), (40, 3)):
        for weights in (None, np.linspace(0.5, 2.0, 40)):
            for bad, word in ((np.nan, "NaN"), (np.inf, "inf"), (-np.inf, "inf"),
                              ((np.inf, -np.inf), "inf")):
                t = np.ones(shape)
                t[[11, 29][:np.size(bad)]] = np.reshape(bad, (-1,) + (1,) * (t.ndim - 1))
                with pytest.raises(ValueError, match=f"target contains {word}"):
                    bound.project(t, weights)
    # a stump's outputs are its leaves: their squares' overflow is found from them
    with pytest.raises(OverflowError, match=r"^StumpOracle's hypothesis outputs overflow "
                       r"float64 \(max \|h\| = 1e\+200\).*as large"):
        bound.project(np.full(40, 1e200))
    # (the peak it reads from the leaves is the outputs' own, for one or K columns)
    for t in (np.where(X[:, 0] > np.median(X[:, 0]), 3e9, -1e9), Y_REG,
              np.c_[Y_REG, -2 * Y_REG, np.sin(Y_REG)]):
        h = bound.project(t)
        assert bound._answer_peak(h) == np.abs(h.train_output).max() > 0


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
    # an H of no column, or sparse: named, under a booster too (NumPy's own errors were)
    import scipy.sparse as sp

    rows = np.arange(10, dtype=float)[:, None]
    for bad, error, match in ((H[:, :0], ValueError, r"H must hold at least one row and one "
                               r"column.*\(10, 0\)"),
                              (sp.csr_matrix(H), TypeError, "dense H.*H.toarray")):
        with pytest.raises(error, match=match):
            MatrixOracle(bad).bind(rows)
        for booster in (CoordinateBoostingClassifier(MatrixOracle(bad), n_estimators=2),
                        FunctionalGradientRegressor(MatrixOracle(bad), n_estimators=2)):
            with pytest.raises(error, match=match):
                booster.fit(rows, np.arange(10) % 2)
    with pytest.raises(ValueError, match="X"):
        LinearOracle().bind(_with(X, 0, np.inf))
    with pytest.raises(ValueError, match="X contains NaN"):
        CachedOracle(TreeOracle(), None).bind(_with(X, 0, np.nan))
    with pytest.raises(ValueError, match="X contains inf"):  # NaN is missing to stumps
        CachedOracle(StumpOracle(), None).bind(_with(X, 0, np.inf))


def test_inputs_are_not_modified():
    Xc, yc, w = X.copy(), Y_REG.copy(), np.linspace(0.5, 1.5, 40)
    wc = w.copy()
    FunctionalGradientRegressor(StumpOracle(), n_estimators=5).fit(Xc, yc, sample_weight=w)
    CoordinateBoostingClassifier(n_estimators=5).fit(Xc, Y_CLS, sample_weight=w)
    np.testing.assert_array_equal(Xc, X)
    np.testing.assert_array_equal(yc, Y_REG)
    np.testing.assert_array_equal(w, wc)


@pytest.mark.parametrize("loss", ["squared", "huber", "absolute", "quantile"])
@pytest.mark.parametrize("query", ["project", "newton", "correlate"])
def test_a_regressor_leaves_y_as_given(loss, query):
    """A float64 y reaches the fit uncopied: a fit that wrote into it would change the
    caller's array."""
    from oracleboost.oracles import HistTreeOracle

    if query == "newton" and loss != "squared":
        pytest.skip("Newton's query needs a loss with a hessian")
    for oracle in (StumpOracle(), HistTreeOracle(num_leaves=4, min_data_in_leaf=2)):
        y, w = Y_REG.copy(), np.linspace(0.5, 1.5, 40)
        FunctionalGradientRegressor(oracle, loss=loss, query=query, n_estimators=4).fit(
            X, y, sample_weight=w)
        FunctionalGradientRegressor(oracle, loss=loss, query=query, n_estimators=4).fit(X, y)
        np.testing.assert_array_equal(y, Y_REG)


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


class _BlowsUp(RegressorMixin, BaseEstimator):
    """Least squares on the sign of x_0 (the two group means of the target), with every
    fit from the ``from_fit``-th on multiplied by ``factor``: a weak learner whose
    outputs blow up to near 1e308 in the middle of a fit.  Fits are counted on the class
    (``SklearnOracle`` fits a fresh clone per query)."""

    fits = 0

    def __init__(self, factor=1e308, from_fit=1):
        self.factor = factor
        self.from_fit = from_fit

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        right = np.asarray(X)[:, 0] > 0
        scale = self.factor if type(self).fits >= self.from_fit else 1.0
        self.means_ = scale * np.array([np.mean(y[~right]), np.mean(y[right])])
        return self

    def predict(self, X):
        return self.means_[(np.asarray(X)[:, 0] > 0).astype(int)]


def _tree_oracle_with_1e300_in_X():
    FunctionalGradientRegressor(TreeOracle(), n_estimators=3).fit(_with(X, 5, 1e300), Y_REG)


def _huge_hypothesis_outputs():
    # Squares of 1e200 overflow: the step <h, v>/<h, h> was silently 0 every round.
    _BlowsUp.fits = 0
    FunctionalGradientRegressor(SklearnOracle(_BlowsUp(1e200)), n_estimators=3).fit(X, Y_REG)


def _outputs_near_1e308_in_repeated_projection():
    # The second outer iteration's first hypothesis is ~9e307: its step was inf/inf =
    # NaN, and the next inner projection raised "target contains NaN".
    _BlowsUp.fits = 0
    FunctionalGradientRegressor(
        SklearnOracle(_BlowsUp(1e308, from_fit=2)), projection="repeated", n_estimators=6
    ).fit(X, Y_REG)


def _correlation_vector_beyond_float64():
    MatrixOracle(np.full((4, 2), 1e308)).bind(np.arange(4)).correlation_vector(np.ones(4))


@pytest.mark.parametrize(
    "hostile, error, match",
    [
        (_nan_on_new_rows, FloatingPointError,
         r"FunctionalGradientRegressor: a weak learner of SklearnOracle\(.*\) .*NaN on 5 of 40"),
        (_string_y_to_a_regressor, ValueError, r"y must be numeric"),
        (_non_oracle_to_the_cache, TypeError, r"CachedOracle.*oracle"),
        (_tree_oracle_with_1e300_in_X, ValueError,
         r"X has a finite value of magnitude 1e\+300, beyond float32's range "
         r"\(np\.finfo\(np\.float32\)\.max = 3\.403e\+38\): TreeOracle grows scikit-learn "
         r"trees, which compute in float32.*Rescale X.*StumpOracle or LightGBMOracle"),
        (_huge_hypothesis_outputs, OverflowError,
         r"^SklearnOracle's hypothesis outputs overflow float64 \(max \|h\| = 1e\+200\)"),
        (_outputs_near_1e308_in_repeated_projection, OverflowError,
         r"^SklearnOracle's hypothesis outputs overflow float64 \(max \|h\| = \d\.\d+e\+307\)"
         r".*asked to fit values of at most \d"),
        (_correlation_vector_beyond_float64, OverflowError,
         r"^MatrixOracle's correlation vector Hᵀr overflows float64"),
    ],
    ids=["nan-on-new-rows", "string-y", "cached-non-oracle", "tree-oracle-1e300-in-X",
         "huge-hypothesis-outputs", "outputs-near-1e308-repeated",
         "correlation-vector-overflow"],
)
def test_hostile_inputs_get_a_clear_error(hostile, error, match):
    with warnings.catch_warnings():
        # the clear error, and no RuntimeWarning (overflow, invalid value) on the way,
        # from scikit-learn or NumPy either
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(error, match=match):
            hostile()
    # and staged predictions say the same, instead of yielding NaN
    if hostile is _nan_on_new_rows:
        model = FunctionalGradientRegressor(SklearnOracle(_NaNOutsideTraining(3)),
                                            n_estimators=3).fit(X, Y_REG)
        with pytest.raises(FloatingPointError, match="NaN"):
            list(model.staged_predict(np.full((2, 3), 100.0)))


@pytest.mark.parametrize("projection", ["naive", "repeated", "residual"])
def test_correlate_answers_whose_squares_overflow_take_the_unscaled_step(projection):
    """A correlate answer is scale-free, but the functional step divides by <h, h>: with
    LinearOracle on X·1e200 it overflowed (this used to raise an OverflowError naming
    the oracle).  The step's inner products are taken on copies scaled by powers of two
    now, so the fit is that of X: bit for bit on X·2**600 (a power of two scales
    exactly), and to the last bits on X·1e200 (X·1e200 itself is rounded)."""
    kw = dict(query="correlate", projection=projection, n_estimators=6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = FunctionalGradientRegressor(LinearOracle(), **kw).fit(X, Y_REG)
        exact = FunctionalGradientRegressor(LinearOracle(), **kw).fit(np.ldexp(X, 600), Y_REG)
        rounded = FunctionalGradientRegressor(LinearOracle(), **kw).fit(X * 1e200, Y_REG)
    assert ref.history_["loss"][-1] < 0.75 * ref.history_["loss"][0]  # it fits
    np.testing.assert_array_equal(exact.history_["loss"], ref.history_["loss"])
    np.testing.assert_array_equal(exact.predict(np.ldexp(X, 600)), ref.predict(X))
    np.testing.assert_allclose(rounded.history_["loss"], ref.history_["loss"], rtol=1e-13)
    np.testing.assert_allclose(rounded.predict(X * 1e200), ref.predict(X), rtol=1e-13,
                               atol=1e-14)


def test_tree_oracles_take_X_up_to_the_float32_limit_and_refuse_beyond_it():
    """The limit is exactly float32's: its largest value is taken (and split on), the
    next float64 past the rounding boundary is refused, by TreeOracle and by a
    SklearnOracle of a scikit-learn tree, and at predict time by their trees."""
    top = float(np.finfo(np.float32).max)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        h = TreeOracle(max_depth=1).bind(_with(X, 5, top)).project(Y_REG)
        assert np.all(np.isfinite(h.train_output))
        over = 2.0**128 - 2.0**103  # rounds to inf in float32; the float64 below it does not
        assert np.isfinite(np.float32(np.nextafter(over, 0.0)))
        for oracle in (TreeOracle(), SklearnOracle(DecisionTreeRegressor(max_depth=2))):
            with pytest.raises(ValueError, match=r"X has a finite value of magnitude 3\.4\d*e\+38"):
                oracle.bind(_with(X, 5, over))
        model = FunctionalGradientRegressor(TreeOracle(), n_estimators=2).fit(X, Y_REG)
        with pytest.raises(ValueError, match=r"float32's range.*DecisionTreeRegressor hypothesis"):
            model.predict(_with(X, 0, -1e300))


@pytest.mark.parametrize("projection", ["naive", "residual", "repeated"])
def test_columns_near_the_float64_limit_fit_as_the_unscaled_columns(projection):
    """LinearOracle / MatrixOracle columns scaled by 2**1000 (up to 2.7e301): their
    ``project`` squared them and overflowed (RuntimeWarnings, then NaN gains and a zero
    hypothesis).  It now works on columns scaled by powers of two, exactly, so the fit is
    that of the unscaled columns: same losses, same predictions."""
    big = np.ldexp(X, 1000)
    rows = np.arange(len(X))[:, None]
    kw = dict(projection=projection, n_estimators=6, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = FunctionalGradientRegressor(LinearOracle(), **kw).fit(X, Y_REG)
        linear = FunctionalGradientRegressor(LinearOracle(), **kw).fit(big, Y_REG)
        matrix = FunctionalGradientRegressor(MatrixOracle(big), **kw).fit(rows, Y_REG)
        assert ref.history_["loss"][-1] < 0.9 * ref.history_["loss"][0]  # it fits
        for model, data in [(linear, big), (matrix, rows)]:
            np.testing.assert_allclose(model.history_["loss"], ref.history_["loss"], rtol=1e-12)
            np.testing.assert_allclose(model.predict(data), ref.predict(X), rtol=1e-12)


def test_correlate_on_columns_near_the_float64_limit_picks_the_unscaled_answer():
    """``Hᵀr`` over columns of magnitude up to 2**1023 overflowed on the way; correlate
    compares it scaled by a power of two instead, so it picks the column (and sign) the
    same class at scale 1 picks, without a warning."""
    rs = np.random.RandomState(1)
    H = rs.uniform(-1, 1, (40, 6))
    r = rs.uniform(0.5, 1.0, 40) * np.sign(H[:, 3])
    expected = MatrixOracle(H).bind(np.arange(40)).correlate(r)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = MatrixOracle(np.ldexp(H, 1023)).bind(np.arange(40)).correlate(r)
    assert (got.j, got.scale) == (expected.j, expected.scale) == (3, 1.0)
    # the sum behind the answer's own entry passes 2**1024 > the float64 maximum at this scale
    assert np.sum(np.abs(H[:, 3] * r)) > 2.0


def test_dual_acceleration_on_features_beyond_float64_squares_is_scale_free():
    """Row norms of features near 1e200 overflowed (scale_ = inf: a stop after one step
    with a wrong model); they are taken on X / max|X| now, and the margin path is that
    of the unscaled features."""
    from oracleboost.boosters import AcceleratedMarginClassifier

    Xc, yc = rng.randn(80, 3), (rng.randn(80) > 0).astype(int)
    kw = dict(n_estimators=30, tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ref = AcceleratedMarginClassifier(LinearOracle(), **kw).fit(Xc, yc)
        big = AcceleratedMarginClassifier(LinearOracle(), **kw).fit(Xc * 2.0**700, yc)
    np.testing.assert_allclose(big.history_["margin"], ref.history_["margin"], rtol=1e-10)
    np.testing.assert_array_equal(big.predict(Xc * 2.0**700), ref.predict(Xc))


# -- errors that name the right argument (hostile input, round 3) ----------------------
def _strings_in_X():
    Xs = X.astype(object)
    Xs[3, 1] = "abc"
    return Xs


def _fit_arguments(task: str) -> tuple:
    """What ``fit`` takes after X for a booster of ``task``."""
    if task == "ranking":
        return Y_REG, np.arange(len(X)) // 5
    return (Y_REG,) if task == "regression" else (Y_CLS,)


@pytest.mark.parametrize("name", list(REGISTERED_BOOSTERS))
def test_strings_in_X_name_X_not_y(name):
    """The regressor and the ranker said "y must be numeric ... could not convert string
    to float: 'abc'" for a string in X; the others gave NumPy's bare message."""
    booster = INSTANCES[name].make(n_estimators=2)
    rest = _fit_arguments(INSTANCES[name].task)
    with pytest.raises(ValueError, match=r"^X must be numeric for \w+; it holds values that "
                       r"are not numbers: could not convert string to float: 'abc'"):
        booster.fit(_strings_in_X(), *rest)
    booster.fit(X, *rest)  # and predict names X too
    with pytest.raises(ValueError, match=r"^X must be numeric"):
        booster.predict(_strings_in_X())


def test_dataframe_columns_that_are_not_numbers_are_named():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["b"] = pd.Categorical(np.where(X[:, 1] > 0, "high", "low"))
    frame["c"] = "text"
    with pytest.raises(ValueError, match=r"columns 'b' \(categorical with categories that "
                       r"are not numbers: encode it first.*\), 'c' \(\w+\) hold values"):
        CoordinateBoostingClassifier(n_estimators=2).fit(frame, Y_CLS)
    # numeric categories are read as their values, as scikit-learn reads them
    numeric = pd.DataFrame(X, columns=["a", "b", "c"])
    numeric["b"] = pd.Categorical(np.round(X[:, 1]))
    plain = numeric.astype({"b": float})
    a = CoordinateBoostingClassifier(n_estimators=3).fit(numeric, Y_CLS)
    b = CoordinateBoostingClassifier(n_estimators=3).fit(plain, Y_CLS)
    np.testing.assert_array_equal(a.decision_function(numeric), b.decision_function(plain))


def test_a_string_y_still_names_y():
    with pytest.raises(ValueError, match=r"^y must be numeric for FunctionalGradientRanker"):
        from oracleboost.boosters import FunctionalGradientRanker

        FunctionalGradientRanker(n_estimators=2).fit(
            X, np.where(Y_CLS == 1, "yes", "no"), np.arange(len(X)) // 5
        )


@pytest.mark.parametrize(
    "qid",
    [
        [1, "a"] * 20,  # a list NumPy would silently turn into strings
        np.array([1, "a"] * 20, dtype=object),  # an object array NumPy cannot sort
    ],
    ids=["list", "object-array"],
)
def test_query_ids_mixing_ints_and_strings_name_qid(qid):
    from oracleboost.boosters import FunctionalGradientRanker

    mixed = r"mixes strings and other values \(e\.g\. 'a' and 1\)"
    with pytest.raises(ValueError, match=r"^qid " + mixed):
        FunctionalGradientRanker(n_estimators=2).fit(X, Y_REG, qid)
    with pytest.raises(ValueError, match=r"^qid " + mixed):  # early stopping splits by qid
        FunctionalGradientRanker(n_estimators=2, n_iter_no_change=2).fit(X, Y_REG, qid)
    good = np.arange(len(X)) // 5
    with pytest.raises(ValueError, match=r"^eval_qid \(eval_set\[0\]\) " + mixed):
        FunctionalGradientRanker(n_estimators=2).fit(
            X, Y_REG, good, eval_set=[(X, Y_REG)], eval_qid=[qid]
        )
    # strings alone, or numbers alone, are query ids
    for ids in (good, good.astype(str), good.astype(float)):
        FunctionalGradientRanker(n_estimators=2).fit(X, Y_REG, ids)


@pytest.mark.parametrize("init", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("make", [
    lambda init: FunctionalGradientRegressor(init=init, n_estimators=2),
    lambda init: FunctionalGradientClassifier(init=init, n_estimators=2),
], ids=["regressor", "classifier"])
def test_an_init_that_is_not_finite_is_refused_by_name(make, init):
    # NaN or ±inf would be every prediction (NaN fitted 0 rounds and predicted NaN)
    booster = make(init)
    y = Y_CLS if isinstance(booster, FunctionalGradientClassifier) else X[:, 0]
    with pytest.raises(ValueError, match="'init' parameter"):
        booster.fit(X, y)


@pytest.mark.parametrize("make", [lambda: TreeOracle(max_depth=2),
                                  lambda: SklearnOracle(DecisionTreeRegressor(max_depth=2))],
                         ids=["TreeOracle", "SklearnOracle"])
def test_features_too_narrow_for_scikit_learns_trees_are_warned_of(make):
    """scikit-learn's trees never split a feature spanning at most 1e-7 (an absolute
    threshold): said at bind, naming the features, and not said of other scales."""
    narrow = X.copy()
    narrow[:, [0, 2]] *= 1e-9
    with pytest.warns(UserWarning, match=r"span at most 1e-07.*2 such feature\(s\): 0 .*, 2 "):
        bound = make().bind(narrow)
    # it is so: a target of feature 0 alone, which one split at 0 fits on X, is missed
    target = np.where(X[:, 0] > 0, 1.0, -1.0)
    wrong = lambda h: np.mean(np.sign(h.train_output) != target)  # noqa: E731
    assert wrong(make().bind(X).project(target)) == 0.0
    assert wrong(bound.project(target)) > 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make().bind(X * 1e-6)  # spans above the threshold: split as usual
        make().bind(np.c_[X, np.ones(len(X))])  # a constant feature is no surprise


def test_every_prediction_before_fit_is_a_not_fitted_error():
    """scikit-learn's convention, staged forms included (MABoost's staged_predict_proba
    raised an AttributeError)."""
    from sklearn.exceptions import NotFittedError

    from oracleboost.boosters import BOOSTERS

    methods = ("predict", "predict_proba", "decision_function", "staged_predict",
               "staged_predict_proba", "staged_decision_function", "score")
    checked = set()
    for spec in BOOSTERS.values():
        for method in methods:
            if not hasattr(spec.estimator, method):
                continue
            checked.add((spec.estimator.__name__, method))
            args = (X, Y_CLS) if method == "score" else (X,)
            if method == "score" and spec.task == "ranking":
                args += (np.zeros(len(X)),)  # its qid
            with pytest.raises(NotFittedError):
                out = getattr(spec.make(), method)(*args)
                next(iter(out))  # a staged form checks when it is iterated
    assert ("MirrorBoostingClassifier", "staged_predict_proba") in checked
    assert len({name for name, _ in checked}) == 7  # every booster class


def test_a_learning_rate_too_large_stops_or_is_named():
    """learning_rate within its documented range (0, inf) but too large for float64:
    dual acceleration's loss passing float64 stops the fit ('non_finite', the round
    discarded; it was a bare OverflowError of math.exp), MABoost's potential takes η·η
    (η**2 raised OverflowError), and the Euclidean projection at a scale float64
    cannot resolve says so, naming learning_rate (it returned zeros, then 'r contains
    NaN' came from the oracle)."""
    from oracleboost.boosters import AcceleratedMarginClassifier, StopReason

    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    for method, lr in (("gradient_descent", 1e4), ("accelerated", 1e4)):
        with pytest.warns(UserWarning, match="not finite"):
            acc = AcceleratedMarginClassifier(LinearOracle(), method=method,
                                              learning_rate=lr, n_estimators=30).fit(X, Y_CLS)
        assert acc.stop_reason_ == StopReason.NON_FINITE
        assert np.isfinite(acc.history_["loss"]).all()
        assert np.isfinite(acc.decision_function(X)).all()
    huge = MirrorBoostingClassifier(StumpOracle(), learning_rate=1e300, n_estimators=4)
    assert np.isfinite(huge.fit(X, Y_CLS).decision_function(X)).all()
    for y in (Y_CLS, y3):
        with pytest.raises(FloatingPointError, match="learning_rate too large"):
            MirrorBoostingClassifier(StumpOracle(), mirror="euclidean", learning_rate=1e20,
                                     n_estimators=6).fit(X, y)


def test_a_wolfe_learning_rate_below_float64s_resolution_is_named():
    # c1 = 1 − ν/2 and c2 = 1 − ν/4 round to 1 below about 1e-15 (the error named
    # only the constants)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)  # no stump classifies it all
    CoordinateBoostingClassifier(step="wolfe", learning_rate=1e-15, n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="learning_rate ν = 1e-16.*larger learning_rate"):
        CoordinateBoostingClassifier(step="wolfe", learning_rate=1e-16,
                                     n_estimators=2).fit(X, y)


def test_X_without_features_is_not_called_non_numeric():
    for booster, y in ((CoordinateBoostingClassifier(n_estimators=2), Y_CLS),
                       (FunctionalGradientRegressor(n_estimators=2), Y_REG)):
        with pytest.raises(ValueError, match=r"^Found array with 0 feature\(s\)"):
            booster.fit(X[:, :0], y)
