"""The one family of step rules, schedules, momenta and mirror maps (boosters/steps.py,
boosters/mirror_maps.py, MomentumMethod in boosters/accelerated.py).

* Every object is a frozen dataclass: setting an attribute fails, it pickles to an equal
  object, its repr shows its parameters (and evaluates back to an equal object), an
  estimator that holds it shows it in ``get_params`` and survives ``clone`` and pickling,
  and a bad parameter is refused when the object is made, with an error naming the field.
* Every name an estimator takes (``step=``, ``schedule=``, ``mirror=``, ``method=``)
  gives the same fit, bit for bit, as the object it stands for, written out here
  independently of the library's tables; so the pinned equalities of the name forms
  (scikit-learn's AdaBoost, the maboost package replays, the Rudin margins, dual
  acceleration's gaps) hold for the objects too.
* The count t a rule sees is the booster's: schedules follow their formulas round by
  round, and a warm start one round at a time (or through a pickle) continues the count
  exactly, where a rule that kept its own memory, or a booster that restarted t, would
  not.
"""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import (
    check_dont_overwrite_parameters,
    check_estimators_overwrite_params,
    check_estimators_pickle,
    check_fit_idempotent,
    check_get_params_invariance,
    check_set_params,
)

from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    AdaBoostStep,
    ClosedFormStep,
    ConstantMomentum,
    ConstantStep,
    CoordinateBoostingClassifier,
    EntropyMap,
    EuclideanMap,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
    HorizonStep,
    InverseSqrtStep,
    InverseTimeStep,
    MirrorBoostingClassifier,
    MirrorMap,
    Momentum,
    MomentumMethod,
    NesterovMomentum,
    OptimalStep,
    QuadraticStep,
    RoundView,
    Schedule,
    SmoothnessStep,
    StepRule,
    WolfeStep,
)
from oracleboost.optim import steps as steps_module
from oracleboost.optim.steps import MadaBoostStep, MirrorAscentStep, SparseBoostStep
from oracleboost.oracles import StumpOracle

# ---------------------------------------------------------------------------------------
# the objects
# ---------------------------------------------------------------------------------------

OBJECTS = [
    QuadraticStep(),
    WolfeStep(),
    WolfeStep(c1=1 / 3, c2=1 / 2),
    AdaBoostStep(),
    OptimalStep(),
    ClosedFormStep(),
    ConstantStep(),
    InverseSqrtStep(),
    InverseTimeStep(),
    InverseTimeStep(strong_convexity=0.5),
    SmoothnessStep(smoothness=2.0),
    HorizonStep(),
    MirrorAscentStep(),
    MirrorAscentStep(schedule=InverseSqrtStep()),
    SparseBoostStep(sparsity=0.5),
    MadaBoostStep(),
    NesterovMomentum(),
    ConstantMomentum(beta=0.25),
    EntropyMap(),
    EuclideanMap(),
    MomentumMethod(),
    MomentumMethod("sampled_row", HorizonStep(), ConstantMomentum()),
]

#: Everything repr may name, for evaluating a repr back.
NAMESPACE = {
    **{name: getattr(steps_module, name) for name in steps_module.__all__},
    "EntropyMap": EntropyMap,
    "EuclideanMap": EuclideanMap,
    "MomentumMethod": MomentumMethod,
}


def _holder(obj):
    """An estimator that holds ``obj`` (a momentum inside a MomentumMethod), the
    parameter that holds it, and how to find ``obj`` in the parameter's value."""
    if isinstance(obj, MirrorMap):
        return MirrorBoostingClassifier(mirror=obj), "mirror", lambda v: v
    if isinstance(obj, MomentumMethod):
        return AcceleratedMarginClassifier(method=obj), "method", lambda v: v
    if isinstance(obj, Momentum):
        est = AcceleratedMarginClassifier(method=MomentumMethod(beta=obj))
        return est, "method", lambda v: v.beta
    if isinstance(obj, Schedule):
        return FunctionalGradientRegressor(schedule=obj), "schedule", lambda v: v
    assert isinstance(obj, StepRule)
    return CoordinateBoostingClassifier(step=obj), "step", lambda v: v


@pytest.mark.parametrize("obj", OBJECTS, ids=repr)
def test_frozen(obj):
    fields = dataclasses.fields(obj)
    name = fields[0].name if fields else "anything"
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(obj, name, None)


