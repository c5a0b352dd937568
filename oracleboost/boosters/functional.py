"""Functional gradient boosting (Grubb & Bagnell 2011; Friedman 2001; Mason et al. 1999).

Gradient descent in the function space L2(P̂) with the inner product
``<f, g> = Σ_i s_i <f(x_i), g(x_i)> / Σ_i s_i`` (sample weights ``s``; uniform weights
give the paper's (1/N) Σ).  Functions are represented by their values on the training
points, arrays of shape (n,) or (n, K).  ``PROJ(v)`` asks the oracle for the hypothesis
nearest the direction ``v``: ``project(v, s)`` (least squares, eq. 4) or
``correlate(s · v)`` (eq. 3) for classes that cannot project; every step then moves
along the scaled projection ``a · h`` with ``a = <h, v>/||h||²``.

The oracle is asked for directions of *descent* (``v = −∇``, Friedman's
pseudo-residuals) and steps are added; the paper projects ∇ and subtracts.  The two
agree for classes closed under negation; for label-coded multiclass stumps they do
not (note P8), and ``project`` (vector-leaf stumps) is the default there.

Algorithm 1, naive (``projection="naive"``)::

    v = −∇R[f_{t−1}];  h = PROJ(v);  f_t = f_{t−1} + η_t a h

Algorithm 2, repeated (``"repeated"``): outer iteration t fits t weak learners in
succession to what the previous ones left of v, then takes one step.  The paper prints
the inner update unscaled; it is ``v' ← v' − a_k h_k`` (note P2), which keeps
``v' = v − h*``::

    v' = v;  h* = 0;  for k = 1..t: h_k = PROJ(v'); a_k = <h_k, v'>/||h_k||²;
                                     h* += a_k h_k;  v' −= a_k h_k
    f_t = f_{t−1} + η_t h*

Algorithm 3, residual (``"residual"``): the unprojected part of every past gradient is
carried in Δ, so systematic projection error cannot persist (note P4)::

    Δ += v;  h = PROJ(Δ);  a = <h, Δ>/||h||²;  f_t = f_{t−1} + η_t a h;  Δ −= a h

Step schedules η_t (t = outer iteration): ``constant`` c, ``inv_sqrt`` c/√t (Thms 5, 7),
``inv_t`` c/(λt) (Thms 4, 6 with c = 2 and 1), ``smoothness`` c/Λ (Thm 3 with c = 1).
``n_estimators`` counts weak learners, so repeated projection runs about √(2T) outer
iterations; its last one is truncated to the budget and still takes its step (P3).
"""

from __future__ import annotations

import math
import time
from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from .._validation import check_sample_weight
from ..losses import Loss, MarginLoss, get_loss
from ..oracles.sklearn import TreeOracle
from .base import BaseBooster, Ensemble, History, StopReason, draw_seed

__all__ = [
    "FunctionalGradientRegressor",
    "FunctionalGradientClassifier",
    "FunctionalGradientRanker",
    "PROJECTIONS",
    "SCHEDULES",
]

PROJECTIONS = ("naive", "repeated", "residual")
SCHEDULES = ("constant", "inv_sqrt", "inv_t", "smoothness")


