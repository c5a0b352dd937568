"""Multiclass losses on a vector score ``f(x) ∈ R^K`` (Grubb & Bagnell 2011, §5(c), §6).

``raw`` has shape ``(n_samples, K)`` with K read from ``raw.shape[1]``; ``y`` holds integer
class indices ``0..K−1`` (estimators map their labels to indices first).  The gradient
has the shape of ``raw`` and, as for every pointwise loss, carries no 1/n: row n is
∂l/∂f(x_n) ∈ R^K, and L2(P̂) is ``<f, g> = (1/n) Σ_n <f(x_n), g(x_n)>_{R^K}``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from oracleboost._numerics import class_probabilities
from oracleboost._validation import check_finite_array, check_sample_weight
from oracleboost.losses.base import HESSIAN_FLOOR, Loss, SecondOrder

__all__ = ["MulticlassLoss", "SoftmaxCrossEntropy", "MulticlassHinge", "ZERO_PRIOR_LOG"]

#: Softmax ``init_raw`` entry of a class whose weight is zero: log of float64's machine
#: epsilon (≈ −36.04), so that class starts with probability ≈ 2.2e-16 instead of the
#: exact −inf optimum, which would poison every later arithmetic step.
ZERO_PRIOR_LOG = float(np.log(np.finfo(np.float64).eps))


class MulticlassLoss(Loss):
    """A pointwise loss ``l(f(x), y)`` of a vector score ``f(x) ∈ R^K`` and a class index y."""

    raw_ndim = 2

    @staticmethod
    def _check(y, raw) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(y as intp indices, raw as float64 (n, K))`` after checking both."""
        raw = np.asarray(raw, dtype=np.float64)
        if raw.ndim != 2 or raw.shape[1] < 2:
            raise ValueError(f"raw must have shape (n_samples, K) with K ≥ 2; got {raw.shape}")
        yi = _class_indices(y, raw.shape[1])
        if yi.shape[0] != raw.shape[0]:
            raise ValueError(f"y has {yi.shape[0]} entries but raw has {raw.shape[0]} rows")
        return yi, raw

    @staticmethod
    def _n_classes(y, n_classes) -> int:
        if n_classes is None:
            return int(np.max(_class_indices(y, None))) + 1 if len(y) else 0
        return int(n_classes)


def _class_indices(y, n_classes: int | None) -> np.ndarray:
    """``y`` as integer indices in ``0..n_classes−1`` (any range when None)."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-D class indices; got shape {arr.shape}")
    if arr.dtype.kind not in "iub":
        arr = check_finite_array(arr, "y")
        if np.any(arr != np.round(arr)):
            raise ValueError("y must hold integer class indices 0..K−1")
    yi = arr.astype(np.intp)
    if yi.size and (yi.min() < 0 or (n_classes is not None and yi.max() >= n_classes)):
        hi = "K−1" if n_classes is None else str(n_classes - 1)
        raise ValueError(f"y must hold class indices in 0..{hi}; got {yi.min()}..{yi.max()}")
    return yi


class SoftmaxCrossEntropy(SecondOrder, MulticlassLoss):
    """Multiclass logistic loss ``l = logsumexp(f(x)) − f_y(x)``; gradient ``softmax(f) − e_y``.

    :meth:`hessian` is the diagonal of the Hessian, ``p_k (1 − p_k)``: the curvature of
    each class's score alone, what a tree a class fits with Newton's leaves
    (``query="newton"``).  LightGBM's multiclass objective multiplies it by
    ``K/(K − 1)`` (Friedman, Hastie & Tibshirani 2000, §6, whose symmetric
    parametrisation that factor comes from), so its Newton leaves are ``(K − 1)/K`` of
    these: a smaller step each round.  (The functional booster's step coefficient
    ``a = <h, −g/H>/<h, h>`` in the weights ``s H`` is 1 for a least-squares tree's
    leaves whatever the scale, so it does not undo the factor.)  The plain diagonal
    is kept: it is the loss's own curvature.

    The loss is computed as ``logsumexp_k(f_k − f_y)`` and ``softmax`` subtracts the row
    maximum, so scores of ±1e4 neither overflow nor lose the loss value.

    Smoothness Λ = ½: the Hessian of logsumexp is ``diag(p) − p pᵀ`` and
    ``vᵀ(diag(p) − p pᵀ)v = Var_{k∼p}(v_k) ≤ (max v − min v)²/4 ≤ ‖v‖²/2`` (Popoviciu, then
    ``(a − b)² ≤ 2(a² + b²)``); K = 2, p = (½, ½), v = (1, −1)/√2 attains it.  The bound is
    pointwise in R^K, hence also in L2(P̂).  Not strongly convex (the Hessian is singular
    along (1, …, 1) and vanishes as p approaches a vertex).

    ``init_raw`` is the log of the weighted class priors, the best constant: at a constant
    c the risk is ``logsumexp(c) − Σ_k π_k c_k`` (π the weighted priors), minimised where
    ``softmax(c) = π``.  A class of zero weight would need c_k = −inf; it gets the finite
    :data:`ZERO_PRIOR_LOG` = log(eps) instead, which changes the risk by at most
    ≈ K·eps relative, below float64 resolution.
    """

    name = "softmax"
    smoothness = 0.5
    #: ``init_raw`` reads only the classes' weight masses (the priors).
    init_from_class_masses = True

    def loss(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        yi, raw = self._check(y, raw)
        # log Σ_k exp(f_k − f_y): one rounding per difference, no cancellation of two
        # large terms (logsumexp(f) − f_y loses ~ulp(|f|) when the scores are ~1e4).
        return logsumexp(raw - raw[np.arange(len(yi)), yi][:, None], axis=1)

    def gradient(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        yi, raw = self._check(y, raw)
        g = class_probabilities(raw)  # the link's numbers (on every CPU the same)
        g[np.arange(len(yi)), yi] -= 1.0
        return g

    def hessian(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """``∂²l/∂f_k² = p_k (1 − p_k)`` (``p = softmax(f)``), shape ``(n, K)``, floored
        at :data:`~oracleboost.losses.base.HESSIAN_FLOOR` (a probability near 0 or 1)."""
        return self.grad_hess(y, raw)[1]

    def grad_hess(self, y: np.ndarray, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The gradient and :meth:`hessian` from one softmax."""
        yi, raw = self._check(y, raw)
        p = class_probabilities(raw)
        hess = np.maximum(p * (1.0 - p), HESSIAN_FLOOR)
        p[np.arange(len(yi)), yi] -= 1.0  # (the gradient's bits, as gradient makes them)
        return p, hess

    def init_raw(
        self, y: np.ndarray, sample_weight: np.ndarray | None = None, *,
        n_classes: int | None = None,
    ) -> np.ndarray:
        """Log weighted class priors, shape ``(K,)``; K = ``max(y) + 1`` unless given."""
        K = self._n_classes(y, n_classes)
        yi = _class_indices(y, K)
        w = check_sample_weight(sample_weight, len(yi))
        prior = np.bincount(yi, weights=w, minlength=K) / np.sum(w)
        out = np.full(K, ZERO_PRIOR_LOG)
        pos = prior > 0
        out[pos] = np.log(prior[pos])
        return out

    def inverse_link(self, raw: np.ndarray) -> np.ndarray:
        """Class probabilities ``softmax(raw)``, shape ``(n, K)``, computed as LightGBM's
        multiclass objective computes them (:func:`oracleboost._numerics.
        class_probabilities`)."""
        return class_probabilities(raw)