@pytest.mark.parametrize("obj", OBJECTS, ids=repr)
def test_pickles_to_an_equal_object(obj):
    back = pickle.loads(pickle.dumps(obj))
    assert back == obj and back is not obj
    assert hash(back) == hash(obj)


@pytest.mark.parametrize("obj", OBJECTS, ids=repr)
def test_repr_shows_every_parameter_and_evaluates_back(obj):
    text = repr(obj)
    assert text.startswith(type(obj).__name__ + "(")
    for field in dataclasses.fields(obj):
        assert f"{field.name}={getattr(obj, field.name)!r}" in text
    assert eval(text, dict(NAMESPACE)) == obj


def test_equality_is_by_value():
    assert WolfeStep(1 / 3, 1 / 2) == WolfeStep(c1=1 / 3, c2=1 / 2)
    assert WolfeStep(1 / 3, 1 / 2) != WolfeStep(1 / 3, 0.6)
    assert InverseTimeStep() != InverseTimeStep(strong_convexity=1.0)
    assert MirrorAscentStep() != MirrorAscentStep(InverseSqrtStep())
    assert ConstantStep() != InverseSqrtStep()
    assert EntropyMap() != EuclideanMap()
    assert MomentumMethod() == MomentumMethod("batch", ConstantStep(), NesterovMomentum())


@pytest.mark.parametrize("obj", OBJECTS, ids=repr)
def test_an_estimator_holding_it_shows_it_and_survives_clone_and_pickle(obj):
    est, param, find = _holder(obj)
    held = est.get_params()[param]
    assert held is getattr(est, param) and find(held) is obj
    assert repr(obj) in " ".join(repr(est).split())  # pprint may break the lines
    twin = clone(est).get_params()[param]
    assert twin == held and twin is not held and find(twin) == obj
    assert pickle.loads(pickle.dumps(est)).get_params()[param] == held


BAD = [
    (WolfeStep, dict(c1=1.5), "c1"),
    (WolfeStep, dict(c1=0.0), "c1"),
    (WolfeStep, dict(c1="1/3"), "c1"),
    (WolfeStep, dict(c2=1.0), "c2"),
    (WolfeStep, dict(c2=math.nan), "c2"),
    (WolfeStep, dict(c1=0.6, c2=0.5), "c1"),
    (InverseTimeStep, dict(strong_convexity=0.0), "strong_convexity"),
    (InverseTimeStep, dict(strong_convexity=-1.0), "strong_convexity"),
    (InverseTimeStep, dict(strong_convexity=math.inf), "strong_convexity"),
    (SmoothnessStep, dict(smoothness=0.0), "smoothness"),
    (SmoothnessStep, dict(smoothness=True), "smoothness"),
    (SparseBoostStep, dict(sparsity=1.0), "sparsity"),
    (SparseBoostStep, dict(sparsity=-0.1), "sparsity"),
    (SparseBoostStep, dict(sparsity=None), "sparsity"),
    (ConstantMomentum, dict(beta=1.0), "beta"),
    (ConstantMomentum, dict(beta=-0.5), "beta"),
    (MirrorAscentStep, dict(schedule="inv_sqrt"), "schedule"),
    (MirrorAscentStep, dict(schedule=AdaBoostStep()), "schedule"),
    (MomentumMethod, dict(direction="sideways"), "direction"),
    (MomentumMethod, dict(theta=AdaBoostStep()), "theta"),
    (MomentumMethod, dict(theta=1.0), "theta"),
    (MomentumMethod, dict(beta=ConstantStep()), "beta"),
    (MomentumMethod, dict(direction="gradient"), "beta"),  # GD takes no momentum
]


@pytest.mark.parametrize("cls,params,field", BAD, ids=lambda v: repr(v))
def test_bad_parameters_are_refused_when_made_naming_the_field(cls, params, field):
    with pytest.raises((ValueError, TypeError), match=field):
        cls(**params)


@pytest.mark.parametrize("est,param", [
    (CoordinateBoostingClassifier(step=EntropyMap()), "step"),
    (FunctionalGradientRegressor(schedule=AdaBoostStep()), "schedule"),
    (FunctionalGradientRegressor(schedule=NesterovMomentum()), "schedule"),
    (MirrorBoostingClassifier(mirror=InverseSqrtStep()), "mirror"),
    (AcceleratedMarginClassifier(method=InverseSqrtStep()), "method"),
], ids=lambda v: v if isinstance(v, str) else type(v).__name__)
def test_estimators_refuse_objects_of_the_wrong_kind(est, param):
    X, y = make_classification(40, n_features=4, random_state=0)
    with pytest.raises(InvalidParameterError, match=param):
        est.fit(X, y)


