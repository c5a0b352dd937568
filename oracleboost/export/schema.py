"""What a JSON model file may hold: the classes it may name, and the fields each needs.

:mod:`oracleboost.model_json` reads a file as data.  It creates objects only of the
classes listed here (:func:`allowed_classes`), looked up by name; it never imports a
module or calls anything a file names.  Each object's fields are checked against what
its class needs before the object is made (:func:`check_state`): a field missing, or of
the wrong type, or an index out of its range, is refused with a ``ValueError`` naming
its place in the document (``estimator.ensemble_.hypotheses[3].feature``).  A fitted
booster is then checked as a whole (:func:`check_fitted`), so that no loaded model
fails later, at predict.

The checks are of two kinds.  Where compiled code reads an index from the model
(scikit-learn's ``Tree``, LightGBM's model string, and a ``TreeStructure``, which the
LightGBM export writes out) the indices are checked to lie in range and to form a tree,
since compiled code does not check them.  The rest is typed:
the shapes NumPy and the library's own code would refuse later are refused now.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["SchemaError", "allowed_classes", "current_name", "FORMER_UNSTAMPED", "check_state",
           "check_parameters", "check_tree_args", "check_tree_state", "check_fitted",
           "is_estimator_class"]


class SchemaError(ValueError):
    """A document's value at ``where`` is not what its place needs."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"the model file is not valid at {where}: {what}")
        self.where, self.what = where, what


# -- the allow-list -------------------------------------------------------------------------
#: scikit-learn's estimators a model may hold (``SklearnOracle``'s estimator and its fitted
#: copies): those whose fitted state is plain arrays that NumPy indexes (with bounds
#: checks), or a ``Tree`` whose indices are checked here.  Others (support vector
#: machines, neighbours, histogram gradient boosting) hand arrays to compiled code that
#: trusts their sizes: ``skops.io`` stores them.
_SKLEARN = {
    "sklearn.tree": ("DecisionTreeClassifier", "DecisionTreeRegressor",
                     "ExtraTreeClassifier", "ExtraTreeRegressor"),
    "sklearn.neural_network": ("MLPClassifier", "MLPRegressor"),
    # an MLP's optimizer (fitted with solver "adam" or "sgd"): numbers and arrays, which
    # predict does not read
    "sklearn.neural_network._stochastic_optimizers": ("AdamOptimizer", "SGDOptimizer"),
    "sklearn.linear_model": ("LinearRegression", "Ridge", "RidgeClassifier", "Lasso",
                             "ElasticNet", "SGDRegressor", "HuberRegressor",
                             "BayesianRidge", "LogisticRegression"),
    "sklearn.preprocessing": ("LabelBinarizer", "LabelEncoder"),
    "sklearn.dummy": ("DummyRegressor", "DummyClassifier"),
}


def _library_classes() -> list[type]:
    """The library's own classes of the layers below this one that a model file may
    name: oracles, losses, hypotheses, models, and the enum of stop reasons.  An
    explicit list: a class joins it here (those of the layers above, the boosters, join
    through :func:`persisted`), with its fields in :data:`_SPECS` where it has fitted
    state."""
    from oracleboost.engine.model import Ensemble, KernelModel, LinearModel
    from oracleboost.engine.rounds import StopReason
    from oracleboost.losses import (
        Absolute,
        Exponential,
        Huber,
        Logistic,
        MulticlassHinge,
        PairwiseHinge,
        Quantile,
        SoftmaxCrossEntropy,
        Squared,
    )
    from oracleboost.optim.votes import ArgmaxVote
    from oracleboost.oracles import (
        ApproximateOracle,
        CachedOracle,
        HistTreeOracle,
        LightGBMOracle,
        LinearOracle,
        MatrixOracle,
        MLPOracle,
        PerClassOracle,
        SklearnOracle,
        StumpOracle,
        TreeOracle,
    )
    from oracleboost.oracles.hist_trees import HistTree
    from oracleboost.oracles.lightgbm import LightGBMTree
    from oracleboost.oracles.matrix import LinearCoordinate, MatrixColumn
    from oracleboost.oracles.per_class import PerClassHypothesis
    from oracleboost.oracles.sklearn import FittedEstimator
    from oracleboost.oracles.stumps import (
        ConstantHypothesis,
        LabelCodeStump,
        RegressionStump,
        SignStump,
        VectorStump,
    )
    from oracleboost.oracles.tree_ensemble import EnsembleTree, TreeEnsembleOracle
    from oracleboost.oracles.trees import TreeStructure

    return [
        StopReason,
        # models
        Ensemble, LinearModel, KernelModel,
        # oracles
        StumpOracle, TreeOracle, LightGBMOracle, SklearnOracle, MLPOracle, MatrixOracle,
        LinearOracle, CachedOracle, ApproximateOracle, TreeEnsembleOracle, HistTreeOracle,
        PerClassOracle,
        # hypotheses (and the trees an ensemble's and a histogram tree's are)
        ConstantHypothesis, SignStump, RegressionStump, LabelCodeStump, VectorStump,
        MatrixColumn, LinearCoordinate, LightGBMTree, FittedEstimator, ArgmaxVote,
        EnsembleTree, HistTree, TreeStructure, PerClassHypothesis,
        # losses
        Exponential, Logistic, Squared, Absolute, Huber, Quantile, SoftmaxCrossEntropy,
        MulticlassHinge, PairwiseHinge,
    ]


def _sklearn_classes() -> list[type]:
    import importlib

    from sklearn.tree._tree import Tree

    out: list[type] = [Tree]
    for module, names in _SKLEARN.items():  # the fixed list above, not a file's names
        found = importlib.import_module(module)
        out += [getattr(found, name) for name in names]
    return out


def name_of(cls: type) -> str:
    """``module:qualname``, the name a document gives a class."""
    return f"{cls.__module__}:{cls.__qualname__}"


