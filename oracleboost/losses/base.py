"""The loss interface shared by every booster.

Conventions (fixed once, as scikit-learn's ``BaseLoss`` does): ``y`` has shape
``(n_samples,)``; ``raw`` (the ensemble's raw output f(x)) has shape ``(n_samples,)``
for scalar losses.  ``loss`` and ``gradient`` are per example and carry no 1/n: in
Grubb & Bagnell's (2011) function space L2(P̂) the 1/n lives in the inner product
``<f, g> = (1/n) Σ_i f(x_i) g(x_i)``, so the functional gradient at x_i is just the
pointwise derivative ∂l/∂f(x_i).  Step sizes built from ``smoothness`` and
``strong_convexity`` are constants in that same norm.

Multiclass losses (``raw_ndim = 2``) take ``raw`` of shape ``(n_samples, K)`` and integer
class indices ``y`` in ``0..K−1``; their gradient has the shape of ``raw`` and
``init_raw`` returns a vector of shape ``(K,)``.  Non-pointwise losses
(``pointwise = False``, e.g. the pairwise ranking hinge) are functionals R of the whole
value array F; their ``gradient`` is Grubb & Bagnell's g_n = N · ∂R/∂F_n (the L2(P̂)
gradient, note §1.2), their ``__call__`` returns R, and they take the extra keyword
arguments named in ``context_keys`` (``groups`` for ranking) in both ``__call__`` and
``gradient``.  Pointwise losses take no extra keywords: ``loss(y, raw, sample_weight)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from oracleboost._typing import ArrayLike
from oracleboost._validation import check_sample_weight

__all__ = ["Loss", "RegressionLoss", "RankingLoss", "SecondOrder", "HESSIAN_FLOOR"]

#: The least value a built-in loss's :meth:`~SecondOrder.hessian` returns: where the
#: second derivative underflows (a margin past ±37 for the logistic loss, a class
#: probability near 0 or 1 for the softmax), Newton's target ``−g/H`` would divide by
#: nearly 0.  XGBoost floors its logistic and softmax hessians at the same 1e-16.  A
#: row at the floor adds ``−s g`` to a leaf's sum of ``s H · (−g/H)`` as before and
#: at most 1e-16 to its sum of weights, so leaves change by far less than their
#: ``min_child_weight``.
HESSIAN_FLOOR = 1e-16


class Loss(ABC):
    """A pointwise convex loss ``l(f(x), y)``.

    Attributes
    ----------
    name : str
        The registry name estimators accept as a string.
    differentiable : bool
        False for losses whose ``gradient`` is a subgradient (absolute).
    smoothness : float or None
        Λ with ``l`` Λ-strongly smooth in its first argument (Grubb & Bagnell §3), or None.
    strong_convexity : float or None
        λ with ``l`` λ-strongly convex in its first argument, or None.
    raw_ndim : int
        1 for a scalar score f(x) ∈ R (``raw`` of shape ``(n,)``), 2 for a vector score
        f(x) ∈ R^K (``raw`` of shape ``(n, K)``).
    pointwise : bool
        False for functionals that couple examples (ranking); ``gradient`` is then
        N · ∂R/∂F_n and the per-example ``loss`` may be undefined.
    context_keys : tuple of str
        Keyword arguments that ``__call__`` and ``gradient`` require (``("groups",)`` for
        ranking); empty for pointwise losses.
    """

    name: str = ""
    differentiable: bool = True
    smoothness: float | None = None
    strong_convexity: float | None = None
    raw_ndim: int = 1
    pointwise: bool = True
    context_keys: tuple[str, ...] = ()

    @abstractmethod
    def loss(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """Per-example loss, shape ``(n_samples,)``."""

    @abstractmethod
    def gradient(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """Per-example (sub)gradient ∂l/∂raw, the shape of ``raw``."""

    @abstractmethod
    def init_raw(
        self, y: np.ndarray, sample_weight: np.ndarray | None = None
    ) -> float | np.ndarray:
        """The initial constant f_0: a float, or shape ``(K,)`` when ``raw_ndim == 2``.

        Usually the constant minimising the weighted empirical loss; each loss says
        when it is not.
        """

    def __call__(
        self, y: np.ndarray, raw: np.ndarray, sample_weight: ArrayLike | None = None
    ) -> float:
        """Weighted mean loss ``Σ w_i l(raw_i, y_i) / Σ w_i``."""
        w = check_sample_weight(sample_weight, len(y))
        return float(np.average(self.loss(y, raw), weights=w))

    def __repr__(self) -> str:
        params = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        args = ", ".join(f"{k}={v!r}" for k, v in params.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        # (a loss may hold arrays, PlanningLoss's maps: compared whole, not elementwise)
        if type(self) is not type(other):
            return False
        mine, theirs = vars(self), vars(other)
        return mine.keys() == theirs.keys() and all(
            _same(v, theirs[k]) for k, v in mine.items())

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(vars(self).items()))))


def _same(a: Any, b: Any) -> bool:
    """Whether two parameter values are equal: arrays whole; values that cannot say
    (objects holding arrays, compared elementwise) are equal only when identical."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


class SecondOrder:
    """A loss with a positive second derivative in its raw score: it gives
    :meth:`hessian` and :meth:`grad_hess`, what Newton's step needs (the functional
    boosters' ``query="newton"``: each weak learner fits ``−g/H`` with the weights
    ``s H``, Friedman, Hastie & Tibshirani 2000; Chen & Guestrin 2016).  A loss without
    one (hinges, the absolute and Huber losses, whose second derivative is 0 or
    undefined) does not inherit it.

    A mixin beside :class:`Loss`: a subclass defines :meth:`hessian`."""

    def hessian(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """The second derivative of each row's loss in its raw score, the shape of
        ``raw`` (for a vector score, the diagonal ``∂²l/∂f_k²``), positive."""
        raise NotImplementedError

    def grad_hess(self, y: np.ndarray, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(gradient, hessian)`` at ``raw``."""
        return self.gradient(y, raw), self.hessian(y, raw)  # type: ignore[attr-defined]


class RegressionLoss(Loss):
    """A pointwise loss of a real-valued target ``y`` and a scalar score: what a
    regressor accepts by name (squared, absolute, Huber, quantile)."""

    #: Whether ``init_raw`` is the weighted mean ``Σ s y / Σ s``: a booster then sums it
    #: by its row blocks' lanes (the same bits on any threads and on a cluster).
    init_is_mean = False

    #: ``q`` when ``init_raw`` is the lower weighted q-quantile of y (None otherwise): a
    #: booster then finds it by passes over its row blocks
    #: (:func:`oracleboost.rows.quantile.weighted_quantile`, on threads or a cluster).
    init_quantile: float | None = None


class RankingLoss(Loss):
    """A loss of the whole score vector over query groups (``context_keys =
    ("groups",)``): what a ranker accepts by name."""

    pointwise = False
    context_keys = ("groups",)