HOLDING = [
    CoordinateBoostingClassifier(StumpOracle(), step=WolfeStep(c1=1 / 3, c2=1 / 2),
                                 n_estimators=20),
    FunctionalGradientRegressor(StumpOracle(), schedule=InverseTimeStep(strong_convexity=0.5),
                                n_estimators=20),
    MirrorBoostingClassifier(StumpOracle(), mirror=EuclideanMap(), n_estimators=20),
    AcceleratedMarginClassifier(method=MomentumMethod(theta=InverseSqrtStep()),
                                n_estimators=50),
]


@pytest.mark.parametrize("check", [
    check_get_params_invariance,
    check_set_params,
    check_estimators_overwrite_params,  # fit leaves the objects as they were (joblib.hash)
    check_dont_overwrite_parameters,
    check_estimators_pickle,
    check_fit_idempotent,
], ids=lambda c: c.__name__)
@pytest.mark.parametrize("est", HOLDING, ids=lambda e: type(e).__name__)
def test_scikit_learn_s_parameter_checks_with_objects(est, check):
    check(type(est).__name__, clone(est))


def test_a_schedule_needing_a_missing_constant_names_it():
    X, y = make_classification(40, n_features=4, random_state=0)
    for schedule, field in ((InverseTimeStep(), "strong_convexity"),
                            (SmoothnessStep(), "smoothness"),
                            (HorizonStep(), "n_samples")):
        with pytest.raises(ValueError, match=field):
            FunctionalGradientRegressor(loss="absolute", schedule=schedule).fit(X, y)
    with pytest.raises(ValueError, match="strong_convexity"):  # a coordinate fit has no λ
        CoordinateBoostingClassifier(StumpOracle(), step=InverseTimeStep()).fit(X, y)


# ---------------------------------------------------------------------------------------
# names and objects: the same fit, bit for bit
# ---------------------------------------------------------------------------------------


def _binary(seed=0, n=120):
    return make_classification(n, n_features=5, n_informative=3, n_redundant=0,
                               flip_y=0.1, random_state=seed)


def _separable(seed=0, n=80, d=6):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = (X @ rng.randn(d) > 0).astype(int)
    return X, y


def _assert_same_fit(a, b, X, keys):
    assert a.stop_reason_ == b.stop_reason_
    for key in keys:
        np.testing.assert_array_equal(a.history_[key], b.history_[key], err_msg=key)
    np.testing.assert_array_equal(a.decision_function(X) if hasattr(a, "decision_function")
                                  else a.predict(X),
                                  b.decision_function(X) if hasattr(b, "decision_function")
                                  else b.predict(X))


COORDINATE = {
    "quadratic": QuadraticStep(),
    "wolfe": WolfeStep(),
    "adaboost": AdaBoostStep(),
    "optimal": OptimalStep(),
    "closed_form": ClosedFormStep(),
    "constant": ConstantStep(),
}


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
@pytest.mark.parametrize("name", list(COORDINATE))
def test_coordinate_step_names_are_their_objects(name, loss):
    X, y = _binary()
    kw = dict(oracle=StumpOracle(), loss=loss, learning_rate=0.5, n_estimators=25)
    a = CoordinateBoostingClassifier(step=name, **kw).fit(X, y)
    b = CoordinateBoostingClassifier(step=COORDINATE[name], **kw).fit(X, y)
    assert b.get_params()["step"] == COORDINATE[name]
    _assert_same_fit(a, b, X, ("step", "edge", "loss", "margin"))


SCHEDULES = {
    "constant": ConstantStep(),
    "inv_sqrt": InverseSqrtStep(),
    "inv_t": InverseTimeStep(),
    "smoothness": SmoothnessStep(),
}


