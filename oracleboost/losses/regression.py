"""Pointwise regression losses on the residual ``f(x) − y``."""

from __future__ import annotations

import numpy as np

from oracleboost.losses.base import RegressionLoss, SecondOrder

__all__ = ["Squared", "Absolute", "Huber", "Quantile", "weighted_median", "weighted_quantile"]


def weighted_quantile(
    y: np.ndarray, q: float, sample_weight: np.ndarray | None = None
) -> float:
    """The lower weighted q-quantile: the smallest v with Σ_{y_i ≤ v} w_i ≥ q Σ w_i.

    For 0 < q < 1 it minimises the weighted pinball risk Σ w_i ρ_q(y_i − v) (it has
    ``W(y < v) < q W ≤ W(y ≤ v)``, the optimality condition), so it is
    :class:`Quantile`'s best constant; ``q = ½`` is :func:`weighted_median`.
    """
    from oracleboost.rows.blocks import RowBlocks
    from oracleboost.rows.quantile import weighted_quantile as by_passes

    y = np.asarray(y, dtype=np.float64)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    # no sort: a few passes by bins of values, each bin's mass summed by lanes
    return by_passes(RowBlocks(y.shape[0]), y, w, q)


def weighted_median(y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """The lower weighted median: the smallest v with Σ_{y_i ≤ v} w_i ≥ ½ Σ w_i."""
    return weighted_quantile(y, 0.5, sample_weight)


class Squared(SecondOrder, RegressionLoss):
    """Squared loss ``l = ½ (f − y)²``; gradient ``f − y``, hessian 1.

    λ = Λ = 1 in L2(P̂), so naive gradient projection with η = 1 converges at the
    rate (1 − γ²)^T (Grubb & Bagnell 2011, Theorem 3); with least-squares projection it
    is Friedman's (2001) L2 boosting.
    """

    name = "squared"
    smoothness = 1.0
    strong_convexity = 1.0
    init_is_mean = True

    def loss(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        return 0.5 * (np.asarray(raw) - np.asarray(y)) ** 2

    def gradient(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        return np.asarray(raw, dtype=np.float64) - np.asarray(y, dtype=np.float64)

    def hessian(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """1 on every row: Newton's step is the gradient step (``−g/1`` and ``s · 1``
        are ``−g`` and ``s`` exactly)."""
        return np.ones(np.shape(raw))

    def init_raw(self, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        return float(np.average(y, weights=sample_weight))


class Absolute(RegressionLoss):
    """Absolute loss ``l = |f − y|``; subgradient ``sign(f − y)`` with ``sign(0) = +1``.

    The ``sign(0) = +1`` choice is the one Grubb & Bagnell's non-smooth
    counterexample (§4) needs; ``sign(0) = 0`` would hide the failure of naive
    projection there.
    """

    name = "absolute"
    differentiable = False
    init_quantile = 0.5

    def loss(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        return np.abs(np.asarray(raw) - np.asarray(y))

    def gradient(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(raw) - np.asarray(y) >= 0, 1.0, -1.0)

    def init_raw(self, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        return weighted_median(y, sample_weight)


class Huber(RegressionLoss):
    """Huber loss with threshold δ: ``½ r²`` for ``|r| ≤ δ``, ``δ(|r| − δ/2)`` beyond.

    Gradient ``clip(r, −δ, δ)`` with ``r = f − y``; 1-strongly smooth, not strongly
    convex.  ``init_raw`` is the weighted median (robust; not the exact minimiser).
    """

    name = "huber"
    smoothness = 1.0
    init_quantile = 0.5

    def __init__(self, delta: float = 1.0) -> None:
        if not (np.isfinite(delta) and delta > 0):
            raise ValueError(f"delta must be a positive finite number; got {delta!r}")
        self.delta = float(delta)

    def loss(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        r = np.abs(np.asarray(raw) - np.asarray(y))
        d = self.delta
        return np.where(r <= d, 0.5 * r**2, d * (r - 0.5 * d))

    def gradient(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        r = np.asarray(raw, dtype=np.float64) - np.asarray(y, dtype=np.float64)
        return np.clip(r, -self.delta, self.delta)

    def init_raw(self, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        return weighted_median(y, sample_weight)


class Quantile(RegressionLoss):
    """Pinball loss on the residual ``r = y − f``: ``α r`` if ``r ≥ 0``, else ``(α − 1) r``.

    Its minimiser over constants (and, pointwise, over f(x)) is the α-quantile of y, so
    ``init_raw`` is the weighted α-quantile (:func:`weighted_quantile`, the lower one).

    Subgradient with respect to f: ``−α`` where ``f < y``, ``1 − α`` where ``f > y``.  At the
    kink ``f = y`` the subdifferential is ``[−α, 1 − α]``; we take ``1 − α``, the derivative
    from the ``f > y`` side.  That is :class:`Absolute`'s ``sign(0) = +1`` convention:
    ``Quantile(0.5)`` is ``½ |f − y|`` and its gradient is exactly ``½ Absolute().gradient``
    everywhere, the kink included.  Convex, neither smooth nor strongly convex.

    Parameters
    ----------
    alpha : float in (0, 1), default=0.5
        The quantile level.
    """

    name = "quantile"
    differentiable = False

    def __init__(self, alpha: float = 0.5) -> None:
        try:
            ok = 0.0 < float(alpha) < 1.0
        except (TypeError, ValueError):
            ok = False
        if not ok or isinstance(alpha, bool):
            raise ValueError(f"alpha must be a number in the open interval (0, 1); got {alpha!r}")
        self.alpha = float(alpha)

    @property
    def init_quantile(self) -> float:  # type: ignore[override]
        """``alpha``: ``init_raw`` is the lower weighted ``alpha``-quantile of y."""
        return self.alpha

    def loss(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        r = np.asarray(y, dtype=np.float64) - np.asarray(raw, dtype=np.float64)
        return np.where(r >= 0, self.alpha * r, (self.alpha - 1.0) * r)

    def gradient(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        d = np.asarray(raw, dtype=np.float64) - np.asarray(y, dtype=np.float64)
        return np.where(d >= 0, 1.0 - self.alpha, -self.alpha)

    def init_raw(self, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        return weighted_quantile(y, self.alpha, sample_weight)
