"""Any scikit-learn regressor or classifier as a hypothesis class.

The estimator is cloned and fitted once per query, with ``sample_weight`` where the
query has weights, exactly as scikit-learn's ensembles fit their base estimators.
``SklearnOracle(est, weighting="resample")`` fits weighted queries on a weighted
bootstrap instead, for estimators whose ``fit`` takes no weights (see its docstring).

* A **regressor** spans a class closed under scaling, so it answers both queries:
  ``project(target, w)`` fits ``target`` with weights ``w`` (Grubb & Bagnell 2011,
  eq. 4), and ``correlate(r)`` fits ``r`` itself, the least-squares direction that
  maximises ``<r, h>/||h||`` for a scale-closed class.
* A **classifier** answers ``correlate(r)`` only, as weighted classification with
  labels ``sign(r)`` (``sign(0) = +1``) and weights ``|r|``; its hypothesis outputs
  ±1 (Grubb & Bagnell 2011, Theorem 1; Freund & Schapire's discrete AdaBoost).

Seeding follows ``sklearn.ensemble._base._set_random_states``: each query's int seed is
written into every ``random_state`` parameter of the clone, so a booster that draws
``rng.randint(np.iinfo(np.int32).max)`` per round seeds its trees exactly like
``AdaBoostClassifier`` does.  A query with ``random_state=None`` (what boosters pass
when their own ``random_state`` is ``None``) leaves the estimator's parameters as they
are: its own ``random_state``, and with ``None`` there fresh randomness.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPRegressor
from sklearn.tree import BaseDecisionTree, DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils import check_random_state
from sklearn.utils.validation import has_fit_parameter

from oracleboost._typing import ArrayLike
from oracleboost._warnings import silenced
from oracleboost.oracles._split_weights import split_search_weights
from oracleboost.oracles.base import BoundOracle, Capabilities, Hypothesis, Oracle, check_X, max_abs
from oracleboost.oracles.monotone import is_constrained, monotone_directions
from oracleboost.oracles.stumps import ConstantHypothesis
from oracleboost.oracles.trees import MISSING_NONE, TreeStructure, float32_split

__all__ = ["SklearnOracle", "TreeOracle", "MLPOracle", "FittedEstimator"]

#: Values of ``SklearnOracle(weighting=...)``.
_WEIGHTINGS = ("sample_weight", "resample")

#: The largest float32, ≈ 3.4e38: scikit-learn's trees cast X to float32.
_FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Values from here on round to inf in float32 (FLT_MAX plus half its last unit).
_FLOAT32_OVERFLOW = 2.0**128 - 2.0**103


def _check_float32_range(X: np.ndarray, who: str) -> None:
    """Refuse a finite ``X`` that scikit-learn's trees cannot hold.

    They cast ``X`` to float32, where magnitudes from just above
    ``np.finfo(np.float32).max`` (≈ 3.4e38) on become inf, and then fail deep inside
    scikit-learn with its float32 message and overflow warnings.  ``who`` says what grows
    or holds the trees ("TreeOracle grows", "this DecisionTreeRegressor hypothesis is
    one of").
    """
    top = max_abs(X)
    if top >= _FLOAT32_OVERFLOW:  # False for NaN: scikit-learn's own checks name it
        raise ValueError(
            f"X has a finite value of magnitude {top:.3g}, beyond float32's range "
            f"(np.finfo(np.float32).max = {_FLOAT32_MAX:.4g}): {who} scikit-learn trees, "
            "which compute in float32 and cannot split on or predict such values. Rescale "
            "X (e.g. divide each column by its largest absolute value), or use StumpOracle "
            "or LightGBMOracle, which keep X in float64"
        )


#: scikit-learn's trees take a node's feature for constant when its float32 values span
#: at most this (``FEATURE_THRESHOLD`` of ``sklearn/tree/_splitter.pyx``: an absolute
#: constant, whatever the feature's scale).
_SKLEARN_FEATURE_THRESHOLD = 1e-7


def _warn_unsplittable_features(X: np.ndarray, who: str) -> None:
    """Warn of the features that scikit-learn's trees will never split: those whose
    values span more than 0 and at most :data:`_SKLEARN_FEATURE_THRESHOLD` (as float32,
    what the trees compare).  They look constant to every node, so a booster over such
    features learns nothing from them, without a word from scikit-learn (a fit on
    ``X * 1e-9`` stopped after 2 rounds, or reached R² 0)."""
    if sp.issparse(X) or X.shape[0] < 2 or X.shape[1] == 0:
        return
    # float32 rounds monotonically: the float32 extremes are the extremes' float32
    hi = np.fmax.reduce(X, axis=0).astype(np.float32).astype(np.float64)
    lo = np.fmin.reduce(X, axis=0).astype(np.float32).astype(np.float64)
    span = hi - lo
    tiny = np.flatnonzero((span > 0.0) & (span <= _SKLEARN_FEATURE_THRESHOLD))
    if tiny.size:
        shown = ", ".join(f"{j} (span {span[j]:.3g})" for j in tiny[:5])
        more = f" and {tiny.size - 5} more" if tiny.size > 5 else ""
        warnings.warn(
            f"{who} scikit-learn trees, which never split a feature whose values span at "
            f"most {_SKLEARN_FEATURE_THRESHOLD:g} (an absolute threshold: they take it for "
            f"constant); X has {tiny.size} such feature(s): {shown}{more}. Rescale X "
            "(standardise its columns, say), or use StumpOracle or LightGBMOracle, which "
            "bin each feature by its own values",
            UserWarning, stacklevel=4,
        )


class FittedEstimator(Hypothesis):
    """A fitted scikit-learn estimator used as a hypothesis.

    For classifiers fitted on ±1 labels the output is the predicted label (±1);
    for regressors it is ``predict`` times ``output_scale`` (see :class:`MLPOracle`).
    ``sparse_input``: whether it predicts scipy sparse X, as its oracle took it.
    ``columns``: the columns of X the estimator was fitted on (a query's ``features``),
    of ``n_features``; None: every column.
    """

    # class defaults: pickles made before the attributes existed
    sparse_input = False
    columns: np.ndarray | None = None
    n_features: int | None = None

    def __init__(self, estimator: BaseEstimator, output_scale: float = 1.0,
                 sparse_input: bool = False, columns: np.ndarray | None = None,
                 n_features: int | None = None) -> None:
        self.estimator = estimator
        self.output_scale = float(output_scale)
        self.sparse_input = bool(sparse_input)
        if columns is not None:
            self.columns = np.asarray(columns, dtype=np.intp)
            self.n_features = int(n_features)

    def predict(self, X: ArrayLike) -> np.ndarray:
        if sp.issparse(X):  # taken where its oracle took it (check_X refuses it by name)
            X = check_X(X, accept_sparse=self.sparse_input,
                        who=f"a {type(self.estimator).__name__} hypothesis")
        if self.columns is not None:  # the estimator's columns of X
            X = X if sp.issparse(X) else np.asarray(X)
            if X.ndim != 2 or X.shape[1] != self.n_features:
                raise ValueError(f"X has {X.shape[-1]} features but the hypothesis was "
                                 f"fitted on {self.n_features}")
            X = X[:, self.columns]
        if not isinstance(self.estimator, BaseDecisionTree):
            return np.asarray(self.estimator.predict(X), dtype=np.float64) * self.output_scale
        # A tree casts X to float32.  Looking for values beyond its range on every call
        # would cost 40% of a depth-3 tree's predict; only when scikit-learn refuses X is
        # it worth saying why (and its cast's overflow warning says nothing more).
        try:
            with np.errstate(over="ignore"):
                out = self.estimator.predict(X)
        except ValueError:
            X = np.asarray(X)
            if X.dtype.kind == "f":
                who = f"this {type(self.estimator).__name__} hypothesis is one of"
                _check_float32_range(X, who)
            raise
        return np.asarray(out, dtype=np.float64) * self.output_scale

    def tree_structure(self) -> TreeStructure | None:
        """A fitted scikit-learn tree (``DecisionTreeRegressor``, one or more outputs;
        ``DecisionTreeClassifier``, whose output is its predicted class) as a
        :class:`~oracleboost.oracles.trees.TreeStructure`; None for other estimators.

        The leaves are ``predict``'s numbers: a regressor's leaf values times
        ``output_scale``; a classifier's ``classes_[argmax]`` of the leaf's class weights
        (the first largest, as ``predict`` takes it) times ``output_scale``.  The tree
        compares ``float32(x)`` with its threshold; the exported split compares ``x``
        in float64 with :func:`~oracleboost.oracles.trees.float32_split` of it, which
        sends every finite x within float32's range the same way.  The covers are the
        tree's training rows per leaf."""
        est = self.estimator
        if not isinstance(est, BaseDecisionTree) or not hasattr(est, "tree_"):
            return None
        tree = est.tree_
        is_leaf = tree.children_left == -1
        internal = np.flatnonzero(~is_leaf)  # scikit-learn numbers nodes depth first
        leaves = np.flatnonzero(is_leaf)
        # LightGBM's numbering: internal nodes 0.., leaves ~0, ~1, ...
        number = np.empty(tree.node_count, dtype=np.intp)
        number[internal] = np.arange(internal.size)
        number[leaves] = ~np.arange(leaves.size)
        if isinstance(est, DecisionTreeClassifier):
            if est.n_outputs_ != 1:
                return None
            classes = np.asarray(est.classes_, dtype=np.float64)
            value = classes[np.argmax(tree.value[leaves, 0, :], axis=1)][:, None]
        else:
            value = np.asarray(tree.value[leaves, :, 0], dtype=np.float64)
        value = value * self.output_scale  # the product predict forms
        feature = tree.feature[internal].astype(np.intp)
        return TreeStructure(
            n_features=int(est.n_features_in_ if self.columns is None else self.n_features),
            feature=feature if self.columns is None else self.columns[feature],
            threshold=np.array([float32_split(t) for t in tree.threshold[internal]]),
            left=number[tree.children_left[internal]],
            right=number[tree.children_right[internal]],
            value=value,
            default_left=np.ones(internal.size, dtype=bool),
            missing=np.full(internal.size, MISSING_NONE, dtype=np.intp),
            leaf_count=np.asarray(tree.n_node_samples[leaves], dtype=np.float64),
        )

    def feature_importances(self, n_features: int) -> np.ndarray | None:
        """The estimator's own ``feature_importances_`` (trees, forests, boosting), or
        None for estimators without them (linear models, neighbours, pipelines)."""
        imp = getattr(self.estimator, "feature_importances_", None)
        if imp is not None and self.columns is not None and n_features == self.n_features:
            imp, own = np.zeros(n_features), np.asarray(imp, dtype=np.float64)
            imp[self.columns] = own  # (its columns' importances, in place)
        if imp is None or np.shape(imp) != (n_features,):
            return None
        return np.asarray(imp, dtype=np.float64)

    def __repr__(self) -> str:
        return f"FittedEstimator({self.estimator!r})"


def _takes_sparse(estimator) -> bool:
    """Whether ``estimator`` fits and predicts scipy sparse X, by its scikit-learn tags
    (``input_tags.sparse``); False where it has none."""
    try:
        return bool(estimator.__sklearn_tags__().input_tags.sparse)
    except AttributeError:
        return False


def _dense_float32(X) -> np.ndarray:
    """A sparse X as the dense float32 array scikit-learn's trees fit on (their
    ``check_array(X, dtype=np.float32)`` of ``X.toarray()``: the same values), made
    without a float64 dense copy on the way."""
    return X.astype(np.float32).toarray()


def _kind(estimator) -> str | None:
    """"classifier", "regressor" or None (not a scikit-learn predictor)."""
    try:
        if is_classifier(estimator):
            return "classifier"
        if is_regressor(estimator):
            return "regressor"
    except AttributeError:  # objects without scikit-learn tags
        pass
    return None


# Estimators that own a random_state parameter but use it only in some configurations:
# class name -> (parameter, the values under which the seed is used).  Looked up along
# the MRO, so a subclass (a CountingRidge, LogisticRegressionCV) fits as its parent does.
_SEED_USED_ONLY_WHEN = {
    "Ridge": ("solver", {"sag", "saga"}),
    "RidgeClassifier": ("solver", {"sag", "saga"}),
    "LogisticRegression": ("solver", {"sag", "saga", "liblinear"}),
    "Lasso": ("selection", {"random"}),
    "ElasticNet": ("selection", {"random"}),
    "MultiTaskLasso": ("selection", {"random"}),
    "MultiTaskElasticNet": ("selection", {"random"}),
    "LassoCV": ("selection", {"random"}),
    "ElasticNetCV": ("selection", {"random"}),
    "MultiTaskLassoCV": ("selection", {"random"}),
    "MultiTaskElasticNetCV": ("selection", {"random"}),
    "SVC": ("probability", {True}),
    "NuSVC": ("probability", {True}),
}


def _uses_its_seed(owner) -> bool:
    """Whether ``owner``, an estimator with a ``random_state`` parameter of its own, uses
    it in its configuration (by :data:`_SEED_USED_ONLY_WHEN`; yes if no rule applies)."""
    rule = next(
        (_SEED_USED_ONLY_WHEN[c.__name__] for c in type(owner).__mro__
         if c.__name__ in _SEED_USED_ONLY_WHEN),
        None,
    )
    if rule is None or not hasattr(owner, "get_params"):
        return True
    name, values = rule
    return owner.get_params(deep=False).get(name) in values


def seed_matters(estimator) -> bool:
    """Whether a fit of ``estimator`` can depend on its seed (``stochastic="auto"``).

    No: estimators without a ``random_state`` parameter anywhere in their (deep)
    parameters (``LinearRegression``, ``KNeighborsRegressor``), and those that own one
    but use it only in settings not chosen (``Ridge`` with a solver other than sag/saga,
    ``Lasso``/``ElasticNet`` with cyclic selection, ``LogisticRegression`` with lbfgs,
    ``SVC`` without ``probability``).  In a composite (a ``Pipeline``, a meta-estimator)
    each owner of a ``random_state`` decides for itself, and the seed matters if it
    matters to one of them.  Yes: every other estimator with a ``random_state`` (trees
    break ties between equal splits with it, for instance).
    """
    params = estimator.get_params(deep=True)
    owners = [
        estimator if k == "random_state" else params.get(k[: -len("__random_state")])
        for k in params
        if k == "random_state" or k.endswith("__random_state")
    ]
    return any(_uses_its_seed(owner) for owner in owners)


def _seeded_clone(estimator, random_state: int | None):
    est = clone(estimator)
    if random_state is not None:
        keys = [
            k
            for k in sorted(est.get_params(deep=True))
            if k == "random_state" or k.endswith("__random_state")
        ]
        if keys:
            est.set_params(**{k: int(random_state) for k in keys})
    return est


class _BoundEstimator(BoundOracle):
    """Bound form shared by every scikit-learn-backed oracle."""

    def __init__(
        self,
        oracle,
        X: np.ndarray,
        regressor,
        classifier,
        target_scale: str | None,
        weighting: str = "sample_weight",
    ):
        super().__init__(oracle, X.shape[0])
        self.X = X
        self.sparse_input = bool(oracle.capabilities.sparse_input)  # its answers' predict
        self.regressor = regressor
        self.classifier = classifier
        self.target_scale = target_scale
        self.weighting = weighting

    def _fit(self, estimator, target, sample_weight, random_state, output_scale=1.0,
             columns=None):
        est = _seeded_clone(estimator, random_state)
        X = self._columns(columns)
        cst = getattr(est, "monotonic_cst", None)
        if columns is not None and cst is not None:  # the constraints of those columns
            est.set_params(monotonic_cst=np.asarray(cst)[columns])
        if sample_weight is None:
            est.fit(X, target)
        elif self.weighting == "resample":
            idx = _weighted_bootstrap(sample_weight, random_state)
            est.fit(X[idx], target[idx])
        else:
            if not has_fit_parameter(est, "sample_weight"):
                raise TypeError(
                    _no_weights_message(est, f"{type(self.oracle).__name__} needs for this query")
                )
            est.fit(X, target, sample_weight=sample_weight)
        h = FittedEstimator(est, output_scale, sparse_input=self.sparse_input,
                            columns=columns, n_features=self.X.shape[1])
        h.train_output = h.predict(self.X)
        return h

    @property
    def n_features(self) -> int:
        """The columns of the training X (what a query's ``features`` index)."""
        return int(self.X.shape[1])

    def _columns(self, columns: np.ndarray | None):
        """The training X, or its ``columns`` alone (a query's ``features``)."""
        return self.X if columns is None else self.X[:, columns]

    def _regress(self, target, sample_weight, random_state, columns=None):
        """Fit ``target / scale`` and return ``scale`` times the fit, which is exact for a
        class closed under scaling.  ``target_scale``:

        ``None``
            the target as given (a user's estimator: its regularisation and thresholds
            are on the scale of its targets, as the user set them);
        ``"rms"``
            ``scale`` = the weighted RMS of the target: keeps regularised or iteratively
            trained learners (an MLP's L2 penalty, its tolerance) from collapsing on the
            tiny targets boosting produces (``|r|`` sums to 1 for AdaBoost weights);
        ``"power_of_two"``
            ``scale`` = the power of two that brings the weighted RMS into [0.5, 1):
            exact, so the tree is the one grown on the target itself, except that
            scikit-learn's absolute impurity threshold (a node whose weighted variance
            is below ``np.finfo(float).eps`` is a leaf) becomes relative to the target's
            scale.  Without it, targets of scale 1e-8 or one dominant weight (the other
            rows then hold 1e-200 of the variance) gave a tree without splits.
        """
        scale = 1.0
        if self.target_scale is not None:
            rms = _weighted_rms(target, sample_weight)
            if rms > 0.0:
                scale = rms if self.target_scale == "rms" else math.ldexp(1.0, math.frexp(rms)[1])
        return self._fit(self.regressor, target / scale, sample_weight, random_state, scale,
                         columns)

    # (``features``: only where the oracle declares feature_subsets)
    def _correlate(self, r, random_state, features=None):
        if self.classifier is not None:
            labels = np.where(r >= 0, 1, -1)
            return self._fit(self.classifier, labels, np.abs(r), random_state,
                             columns=features)
        return self._regress(r, None, random_state, features)

    def _project(self, target, sample_weight, random_state, features=None):
        return self._regress(target, sample_weight, random_state, features)


class _BoundTrees(_BoundEstimator):
    """:class:`TreeOracle` bound: a weighted regression tree is grown on the weights of
    :func:`~oracleboost.oracles._split_weights.split_search_weights` when some rows
    outweigh all lighter ones by more than ``2**20`` (scikit-learn's running sums would
    lose the lighter rows), then its leaf values are refit with the true weights."""

    monotone = False  # monotone_constraints given (set by TreeOracle.bind)

    def _fit(self, estimator, target, sample_weight, random_state, output_scale=1.0,
             columns=None):
        search = None
        if sample_weight is not None and estimator is self.regressor and not self.monotone:
            # (monotone trees keep scikit-learn's bounded leaves: a refit would undo them)
            search = split_search_weights(sample_weight)
        if search is None:
            h = super()._fit(estimator, target, sample_weight, random_state, output_scale,
                             columns)
            return self._not_against(h, target, sample_weight) if self.monotone else h
        h = super()._fit(estimator, target, search, random_state, output_scale, columns)
        _refit_leaf_values(h.estimator, self._columns(columns), target, sample_weight)
        h.train_output = h.predict(self.X)
        return h

    def _not_against(self, h: Hypothesis, target: np.ndarray,
                     sample_weight: np.ndarray | None) -> Hypothesis:
        """A monotone tree, or a constant where the tree's inner product with the query
        ``Σ w h t`` is negative: scikit-learn bounds a monotone tree's leaves, so they
        are not the sides' means, and a booster meeting a negative edge would step
        against the tree, reversing its direction.  The constant (``sign(Σ r)`` for
        ``correlate``, the weighted mean for ``project``: an inner product of at least
        0) is monotone both ways."""
        w = np.ones(len(target)) if sample_weight is None else sample_weight
        if np.sum(w * target * h.train_output) >= 0.0:
            return h
        total = float(np.sum(w * target))
        if isinstance(h.estimator, DecisionTreeClassifier):
            value = 1.0 if total >= 0.0 else -1.0  # the constant of edge |Σ r|
        else:
            value = total / float(np.sum(w))  # the weighted mean: Σ w h t = W·mean² >= 0
        c = ConstantHypothesis(value, int(self.X.shape[1]))
        c.train_output = np.full(len(target), value)
        return c


def _refit_leaf_values(tree, X: np.ndarray, target: np.ndarray, w: np.ndarray) -> None:
    """Set every leaf value of a fitted regression tree to the weighted mean of ``target``
    over the training rows in that leaf, in place (as scikit-learn's gradient boosting
    updates its trees' leaves); a leaf whose rows have no weight keeps its value."""
    leaf = tree.apply(X)
    t2 = target if target.ndim == 2 else target[:, None]
    size = tree.tree_.node_count
    mass = np.bincount(leaf, weights=w, minlength=size)
    values = tree.tree_.value  # (nodes, outputs, 1), a writable view of the tree's own
    for k in range(t2.shape[1]):
        sums = np.bincount(leaf, weights=w * t2[:, k], minlength=size)
        held = mass > 0
        values[held, k, 0] = sums[held] / mass[held]


def _weighted_rms(target: np.ndarray, sample_weight: np.ndarray | None) -> float:
    """``sqrt(Σ w ||t_i||² / Σ w)`` (``None``: unit weights), taken on ``t`` scaled by a
    power of two to a largest entry below 1 (exact), so that no square overflows or
    underflows on the way."""
    top = max_abs(target)
    if top == 0.0:
        return 0.0
    e = math.frexp(top)[1]
    u = np.ldexp(target, -e)
    sq = u**2 if u.ndim == 1 else np.sum(u**2, axis=1)
    w = np.ones(len(target)) if sample_weight is None else sample_weight
    return math.ldexp(math.sqrt(float(np.sum(w * sq) / np.sum(w))), e)


def _no_weights_message(est, needed_by: str) -> str:
    return (
        f"{type(est).__name__} cannot take sample_weight, which {needed_by}; use an "
        "estimator whose fit accepts sample_weight, or fit on a weighted bootstrap with "
        "SklearnOracle(est, weighting='resample')"
    )


def _weighted_bootstrap(sample_weight: np.ndarray, random_state: int | None) -> np.ndarray:
    """``n`` row indices drawn with replacement with probabilities ``w / sum(w)``, as
    ``AdaBoostRegressor._boost`` draws them; a seed of ``None`` draws fresh."""
    n = len(sample_weight)
    total = float(np.sum(sample_weight))
    p = sample_weight / total if total > 0 else None  # all-zero weights: uniform
    return check_random_state(random_state).choice(n, size=n, replace=True, p=p)


class SklearnOracle(Oracle):
    """Any scikit-learn regressor or classifier as a weak-learner class.

    Parameters
    ----------
    estimator : estimator instance
        A regressor (answers ``project`` and ``correlate``; multi-output regressors
        also answer (n, K) queries) or a classifier (answers ``correlate`` on
        (n,) queries, as weighted classification with labels ``sign(r)``).
        Cloned per query.  With ``weighting="sample_weight"`` it must accept
        ``sample_weight`` in ``fit`` for weighted queries, or a ``TypeError`` naming it
        (and the resample option) is raised.

    stochastic : {"auto", True, False}, default="auto"
        Whether an answer can depend on the query's seed, which decides whether a
        :class:`CachedOracle` keys on it.  "auto": by :func:`seed_matters` (no
        ``random_state`` parameter, or ``Ridge`` with its default solver, means no), so
        ``CachedOracle(SklearnOracle(Ridge()))`` hits the cache on a second identical
        fit whatever the seeds.  Say ``False`` only for an estimator whose fit ignores
        its ``random_state``.  With ``weighting="resample"`` the oracle is always
        stochastic: "auto" and True mean True, and False is refused at ``bind``.

    weighting : {"sample_weight", "resample"}, default="sample_weight"
        How a weighted query (``project(target, sample_weight)`` with weights, and
        ``correlate`` of a classifier, weighted by ``|r|``) reaches the estimator.
        "sample_weight" passes the weights to ``fit``.  "resample" fits on ``n`` rows
        drawn with replacement with probabilities ``w / sum(w)`` (a weighted bootstrap),
        so estimators whose ``fit`` takes no weights (``KNeighborsRegressor``, a
        ``Pipeline`` whose last step ignores them) can be boosted: Freund & Schapire's
        (1996) "boosting by resampling", and what scikit-learn's ``AdaBoostRegressor``
        does for every base estimator (Drucker's 1997 AdaBoost.R2).  The draw uses the
        query's seed (its ``random_state``; with ``None`` a fresh draw), so answers are
        random: the oracle declares ``capabilities.stochastic=True`` (capabilities do
        not depend on the query), a booster with a fixed ``random_state`` is
        reproducible and a :class:`CachedOracle` keys on the seed.  The fit sees the
        weights only through a sample of size ``n``, so the answer's edge on the
        weighted query is noisier (and typically lower) than a weighted fit's, the more
        so the more concentrated the weights.  Unweighted queries (``sample_weight=None``,
        and ``correlate`` of a regressor, which fits ``r`` itself) fit on the rows as
        they are, with no resampling.  ``train_output`` is always the fitted
        estimator's predictions on all ``n`` training rows, not on the bootstrap.

    Sparse X: taken where the estimator's scikit-learn tags say it takes it
    (``input_tags.sparse``: trees, linear models, ...), and given to it as it is.  The
    fit is then the estimator's fit on sparse X, which scikit-learn computes with other
    routines than on dense X (a tree's sparse splitter, another Ridge solver), so it
    equals the fit on ``X.toarray()`` only as far as those agree: not bit for bit in
    general (:class:`TreeOracle` and :class:`LightGBMOracle` give the trees of
    ``X.toarray()``).

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from oracleboost.oracles import SklearnOracle
    >>> oracle = SklearnOracle(DecisionTreeClassifier(max_depth=1))
    >>> from sklearn.neighbors import KNeighborsRegressor
    >>> knn = SklearnOracle(KNeighborsRegressor(), weighting="resample")
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> h = oracle.bind(X).correlate(np.array([-1.0, -1.0, 1.0, 1.0]), random_state=0)
    >>> h.train_output  # a depth-1 classification tree, as ±1
    array([-1., -1.,  1.,  1.])
    """

    def __init__(
        self,
        estimator: BaseEstimator,
        stochastic: bool | str = "auto",
        weighting: str = "sample_weight",
    ) -> None:
        self.estimator = estimator
        self.stochastic = stochastic
        self.weighting = weighting

    def _check_weighting(self) -> None:
        if not (isinstance(self.weighting, str) and self.weighting in _WEIGHTINGS):
            raise ValueError(
                f"weighting must be 'sample_weight' or 'resample'; got {self.weighting!r}"
            )
        if self.weighting == "resample" and self.stochastic is False:
            raise ValueError(
                "weighting='resample' draws a bootstrap from each query's seed, so its "
                "answers depend on the seed; stochastic=False contradicts it (use 'auto')"
            )

    def _stochastic(self) -> bool:
        self._check_weighting()
        if self.weighting == "resample" and self.stochastic in ("auto", True):
            return True
        if self.stochastic == "auto":
            return seed_matters(self.estimator) if hasattr(self.estimator, "get_params") else True
        if not isinstance(self.stochastic, bool):
            raise ValueError(
                f"stochastic must be 'auto', True or False; got {self.stochastic!r}"
            )
        return self.stochastic

    @property
    def capabilities(self) -> Capabilities:
        stochastic = self._stochastic()
        # sparse X where the estimator's tags take it: fitted and predicted by the
        # estimator's own sparse routines, which need not round as its dense ones
        sparse = _takes_sparse(self.estimator)
        if _kind(self.estimator) == "classifier":
            return Capabilities(
                correlate=True, project=False, stochastic=stochastic, bounded=True,
                sparse_input=sparse,
            )
        multi = _multioutput(self.estimator)
        return Capabilities(
            correlate=True,
            project=True,
            multiclass_correlate=multi,
            multiclass_project=multi,
            stochastic=stochastic,
            sparse_input=sparse,
        )

    def bind(self, X: ArrayLike) -> BoundOracle:
        self._check_weighting()
        est = self.estimator
        kind = _kind(est)
        if kind is None:
            raise TypeError(
                f"SklearnOracle needs a scikit-learn regressor or classifier; got {est!r}"
            )
        if (
            kind == "classifier"
            and self.weighting == "sample_weight"
            and not has_fit_parameter(est, "sample_weight")
        ):
            raise TypeError(_no_weights_message(est, "weighted classification (correlate) needs"))
        X = check_X(X, accept_sparse=_takes_sparse(est), who=f"SklearnOracle({type(est).__name__})")
        if isinstance(est, BaseDecisionTree):
            _check_float32_range(X, f"SklearnOracle({type(est).__name__}) grows")
            _warn_unsplittable_features(X, f"SklearnOracle({type(est).__name__}) grows")
        reg, clf = (None, est) if kind == "classifier" else (est, None)
        return _BoundEstimator(
            self, X, reg, clf, target_scale=None, weighting=self.weighting
        )


def _multioutput(estimator) -> bool:
    try:
        return bool(estimator.__sklearn_tags__().target_tags.multi_output)
    except AttributeError:
        return False


class TreeOracle(Oracle):
    """scikit-learn decision trees of any depth.

    ``correlate`` grows a ``DecisionTreeClassifier`` on labels ``sign(r)`` with weights
    ``|r|`` (±1 outputs, as in discrete AdaBoost with trees); ``project`` grows a
    ``DecisionTreeRegressor`` on the target with the given weights (least squares,
    Friedman's gradient boosting; multi-output for (n, K) targets).

    scikit-learn's trees compute in float32, so ``X`` must stay within its range
    (``|x| <= np.finfo(np.float32).max``, about 3.4e38): ``bind`` refuses larger finite
    values with a ``ValueError`` (rescale ``X``, or use :class:`StumpOracle` or
    :class:`LightGBMOracle`, which keep ``X`` in float64).

    Scale: ``project`` grows its tree on the target scaled by a power of two to a
    weighted RMS in [0.5, 1) and scales the leaves back (exact), so that scikit-learn's
    absolute impurity threshold (a node of weighted variance below 2.2e-16 is a leaf)
    acts relative to the target.  Where some rows outweigh all lighter rows together by
    more than ``2**20`` (one weight 1e200 times the others), scikit-learn's running sums
    (a side's weight is ``total − left``) would lose the lighter rows: the tree is then
    grown on compressed weights and its leaf values refit with the true ones (see
    :mod:`oracleboost.oracles._split_weights`).

    Sparse X (scipy CSR or CSC): the trees are those of ``X.toarray()``, grown on the
    float32 array a dense fit casts X to, made once at ``bind`` (``n_samples x
    n_features x 4`` bytes; scikit-learn's sparse splitter grows other trees, see
    ``bind``); the hypotheses predict sparse rows without making them dense.  For
    scikit-learn's sparse splitter itself, use
    ``SklearnOracle(DecisionTreeRegressor(...))``.

    Parameters
    ----------
    max_depth : int or None, default=3
    min_samples_split, min_samples_leaf, max_features, max_leaf_nodes :
        As in scikit-learn's trees; shared by both kinds.
    criterion : {"squared_error", "friedman_mse"}, default="squared_error"
        Split criterion of the regression trees.
    classifier_criterion : {"gini", "entropy", "log_loss"}, default="gini"
        Split criterion of the classification trees.
    monotone_constraints : sequence of {-1, 0, 1} or None, default=None
        One entry per feature, as LightGBM spells it: +1, the trees do not decrease in
        that feature; −1, do not increase; 0, free.  Given to scikit-learn's trees as
        ``monotonic_cst`` (a classification tree's: the probability of +1, so its ±1
        output steps the same way).  Binary and regression queries only (vector leaves
        have no order); an answer whose inner product with the query is negative is
        replaced by a constant, so that no booster gives a tree a negative coefficient
        (see :mod:`oracleboost.oracles.monotone`); leaves are not refit under extreme
        weights (the refit would undo scikit-learn's bounds).

    Examples
    --------
    >>> import numpy as np
    >>> from oracleboost.oracles import TreeOracle
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> bound = TreeOracle(max_depth=2).bind(X)
    >>> g = bound.project(np.array([0.0, 1.0, 2.0, 4.0]), random_state=0)
    >>> g.train_output  # a depth-2 regression tree: the leaves' means
    array([0. , 1.5, 1.5, 4. ])
    >>> bound.correlate(np.array([-1.0, -1.0, 1.0, 1.0]), random_state=0).train_output
    array([-1., -1.,  1.,  1.])
    """

    def __init__(
        self,
        max_depth: int | None = 3,
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        max_features: int | float | str | None = None,
        max_leaf_nodes: int | None = None,
        criterion: str = "squared_error",
        classifier_criterion: str = "gini",
        monotone_constraints: Sequence[int] | None = None,
    ) -> None:
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.criterion = criterion
        self.classifier_criterion = classifier_criterion
        self.monotone_constraints = monotone_constraints

    @property
    def capabilities(self) -> Capabilities:
        # correlate grows ±1 classification trees: bounded; sparse X: fitted on its
        # float32 dense form (the trees of X.toarray()), predicted as it is; monotone
        # trees have scalar leaves (vector leaves have no order); feature_subsets: a tree
        # grown on the given columns alone
        free = not is_constrained(self.monotone_constraints)
        return Capabilities(multiclass_project=free, stochastic=True, bounded=True,
                            sparse_input=True, feature_subsets=True,
                            closed_under_negation=free)

    def bind(self, X: ArrayLike) -> BoundOracle:
        shared = dict(
            max_depth=self.max_depth,
            min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            max_features=self.max_features,
            max_leaf_nodes=self.max_leaf_nodes,
        )
        reg = DecisionTreeRegressor(criterion=self.criterion, **shared)
        clf = DecisionTreeClassifier(criterion=self.classifier_criterion, **shared)
        # Let scikit-learn validate the parameters now, with its own messages.
        reg._validate_params()
        clf._validate_params()
        X = check_X(X, accept_sparse=True, who="TreeOracle")
        directions = monotone_directions(self.monotone_constraints, X.shape[1])
        if directions is not None:  # scikit-learn's name; the positive class's probability
            reg.set_params(monotonic_cst=directions)
            clf.set_params(monotonic_cst=directions)
        _check_float32_range(X, "TreeOracle grows")
        _warn_unsplittable_features(X, "TreeOracle grows")
        if sp.issparse(X):
            # scikit-learn grows trees on CSC X with its sparse splitter, whose trees
            # are not the dense splitter's: it sorts a node's rows in another order,
            # so its sums round otherwise and near-ties between splits (a pure node's
            # impurity 0 or 4e-16) go another way (measured: 15 of 60 depth-3 trees
            # split elsewhere, most leaf values differ in their last bits).  The trees
            # grow on the float32 array the dense fit casts X to (made once here,
            # n_samples x n_features x 4 bytes, the copy each dense fit makes); their
            # predict reads sparse X as it is.
            X = _dense_float32(X)
        bound = _BoundTrees(self, X, reg, clf, target_scale="power_of_two")
        bound.monotone = directions is not None
        return bound


class MLPOracle(Oracle):
    """Small neural nets: a multilayer perceptron (5 hidden units by default).

    The hypothesis class of Grubb & Bagnell's (2011) planning experiment.  Fitted with
    scikit-learn's ``MLPRegressor`` (which takes ``sample_weight``); the target is
    rescaled to unit weighted RMS before fitting and the output scaled back, which is
    exact for a scale-closed class and keeps the L2 penalty from flattening the tiny
    targets boosting produces.  ``correlate`` fits ``r`` (least-squares direction).
    Convergence warnings of the inner optimiser are silenced: a weak learner need not
    be trained to convergence.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(5,)
    activation : {"tanh", "relu", "logistic", "identity"}, default="tanh"
    alpha : float, default=1e-4
        L2 penalty.
    max_iter : int, default=200
    solver : {"lbfgs", "adam", "sgd"}, default="lbfgs"
        L-BFGS suits nets this small (deterministic given the seed, no learning rate).

    Examples
    --------
    A 5-unit net fitted to the signs of ``r`` on two moons (the outputs depend on the
    machine's floating point in their last bits: compare them, do not print them):

    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from oracleboost.oracles import MLPOracle
    >>> X, y = make_moons(200, noise=0.1, random_state=0)
    >>> r = np.where(y == 1, 1.0, -1.0)
    >>> h = MLPOracle().bind(X).correlate(r, random_state=0)
    >>> h.train_output.shape, bool(np.mean(np.sign(h.train_output) == r) > 0.9)
    ((200,), True)
    """

    def __init__(
        self,
        hidden_layer_sizes: tuple[int, ...] = (5,),
        activation: str = "tanh",
        alpha: float = 1e-4,
        max_iter: int = 200,
        solver: str = "lbfgs",
    ) -> None:
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.alpha = alpha
        self.max_iter = max_iter
        self.solver = solver

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(multiclass_correlate=True, multiclass_project=True, stochastic=True,
                            feature_subsets=True)  # (a net fitted on the given columns)

    def bind(self, X: ArrayLike) -> BoundOracle:
        reg = MLPRegressor(
            hidden_layer_sizes=self.hidden_layer_sizes,
            activation=self.activation,
            alpha=self.alpha,
            max_iter=self.max_iter,
            solver=self.solver,
        )
        reg._validate_params()
        return _BoundQuietMLP(self, check_X(X, who="MLPOracle"), reg, None,
                              target_scale="rms")


class _BoundQuietMLP(_BoundEstimator):
    """:class:`MLPOracle` bound: its nets' fits do not warn when they stop before
    convergence.  The warning is silenced here, around the fit, so that the hypotheses
    hold scikit-learn's own ``MLPRegressor`` (a stored model names only public types)."""

    def _fit(self, estimator, target, sample_weight, random_state, output_scale=1.0,
             columns=None):
        # (not catch_warnings: fits on threads that overlap would leave its filter set)
        with silenced(ConvergenceWarning):
            return super()._fit(estimator, target, sample_weight, random_state, output_scale,
                                columns)