#: The modules of the library's classes as files written before the package had its layers
#: name them (a document names a class ``module:qualname``): read, never written.
_FORMER_MODULES = {
    "oracleboost.boosters.accelerated": "oracleboost.boosters.accelerated.estimator",
    "oracleboost.boosters.coordinate": "oracleboost.boosters.coordinate.estimator",
    "oracleboost.boosters.functional": "oracleboost.boosters.functional.estimator",
    "oracleboost.boosters.mirror": "oracleboost.boosters.mirror.estimator",
    "oracleboost.boosters.model": "oracleboost.engine.model",
    "oracleboost.boosters.rounds": "oracleboost.engine.rounds",
    "oracleboost.boosters.totally_corrective":
        "oracleboost.boosters.totally_corrective.estimator",
}

#: Classes that moved out of their module (read, never written).
_FORMER_NAMES = {
    "oracleboost.boosters.mirror.estimator:ArgmaxVote": "oracleboost.optim.votes:ArgmaxVote",
    # (format version 1: private names, made public in version 2)
    "oracleboost.boosters.accelerated.estimator:_Kernel":
        "oracleboost.boosters.accelerated.estimator:PairwiseKernel",
    "oracleboost.oracles.sklearn:_QuietMLP":
        "sklearn.neural_network._multilayer_perceptron:MLPRegressor",
}

#: Former names of scikit-learn estimators whose class was the library's own: scikit-learn
#: stamps the state of its own classes only (``_sklearn_version``), and read as the
#: scikit-learn class it is, such a state would warn of a pickle older than scikit-learn
#: 0.18.  It is read as of the scikit-learn that reads it, as it was before.
FORMER_UNSTAMPED = frozenset({"oracleboost.oracles.sklearn:_QuietMLP"})


def current_name(name: str) -> str:
    """The name a document of today gives the class that ``name`` names: a name of an
    earlier layout of the package (:data:`_FORMER_MODULES`) becomes today's, any other
    name is returned as it is."""
    module, _, qualname = name.partition(":")
    name = f"{_FORMER_MODULES.get(module, module)}:{qualname}"
    return _FORMER_NAMES.get(name, name)


#: The classes of the layers above this one that a model file may name (the boosters and
#: the parts of their models), by the name a document gives them: each joins when it is
#: made (:func:`persisted`).
_PERSISTED: dict[str, type] = {}


def persisted(cls: type) -> type:
    """Let model files hold ``cls`` (a class decorator, for the library's own classes of
    the layers above: its boosters, and the parts of their models).  Its fields are
    checked as :data:`_SPECS` says where it has fitted state."""
    if not cls.__module__.startswith("oracleboost."):
        raise ValueError(f"only the library's own classes join the allow-list; got "
                         f"{name_of(cls)}")
    _PERSISTED[name_of(cls)] = cls
    return cls


@functools.cache
def _listed_classes() -> dict[str, type]:
    return {name_of(cls): cls for cls in _library_classes() + _sklearn_classes()}


def allowed_classes() -> dict[str, type]:
    """The classes a model file may name, by the name a document gives them."""
    return {**_listed_classes(), **_PERSISTED}


def is_estimator_class(cls: type) -> bool:
    """Whether ``cls`` keeps its ``__init__`` parameters as fields of the same names
    (scikit-learn's estimators, the library's oracles and boosters)."""
    from sklearn.base import BaseEstimator

    return issubclass(cls, BaseEstimator)


# -- field checks ---------------------------------------------------------------------------
#: A check of one field: ``(what it must be, test)``.
Check = tuple[str, Callable[[Any], bool]]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_finite(v: Any) -> bool:
    return _is_number(v) and math.isfinite(v)


def _float_array(ndim: int | None = None, finite: bool = False) -> Check:
    def test(v: Any) -> bool:
        return (isinstance(v, np.ndarray) and v.dtype == np.float64
                and (ndim is None or v.ndim == ndim)
                and (not finite or bool(np.isfinite(v).all())))
    dims = "" if ndim is None else f"{ndim}-D "
    return (f"a {dims}float64 array{' of finite numbers' if finite else ''}", test)


def _int_array(v: Any) -> bool:
    return isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind == "i"


def _n_jobs(v: Any) -> bool:
    from oracleboost.rows.blocks import check_n_jobs

    try:
        check_n_jobs(v)
    except ValueError:
        return False
    return True


def _column_indices(v: Any) -> bool:
    return (isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "iu"
            and v.size > 0 and int(v[0]) >= 0 and bool((np.diff(v) > 0).all()))


def _hashable_key(v: Any) -> bool:
    if v is None or isinstance(v, (str, bool, int, float)):
        return True
    return isinstance(v, tuple) and all(_hashable_key(x) for x in v)


def _instance(base_name: str) -> Check:
    def test(v: Any) -> bool:
        return any(c.__name__ == base_name for c in type(v).__mro__)
    return (f"a {base_name}", test)


INT: Check = ("an integer", _is_int)
COUNT: Check = ("an integer >= 1", lambda v: _is_int(v) and v >= 1)
INDEX: Check = ("an integer >= 0", lambda v: _is_int(v) and v >= 0)
NUMBER: Check = ("a number", _is_number)
FINITE: Check = ("a finite number", _is_finite)
BOOL: Check = ("true or false", lambda v: isinstance(v, bool))
STR: Check = ("a string", lambda v: isinstance(v, str))
NONE: Check = ("null", lambda v: v is None)
KEY: Check = ("null or a tuple of numbers and strings", _hashable_key)
OPT_BOOL: Check = ("null, true or false", lambda v: v is None or isinstance(v, bool))
INT_ARRAY: Check = ("a 1-D integer array", _int_array)
HYPOTHESIS = _instance("Hypothesis")
LOSS = _instance("Loss")
FINITE_SCALAR_OR_VECTOR: Check = (
    "a finite number or a 0-D or 1-D float64 array of finite numbers",
    lambda v: _is_finite(v) or _float_array(1, finite=True)[1](v)
    or _float_array(0, finite=True)[1](v))


def _list_of(check: Check) -> Check:
    what, test = check
    return (f"a list, each {what}",
            lambda v: isinstance(v, list) and all(test(x) for x in v))


#: Fields that runtime caches hold (never written but as null); absent is fine.
_CACHES = {"train_output": NONE, "query_memo": NONE, "_booster": NONE}
_STUMP = {"feature": INDEX, "threshold": NUMBER, "n_features": COUNT,
          "default_left": OPT_BOOL, **_CACHES}