@pytest.mark.filterwarnings("ignore::oracleboost.boosters.BoostingWarning")  # residual + c
@pytest.mark.parametrize("projection", ["naive", "repeated", "residual"])
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_functional_schedule_names_are_their_objects(name, projection):
    X, y = _binary()
    target = X[:, 0] + 0.5 * X[:, 1] ** 2
    kw = dict(oracle=StumpOracle(), projection=projection, learning_rate=0.5, n_estimators=30)
    a = FunctionalGradientRegressor(schedule=name, **kw).fit(X, target)
    b = FunctionalGradientRegressor(schedule=SCHEDULES[name], **kw).fit(X, target)
    _assert_same_fit(a, b, X, ("step", "loss", "outer"))
    # the classifier (logistic: Λ = 1/4, λ from the estimator) and the ranker alike
    kw = dict(kw, strong_convexity=0.5)
    a = FunctionalGradientClassifier(schedule=name, **kw).fit(X, y)
    b = FunctionalGradientClassifier(schedule=SCHEDULES[name], **kw).fit(X, y)
    _assert_same_fit(a, b, X, ("step", "loss", "train_error"))
    if name == "smoothness":
        return  # the pairwise hinge is not smooth
    qid = np.repeat(np.arange(12), 10)
    a = FunctionalGradientRanker(schedule=name, **kw).fit(X, target, qid)
    b = FunctionalGradientRanker(schedule=SCHEDULES[name], **kw).fit(X, target, qid)
    _assert_same_fit(a, b, X, ("step", "loss"))


def test_a_schedule_s_own_constant_is_the_estimator_s():
    """λ and Λ given to the rule act as the estimator's λ, or as the learning rate c/Λ,
    on a loss that has neither (the absolute loss)."""
    X, y = _binary()
    target = X[:, 0] - X[:, 2]
    kw = dict(oracle=StumpOracle(), loss="absolute", n_estimators=20)
    a = FunctionalGradientRegressor(schedule="inv_t", strong_convexity=2.0, learning_rate=0.5,
                                    **kw).fit(X, target)
    b = FunctionalGradientRegressor(schedule=InverseTimeStep(strong_convexity=2.0),
                                    learning_rate=0.5, **kw).fit(X, target)
    _assert_same_fit(a, b, X, ("step", "loss"))
    c = FunctionalGradientRegressor(schedule="constant", learning_rate=0.125, **kw)
    d = FunctionalGradientRegressor(schedule=SmoothnessStep(smoothness=4.0),
                                    learning_rate=0.5, **kw)  # 0.5 / 4 = 0.125 exactly
    _assert_same_fit(c.fit(X, target), d.fit(X, target), X, ("step", "loss"))


MIRROR_CASES = [
    dict(),
    dict(variant="max_margin"),
    dict(variant="smooth", smoothness=3.0),
    dict(update="active"),
    dict(update="lazy"),
]


@pytest.mark.parametrize("params", MIRROR_CASES, ids=repr)
@pytest.mark.parametrize("name,obj", [("entropy", EntropyMap()), ("euclidean", EuclideanMap())])
def test_mirror_names_are_their_maps(name, obj, params):
    X, y = _binary()
    kw = dict(oracle=StumpOracle(), n_estimators=25, learning_rate=0.7, **params)
    a = MirrorBoostingClassifier(mirror=name, **kw).fit(X, y)
    b = MirrorBoostingClassifier(mirror=obj, **kw).fit(X, y)
    _assert_same_fit(a, b, X, ("eta", "edge", "bound", "max_weight"))
    np.testing.assert_array_equal(a.weights_, b.weights_)


@pytest.mark.parametrize("name,obj,params", [
    ("euclidean", EuclideanMap(), dict(variant="sparse", sparsity=0.5)),
    ("entropy", EntropyMap(), dict(variant="madaboost")),
    ("entropy", EntropyMap(), dict(multiclass=True)),
    ("euclidean", EuclideanMap(), dict(multiclass=True, variant="smooth", smoothness=2.0)),
])
def test_mirror_maps_in_the_other_algorithms(name, obj, params):
    params = dict(params)
    if params.pop("multiclass", False):
        X, y = make_classification(150, n_features=5, n_informative=4, n_redundant=0,
                                   n_classes=3, random_state=1)
    else:
        X, y = _binary(1)
    kw = dict(oracle=StumpOracle(), n_estimators=25, **params)
    a = MirrorBoostingClassifier(mirror=name, **kw).fit(X, y)
    b = MirrorBoostingClassifier(mirror=obj, **kw).fit(X, y)
    _assert_same_fit(a, b, X, ("eta", "edge", "bound", "n_zero_weights"))
    np.testing.assert_array_equal(a.weights_, b.weights_)


