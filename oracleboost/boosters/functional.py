"""Functional gradient boosting (Grubb & Bagnell 2011; Friedman 2001; Mason et al. 1999).

Algorithm 1 of Grubb & Bagnell (2011), naive gradient projection, in L2(P̂) with the
inner product ``<f, g> = Σ_i s_i f(x_i) g(x_i) / Σ_i s_i`` (sample weights ``s``; uniform
gives the paper's (1/n) Σ):

1. ``∇_t(x_i) = ∂l(f_{t−1}(x_i), y_i)/∂f`` (pointwise, no 1/n);
2. ``h = project(−∇_t, s)`` (least squares, eq. 4), or ``correlate(s · (−∇_t))``
   (eq. 3) for oracles that cannot project;
3. ``f_t = f_{t−1} + η · (<h, −∇_t>/||h||²) · h``.

The oracle is asked for the *negative* gradient (Friedman's pseudo-residuals) and the
step is added; the paper projects ∇ and subtracts.  The two agree for classes closed
under negation (every class in the foundation); the scale factor ``<h, v>/||h||²`` is
always applied (it is 1 for an exact least-squares fit and guards inexact ones).
With squared loss, a least-squares tree oracle and ``f_0`` = the mean, this is
scikit-learn's ``GradientBoostingRegressor``.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import RegressorMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import validate_data

from .._validation import check_sample_weight
from ..losses import Absolute, Huber, Loss, Squared, get_loss
from ..oracles.sklearn import TreeOracle
from .base import BaseBooster, Ensemble, History, StopReason, draw_seed

__all__ = ["FunctionalGradientRegressor"]

_REGRESSION_LOSSES = (Squared, Absolute, Huber)


class FunctionalGradientRegressor(RegressorMixin, BaseBooster):
    """Gradient boosting of any oracle on a convex regression loss (Grubb & Bagnell 2011, Alg. 1).

    Parameters
    ----------
    oracle : Oracle, default=None
        The weak-learner class; ``None`` means ``TreeOracle(max_depth=3)``.  Asked
        through ``project`` when it can, otherwise through ``correlate``.
    loss : {"squared", "absolute", "huber"} or Loss, default="squared"
    n_estimators : int, default=100
        The round budget (one weak learner per round).
    learning_rate : float, default=0.1
        The constant step η (shrinkage).  With squared loss η = 1/Λ = 1 is the step of
        Theorem 3 (geometric rate ``(1 − γ²)^T``).
    random_state : int, RandomState or None, default=None
        Seeds the oracle's calls (one seed drawn per round).
    verbose : int, default=0

    Attributes
    ----------
    ensemble_ : Ensemble
        ``intercept`` is f_0, the loss' best constant.
    history_ : dict of ndarray
        Per round: ``loss`` (weighted empirical risk after the step), ``edge`` (the
        cosine ``<h, −∇>/(||h|| ||∇||)``, Grubb & Bagnell Definition 1), ``step``
        (``η · <h, −∇>/||h||²``), ``grad_norm`` (``||∇_t||``), ``time`` (seconds).
    stop_reason_ : StopReason

    References
    ----------
    Grubb, A. & Bagnell, J. A. (2011). Generalized boosting algorithms for convex
    optimization. ICML.  Friedman, J. (2001). Greedy function approximation: a
    gradient boosting machine. Annals of Statistics 29(5).
    """

    _parameter_constraints: dict = {
        **BaseBooster._parameter_constraints,
        "loss": [StrOptions({"squared", "absolute", "huber"}), Loss],
    }

    def __init__(
        self,
        oracle=None,
        loss="squared",
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        random_state=None,
        verbose: int = 0,
    ):
        self.oracle = oracle
        self.loss = loss
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Boost for up to ``n_estimators`` rounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        """
        X, y = validate_data(self, X, y, y_numeric=True, ensure_all_finite=True)
        y = y.astype(np.float64)
        s = check_sample_weight(sample_weight, X.shape[0])
        query_weight = None if sample_weight is None else s
        loss = get_loss(self.loss, Loss)
        if not isinstance(loss, _REGRESSION_LOSSES):
            raise ValueError(f"loss={loss!r} is not a regression loss")
        oracle_caps = (TreeOracle() if self.oracle is None else self.oracle).capabilities
        bound = self._bind(X, TreeOracle(), "project" if oracle_caps.project else "correlate")
        use_project = bound.capabilities.project
        rng = check_random_state(self.random_state)

        f0 = loss.init_raw(y, s)
        f = np.full(X.shape[0], f0)
        ensemble = Ensemble(intercept=f0)
        history = History(("loss", "edge", "step", "grad_norm", "time"))
        total = float(np.sum(s))
        self.stop_reason_ = StopReason.MAX_ROUNDS
        start = time.perf_counter()

        for t in range(self.n_estimators):
            t0 = time.perf_counter()
            # 1. the functional gradient; we project its negative (pseudo-residuals)
            v = -loss.gradient(y, f)
            vv = float(np.sum(s * v * v)) / total
            if vv == 0.0:
                self.stop_reason_ = StopReason.ZERO_GRADIENT
                break
            # 2. projection onto the weak-learner class
            seed = draw_seed(rng)
            if use_project:
                h = bound.project(v, query_weight, random_state=seed)
            else:
                h = bound.correlate(s * v, random_state=seed)
            a = h.train_output
            hh = float(np.sum(s * a * a)) / total
            if hh == 0.0:
                self.stop_reason_ = StopReason.ZERO_HYPOTHESIS
                break
            hv = float(np.sum(s * a * v)) / total
            # 3. the step along the scaled projection  <h, v>/||h||² · h
            step = self.learning_rate * hv / hh
            f += step * a
            ensemble.add(h.detach(), step, float(np.max(np.abs(a))))
            record = {
                "loss": loss(y, f, s),
                "edge": hv / np.sqrt(hh * vv),
                "step": step,
                "grad_norm": np.sqrt(vv),
                "time": time.perf_counter() - t0,
            }
            history.append(**record)
            self._report(t, record, start)

        self.ensemble_ = ensemble
        self.history_ = history.as_dict()
        return self

    def predict(self, X) -> np.ndarray:
        """``f(x) = f_0 + Σ_t η_t a_t h_t(x)``."""
        return self._raw(X)

    def staged_predict(self, X):
        """Yield the prediction after each round (incrementally)."""
        yield from self._staged_raw(X)