#: The fields each class's state must hold, and what each must be.  Fields with a
#: class-level default (pickles made before the field existed) may be absent.
_SPECS: dict[str, dict[str, Check]] = {
    "ConstantHypothesis": {"value": FINITE_SCALAR_OR_VECTOR, "n_features": COUNT, **_CACHES},
    "SignStump": {**_STUMP, "sign": ("1 or -1", lambda v: _is_int(v) and v in (1, -1)),
                  "key": KEY, "scale": FINITE},
    "RegressionStump": {**_STUMP, "left": FINITE, "right": FINITE},
    "LabelCodeStump": {**_STUMP, "left_class": INDEX, "right_class": INDEX,
                       "n_classes": ("an integer >= 2", lambda v: _is_int(v) and v >= 2)},
    "VectorStump": {**_STUMP, "left": _float_array(1, finite=True),
                    "right": _float_array(1, finite=True)},
    "MatrixColumn": {"column": _float_array(1, finite=True), "j": INDEX, "scale": FINITE,
                     "key": KEY, **_CACHES},
    "LinearCoordinate": {"j": INDEX, "scale": FINITE, "key": KEY, **_CACHES},
    "LightGBMTree": {"model_str": ("a string or null", lambda v: v is None or isinstance(v, str)),
                     "n_features": COUNT, "n_leaves": COUNT, "constant": FINITE,
                     "num_threads": INT, "key": KEY, **_CACHES},
    "FittedEstimator": {"estimator": ("a scikit-learn estimator",
                                      lambda v: is_estimator_class(type(v))),
                        "output_scale": FINITE, "sparse_input": BOOL,
                        # (fitted on these columns of X alone: colsample_bytree)
                        "columns": ("null or sorted distinct column indices",
                                    lambda v: v is None or _column_indices(v)),
                        "n_features": ("null or an integer >= 1",
                                       lambda v: v is None or COUNT[1](v)),
                        **_CACHES},
    "ArgmaxVote": {"inner": HYPOTHESIS, "n_classes": COUNT, "key": KEY, "scale": FINITE,
                   **_CACHES},
    "Ensemble": {"intercept": FINITE_SCALAR_OR_VECTOR, "hypotheses": _list_of(HYPOTHESIS),
                 "coef": ("a list of finite numbers or 1-D float64 arrays",
                          lambda v: isinstance(v, list)
                          and all(FINITE_SCALAR_OR_VECTOR[1](x) for x in v)),
                 "norms": _list_of(FINITE), "round_index": _list_of(INT),
                 "round_delta": _list_of(NUMBER),
                 "refits": ("a dict of rounds to 1-D float64 arrays",
                            lambda v: isinstance(v, dict) and all(
                                _is_int(k) and _float_array(1)[1](x) for k, x in v.items()))},
    "LinearModel": {"columns": _list_of(HYPOTHESIS), "scale": FINITE,
                    "fit_intercept": BOOL, "n_outputs": COUNT,
                    "weights": _list_of(_float_array(finite=True))},
    "KernelModel": {"X": _float_array(2, finite=True), "y": _float_array(1, finite=True),
                    "kernel": _instance("PairwiseKernel"), "scale": FINITE,
                    "weights": _list_of(_float_array(1, finite=True))},
    # (a TreeStructure's arrays: their lengths, indices and values are checked together,
    # in _tree_structure)
    "TreeStructure": {
        "n_features": (f"an integer from 1 to {2**24}", lambda v: COUNT[1](v) and v <= 2**24),
        "feature": INT_ARRAY, "left": INT_ARRAY, "right": INT_ARRAY, "missing": INT_ARRAY,
        "threshold": ("a 1-D float64 array without NaN", lambda v: _float_array(1)[1](v)
                      and not bool(np.isnan(v).any())),
        "default_left": ("a 1-D bool array", lambda v: isinstance(v, np.ndarray)
                         and v.ndim == 1 and v.dtype == np.bool_),
        "value": _float_array(2, finite=True),
        "leaf_count": ("null or a 1-D float64 array of finite numbers >= 0",
                       lambda v: v is None or _float_array(1, finite=True)[1](v)
                       and bool((v >= 0).all())),
        "categories_left": ("null or a tuple, each entry null or a 1-D integer array",
                            lambda v: v is None or isinstance(v, tuple)
                            and all(c is None or _int_array(c) for c in v))},
    "EnsembleTree": {"tree": _instance("TreeStructure"), "j": INDEX,
                     # 2**exponent a float64 power of two (the scale of a finite leaf)
                     "exponent": ("an integer from -1074 to 1024",
                                  lambda v: _is_int(v) and -1074 <= v <= 1024),
                     "scale": FINITE, "allow_nan": BOOL, "key": KEY, **_CACHES},
    # (its split_gain, one a split of its tree: checked with the tree, in _hist_tree)
    "HistTree": {"tree": _instance("TreeStructure"),
                 "split_gain": ("a 1-D float64 array of finite numbers >= 0",
                                lambda v: _float_array(1, finite=True)[1](v)
                                and bool((v >= 0).all())),
                 "key": KEY, **_CACHES},
    # (its parameters, each present: checked together by the oracle's own rules, in
    # _hist_tree_oracle)
    "HistTreeOracle": {},
    # (its parts, each of one output: checked together, in _per_class)
    "PerClassHypothesis": {"parts": ("a non-empty list, each a Hypothesis",
                                     lambda v: isinstance(v, list) and len(v) > 0
                                     and all(HYPOTHESIS[1](h) for h in v)),
                           "key": KEY, **_CACHES},
    "PerClassOracle": {"oracle": _instance("Oracle")},
    "TreeEnsembleOracle": {"trees": ("a non-empty list of TreeStructure",
                                     lambda v: isinstance(v, (list, tuple)) and len(v) > 0
                                     and all(_instance("TreeStructure")[1](t) for t in v)),
                           "allow_nan": BOOL, "n_jobs": ("null or a non-zero integer", _n_jobs),
                           "block_size": COUNT},
    "PairwiseKernel": {"kernel": STR,
                "params": ("a dict of names to numbers", lambda v: isinstance(v, dict) and all(
                    isinstance(k, str) and _is_number(x) for k, x in v.items()))},
}