def test_the_algorithms_of_one_map_refuse_the_other_map():
    X, y = _binary()
    for params in (dict(variant="sparse", mirror=EntropyMap()),
                   dict(variant="madaboost", mirror=EuclideanMap())):
        with pytest.raises(ValueError, match=f"variant='{params['variant']}'"):
            MirrorBoostingClassifier(StumpOracle(), n_estimators=3, **params).fit(X, y)


NONE = ConstantMomentum(0.0)
METHOD_OBJECTS = {
    ("accelerated", "heuristic"): MomentumMethod("batch", ConstantStep(), NesterovMomentum()),
    ("normalized", "heuristic"): MomentumMethod("batch", ConstantStep(), NONE),
    ("normalized_sqrt", "heuristic"): MomentumMethod("batch", InverseSqrtStep(), NONE),
    ("gradient_descent", "heuristic"): MomentumMethod("gradient", ConstantStep(), NONE),
    ("perceptron", "heuristic"): MomentumMethod("worst_row", ConstantStep(), NONE),
    ("stochastic", "heuristic"): MomentumMethod("sampled_row", ConstantStep(),
                                                NesterovMomentum()),
    ("stochastic", "proven"): MomentumMethod("sampled_row", HorizonStep(), NONE),
}


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
@pytest.mark.parametrize("name,schedule", list(METHOD_OBJECTS))
def test_accelerated_method_names_are_their_objects(name, schedule, loss):
    X, y = _separable()
    kw = dict(n_estimators=150, tol=0.0, learning_rate=0.8, loss=loss, random_state=3)
    a = AcceleratedMarginClassifier(method=name, stochastic_schedule=schedule, **kw).fit(X, y)
    obj = METHOD_OBJECTS[name, schedule]
    b = AcceleratedMarginClassifier(method=obj, **kw).fit(X, y)
    assert b.get_params()["method"] is obj
    _assert_same_fit(a, b, X, ("step", "gap", "margin", "margin_upper_bound",
                               "momentum_bound", "log_loss"))
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_accelerated_kernel_and_multiclass_forms_take_the_objects():
    X, y = _separable(2)
    kw = dict(n_estimators=60, tol=0.0, kernel="rbf", kernel_params={"gamma": 0.3})
    a = AcceleratedMarginClassifier(method="stochastic", random_state=0, **kw).fit(X, y)
    b = AcceleratedMarginClassifier(method=METHOD_OBJECTS["stochastic", "heuristic"],
                                    random_state=0, **kw).fit(X, y)
    _assert_same_fit(a, b, X, ("step", "gap", "margin"))
    X, y = make_classification(120, n_features=6, n_informative=5, n_redundant=0,
                               n_classes=3, class_sep=3.0, random_state=0)
    a = AcceleratedMarginClassifier(n_estimators=60, tol=0.0).fit(X, y)
    b = AcceleratedMarginClassifier(method=MomentumMethod(), n_estimators=60, tol=0.0)
    _assert_same_fit(a, b.fit(X, y), X, ("step", "gap", "margin"))


# ---------------------------------------------------------------------------------------
# the count t: what each booster passes, and how it continues
# ---------------------------------------------------------------------------------------


def test_schedules_formulas_at_the_count():
    view = RoundView(nu=0.3, n_samples=50, horizon=400, strong_convexity=2.0, smoothness=4.0)
    for t in range(6):
        assert ConstantStep()(view, t) == 0.3
        assert InverseSqrtStep()(view, t) == 0.3 / math.sqrt(t + 1)
        assert InverseTimeStep()(view, t) == 0.3 / (2.0 * (t + 1))
        assert InverseTimeStep(strong_convexity=5.0)(view, t) == 0.3 / (5.0 * (t + 1))
        assert SmoothnessStep()(view, t) == 0.3 / 4.0
        assert HorizonStep()(view, t) == math.sqrt(math.log(50) / 400)
        assert NesterovMomentum()(view, t) == t / (t + 1)
        assert ConstantMomentum(0.25)(view, t) == 0.25
    mirror = RoundView(nu=0.5, edge=0.2, L=4.0, mass=0.8, n_samples=10, error=0.3)
    assert MirrorAscentStep()(mirror, 7) == 0.5 * 0.2 / 4.0
    assert MirrorAscentStep(InverseSqrtStep())(mirror, 3) == 0.5 * 0.2 / 4.0 / 2.0
    assert SparseBoostStep(0.5)(mirror, 0) == 0.5 * 0.5 * 0.2 * 0.8 / 10
    assert SparseBoostStep(0.5).l1(mirror) == 0.5 * 0.2 * 0.8
    assert MadaBoostStep()(mirror, 0) == 0.5 * 0.3 * 0.2