class _FunctionalGradientBooster(BaseBooster):
    """The loop shared by the functional-gradient regressor, classifier and ranker."""

    _parameter_constraints: dict = {
        **BaseBooster._parameter_constraints,
        "projection": [StrOptions(set(PROJECTIONS))],
        "schedule": [StrOptions(set(SCHEDULES))],
        "strong_convexity": [Interval(Real, 0, None, closed="neither"), None],
        "query": [StrOptions({"auto", "project", "correlate"})],
        "init": [StrOptions({"auto"}), Real],
    }

    def _init_raw(self, loss: Loss, y, s):
        """f_0: the loss' best constant ("auto"), or the given number."""
        return loss.init_raw(y, s) if self.init == "auto" else float(self.init)

    def _extra_record(self, y, f, s) -> dict[str, float]:
        """Estimator-specific history entries (the classifier adds its training error)."""
        return {}

    # -- the step schedule -------------------------------------------------------------
    def _eta(self, t: int, loss: Loss) -> float:
        c = float(self.learning_rate)
        if self.schedule == "constant":
            return c
        if self.schedule == "inv_sqrt":
            return c / math.sqrt(t)
        if self.schedule == "inv_t":
            lam = self.strong_convexity if self.strong_convexity is not None else (
                loss.strong_convexity
            )
            if lam is None:
                raise ValueError(
                    f"schedule='inv_t' needs strong_convexity: {loss!r} is not strongly "
                    "convex; pass strong_convexity=λ (e.g. for an added (λ/2)||f||² term)"
                )
            return c / (lam * t)
        if loss.smoothness is None:  # "smoothness"
            raise ValueError(f"schedule='smoothness' needs a smooth loss; {loss!r} is not")
        return c / loss.smoothness

    # -- the loop ----------------------------------------------------------------------------
    def _boost(self, X, y, s, query_weight, loss: Loss, f0, ctx: dict) -> None:
        """Run Algorithms 1–3; sets ``ensemble_``, ``history_``, ``stop_reason_``."""
        oracle_caps = (TreeOracle() if self.oracle is None else self.oracle).capabilities
        if self.query == "auto":
            need = "project" if oracle_caps.project else "correlate"
        else:
            need = self.query
        bound = self._bind(X, TreeOracle(), need)
        rng = check_random_state(self.random_state)
        n = X.shape[0]
        total = float(np.sum(s))
        f = np.broadcast_to(np.asarray(f0, dtype=np.float64), self._raw_shape(n, y)).copy()
        sw = s if f.ndim == 1 else s[:, None]

        def ip(a, b) -> float:
            return float(np.sum(sw * a * b)) / total

        def proj(v):
            seed = draw_seed(rng)
            if need == "project":
                return bound.project(v, query_weight, random_state=seed)
            return bound.correlate(sw * v, random_state=seed)

        ensemble = Ensemble(intercept=np.asarray(f0, dtype=np.float64))
        history = History(
            ("loss", "edge", "step", "grad_norm", "residual_norm", "outer", "time")
            + tuple(self._extra_record(y, f, s))
        )
        self.stop_reason_ = StopReason.MAX_ROUNDS
        residual = np.zeros_like(f)
        learners, outer = 0, 0
        start = time.perf_counter()

        while learners < self.n_estimators and self.stop_reason_ is StopReason.MAX_ROUNDS:
            outer += 1
            eta = self._eta(outer, loss)
            v = -loss.gradient(y, f, **ctx)  # 1. the descent direction −∇R[f_{t−1}]
            vv = ip(v, v)
            if self.projection == "residual":
                residual += v
                target = residual
            else:
                target = v
            if ip(target, target) == 0.0:
                self.stop_reason_ = StopReason.ZERO_GRADIENT
                break
            inner = min(outer, self.n_estimators - learners) if self.projection == "repeated" else 1
            pending = []  # (h, a, edge, residual norm) of this outer iteration
            for _ in range(inner):
                t0 = time.perf_counter()
                h = proj(target)  # 2. PROJ
                out = h.train_output
                hh = ip(out, out)
                if hh == 0.0:
                    self.stop_reason_ = StopReason.ZERO_HYPOTHESIS
                    break
                ht = ip(out, target)
                a = ht / hh
                edge = ht / math.sqrt(hh * ip(target, target))
                left = target - a * out  # what this projection leaves unrepresented
                if self.projection != "naive":
                    target = left  # Alg. 2 line 8 (scaled, P2); Alg. 3 line 8
                pending.append((h, a, edge, math.sqrt(ip(left, left)), time.perf_counter() - t0))
                learners += 1
                if self.projection == "repeated" and ip(target, target) == 0.0:
                    break  # the gradient is represented exactly: nothing left to fit
            if self.projection == "residual":
                residual = target
            # 3. the step: f_t = f_{t−1} + η_t Σ_k a_k h_k  (one term unless repeated)
            for h, a, _, _, _ in pending:
                f += eta * a * h.train_output
                ensemble.add(h.detach(), eta * a, float(np.max(np.abs(h.train_output))))
            value = loss(y, f, s, **ctx)
            extra = self._extra_record(y, f, s)
            for _h, a, edge, rnorm, dt in pending:
                record = {
                    "loss": value,
                    "edge": edge,
                    "step": eta * a,
                    "grad_norm": math.sqrt(vv),
                    "residual_norm": rnorm,
                    "outer": outer,
                    "time": dt,
                    **extra,
                }
                history.append(**record)
                self._report(len(history) - 1, record, start)

        self.ensemble_ = ensemble
        self.history_ = history.as_dict()

    def _raw_shape(self, n: int, y) -> tuple[int, ...]:
        return (n,)


