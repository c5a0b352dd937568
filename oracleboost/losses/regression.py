"""Pointwise regression losses on the residual ``f(x) − y``."""

from __future__ import annotations

import numpy as np

from .base import Loss

__all__ = ["Squared", "Absolute", "Huber", "weighted_median"]


def weighted_median(y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """The lower weighted median: the smallest v with Σ_{y_i ≤ v} w_i ≥ ½ Σ w_i."""
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    order = np.argsort(y, kind="stable")
    cum = np.cumsum(w[order])
    return float(y[order][np.searchsorted(cum, 0.5 * cum[-1])])


class Squared(Loss):
    """Squared loss ``l = ½ (f − y)²``; gradient ``f − y``.

    λ = Λ = 1 in L2(P̂), so naive gradient projection with η = 1 converges at the
    rate (1 − γ²)^T (Grubb & Bagnell 2011, Theorem 3); with least-squares projection it
    is Friedman's (2001) L2 boosting.
    """

    name = "squared"
    smoothness = 1.0
    strong_convexity = 1.0

    def loss(self, y, raw):
        return 0.5 * (np.asarray(raw) - np.asarray(y)) ** 2

    def gradient(self, y, raw):
        return np.asarray(raw, dtype=np.float64) - np.asarray(y, dtype=np.float64)

    def init_raw(self, y, sample_weight=None):
        return float(np.average(y, weights=sample_weight))


class Absolute(Loss):
    """Absolute loss ``l = |f − y|``; subgradient ``sign(f − y)`` with ``sign(0) = +1``.

    The ``sign(0) = +1`` choice is the one Grubb & Bagnell's non-smooth
    counterexample (§4) needs; ``sign(0) = 0`` would hide the failure of naive
    projection there.
    """

    name = "absolute"
    differentiable = False

    def loss(self, y, raw):
        return np.abs(np.asarray(raw) - np.asarray(y))

    def gradient(self, y, raw):
        return np.where(np.asarray(raw) - np.asarray(y) >= 0, 1.0, -1.0)

    def init_raw(self, y, sample_weight=None):
        return weighted_median(y, sample_weight)


class Huber(Loss):
    """Huber loss with threshold δ: ``½ r²`` for ``|r| ≤ δ``, ``δ(|r| − δ/2)`` beyond.

    Gradient ``clip(r, −δ, δ)`` with ``r = f − y``; 1-strongly smooth, not strongly
    convex.  ``init_raw`` is the weighted median (robust; not the exact minimiser).
    """

    name = "huber"
    smoothness = 1.0

    def __init__(self, delta: float = 1.0):
        if not (np.isfinite(delta) and delta > 0):
            raise ValueError(f"delta must be a positive finite number; got {delta!r}")
        self.delta = float(delta)

    def loss(self, y, raw):
        r = np.abs(np.asarray(raw) - np.asarray(y))
        d = self.delta
        return np.where(r <= d, 0.5 * r**2, d * (r - 0.5 * d))

    def gradient(self, y, raw):
        r = np.asarray(raw, dtype=np.float64) - np.asarray(y, dtype=np.float64)
        return np.clip(r, -self.delta, self.delta)

    def init_raw(self, y, sample_weight=None):
        return weighted_median(y, sample_weight)
