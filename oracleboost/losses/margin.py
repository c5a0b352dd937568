"""Margin losses for binary classification: ``l(f, y) = φ(y f)`` with ``y ∈ {−1, +1}``.

The margin ``m = y f(x)`` is positive when right (the library's convention).
Telgarsky (2012, 2013) writes the same losses as increasing functions ℓ of
``z = A λ = −m``: ``φ(m) = ℓ(−m)``, ``φ'(m) = −ℓ'(−m)``.  Boosters weight example i by
``−φ'(m_i)``, normalised; these losses give that weight in log space
(``log_neg_dphi``) so that separable runs, whose risk falls below 1e-300 within a few
hundred rounds, keep exact normalised weights.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .base import Loss

__all__ = ["MarginLoss", "Exponential", "Logistic"]


class MarginLoss(Loss):
    """A decreasing convex function φ of the margin ``y f(x)``."""

    @staticmethod
    def _margin(y, raw):
        return np.asarray(y, dtype=np.float64) * np.asarray(raw, dtype=np.float64)

    def phi(self, m: np.ndarray) -> np.ndarray:
        """φ(m)."""
        return np.exp(self.log_phi(m))

    def log_phi(self, m: np.ndarray) -> np.ndarray:
        """log φ(m), finite even where φ(m) underflows."""
        raise NotImplementedError

    def dphi(self, m: np.ndarray) -> np.ndarray:
        """φ'(m) ≤ 0."""
        return -np.exp(self.log_neg_dphi(m))

    def log_neg_dphi(self, m: np.ndarray) -> np.ndarray:
        """log(−φ'(m)): the log of an example's unnormalised boosting weight."""
        raise NotImplementedError

    def loss(self, y, raw):
        return self.phi(self._margin(y, raw))

    def gradient(self, y, raw):
        return np.asarray(y, dtype=np.float64) * self.dphi(self._margin(y, raw))

    def inverse_link(self, raw: np.ndarray) -> np.ndarray:
        """P(y = +1 | f) at the population minimiser of the loss."""
        raise NotImplementedError

    # -- what line searches and step rules need (Telgarsky 2012, 2013) ------------------
    #: η with φ'' ≤ η φ everywhere (Telgarsky 2012, Def. 19 and App. D.3).
    eta: float = 1.0

    def log_phi_shift(self, m: np.ndarray, d: np.ndarray) -> np.ndarray:
        """``log φ(m + d) − log φ(m)``: the per-example risk ratio of a step, in log space."""
        return self.log_phi(m + d) - self.log_phi(m)

    def log_neg_dphi_shift(self, m: np.ndarray, d: np.ndarray) -> np.ndarray:
        """``log(−φ'(m + d)) − log φ(m)``: the slope of a step relative to the current loss."""
        return self.log_neg_dphi(m + d) - self.log_phi(m)

    def log_curvature_constant(self, m: np.ndarray, sample_weight: np.ndarray) -> float:
        """``ln C_t`` of Telgarsky (2013, L115): ``C_ℓ(ℓ^{−1}(m L))`` for the current margins.

        Every step keeps the risk from rising, so example i (weight s_i) keeps
        ``φ(m_i) ≤ Σ_j s_j φ(m_j) / s_i``; ``C_ℓ`` is evaluated at the worst such margin.
        With unit weights this is the paper's ``ℓ^{−1}(m L(Aλ))``.
        """
        raise NotImplementedError


class Exponential(MarginLoss):
    """Exponential loss ``φ(m) = exp(−m)`` (AdaBoost; Telgarsky's ℓ(z) = e^z).

    The population minimiser is ``f = ½ log(p / (1 − p))`` (Friedman, Hastie &
    Tibshirani 2000), so ``P(y = +1) = σ(2f)``.
    """

    name = "exponential"

    def log_phi(self, m):
        return -np.asarray(m, dtype=np.float64)

    def log_neg_dphi(self, m):
        return -np.asarray(m, dtype=np.float64)

    def init_raw(self, y, sample_weight=None):
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight)
        pos, neg = w[y > 0].sum(), w[y < 0].sum()
        return 0.5 * float(np.log(pos / neg))

    def inverse_link(self, raw):
        return expit(2.0 * np.asarray(raw, dtype=np.float64))

    # exp(−(m + d)) / exp(−m) = exp(−d) exactly: no cancellation at margins in the thousands.
    def log_phi_shift(self, m, d):
        return -np.asarray(d, dtype=np.float64) + np.zeros_like(m)

    def log_neg_dphi_shift(self, m, d):
        return -np.asarray(d, dtype=np.float64) + np.zeros_like(m)

    def log_curvature_constant(self, m, sample_weight):
        return 0.0  # C_exp ≡ 1


class Logistic(MarginLoss):
    """Logistic loss ``φ(m) = ln(1 + exp(−m))`` (Telgarsky's ℓ(z) = ln(1 + e^z)).

    ``φ'' ≤ 1/4``, so it is ¼-strongly smooth in f; ``P(y = +1) = σ(f)``.  ``φ'' ≤ φ``
    everywhere (``ln(1 + e^x) ≥ σ(x)``), so η = 1 is valid globally, tighter than the
    paper's ``2^m/(m ln 2)`` (Telgarsky 2012, Remark 46; the implementer's note §1.2).
    """

    name = "logistic"
    smoothness = 0.25

    def log_phi(self, m):
        m = np.asarray(m, dtype=np.float64)
        out = np.empty_like(m)
        # log(log1p(u)) with u = e^{-m}: for large m, log1p(u) underflows with u, so use
        # log1p(u) = u (1 − u/2 + u²/3 − …), i.e. log φ = −m + log1p(−u/2 + u²/3).
        big = m > 30.0
        u = np.exp(-m[big])
        out[big] = -m[big] + np.log1p(-u / 2.0 + u * u / 3.0)
        out[~big] = np.log(np.logaddexp(0.0, -m[~big]))
        return out

    def phi(self, m):
        return np.logaddexp(0.0, -np.asarray(m, dtype=np.float64))

    def log_neg_dphi(self, m):
        # −φ'(m) = σ(−m) = 1 / (1 + e^{m})
        return -np.logaddexp(0.0, np.asarray(m, dtype=np.float64))

    def init_raw(self, y, sample_weight=None):
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight)
        pos, neg = w[y > 0].sum(), w[y < 0].sum()
        return float(np.log(pos / neg))

    def inverse_link(self, raw):
        return expit(np.asarray(raw, dtype=np.float64))

    def log_curvature_constant(self, m, sample_weight):
        # C_logistic(z) = (1 + e^z)² (Telgarsky 2013 note §1) and ℓ^{−1}(v) = ln(e^v − 1), so
        # ln C = 2 ln(1 + e^{ℓ^{−1}(v)}) = 2v with v = Σ_j s_j φ(m_j) / min_i s_i.
        s = np.asarray(sample_weight, dtype=np.float64)
        active = s > 0
        return float(2.0 * np.sum(s[active] * self.phi(m[active])) / np.min(s[active]))