class FunctionalGradientRegressor(RegressorMixin, _FunctionalGradientBooster):
    """Gradient boosting of any oracle on a convex regression loss (Grubb & Bagnell 2011).

    Parameters
    ----------
    oracle : Oracle, default=None
        The weak-learner class; ``None`` means ``TreeOracle(max_depth=3)``.
    loss : {"squared", "absolute", "huber", "quantile"} or Loss, default="squared"
        ``Quantile(alpha)`` for other quantiles than the median; any scalar-output
        ``Loss`` instance, e.g. ``PlanningLoss(worlds)`` (maximum margin planning, with
        ``X = worlds.X`` and any ``y`` of the same length).
    projection : {"naive", "repeated", "residual"}, default="naive"
        Algorithm 1, 2 or 3 of the paper (see the module docstring).
    schedule : {"constant", "inv_sqrt", "inv_t", "smoothness"}, default="constant"
        η_t = c, c/√t, c/(λt) or c/Λ with c = ``learning_rate`` (t = outer iteration).
    n_estimators : int, default=100
        The budget in weak learners.
    learning_rate : float, default=0.1
        The constant c of the schedule (the shrinkage for ``constant``).  With squared
        loss, ``schedule="smoothness"`` and c = 1 is Theorem 3's η = 1/Λ.
    strong_convexity : float or None, default=None
        λ for ``schedule="inv_t"``; defaults to the loss' own (1 for squared).
    query : {"auto", "project", "correlate"}, default="auto"
        How PROJ asks the oracle: least squares (eq. 4) or the inner product (eq. 3);
        "auto" projects when the oracle can.
    init : "auto" or float, default="auto"
        f_0: the loss' best constant, or the given constant (the paper starts at 0).
    random_state : int, RandomState or None, default=None
    verbose : int, default=0

    Attributes
    ----------
    ensemble_ : Ensemble
        ``intercept`` is f_0.
    history_ : dict of ndarray
        One entry per weak learner: ``loss`` (weighted risk of the current f; constant
        within an outer iteration of repeated projection, where f moves only at its
        end), ``edge`` (cosine of h with the vector it projected, Definition 1),
        ``step`` (its coefficient η_t a), ``grad_norm`` ||∇_t||, ``residual_norm`` (what
        is left to project after it: ||v − Σ a_k h_k|| for repeated, ||Δ|| for residual,
        ||v − a h|| for naive), ``outer`` (outer iteration), ``time`` (seconds).
    stop_reason_ : StopReason

    References
    ----------
    Grubb, A. & Bagnell, J. A. (2011). Generalized boosting algorithms for convex
    optimization. ICML.  Friedman, J. (2001). Greedy function approximation: a
    gradient boosting machine. Annals of Statistics 29(5).
    """

    _parameter_constraints: dict = {
        **_FunctionalGradientBooster._parameter_constraints,
        "loss": [StrOptions({"squared", "absolute", "huber", "quantile"}), Loss],
    }

    def __init__(
        self,
        oracle=None,
        loss="squared",
        projection: str = "naive",
        schedule: str = "constant",
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        strong_convexity: float | None = None,
        query: str = "auto",
        init="auto",
        random_state=None,
        verbose: int = 0,
    ):
        self.oracle = oracle
        self.loss = loss
        self.projection = projection
        self.schedule = schedule
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.strong_convexity = strong_convexity
        self.query = query
        self.init = init
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Boost with up to ``n_estimators`` weak learners.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        """
        X, y = validate_data(self, X, y, y_numeric=True, ensure_all_finite=True)
        y = y.astype(np.float64)
        s = check_sample_weight(sample_weight, X.shape[0])
        X, y, s = self._positive_weight_rows(X, y, s)
        loss = get_loss(self.loss, Loss)
        # Named losses are the regression ones; any other scalar-output Loss instance is
        # taken as given (e.g. PlanningLoss, whose structure lives in the instance).
        if isinstance(loss, MarginLoss) or getattr(loss, "raw_ndim", 1) != 1:
            raise ValueError(
                f"loss={loss!r} is not a regression loss: use FunctionalGradientClassifier "
                "for margin and multiclass losses, FunctionalGradientRanker for ranking"
            )
        if getattr(loss, "context_keys", ()):
            raise ValueError(f"loss={loss!r} needs {loss.context_keys}: use the ranker")
        query_weight = None if sample_weight is None else s
        self._boost(X, y, s, query_weight, loss, self._init_raw(loss, y, s), {})
        return self

    def predict(self, X) -> np.ndarray:
        """``f(x) = f_0 + Σ_t η_t a_t h_t(x)``."""
        return self._raw(X)

    def staged_predict(self, X):
        """Yield the prediction after each weak learner (incrementally)."""
        yield from self._staged_raw(X)


_DOC_COMMON = """
    projection : {"naive", "repeated", "residual"}, default="naive"
        Algorithm 1, 2 or 3 of Grubb & Bagnell (2011).
    schedule : {"constant", "inv_sqrt", "inv_t", "smoothness"}, default="constant"
        η_t = c, c/√t, c/(λt) or c/Λ with c = ``learning_rate`` (t = outer iteration).
    n_estimators : int, default=100
        The budget in weak learners.
    learning_rate : float, default=0.1
    strong_convexity : float or None, default=None
        λ for ``schedule="inv_t"`` (these losses are not strongly convex on their own).
    query : {"auto", "project", "correlate"}, default="auto"
    init : "auto" or float, default="auto"
    random_state : int, RandomState or None, default=None
    verbose : int, default=0
