"""Fitted boosters stored with ``skops.io`` (and pickle), and their public ``intercept_``.

A model loaded back predicts exactly as the one stored, bit for bit: ``predict``,
``decision_function``, ``predict_proba``, the last staged value, ``history_``; every
booster, every oracle under at least one booster, binary and multiclass.  Loading
trusts exactly :func:`oracleboost.persistence.trusted_types` (what MLflow's skops flavour
is given), and the types a file asks to be trusted are public ones of that list.  A fit
stored with ``warm_start=True`` continues after loading as the stored one would.

``intercept_`` is the model's f_0: ``decision_function`` is ``intercept_`` plus the
``coef_``-weighted sum of ``estimators_``'s predictions, and f_0 is the papers' starting
point (0 for the margin boosters, the loss' best constant for functional gradient
boosting).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.base import is_classifier
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeClassifier

from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    StopReason,
    TotallyCorrectiveClassifier,
)
from oracleboost.engine.model import Ensemble
from oracleboost.oracles import (
    CachedOracle,
    HistTreeOracle,
    LightGBMOracle,
    LinearOracle,
    MatrixOracle,
    MLPOracle,
    SklearnOracle,
    StumpOracle,
    TreeOracle,
)
from oracleboost.persistence import trusted_types

#: The one private name a stored model may ask to be trusted: a fitted scikit-learn
#: tree's node arrays (the hypotheses of TreeOracle and of SklearnOracle with a tree);
#: skops loads scikit-learn's estimators by default but leaves this inner Cython type to
#: the user.
SKLEARN_TREE = "sklearn.tree._tree.Tree"

N, N_TEST, D = 160, 40, 5


def _binary():
    X, y = make_classification(N + N_TEST, D, n_informative=3, random_state=0)
    return X, np.where(y == 1, "yes", "no")  # labels that are not ±1


def _multiclass():
    return make_classification(N + N_TEST, D, n_informative=4, n_redundant=1, n_classes=3,
                               n_clusters_per_class=1, random_state=1)


def _regression():
    X, y = make_regression(N + N_TEST, D, noise=5.0, random_state=2)
    return X, y + 40.0  # a mean away from 0


def _ranking():
    X, y = _regression()
    return X, np.digitize(y, np.quantile(y, [0.25, 0.5, 0.75]))  # relevance 0..3


def _rows():
    """Row indices as X (MatrixOracle's convention), binary labels."""
    _, y = _binary()
    return np.arange(N + N_TEST, dtype=np.float64)[:, None], y


def _matrix():
    """A fixed class of ±1 columns over the rows of :func:`_rows`."""
    X, _ = _binary()
    return np.where(X[:, :, None] > np.array([-0.5, 0.0, 0.5]), 1.0, -1.0).reshape(len(X), -1)


def _categorical():
    """A DataFrame with a string categorical column (a rare category, missing values)
    and a numeric one (issue 22); its test rows list the categories in another order
    and hold one the fit never saw."""
    import pandas as pd

    X, y = _binary()
    rng = np.random.default_rng(3)
    levels = np.array(["a", "b", "c", "d", "rare"])
    colour = rng.choice(levels, N + N_TEST, p=[0.3, 0.3, 0.2, 0.17, 0.03]).astype(object)
    colour[rng.uniform(size=N + N_TEST) < 0.05] = None
    colour[N::7] = "unseen"
    y = np.where(np.isin(colour, ["a", "c"]) ^ (X[:, 0] > 0), "yes", "no")
    frame = pd.DataFrame({"x0": X[:, 0], "colour": pd.Categorical(colour), "x2": X[:, 2]})
    return frame, y


def _categorical_split(frame):
    """:func:`_categorical`'s training rows (only the categories they hold) and test
    rows (every category, in reverse order)."""
    train = frame.iloc[:N].copy()
    train["colour"] = train["colour"].cat.remove_unused_categories()
    test = frame.iloc[N:].copy()
    test["colour"] = test["colour"].cat.reorder_categories(
        list(reversed(test["colour"].cat.categories)))
    return train, test


DATA = {"binary": _binary, "multiclass": _multiclass, "regression": _regression,
        "ranking": _ranking, "rows": _rows, "categorical": _categorical}
#: Cases fitted on a DataFrame with categorical columns (LightGBM's categorical splits).
CATEGORICAL = ["coordinate-lightgbm-categorical", "regressor-lightgbm-categorical"]


def _cases(tmp: str) -> dict:
    """id -> (booster, data).  Every booster, and every oracle under one at least."""
    return {
        "adaboost-stump": (CoordinateBoostingClassifier(StumpOracle(), n_estimators=8), "binary"),
        "coordinate-tree": (CoordinateBoostingClassifier(
            TreeOracle(max_depth=2), n_estimators=6, random_state=0), "binary"),
        "coordinate-lightgbm": (CoordinateBoostingClassifier(
            LightGBMOracle(num_leaves=4), loss="logistic", step="wolfe", n_estimators=6),
            "binary"),
        "coordinate-hist-tree": (CoordinateBoostingClassifier(
            HistTreeOracle(num_leaves=4, min_data_in_leaf=5), n_estimators=6), "binary"),
        "coordinate-sklearn": (CoordinateBoostingClassifier(
            SklearnOracle(DecisionTreeClassifier(max_depth=1)), n_estimators=6,
            random_state=0), "binary"),
        "coordinate-mlp": (CoordinateBoostingClassifier(
            MLPOracle(max_iter=50), n_estimators=3, random_state=0), "binary"),
        "coordinate-linear": (CoordinateBoostingClassifier(
            LinearOracle(), loss="logistic", step="wolfe", n_estimators=6), "binary"),
        "coordinate-matrix": (CoordinateBoostingClassifier(
            MatrixOracle(_matrix()), n_estimators=6), "rows"),
        "coordinate-cached": (CoordinateBoostingClassifier(
            CachedOracle(StumpOracle(), tmp), n_estimators=6), "binary"),
        "maboost-stump": (MirrorBoostingClassifier(StumpOracle(), n_estimators=8), "binary"),
        "maboost-smooth-euclidean": (MirrorBoostingClassifier(
            StumpOracle(), mirror="euclidean", variant="smooth", smoothness=4.0,
            n_estimators=8), "binary"),
        "maboost-multiclass": (MirrorBoostingClassifier(StumpOracle(), n_estimators=8),
                               "multiclass"),
        "accelerated-linear": (AcceleratedMarginClassifier(
            LinearOracle(), fit_intercept=True, n_estimators=20), "binary"),
        "accelerated-multiclass": (AcceleratedMarginClassifier(
            LinearOracle(), fit_intercept=True, n_estimators=20), "multiclass"),
        "accelerated-stochastic-matrix": (AcceleratedMarginClassifier(
            MatrixOracle(_matrix()), method="stochastic", n_estimators=20, random_state=0),
            "rows"),
        "accelerated-kernel": (AcceleratedMarginClassifier(
            kernel="rbf", kernel_params={"gamma": 0.2}, n_estimators=20), "binary"),
        "regressor-tree": (FunctionalGradientRegressor(n_estimators=8, random_state=0),
                           "regression"),
        "regressor-stump-absolute": (FunctionalGradientRegressor(
            StumpOracle(), loss="absolute", n_estimators=8), "regression"),
        "regressor-lightgbm": (FunctionalGradientRegressor(
            LightGBMOracle(num_leaves=4), n_estimators=6), "regression"),
        "regressor-early-stopping": (FunctionalGradientRegressor(
            StumpOracle(), n_estimators=30, n_iter_no_change=2, random_state=0),
            "regression"),
        "classifier-logistic": (FunctionalGradientClassifier(StumpOracle(), n_estimators=8),
                                "binary"),
        "classifier-vector-stumps": (FunctionalGradientClassifier(
            StumpOracle(), query="project", n_estimators=8), "multiclass"),
        "classifier-label-coded": (FunctionalGradientClassifier(
            StumpOracle(), query="correlate", n_estimators=8), "multiclass"),
        "classifier-hinge-repeated": (FunctionalGradientClassifier(
            StumpOracle(), loss="multiclass_hinge", projection="repeated", n_estimators=8),
            "multiclass"),
        "ranker": (FunctionalGradientRanker(StumpOracle(), n_estimators=8), "ranking"),
        "lpboost-stump": (TotallyCorrectiveClassifier(StumpOracle(), nu=5, n_estimators=8),
                          "binary"),
        "lpboost-multiclass": (TotallyCorrectiveClassifier(StumpOracle(), nu=5,
                                                           n_estimators=5), "multiclass"),
        "softboost-stump": (TotallyCorrectiveClassifier(
            StumpOracle(), method="softboost", nu=5, tol=0.02, n_estimators=8), "binary"),
        "coordinate-lightgbm-categorical": (CoordinateBoostingClassifier(
            LightGBMOracle(num_leaves=4, min_data_in_leaf=5), n_estimators=6),
            "categorical"),
        "regressor-lightgbm-categorical": (FunctionalGradientRegressor(
            LightGBMOracle(num_leaves=4, min_data_in_leaf=5), n_estimators=6),
            "categorical"),
    }


CASES = sorted(_cases("unused"))
#: Cases whose fit continues with warm_start after a round trip (the others' states are
#: of the same kinds).
WARM = ["adaboost-stump", "coordinate-tree", "coordinate-lightgbm", "coordinate-hist-tree",
        "coordinate-linear",
        "maboost-stump", "maboost-multiclass", "accelerated-multiclass",
        "accelerated-stochastic-matrix", "accelerated-kernel", "regressor-tree",
        "classifier-label-coded", "ranker", "lpboost-stump", "lpboost-multiclass",
        "softboost-stump"]


def _fit(case: str, tmp_path, **params):
    """The case's booster fitted on its training rows; its test rows (a new array)."""
    est, kind = _cases(str(tmp_path / "cache"))[case]
    est.set_params(**params)
    X, y = DATA[kind]()
    if kind == "categorical":
        y = y if is_classifier(est) else np.where(y == "yes", 40.0, 0.0)
        train, test = _categorical_split(X)
        est.fit(train, y[:N])
        assert "unseen" not in est.categories_[1]  # fitted as categories; test has more
        return est, train, y[:N], {}, test
    fit_kw = {"qid": np.repeat(np.arange(N // 10), 10)} if kind == "ranking" else {}
    est.fit(X[:N], y[:N], **fit_kw)
    return est, X[:N], y[:N], fit_kw, np.array(X[N:], copy=True)


def _skops_io():
    """``skops.io``, or a skip: the test extra has skops, but an index without it (an
    offline machine's) installs the smaller ``test-core`` extra instead."""
    return pytest.importorskip("skops.io", reason="skops is not installed (the test extra)")


def assert_public_and_trusted(untrusted: list[str]) -> None:
    """The types a stored model asks to be trusted are on the library's list, and public:
    no part of a name starts with ``_`` (but scikit-learn's ``Tree``)."""
    outside = sorted(set(untrusted) - set(trusted_types()))
    assert not outside, f"loading asks to trust {outside}, not on trusted_types()"
    private = [t for t in untrusted if t != SKLEARN_TREE
               and any(part.startswith("_") for part in t.split("."))]
    assert not private, f"loading asks to trust private types {private}"


def _round_trip(est):
    """The estimator stored with skops and loaded as MLflow's skops flavour loads it:
    trusting exactly the library's list."""
    sio = _skops_io()
    data = sio.dumps(est)
    assert_public_and_trusted(sio.get_untrusted_types(data=data))
    return sio.loads(data, trusted=trusted_types())


def _outputs(est, X) -> dict[str, np.ndarray]:
    """Everything the estimator predicts on X, the staged methods' last values."""
    names = ["predict", "decision_function", "predict_proba"]
    out = {name: getattr(est, name)(X) for name in names if hasattr(est, name)}
    for name in names:
        staged = getattr(est, "staged_" + name, None)
        if staged is not None and hasattr(est, name):
            *_, last = staged(X)
            out["staged_" + name] = last
    return out


def _assert_same_model(a, b, X) -> None:
    assert type(a) is type(b)
    assert repr(a.get_params()) == repr(b.get_params())
    expected, actual = _outputs(a, X), _outputs(b, X)
    assert expected.keys() == actual.keys() and "predict" in expected
    for name, value in expected.items():
        np.testing.assert_array_equal(actual[name], value, err_msg=name)
        assert actual[name].dtype == value.dtype, name
    assert a.history_.keys() == b.history_.keys()
    for key, value in a.history_.items():
        np.testing.assert_array_equal(b.history_[key], value, err_msg=key)
    assert b.stop_reason_ == a.stop_reason_ and isinstance(b.stop_reason_, StopReason)
    np.testing.assert_array_equal(b.coef_ if not _kernel(b) else b.dual_coef_,
                                  a.coef_ if not _kernel(a) else a.dual_coef_)
    np.testing.assert_array_equal(b.intercept_, a.intercept_)
    if isinstance(a.ensemble_, Ensemble):
        assert b.ensemble_.l1_norm() == a.ensemble_.l1_norm()
        assert [h.key for h in b.estimators_] == [h.key for h in a.estimators_]
    for name in ("classes_", "validation_loss_", "best_iteration_", "n_features_in_"):
        if hasattr(a, name):
            np.testing.assert_array_equal(getattr(b, name), getattr(a, name), err_msg=name)
    assert b.categories_.keys() == a.categories_.keys()
    for j, categories in a.categories_.items():
        np.testing.assert_array_equal(b.categories_[j], categories)
        assert b.categories_[j].dtype == categories.dtype


def _kernel(est) -> bool:
    return getattr(est, "kernel", None) is not None


def _kinds(value, seen=None) -> set[str]:
    """The class names (module.qualname) of every object in ``value``: containers, and
    the fields (what a pickle stores: ``__getstate__``) of the objects."""
    seen = set() if seen is None else seen
    if id(value) in seen or value is None or isinstance(value, (str, int, float,
                                                                np.ndarray)):
        return set()
    seen.add(id(value))
    out = {f"{type(value).__module__}.{type(value).__qualname__}"}
    if isinstance(value, dict):
        parts = list(value.values())
    elif isinstance(value, (list, tuple, frozenset)):
        parts = list(value)
    else:
        state = value.__getstate__() if hasattr(value, "__dict__") else None
        parts = list(state.values()) if isinstance(state, dict) else []
    for part in parts:
        out |= _kinds(part, seen)
    return out


def assert_same_running_state(a, b) -> None:
    """The running state is the working objects again, of the same classes."""
    for name in ("_state_", "_held_out_"):
        assert _kinds(getattr(b, name, None)) == _kinds(getattr(a, name, None)), name


@pytest.mark.parametrize("case", CASES)
def test_skops_round_trip_predicts_bit_for_bit(case, tmp_path):
    est, _, _, _, X_test = _fit(case, tmp_path)
    _assert_same_model(est, _round_trip(est), X_test)


@pytest.mark.parametrize("case", ["adaboost-stump", "coordinate-lightgbm", "maboost-multiclass",
                                  "classifier-label-coded", "accelerated-kernel", *CATEGORICAL])
def test_pickle_round_trip_predicts_bit_for_bit(case, tmp_path):
    """Pickle goes through the same ``__getstate__``/``__setstate__``."""
    est, _, _, _, X_test = _fit(case, tmp_path)
    _assert_same_model(est, pickle.loads(pickle.dumps(est)), X_test)


def test_skops_file_round_trip(tmp_path):
    est, _, _, _, X_test = _fit("coordinate-lightgbm", tmp_path)
    sio = _skops_io()
    path = tmp_path / "model.skops"
    sio.dump(est, path)
    assert_public_and_trusted(sio.get_untrusted_types(file=path))
    loaded = sio.load(path, trusted=trusted_types())
    _assert_same_model(est, loaded, X_test)


@pytest.mark.parametrize("case", ["adaboost-stump", "coordinate-lightgbm"])
def test_a_loaded_ensemble_merges_recurring_hypotheses(case, tmp_path):
    """The index of the hypotheses' keys is rebuilt on load: a hypothesis the stored
    ensemble holds shares its coefficient in the loaded one too."""
    est, _, _, _, _ = _fit(case, tmp_path)
    loaded = _round_trip(est).ensemble_
    h = est.ensemble_.hypotheses[0]
    assert h.key is not None
    before = list(loaded.coef)
    j = loaded.add(h, 0.25, 1.0)
    assert j == 0 and len(loaded.coef) == len(before)
    assert loaded.coef[0] == before[0] + 0.25
    assert est.ensemble_.coef[0] == before[0]  # the stored model is not shared


@pytest.mark.parametrize("case", WARM)
def test_warm_start_continues_after_a_round_trip(case, tmp_path):
    est, X, y, fit_kw, X_test = _fit(case, tmp_path, warm_start=True)
    if est.stop_reason_ != StopReason.MAX_ROUNDS:  # pragma: no cover - the cases run out
        pytest.skip(f"{case} stopped early ({est.stop_reason_})")
    loaded = _round_trip(est)
    assert_same_running_state(est, loaded)
    model = loaded.ensemble_
    first = model.hypotheses[0] if isinstance(model, Ensemble) else model.weights[0]
    more = 2 * est.n_estimators
    est.set_params(n_estimators=more).fit(X, y, **fit_kw)
    loaded.set_params(n_estimators=more).fit(X, y, **fit_kw)
    assert loaded.n_estimators_ == est.n_estimators_ > more // 2
    timeless = {k: v for k, v in est.history_.items() if "time" not in k}
    for key, value in timeless.items():
        np.testing.assert_array_equal(loaded.history_[key], value, err_msg=key)
    for name, value in _outputs(est, X_test).items():
        np.testing.assert_array_equal(_outputs(loaded, X_test)[name], value, err_msg=name)
    # continued from the loaded model (its first round's objects), not fitted anew
    model = loaded.ensemble_
    assert (model.hypotheses[0] if isinstance(model, Ensemble) else model.weights[0]) is first


BOOSTERS = [
    CoordinateBoostingClassifier(StumpOracle(), n_estimators=4),
    MirrorBoostingClassifier(StumpOracle(), variant="smooth", smoothness=3.0),
    AcceleratedMarginClassifier(kernel="rbf", kernel_params={"gamma": 0.5}),
    FunctionalGradientRegressor(LightGBMOracle(num_leaves=3), loss="huber"),
    FunctionalGradientClassifier(StumpOracle(), query="correlate"),
    FunctionalGradientRanker(TreeOracle(max_depth=2)),
]


@pytest.mark.parametrize("est", BOOSTERS, ids=lambda e: type(e).__name__)
def test_an_unfitted_booster_round_trips(est):
    loaded = _round_trip(est)
    assert type(loaded) is type(est)
    assert repr(loaded.get_params()) == repr(est.get_params())
    with pytest.raises(NotFittedError):
        loaded.predict(np.zeros((2, D)))


@pytest.mark.parametrize("est", BOOSTERS, ids=lambda e: type(e).__name__)
def test_a_file_older_than_a_parameter_reads_it_as_off(est):
    """A booster stored before ``class_weight``, ``subsample`` and ``colsample_bytree``
    existed (its state lacks them) loads with each at the value that turns it off, so
    ``get_params`` and ``clone`` work and it refits as it was fitted."""
    from sklearn.base import clone

    from oracleboost.engine.base import ADDED_PARAMETERS

    state = {k: v for k, v in pickle.loads(pickle.dumps(est)).__dict__.items()
             if k not in ADDED_PARAMETERS}
    old = type(est).__new__(type(est))
    old.__setstate__(state)
    assert repr(clone(old).get_params()) == repr(est.get_params())


# -- intercept_ -----------------------------------------------------------------------------
@pytest.mark.parametrize("est", BOOSTERS, ids=lambda e: type(e).__name__)
def test_intercept_is_not_there_before_fit(est):
    with pytest.raises(NotFittedError):
        est.intercept_  # noqa: B018 - the property raises


def _raw(est, X) -> np.ndarray:
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


# (the categorical cases' hypotheses predict codes, not the DataFrame: test_categorical)
@pytest.mark.parametrize("case", [c for c in CASES
                                  if c != "accelerated-kernel" and c not in CATEGORICAL])
def test_decision_is_intercept_plus_weighted_estimators(case, tmp_path):
    """f(x) = intercept_ + Σ_j coef_[j] h_j(x), to the rounding of the sums: each row's
    error is at most a few ulps of Σ |terms| (a wrong coefficient would be off by the
    term itself)."""
    est, _, _, _, X_test = _fit(case, tmp_path)
    intercept, coef = est.intercept_, est.coef_
    terms = [np.multiply.outer(h.predict(X_test), c) if np.ndim(c) else c * h.predict(X_test)
             for h, c in zip(est.estimators_, coef, strict=True)]
    total = np.zeros_like(_raw(est, X_test)) + intercept
    size = np.zeros_like(total) + np.abs(intercept)
    for t in terms:
        total = total + t
        size = size + np.abs(t)
    f = _raw(est, X_test)
    assert np.all(np.abs(f - total) <= 1e-12 * size), case
    np.testing.assert_allclose(f, total, rtol=1e-12, atol=1e-12 * float(size.max()))


@pytest.mark.parametrize("case,expected", [
    ("adaboost-stump", 0.0), ("coordinate-linear", 0.0), ("maboost-stump", 0.0),
    ("ranker", 0.0), ("accelerated-kernel", 0.0),
])
def test_intercept_of_boosters_that_start_at_zero(case, expected, tmp_path):
    est, *_ = _fit(case, tmp_path)
    assert isinstance(est.intercept_, float) and est.intercept_ == expected


def test_intercept_of_multiclass_mabost_is_a_vector_of_zeros(tmp_path):
    est, *_ = _fit("maboost-multiclass", tmp_path)
    assert est.intercept_.shape == (3,) and not est.intercept_.any()


def _weights(n: int) -> np.ndarray:
    return np.random.default_rng(3).uniform(0.1, 3.0, n)


def test_intercept_of_squared_loss_is_the_weighted_mean():
    """Grubb & Bagnell's f_0 for the squared loss: the weighted mean of y."""
    X, y = _regression()
    w = _weights(len(y))
    est = FunctionalGradientRegressor(StumpOracle(), n_estimators=3).fit(X, y, sample_weight=w)
    assert isinstance(est.intercept_, float)
    np.testing.assert_allclose(est.intercept_, np.sum(w * y) / np.sum(w), rtol=1e-12)


def test_intercept_is_init_when_given():
    X, y = _regression()
    est = FunctionalGradientRegressor(StumpOracle(), n_estimators=3, init=2.5).fit(X, y)
    assert est.intercept_ == 2.5


def test_intercept_of_logistic_loss_is_the_weighted_log_odds():
    X, y = _binary()
    w = _weights(len(y))
    est = FunctionalGradientClassifier(StumpOracle(), n_estimators=3).fit(X, y, sample_weight=w)
    positive = y == est.classes_[1]
    assert isinstance(est.intercept_, float)
    np.testing.assert_allclose(est.intercept_, np.log(w[positive].sum() / w[~positive].sum()),
                               rtol=1e-12)


def test_intercept_of_softmax_is_the_log_weighted_priors():
    X, y = _multiclass()
    w = _weights(len(y))
    est = FunctionalGradientClassifier(StumpOracle(), query="project",
                                       n_estimators=3).fit(X, y, sample_weight=w)
    priors = np.array([w[y == k].sum() for k in est.classes_]) / w.sum()
    assert est.intercept_.shape == (3,)
    np.testing.assert_allclose(est.intercept_, np.log(priors), rtol=1e-12)


def test_intercept_is_a_copy(tmp_path):
    est, _, _, _, X_test = _fit("classifier-vector-stumps", tmp_path)
    before = est.decision_function(X_test)
    est.intercept_[:] = 100.0
    np.testing.assert_array_equal(est.decision_function(X_test), before)


def test_accelerated_intercept_is_the_bias_in_the_callers_scale(tmp_path):
    """The margin classifier keeps its meaning: the last entry of w over ``scale_``."""
    est, *_ = _fit("accelerated-linear", tmp_path)
    w = est.ensemble_.weights[-1]
    assert est.intercept_ == w[-1] / est.scale_ and est.intercept_ != 0.0
    est, *_ = _fit("accelerated-multiclass", tmp_path)
    assert est.intercept_.shape == (3,)