class MulticlassHinge(MulticlassLoss):
    """Crammer & Singer (2002) multiclass hinge ``l = max(0, 1 + max_{k≠y} f_k − f_y)``.

    Subgradient (Grubb & Bagnell 2011, §6): ``e_{k*} − e_y`` where the hinge is active,
    ``1 + f_{k*} − f_y > 0`` (strictly), and the zero vector otherwise.  At exactly 0 the
    subdifferential is the segment between 0 and the convex hull of the ``e_k − e_y`` of
    the tied k*, so the zero vector is a valid subgradient and is the one used (as
    :class:`~oracleboost.losses.PairwiseHinge` does at its margin).

    k* is the argmax of f over the wrong classes.  Ties (exact float equality, e.g. every
    wrong class at f = 0) follow ``tie``: ``"first"`` takes the lowest tied index;
    ``"average"`` takes the average of the tied ``e_k``, a convex combination and hence
    also a subgradient.  The rule matters to boosting from f_0 = 0, where every wrong
    class ties: with ``"first"`` every example pushes class 0 (or 1) first.

    Convex, neither smooth nor strongly convex; ``‖g(x)‖ ≤ √2``.  ``init_raw`` is zeros
    (the paper's f_0 = 0, risk 1), not the best constant.

    Parameters
    ----------
    tie : {"first", "average"}, default="first"
    """

    name = "multiclass_hinge"
    differentiable = False
    init_from_class_masses = True  # (zeros: it reads nothing)

    _TIES = ("first", "average")

    def __init__(self, tie: str = "first") -> None:
        if tie not in self._TIES:
            raise ValueError(f"tie must be one of {list(self._TIES)}; got {tie!r}")
        self.tie = tie

    @staticmethod
    def _wrong(yi, raw):
        """Scores with the true class masked to −inf, and their row maximum."""
        wrong = raw.copy()
        wrong[np.arange(len(yi)), yi] = -np.inf
        return wrong, wrong.max(axis=1)

    def loss(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        yi, raw = self._check(y, raw)
        _, top = self._wrong(yi, raw)
        return np.maximum(0.0, 1.0 + top - raw[np.arange(len(yi)), yi])

    def gradient(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        yi, raw = self._check(y, raw)
        rows = np.arange(len(yi))
        wrong, top = self._wrong(yi, raw)
        active = 1.0 + top - raw[rows, yi] > 0
        g = np.zeros_like(raw)
        if self.tie == "first":
            g[rows, np.argmax(wrong, axis=1)] = 1.0
        else:
            tied = wrong == top[:, None]
            g[tied] = 1.0
            g /= tied.sum(axis=1, keepdims=True)
        g[rows, yi] = -1.0
        g[~active] = 0.0
        return g

    def init_raw(
        self, y: np.ndarray, sample_weight: np.ndarray | None = None, *,
        n_classes: int | None = None,
    ) -> np.ndarray:
        """Zeros of shape ``(K,)``; K = ``max(y) + 1`` unless given."""
        return np.zeros(self._n_classes(y, n_classes))