#: A fitted booster's fields, checked wherever they are present, and those it must hold.
_FITTED = {"n_features_in_": COUNT, "categories_": (
    "a dict of column indices to 1-D arrays",
    lambda v: isinstance(v, dict)
    and all(_is_int(k) and isinstance(x, np.ndarray) and x.ndim == 1 for k, x in v.items())),
    "history_": ("a dict of names to 1-D arrays", lambda v: isinstance(v, dict) and all(
        isinstance(k, str) and isinstance(x, np.ndarray) and x.ndim == 1
        for k, x in v.items())),
    "stop_reason_": ("one of the stop reasons", lambda v: _stop_reason(v)),
    "classes_": ("a 1-D array of at least 2 labels",
                 lambda v: isinstance(v, np.ndarray) and v.ndim == 1 and len(v) >= 2),
    "_loss_": LOSS}
_FITTED_NEEDED = ("n_features_in_", "categories_", "history_", "stop_reason_")


def _stop_reason(v: Any) -> bool:
    from oracleboost.engine.rounds import StopReason

    return isinstance(v, str) and v in {r.value for r in StopReason}


def _check_fields(cls: type, state: dict, checks: dict[str, Check], where: str) -> None:
    for field, (what, test) in checks.items():
        if field not in state:
            if hasattr(cls, field) or field in _CACHES:
                continue  # a class-level default: an older file's object
            raise SchemaError(f"{where}.{field}", f"missing ({cls.__name__} needs it)")
        if not test(state[field]):
            raise SchemaError(f"{where}.{field}",
                              f"must be {what}, not {_describe(state[field])}")


