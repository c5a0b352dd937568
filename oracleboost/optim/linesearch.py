"""The line searches of coordinate-descent boosting, on ratios to the current risk.

Along a chosen column, with margins ``m_i`` and the column ``u_i ∈ [−1, 1]`` oriented so
that the edge is positive, the risk after a step α is
``R(α) = Σ_i s_i φ(m_i + α u_i) / Σ_i s_i``.  Everything here works with

    R(α)/R(0) − 1 = Σ_i ρ_i expm1(log φ(m_i + α u_i) − log φ(m_i)),   ρ_i ∝ s_i φ(m_i),
    R'(α)/R(0)    = −Σ_i ρ_i u_i exp(log(−φ'(m_i + α u_i)) − log φ(m_i)),

so a search behaves the same when the risk is 1 or 1e-300 (Telgarsky 2013 note §7:
an unscaled Wolfe search degraded the Rudin margin from 0.3746 to 0.3685), and the
sufficient-decrease test does not cancel when ``R(α) ≈ R(0)`` (the ``expm1`` form).
Trial points whose value overflows count as failing, never as NaN.

A line is :class:`Line` over a few points (a column with two values under the
exponential loss merges its rows into two) or :class:`RowLine` over every training row,
its sums made by lanes in order (:mod:`.row_passes`), on threads or on a cluster's
workers: the same bits on both.

There is one Wolfe search (Telgarsky 2012, Fig. 7: bracketing by doubling from 1, then
bisection) and one exact search (bisection/Brent on the slope).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from oracleboost.losses import MarginLoss
from oracleboost.optim import row_passes
from oracleboost.rows.blocks import RowBlocks
from oracleboost.rows.partitioned import Rows

__all__ = ["Line", "RowLine", "wolfe", "exact"]


@dataclass(frozen=True)
class Line:
    """The one-dimensional problem ``α ↦ R(α)/R(0)`` along one column, over a few points
    (NumPy's sums).

    Parameters
    ----------
    loss : MarginLoss
    margins : ndarray of shape (k,)
        Current margins of the points.
    u : ndarray of shape (k,)
        The column, oriented so that ``R'(0) < 0``.
    log_rho : ndarray of shape (k,)
        ``log ρ_i``, normalised: ``ρ_i = s_i φ(m_i) / Σ_j s_j φ(m_j)``.
    """

    loss: MarginLoss
    margins: np.ndarray
    u: np.ndarray
    log_rho: np.ndarray
    #: How many times the search evaluated R or R' (a one-element list: the line is
    #: frozen, its count is not); a round records it as ``line_evaluations``.
    evaluations: list = field(default_factory=lambda: [0], compare=False, repr=False)

    @functools.cached_property
    def rho(self) -> np.ndarray:
        """``ρ_i`` (computed once: a search evaluates the line many times)."""
        return np.exp(self.log_rho)

    def delta(self, alpha: float) -> float:
        """``R(α)/R(0) − 1`` (``inf`` if it overflows)."""
        self.evaluations[0] += 1
        with np.errstate(over="ignore", invalid="ignore"):
            d = self.loss.log_phi_shift(self.margins, alpha * self.u)
            val = float((self.rho * np.expm1(d)).sum())
        return val if math.isfinite(val) else math.inf

    def slope(self, alpha: float) -> float:
        """``R'(α)/R(0)`` (``-inf``/``inf`` on overflow, with the sign of the overflowing terms)."""
        self.evaluations[0] += 1
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(self.log_rho + self.loss.log_neg_dphi_shift(self.margins, alpha * self.u))
            val = -float((self.u * e).sum())
        if math.isnan(val):  # +inf and -inf terms: the largest growth decides
            return math.inf
        return val

    def unbounded(self) -> bool:
        """True when the risk decreases for ever along the column (no example is hurt)."""
        return bool((self.u >= 0.0).all())


@dataclass(frozen=True, kw_only=True)
class RowLine(Line):
    """:class:`Line` over every training row, each evaluation one pass by lanes
    (:func:`.row_passes.line_delta`, :func:`.row_passes.line_slope`).

    ``log_rho`` and ``weights`` are the risk's shares unnormalised (the largest is 1),
    ``total`` their sum: ``R(α)/R(0) − 1 = Σ_i ρ_i expm1(…) / total``.  The arrays are
    :data:`~oracleboost.rows.partitioned.Rows` (in memory, or on a cluster's workers).
    """

    blocks: RowBlocks
    weights: Rows
    total: float
    u_min: float

    @classmethod
    def build(cls, blocks: RowBlocks, loss: MarginLoss, margins: Rows, u: Rows,
              log_s: Rows | None, u_min: float) -> RowLine:
        """The line along ``u`` (``u_min = min u``) from ``margins`` and the weights'
        logarithms ``log_s`` (None: equal weights), for the rows of ``blocks``."""
        log_rho, rho, total = row_passes.line_weights(blocks, loss, margins, log_s)
        return cls(loss, margins, u, log_rho, blocks=blocks, weights=rho, total=total,
                   u_min=u_min)

    def delta(self, alpha: float) -> float:
        self.evaluations[0] += 1
        val = row_passes.line_delta(self.blocks, self.loss, self.margins, self.u,
                                    self.weights, alpha) / self.total
        return val if math.isfinite(val) else math.inf

    def slope(self, alpha: float) -> float:
        self.evaluations[0] += 1
        val = -row_passes.line_slope(self.blocks, self.loss, self.margins, self.u,
                                     self.log_rho, alpha) / self.total
        return math.inf if math.isnan(val) else val

    def unbounded(self) -> bool:
        return self.u_min >= 0.0


def wolfe(line: Line, c1: float, c2: float, max_iter: int = 200) -> float:
    """A step satisfying both Wolfe conditions (Telgarsky 2012, Fig. 7 and Eqs. 28–29).

    (28) ``R(α) ≤ R(0) − α c1 g``  and  (29) ``R'(α) ≥ −c2 g``  with ``g = −R'(0)``,
    ``0 < c1 < c2 < 1``.  Bracketing doubles ``α_max`` from 1 while (28) holds; bisection
    keeps ``α_min`` below and ``α_max`` above the valid interval (Prop. 37).  After
    ``max_iter`` halvings (only reachable when rounding makes the tests noisy, near
    machine precision) the last point satisfying (28) is returned.
    """
    if not 0.0 < c1 < c2 < 1.0:
        raise ValueError(f"the Wolfe constants need 0 < c1 < c2 < 1; got c1={c1}, c2={c2}")
    g = -line.slope(0.0)
    if not g > 0.0:
        raise ValueError("the line is not a descent direction (R'(0) >= 0)")

    def armijo(a: float) -> bool:
        return line.delta(a) <= -a * c1 * g

    def curvature(a: float) -> bool:
        return line.slope(a) >= -c2 * g

    a_max = 1.0
    # R ≥ 0 while the right side of (28) goes below −1: the doubling always stops.
    while armijo(a_max):
        a_max *= 2.0
    a_min, a = 0.0, a_max / 2.0
    for _ in range(max_iter):
        if not armijo(a):
            a_max = a
        elif not curvature(a):
            a_min = a
        else:
            return a
        a = 0.5 * (a_min + a_max)
    return a_min if a_min > 0.0 else a


def exact(line: Line) -> float:
    """``argmin_α R(α)`` (``inf`` when the risk decreases for ever along the column)."""
    if line.unbounded():
        return math.inf
    hi = 1.0
    while line.slope(hi) < 0.0:
        hi *= 2.0
    # R' is increasing (R convex); its root is the minimiser.
    return brentq(line.slope, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