def test_a_schedule_as_a_coordinate_step_counts_the_rounds():
    """α_t = ν/√t: the coordinate booster passes the rounds before this one."""
    X, y = _binary()
    est = CoordinateBoostingClassifier(StumpOracle(), step=InverseSqrtStep(),
                                       learning_rate=0.5, n_estimators=20).fit(X, y)
    t = np.arange(20)
    np.testing.assert_array_equal(est.history_["step"], 0.5 / np.sqrt(t + 1.0))


def test_an_accelerated_step_with_a_decaying_theta_and_momentum():
    """A combination no name gives: Algorithm 1's momentum with θ_t = ν/√(t + 1)."""
    X, y = _separable()
    method = MomentumMethod(theta=InverseSqrtStep())
    est = AcceleratedMarginClassifier(method=method, n_estimators=50, tol=0.0,
                                      learning_rate=0.5).fit(X, y)
    np.testing.assert_array_equal(est.history_["step"], 0.5 / np.sqrt(np.arange(50) + 1.0))
    assert np.isfinite(est.history_["momentum_bound"][1:]).all()  # β_t > 0 from t = 1


def _one_at_a_time(est, fit, rounds, pickled=False):
    est.set_params(warm_start=True)
    for k in range(1, rounds + 1):
        est.set_params(n_estimators=k)
        fit(est)
        if pickled:
            est = pickle.loads(pickle.dumps(est))
    return est


@pytest.mark.parametrize("pickled", [False, True])
@pytest.mark.parametrize("case", ["coordinate", "functional", "mirror", "accelerated"])
def test_warm_start_continues_the_count(case, pickled):
    """Fitting one round at a time (through a pickle between rounds, too) is one fit,
    with every rule indexed by t: the count lives in the booster's saved state."""
    X, y = _binary()
    target = X[:, 0] + X[:, 1]
    T = 12
    make, fit, keys = {
        "coordinate": (
            lambda: CoordinateBoostingClassifier(StumpOracle(), step=InverseSqrtStep(),
                                                 learning_rate=0.5),
            lambda e: e.fit(X, y), ("step", "loss")),
        "functional": (
            lambda: FunctionalGradientRegressor(StumpOracle(), schedule=InverseSqrtStep(),
                                                projection="residual", learning_rate=0.5),
            lambda e: e.fit(X, target), ("step", "loss", "outer")),
        "mirror": (
            lambda: MirrorBoostingClassifier(StumpOracle(), mirror=EuclideanMap(),
                                             variant="max_margin"),
            lambda e: e.fit(X, y), ("eta", "bound")),
        "accelerated": (
            lambda: AcceleratedMarginClassifier(
                method=MomentumMethod(theta=InverseSqrtStep()), tol=0.0),
            lambda e: e.fit(*_separable()), ("step", "gap", "momentum_bound")),
    }[case]
    one = make().set_params(n_estimators=T)
    fit(one)
    steps = _one_at_a_time(make(), fit, T, pickled)
    for key in keys:
        np.testing.assert_array_equal(steps.history_[key], one.history_[key], err_msg=key)
    data = _separable()[0] if case == "accelerated" else X
    np.testing.assert_array_equal(steps.decision_function(data) if case != "functional"
                                  else steps.predict(data),
                                  one.decision_function(data) if case != "functional"
                                  else one.predict(data))


@pytest.mark.parametrize("name", ["adaboost", "wolfe", "optimal", "quadratic"])
def test_rudin_margins_of_the_names_and_the_objects(name):
    """Telgarsky 2013's Rudin-matrix runs (Figures 2–3): the same margins, round by round."""
    from oracleboost.experiments.telgarsky2013 import rudin_margins

    a, _ = rudin_margins(0.5, 400, step=name)
    b, _ = rudin_margins(0.5, 400, step=COORDINATE[name])
    np.testing.assert_array_equal(a, b)