def _describe(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"an array of dtype {v.dtype} and shape {v.shape}"
    return f"a {type(v).__name__}" if not isinstance(v, (int, float, str)) else repr(v)[:60]


def _parameter_names(cls: type) -> set[str]:
    return {name for name, p in inspect.signature(cls.__init__).parameters.items()
            if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def _check_parameters(cls: type, state: dict, where: str) -> None:
    """An estimator's ``__init__`` parameters are all there (``get_params``, ``repr``
    and ``clone`` read every one)."""
    for name in sorted(_parameter_names(cls)):
        if name not in state:
            raise SchemaError(f"{where}.{name}",
                              f"missing (the parameter {name} of {cls.__name__})")


def check_state(cls: type, state: dict, where: str) -> None:
    """Refuse ``state`` as the fields of a ``cls`` object unless it holds every field
    the class needs, each of the right type (``where``: the object's place)."""
    if is_estimator_class(cls):
        _check_parameters(cls, state, where)
    spec = _SPECS.get(cls.__name__)
    if spec is not None:
        _check_fields(cls, state, spec, where)
        _CROSS.get(cls.__name__, lambda s, w: None)(state, where)
    if _is_booster(cls) and set(state) - _parameter_names(cls):  # fitted: all of it
        _check_fitted_fields(cls, state, where)
    if "tree_" in state:
        _check_sklearn_tree(state, where)


def check_parameters(obj: Any, where: str) -> None:
    """An estimator's parameters pass its own constraints (scikit-learn's
    ``_parameter_constraints``), as ``fit`` would check them: a loaded booster's
    ``n_jobs`` or ``importance_type`` is one its methods take."""
    if getattr(type(obj), "_parameter_constraints", None) is None:
        return
    try:
        obj._validate_params()
    except (ValueError, TypeError) as exc:  # scikit-learn's InvalidParameterError
        raise SchemaError(where, str(exc)) from None


def _is_booster(cls: type) -> bool:
    return any(c.__name__ == "BaseBooster" for c in cls.__mro__)


def _check_fitted_fields(cls: type, state: dict, where: str) -> None:
    from sklearn.base import ClassifierMixin

    classifier = issubclass(cls, ClassifierMixin)
    needed = ("ensemble_",) + _FITTED_NEEDED + (("classes_",) if classifier else ())
    for name in needed:
        if name not in state:
            raise SchemaError(f"{where}.{name}", f"missing (a fitted {cls.__name__} has it)")
    _check_fields(cls, state, {k: c for k, c in _FITTED.items() if k in state}, where)
    model = state["ensemble_"]
    if type(model).__name__ not in ("Ensemble", "LinearModel", "KernelModel"):
        raise SchemaError(f"{where}.ensemble_", f"must be a model, not {_describe(model)}")
    n = state["n_features_in_"]
    if n > _MAX_FEATURES:
        raise SchemaError(f"{where}.n_features_in_", f"{n} features: more than "
                                                     f"{_MAX_FEATURES:,} are not read")
    _check_widths(model, n, f"{where}.ensemble_")
    classes = state.get("classes_")
    if classes is not None:
        _check_class_counts(model, len(classes), f"{where}.ensemble_")
    for j in state["categories_"]:
        if not 0 <= j < n:
            raise SchemaError(f"{where}.categories_",
                              f"names column {j} of a model of {n} features")


#: The most features a loaded model may read (a row of zeros of that width is what
#: :func:`check_fitted` predicts; a file claiming 10^9 features would claim 8 GB a row).
_MAX_FEATURES = 2**24


def _check_class_counts(model: Any, n_classes: int, where: str) -> None:
    """Hypotheses that vote for classes vote among the booster's ``classes_`` (their
    predict makes a row of ``n_classes`` a sample: a file's count would size it)."""
    for i, h in enumerate(getattr(model, "hypotheses", [])):
        own = getattr(h, "n_classes", None)
        if own is not None and own != n_classes:
            raise SchemaError(f"{where}.hypotheses[{i}].n_classes",
                              f"is {own}; the model has {n_classes} classes")


def _check_widths(model: Any, n_features: int, where: str) -> None:
    """Every hypothesis reads features within the booster's ``n_features_in_``."""
    parts = (model.hypotheses if hasattr(model, "hypotheses")
             else getattr(model, "columns", []))
    field = "hypotheses" if hasattr(model, "hypotheses") else "columns"
    for i, h in enumerate(parts):
        _check_hypothesis_width(h, n_features, f"{where}.{field}[{i}]")
    X = getattr(model, "X", None)
    if X is not None and X.shape[1] != n_features:
        raise SchemaError(f"{where}.X", f"has {X.shape[1]} features; the model has {n_features}")


def _check_hypothesis_width(h: Any, n_features: int, where: str) -> None:
    inner = getattr(h, "inner", None)
    if inner is not None:
        _check_hypothesis_width(inner, n_features, f"{where}.inner")
    own = getattr(h, "n_features", None)
    if own is not None and own != n_features:
        raise SchemaError(f"{where}.n_features", f"is {own}; the model has {n_features}")
    tree = getattr(h, "tree", None)  # (a tree of an ensemble)
    if type(tree).__name__ == "TreeStructure" and tree.n_features != n_features:
        raise SchemaError(f"{where}.tree.n_features",
                          f"is {tree.n_features}; the model has {n_features}")
    j = getattr(h, "j", None)
    if type(h).__name__ == "LinearCoordinate" and j >= n_features:
        raise SchemaError(f"{where}.j", f"is {j}; the model has {n_features} features")
    est = getattr(h, "estimator", None)
    fitted = getattr(est, "n_features_in_", None)
    columns = getattr(h, "columns", None)  # (an estimator fitted on these columns alone)
    if columns is not None and int(columns[-1]) >= n_features:
        raise SchemaError(f"{where}.columns", f"reach column {int(columns[-1])}; the model "
                          f"has {n_features} features")
    wanted = n_features if columns is None else len(columns)
    if fitted is not None and fitted != wanted:
        raise SchemaError(f"{where}.estimator.n_features_in_",
                          f"is {fitted}; the model has {wanted}")


# -- cross-field checks ----------------------------------------------------------------------
def _stump(state: dict, where: str) -> None:
    if state["feature"] >= state["n_features"]:
        raise SchemaError(f"{where}.feature",
                          f"is {state['feature']}, beyond n_features {state['n_features']}")


def _label_code(state: dict, where: str) -> None:
    _stump(state, where)
    for side in ("left_class", "right_class"):
        if state[side] >= state["n_classes"]:
            raise SchemaError(f"{where}.{side}", f"is {state[side]}, beyond n_classes "
                                                 f"{state['n_classes']}")


def _vector(state: dict, where: str) -> None:
    _stump(state, where)
    if state["left"].shape != state["right"].shape or state["left"].size == 0:
        raise SchemaError(f"{where}.right", "must have the (non-empty) shape of left")


def _lightgbm(state: dict, where: str) -> None:
    if state["model_str"] is not None:
        check_lightgbm_model(state["model_str"], state["n_features"], state["n_leaves"],
                             f"{where}.model_str")


def _ensemble(state: dict, where: str) -> None:
    n = len(state["hypotheses"])
    for field in ("coef", "norms"):
        if len(state[field]) != n:
            raise SchemaError(f"{where}.{field}",
                              f"holds {len(state[field])} entries for {n} hypotheses")
    rounds = len(state["round_index"])
    if len(state["round_delta"]) != rounds:
        raise SchemaError(f"{where}.round_delta",
                          f"holds {len(state['round_delta'])} entries for {rounds} rounds")
    for r, j in enumerate(state["round_index"]):
        if not -1 <= j < n:
            raise SchemaError(f"{where}.round_index[{r}]", f"is {j}, not a hypothesis' index")
    for r, c in state["refits"].items():
        if not (0 <= r < rounds and len(c) <= n):
            raise SchemaError(f"{where}.refits", f"round {r}'s coefficients do not fit")
    shapes = {np.shape(c) for c in state["coef"]}
    if len(shapes) > 1:
        raise SchemaError(f"{where}.coef", "mixes coefficients of different shapes")


def _linear_model(state: dict, where: str) -> None:
    width = len(state["columns"]) + int(state["fit_intercept"])
    shape = (width,) if state["n_outputs"] == 1 else (width, state["n_outputs"])
    for t, w in enumerate(state["weights"]):
        if w.shape != shape:
            raise SchemaError(f"{where}.weights[{t}]", f"has shape {w.shape}, not {shape}")


def _kernel_model(state: dict, where: str) -> None:
    n = state["X"].shape[0]
    if state["y"].shape != (n,):
        raise SchemaError(f"{where}.y", f"has shape {state['y'].shape}, not ({n},)")
    for t, w in enumerate(state["weights"]):
        if w.shape != (n,):
            raise SchemaError(f"{where}.weights[{t}]", f"has shape {w.shape}, not ({n},)")


def _kernel(state: dict, where: str) -> None:
    from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS

    function = PAIRWISE_KERNEL_FUNCTIONS.get(state["kernel"])
    if function is None:
        raise SchemaError(f"{where}.kernel", f"{state['kernel']!r} is not a kernel's name")
    takes = set(inspect.signature(function).parameters) - {"X", "Y"}
    for name in state["params"]:
        if name not in takes:
            raise SchemaError(f"{where}.params", f"the kernel {state['kernel']!r} takes no "
                                                 f"parameter {name!r}")


def _tree_structure(state: dict, where: str) -> None:
    """A ``TreeStructure``'s arrays of one tree: its ``predict`` indexes X by ``feature``
    and follows ``left``/``right`` until a leaf (a cycle would never end, a negative
    index would read from the end), and the LightGBM export writes them for compiled
    code that checks none of them."""
    leaves = state["value"].shape[0]
    if leaves < 1 or state["value"].shape[1] < 1:
        raise SchemaError(f"{where}.value", f"has shape {state['value'].shape}: a tree has "
                                            "at least one leaf of at least one output")
    for name in ("feature", "threshold", "left", "right", "default_left", "missing"):
        if state[name].shape != (leaves - 1,):
            raise SchemaError(f"{where}.{name}", f"has shape {state[name].shape}; a tree of "
                                                 f"{leaves} leaves has {leaves - 1} splits")
    count = state.get("leaf_count")
    if count is not None and count.shape != (leaves,):
        raise SchemaError(f"{where}.leaf_count", f"has shape {count.shape}, not ({leaves},)")
    feature, n_features = state["feature"], state["n_features"]
    bad = np.flatnonzero((feature < 0) | (feature >= n_features))
    if bad.size:
        raise SchemaError(f"{where}.feature[{bad[0]}]", f"is {feature[bad[0]]}, not a feature "
                                                        f"of the tree's {n_features}")
    bad = np.flatnonzero(~np.isin(state["missing"], (0, 1, 2)))
    if bad.size:
        raise SchemaError(f"{where}.missing[{bad[0]}]", f"is {state['missing'][bad[0]]}, not "
                                                        "0 (none), 1 (zero) or 2 (NaN)")
    _tree_links(state["left"], state["right"], where)
    _tree_categories(state.get("categories_left"), leaves, where)


def _tree_links(left: np.ndarray, right: np.ndarray, where: str) -> None:
    """Children in LightGBM's layout (``c >= 0`` the internal node ``c``, ``c < 0`` the
    leaf ``~c``; node 0 the root) that form one tree: every child index in range, and a
    walk from the root reaching every node exactly once (no cycle, no node the child of
    two, none cut off).  Any numbering does, not only children after their parent."""
    splits = len(left)
    if splits == 0:
        return
    for name, child in (("left", left), ("right", right)):
        bad = np.flatnonzero((child < -(splits + 1)) | (child >= splits))
        if bad.size:
            raise SchemaError(f"{where}.{name}[{bad[0]}]", f"is {child[bad[0]]}, not a node "
                                                           f"of a tree of {splits} splits")
    reached = np.zeros(splits, dtype=bool)
    reached[0] = True
    leaf_reached = np.zeros(splits + 1, dtype=bool)
    level = np.array([0])
    while level.size:  # each level reaches nodes not reached before: at most `splits` levels
        parent = np.concatenate([level, level])
        side = np.repeat(np.array(["left", "right"]), level.size)
        child = np.concatenate([left[level], right[level]])
        inner = child >= 0
        again = np.where(inner, reached[np.where(inner, child, 0)],
                         leaf_reached[np.where(inner, 0, ~child)])
        first = np.unique(child, return_index=True)[1]
        again[np.setdiff1d(np.arange(child.size), first)] = True  # twice on this level
        if again.any():
            i = int(np.flatnonzero(again)[0])
            raise SchemaError(f"{where}.{side[i]}[{parent[i]}]",
                              f"is {child[i]}, a node reached before (a cycle, or a node "
                              "the child of two)")
        reached[child[inner]] = True
        leaf_reached[~child[~inner]] = True
        level = child[inner]
    if not (reached.all() and leaf_reached.all()):
        node = (f"split {np.flatnonzero(~reached)[0]}" if not reached.all()
                else f"leaf {np.flatnonzero(~leaf_reached)[0]}")
        raise SchemaError(f"{where}.left", f"and right do not reach {node} from the root")


def _tree_categories(sets: tuple | None, leaves: int, where: str) -> None:
    """Categorical splits' sets: category codes as LightGBM reads them (ints from 0
    below 2**31), sorted and distinct."""
    if sets is None:
        return
    if len(sets) != leaves - 1:
        raise SchemaError(f"{where}.categories_left", f"has {len(sets)} entries; a tree of "
                                                      f"{leaves} leaves has {leaves - 1} splits")
    for i, codes in enumerate(sets):
        if codes is not None and not (
                (codes >= 0).all() and (codes < 2**31).all() and (np.diff(codes) > 0).all()):
            raise SchemaError(f"{where}.categories_left[{i}]",
                              "must be distinct category codes from 0 below 2**31, sorted")


def _ensemble_tree(state: dict, where: str) -> None:
    if state["tree"].n_outputs != 1:
        raise SchemaError(f"{where}.tree.value", f"has {state['tree'].n_outputs} outputs a "
                                                 "leaf; an ensemble's tree has one")


def _tree_ensemble(state: dict, where: str) -> None:
    trees = state["trees"]
    for j, tree in enumerate(trees):
        if tree.n_outputs != 1:
            raise SchemaError(f"{where}.trees[{j}].value", f"has {tree.n_outputs} outputs a "
                                                           "leaf; the class takes one")
        if tree.n_features != trees[0].n_features:
            raise SchemaError(f"{where}.trees[{j}].n_features",
                              f"is {tree.n_features}; trees[0] is over "
                              f"{trees[0].n_features} features")


def _hist_tree(state: dict, where: str) -> None:
    leaves = state["tree"].n_leaves
    if state["split_gain"].shape != (leaves - 1,):
        raise SchemaError(f"{where}.split_gain", f"has shape {state['split_gain'].shape}; "
                                                 f"a tree of {leaves} leaves has "
                                                 f"{leaves - 1} splits")


def _argmax_vote(state: dict, where: str) -> None:
    """A vote among ``n_classes`` of a tree's leaves (MABoost's label-coded trees): one
    output a class (a wider leaf could vote for a class the model has not)."""
    tree = getattr(state["inner"], "tree", None)
    if type(tree).__name__ == "TreeStructure" and tree.n_outputs != state["n_classes"]:
        raise SchemaError(f"{where}.inner.tree.value",
                          f"has {tree.n_outputs} outputs a leaf; the vote is among "
                          f"{state['n_classes']} classes")


def _hist_tree_oracle(state: dict, where: str) -> None:
    """The parameters pass the oracle's own checks (those ``fit`` makes), run on an
    object holding them that is made without calling its constructor."""
    from oracleboost.oracles import HistTreeOracle

    probe = HistTreeOracle.__new__(HistTreeOracle)
    probe.__dict__.update(state)
    try:
        probe._check_params()
    except (ValueError, TypeError) as exc:
        raise SchemaError(where, str(exc)) from None


def _per_class(state: dict, where: str) -> None:
    """Each part predicts one output (a column of the answer): no vector leaves, no
    nested answer of several columns."""
    for k, part in enumerate(state["parts"]):
        tree = getattr(part, "tree", None)
        value = getattr(part, "value", None)
        if (type(part).__name__ == "PerClassHypothesis"
                or (type(tree).__name__ == "TreeStructure" and tree.n_outputs != 1)
                or (isinstance(value, np.ndarray) and value.ndim != 0)):
            raise SchemaError(f"{where}.parts[{k}]", "must predict one output (a column "
                                                     "of the answer)")


_CROSS: dict[str, Callable[[dict, str], None]] = {
    "SignStump": _stump, "RegressionStump": _stump, "LabelCodeStump": _label_code,
    "VectorStump": _vector, "LightGBMTree": _lightgbm, "Ensemble": _ensemble,
    "LinearModel": _linear_model, "KernelModel": _kernel_model, "PairwiseKernel": _kernel,
    "TreeStructure": _tree_structure, "EnsembleTree": _ensemble_tree,
    "TreeEnsembleOracle": _tree_ensemble, "HistTree": _hist_tree,
    "HistTreeOracle": _hist_tree_oracle, "ArgmaxVote": _argmax_vote,
    "PerClassHypothesis": _per_class,
}


# -- scikit-learn's Tree ---------------------------------------------------------------------
def check_tree_args(args: Any, where: str) -> tuple[int, np.ndarray, int]:
    """``Tree(n_features, n_classes, n_outputs)``'s arguments, checked: the one class a
    document makes from arguments."""
    if not (isinstance(args, list) and len(args) == 3):
        raise SchemaError(where, "must be [n_features, n_classes, n_outputs]")
    n_features, n_classes, n_outputs = args
    if not (COUNT[1](n_features) and COUNT[1](n_outputs) and n_features <= _MAX_FEATURES):
        raise SchemaError(where, f"n_features and n_outputs must be integers >= 1 (n_features "
                                 f"at most {_MAX_FEATURES:,})")
    if not (isinstance(n_classes, np.ndarray) and n_classes.dtype.kind == "i"
            and n_classes.shape == (n_outputs,) and bool((n_classes >= 1).all())):
        raise SchemaError(where, f"n_classes must be {n_outputs} integers >= 1")
    return n_features, n_classes.astype(np.intp), n_outputs


def check_tree_state(args: tuple[int, np.ndarray, int], state: Any, where: str) -> None:
    """A ``Tree``'s nodes: every index compiled code follows is in range, and children
    come after their parent (so a walk ends); values of the shape its arguments give."""
    from sklearn.tree._tree import NODE_DTYPE

    n_features, n_classes, n_outputs = args
    if not (isinstance(state, dict) and set(state) == {"max_depth", "node_count", "nodes",
                                                       "values"}):
        raise SchemaError(where, "must hold max_depth, node_count, nodes and values")
    nodes, values, count = state["nodes"], state["values"], state["node_count"]
    if not (COUNT[1](count) and isinstance(nodes, np.ndarray) and nodes.dtype == NODE_DTYPE
            and nodes.shape == (count,)):
        raise SchemaError(f"{where}.nodes", "must be node_count scikit-learn tree nodes")
    shape = (count, n_outputs, int(n_classes.max()))
    if not (isinstance(values, np.ndarray) and values.dtype == np.float64
            and values.shape == shape and np.isfinite(values).all()):
        raise SchemaError(f"{where}.values",
                          f"must be a float64 array of shape {shape} of finite numbers")
    left, right, feature = nodes["left_child"], nodes["right_child"], nodes["feature"]
    leaf = left == -1
    index = np.arange(count)
    inner = ~leaf
    if not ((right[leaf] == -1).all()
            and (left[inner] > index[inner]).all() and (left[inner] < count).all()
            and (right[inner] > index[inner]).all() and (right[inner] < count).all()
            and (feature[inner] >= 0).all() and (feature[inner] < n_features).all()):
        raise SchemaError(f"{where}.nodes", "a child or feature index is out of range")
    depth = _depth(left, right)
    if not (INDEX[1](state["max_depth"]) and depth <= state["max_depth"] <= count):
        raise SchemaError(f"{where}.max_depth", f"must be an integer from the depth {depth} "
                                                f"to node_count")


def _depth(left: np.ndarray, right: np.ndarray) -> int:
    depth = np.zeros(len(left), dtype=np.int64)
    for i in range(len(left)):  # children come after parents
        if left[i] != -1:
            depth[left[i]] = depth[right[i]] = depth[i] + 1
    return int(depth.max())


def _check_sklearn_tree(state: dict, where: str) -> None:
    """A scikit-learn tree estimator's fields agree with its ``Tree``'s sizes (its
    ``predict`` reads X's columns by the tree's feature indices)."""
    tree = state["tree_"]
    if type(tree).__name__ != "Tree":
        raise SchemaError(f"{where}.tree_", "must be a scikit-learn Tree")
    expect = {"n_features_in_": tree.n_features, "n_outputs_": tree.n_outputs}
    for name, value in expect.items():
        if state.get(name) != value:
            raise SchemaError(f"{where}.{name}", f"must be {value}, the tree's")
    classes = state.get("classes_")
    if classes is not None and tree.n_outputs == 1 and (
            not isinstance(classes, np.ndarray) or len(classes) != tree.n_classes[0]):
        raise SchemaError(f"{where}.classes_", f"must hold the tree's {tree.n_classes[0]} "
                                               "classes")


# -- LightGBM's model string -----------------------------------------------------------------
_ARRAYS = {  # a tree block's arrays: their length given num_leaves, and what they hold
    "split_feature": (-1, int), "split_gain": (-1, float), "threshold": (-1, float),
    "decision_type": (-1, int), "left_child": (-1, int), "right_child": (-1, int),
    "leaf_value": (0, float), "leaf_weight": (0, float), "leaf_count": (0, int),
    "internal_value": (-1, float), "internal_weight": (-1, float), "internal_count": (-1, int),
}
_HEADER = re.compile(r"tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\n"
                     r"label_index=0\nmax_feature_idx=(\d+)\n(?:objective=[^\n]*\n)?"
                     r"feature_names=[^\n]*\nfeature_infos=[^\n]*\ntree_sizes=(\d+)\n\n")
_PARAMETER = re.compile(r"\[[a-z0-9_]+: [^\n\]]*\]")


def check_lightgbm_model(text: str, n_features: int, n_leaves: int, where: str) -> None:
    """A one-tree LightGBM model string as the library writes it: one tree over
    ``n_features`` features with ``n_leaves`` leaves, each index LightGBM's compiled
    prediction follows in range and children after their parent (so a walk ends)."""
    header = _HEADER.match(text)
    if header is None:
        raise SchemaError(where, "is not the header of a one-tree LightGBM model")
    if int(header[1]) != n_features - 1:
        raise SchemaError(where, f"max_feature_idx is {header[1]}; the tree has "
                                 f"{n_features} features")
    body, sep, rest = text[header.end():].partition("\n\n\nend of trees\n")
    if not sep or not body.startswith("Tree=0\n") or "Tree=" in body[1:]:
        raise SchemaError(where, "must hold exactly one tree, Tree=0")
    if int(header[2]) != len(body) + 3:  # up to "end of trees"
        raise SchemaError(where, "tree_sizes is not the size of the tree")
    fields = dict(line.split("=", 1) for line in body.split("\n")[1:] if "=" in line)
    if len(fields) != len(body.split("\n")) - 1:
        raise SchemaError(where, "a line of the tree is not key=value")
    _check_lightgbm_tree(fields, n_features, n_leaves, where)
    _check_lightgbm_tail(rest, where)


def _ints_or_floats(text: str, kind: type, what: str, where: str) -> np.ndarray:
    try:
        return np.array([kind(v) for v in text.split()],
                        dtype=np.int64 if kind is int else np.float64)
    except (ValueError, OverflowError):
        raise SchemaError(where, f"{what} holds something not a number") from None


def _check_lightgbm_tree(fields: dict, n_features: int, n_leaves: int, where: str) -> None:
    if fields.get("num_leaves") != str(n_leaves) or fields.get("is_linear") != "0":
        raise SchemaError(where, f"must be a tree of {n_leaves} leaves (not linear)")
    arrays = {}
    for key, (extra, kind) in _ARRAYS.items():
        if key not in fields:
            raise SchemaError(where, f"the tree has no {key}")
        arrays[key] = _ints_or_floats(fields[key], kind, key, where)
        if len(arrays[key]) != n_leaves + extra and not (n_leaves == 1 and extra == -1):
            raise SchemaError(where, f"{key} must hold {n_leaves + extra} numbers")
    if not np.isfinite(arrays["leaf_value"]).all():
        raise SchemaError(where, "a leaf value is not finite")
    if n_leaves == 1:
        return
    left, right = arrays["left_child"], arrays["right_child"]
    index = np.arange(n_leaves - 1)
    for child in (left, right):
        inner, leaf = child >= 0, child < 0
        if not ((child[inner] > index[inner]).all() and (child[inner] < n_leaves - 1).all()
                and (~child[leaf] < n_leaves).all()):
            raise SchemaError(where, "a child index is out of range")
    children = np.concatenate([left, right])
    if len(set(children.tolist())) != len(children):
        raise SchemaError(where, "a node is the child of two nodes")
    feature, decision = arrays["split_feature"], arrays["decision_type"]
    if not ((feature >= 0).all() and (feature < n_features).all()
            and (decision >= 0).all() and (decision < 16).all()):
        raise SchemaError(where, "a split's feature or decision type is out of range")
    _check_categories(fields, arrays["threshold"], decision, where)


def _check_categories(fields: dict, threshold: np.ndarray, decision: np.ndarray,
                      where: str) -> None:
    n_cat = fields.get("num_cat", "")
    if not n_cat.isdigit():
        raise SchemaError(where, "num_cat must be a count")
    categorical = (decision & 1) != 0
    if int(n_cat) == 0:
        if categorical.any():
            raise SchemaError(where, "a categorical split without categories")
        return
    bounds = _ints_or_floats(fields.get("cat_boundaries", ""), int, "cat_boundaries", where)
    words = _ints_or_floats(fields.get("cat_threshold", ""), int, "cat_threshold", where)
    k = threshold[categorical]
    if not (len(bounds) == int(n_cat) + 1 and bounds[0] == 0 and bounds[-1] == len(words)
            and (np.diff(bounds) >= 0).all() and (k == np.floor(k)).all()
            and (k >= 0).all() and (k < int(n_cat)).all()
            and (words >= 0).all() and (words < 2**32).all()):
        raise SchemaError(where, "the categorical splits' sets are out of range")


def _check_lightgbm_tail(rest: str, where: str) -> None:
    """What follows the tree: importances and parameters, each line of its form."""
    for line in rest.split("\n"):
        if not (line in ("", "feature_importances:", "parameters:", "end of parameters",
                         "pandas_categorical:null")
                or _PARAMETER.fullmatch(line)
                or re.fullmatch(r"[^\n=]+=\d+", line)):
            raise SchemaError(where, f"holds a line LightGBM's model has not: {line[:40]!r}")


# -- the model as a whole ---------------------------------------------------------------------
def check_fitted(estimator: Any, where: str) -> None:
    """A fitted booster predicts: every prediction method answers one row of zeros
    (a row of index 0 for a matrix of hypotheses) with one row of the right width.
    The fields were checked one by one already; this catches what only their
    combination decides (a classifier's classes against its scores' width)."""
    if not hasattr(estimator, "ensemble_"):
        return
    X = np.zeros((1, estimator.n_features_in_))
    for name in ("predict", "decision_function", "predict_proba"):
        method = getattr(estimator, name, None)
        if method is None:
            continue
        try:
            out = np.asarray(method(X))
            staged_method = getattr(estimator, f"staged_{name}", None)
            staged = list(staged_method(X)) if staged_method is not None else []
        except Exception as exc:  # noqa: BLE001 - any failure is the file's
            raise SchemaError(where, f"the model does not {name} ({type(exc).__name__}: "
                                     f"{exc})") from None
        _check_prediction(estimator, name, out, where)
        for s in staged:
            _check_prediction(estimator, name, np.asarray(s), where)


def _check_prediction(estimator: Any, name: str, out: np.ndarray, where: str) -> None:
    classes = getattr(estimator, "classes_", None)
    width = None if classes is None or name == "predict" else len(classes)
    ok = out.shape[:1] == (1,) and (
        out.ndim == 1 or width is not None and out.shape == (1, width)
        or name != "predict" and out.ndim == 2)
    if name == "predict_proba":
        ok = ok and out.shape == (1, width)
    if name == "decision_function" and width == 2:
        ok = ok and out.shape == (1,)
    if not ok:
        raise SchemaError(where, f"its {name} gives shape {out.shape} for one row")