"""


class FunctionalGradientClassifier(ClassifierMixin, _FunctionalGradientBooster):
    """Functional gradient boosting for classification (Grubb & Bagnell 2011).

    Binary problems with ``loss="logistic"`` boost a scalar score (y = ±1 inside);
    ``"softmax"`` (cross-entropy) and ``"multiclass_hinge"`` (Crammer & Singer 2002)
    boost a vector score f(x) ∈ R^K through vector-valued hypotheses: with
    ``StumpOracle`` ``project`` gives vector-leaf stumps (least squares, the (R)
    reading of the paper's "multiclass decision stumps") and ``correlate`` label-coded
    stumps (1 / −1/(K−1), Theorem 2's embedding, the (C) reading).

    Parameters
    ----------
    oracle : Oracle, default=None
        ``None`` means ``TreeOracle(max_depth=3)``.
    loss : {"auto", "logistic", "softmax", "multiclass_hinge"} or Loss, default="auto"
        "auto" is "logistic" for two classes and "softmax" for more, as scikit-learn's
        gradient boosting does; "logistic" needs two classes.
    """ + _DOC_COMMON + """
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    ensemble_, history_, stop_reason_
        As for :class:`FunctionalGradientRegressor`; the history also has
        ``train_error`` (weighted training error of the current f).
    """

    _parameter_constraints: dict = {
        **_FunctionalGradientBooster._parameter_constraints,
        "loss": [StrOptions({"auto", "logistic", "softmax", "multiclass_hinge"}), Loss],
    }

    def __init__(
        self,
        oracle=None,
        loss="auto",
        projection: str = "naive",
        schedule: str = "constant",
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        strong_convexity: float | None = None,
        query: str = "auto",
        init="auto",
        random_state=None,
        verbose: int = 0,
    ):
        self.oracle = oracle
        self.loss = loss
        self.projection = projection
        self.schedule = schedule
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.strong_convexity = strong_convexity
        self.query = query
        self.init = init
        self.random_state = random_state
        self.verbose = verbose

    def _vector(self) -> bool:
        return self._loss_.name != "logistic"

    def _raw_shape(self, n, y):
        return (n, len(self.classes_)) if self._vector() else (n,)

    def _labels_inside(self, y_idx):
        return y_idx if self._vector() else np.where(y_idx == 1, 1.0, -1.0)

    def _extra_record(self, y, f, s):
        pred = np.argmax(f, axis=1) if f.ndim == 2 else (f > 0).astype(int)
        truth = y if f.ndim == 2 else (y > 0).astype(int)
        return {"train_error": float(np.sum(s[pred != truth]) / np.sum(s))}

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Boost with up to ``n_estimators`` weak learners.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        """
        X, y = validate_data(self, X, y, ensure_all_finite=True)
        check_classification_targets(y)
        s = check_sample_weight(sample_weight, X.shape[0])
        X, y, s = self._positive_weight_rows(X, y, s)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"y must contain at least two classes for {type(self).__name__}; "
                "got only one class"
            )
        name = self.loss
        if name == "auto":
            name = "logistic" if len(self.classes_) == 2 else "softmax"
        self._loss_ = get_loss(name, Loss)
        if self._loss_.name == "logistic" and len(self.classes_) != 2:
            raise ValueError(
                f"loss='logistic' is binary but y has {len(self.classes_)} classes; "
                "use loss='softmax' or 'multiclass_hinge'"
            )
        yi = self._labels_inside(y_idx)
        query_weight = None if sample_weight is None else s
        self._boost(X, yi, s, query_weight, self._loss_, self._init_raw(self._loss_, yi, s), {})
        return self

    @staticmethod
    def _decision(f):
        # scikit-learn's binary convention: one column, positive = classes_[1]
        return f[:, 1] - f[:, 0] if f.ndim == 2 and f.shape[1] == 2 else f

    def decision_function(self, X) -> np.ndarray:
        """Scores: shape (n,) for two classes (positive = ``classes_[1]``; for vector
        losses f_1 − f_0), else (n, K)."""
        return self._decision(self._raw(X))

    def staged_decision_function(self, X):
        for f in self._staged_raw(X):
            yield self._decision(f)

    def _to_labels(self, f):
        idx = np.argmax(f, axis=1) if f.ndim == 2 else (f > 0).astype(int)
        return self.classes_.take(idx)

    def predict(self, X) -> np.ndarray:
        return self._to_labels(self._raw(X))

    def staged_predict(self, X):
        for f in self._staged_raw(X):
            yield self._to_labels(f)

    def _has_proba(self) -> bool:
        return self.loss == "auto" or get_loss(self.loss, Loss).name in ("logistic", "softmax")

    def _proba(self, f):
        p = self._loss_.inverse_link(f)
        return np.column_stack([1.0 - p, p]) if f.ndim == 1 else p

    @available_if(_has_proba)
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities from the loss' link (logistic, softmax); not for the hinge."""
        return self._proba(self._raw(X))

    @available_if(_has_proba)
    def staged_predict_proba(self, X):
        for f in self._staged_raw(X):
            yield self._proba(f)


class FunctionalGradientRanker(_FunctionalGradientBooster):
    """Functional gradient boosting for ranking with query groups (Grubb & Bagnell 2011, §5).

    The pairwise ranking hinge over the pairs of documents of each query with different
    relevance; its function-space gradient is N·∂R/∂f(x_n) (note §1.2).

    Parameters
    ----------
    oracle : Oracle, default=None
        ``None`` means ``TreeOracle(max_depth=3)``.
    loss : {"pairwise_hinge"} or Loss, default="pairwise_hinge"
    """ + _DOC_COMMON

    _parameter_constraints: dict = {
        **_FunctionalGradientBooster._parameter_constraints,
        "loss": [StrOptions({"pairwise_hinge"}), Loss],
    }

    def __init__(
        self,
        oracle=None,
        loss="pairwise_hinge",
        projection: str = "naive",
        schedule: str = "constant",
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        strong_convexity: float | None = None,
        query: str = "auto",
        init="auto",
        random_state=None,
        verbose: int = 0,
    ):
        self.oracle = oracle
        self.loss = loss
        self.projection = projection
        self.schedule = schedule
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.strong_convexity = strong_convexity
        self.query = query
        self.init = init
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, qid):
        """Boost with up to ``n_estimators`` weak learners.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Graded relevance (larger is better).
        qid : array-like of shape (n_samples,)
            The query of each row; pairs are formed within a query only.
        """
        X, y = validate_data(self, X, y, y_numeric=True, ensure_all_finite=True)
        qid = np.asarray(qid)
        if qid.shape != (X.shape[0],):
            raise ValueError(f"qid must have shape ({X.shape[0]},); got {qid.shape}")
        loss = get_loss(self.loss, Loss)
        s = np.ones(X.shape[0])
        y = y.astype(np.float64)
        self._boost(X, y, s, None, loss, self._init_raw(loss, y, s), {"groups": qid})
        return self

    def predict(self, X) -> np.ndarray:
        """Scores: sort each query's documents by decreasing score."""
        return self._raw(X)

    def staged_predict(self, X):
        yield from self._staged_raw(X)
