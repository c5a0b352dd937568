"""Margin losses for binary classification: ``l(f, y) = φ(y f)`` with ``y ∈ {−1, +1}``.

The margin ``m = y f(x)`` is positive when right (the library's convention).
Telgarsky (2012, 2013) writes the same losses as increasing functions ℓ of
``z = A λ = −m``: ``φ(m) = ℓ(−m)``, ``φ'(m) = −ℓ'(−m)``.  Boosters weight example i by
``−φ'(m_i)``, normalised; these losses give that weight in log space
(``log_neg_dphi``) so that separable runs, whose risk falls below 1e-300 within a few
hundred rounds, keep exact normalised weights.

Dual side (Telgarsky 2012, §3 and App. B.2).  The example weights ``p = −φ'(m) = ℓ'(z)``
live in the domain of the Fenchel conjugate ``ℓ*(p) = sup_z (p z − ℓ(z)) = φ*(−p)``;
:meth:`MarginLoss.conjugate`, :meth:`MarginLoss.conjugate_grad` and
:meth:`MarginLoss.conjugate_bregman` give ``ℓ*``, its gradient (the mirror map
``(ℓ')^{-1}``) and its Bregman divergence per example, and :meth:`MarginLoss.d2phi` gives the
curvature φ''.  :mod:`oracleboost.diagnostics` builds ``f*`` and the Bregman gap from them;
a new margin loss is usable there as soon as it implements ``d2phi`` and ``conjugate``
(:attr:`MarginLoss.has_conjugate`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, xlogy

from oracleboost._numerics import softplus
from oracleboost._typing import ArrayLike
from oracleboost.losses.base import HESSIAN_FLOOR, Loss, SecondOrder

__all__ = ["MarginLoss", "Exponential", "Logistic"]


class MarginLoss(Loss):
    """A decreasing convex function φ of the margin ``y f(x)``.

    Subclasses give ``log_phi`` and ``log_neg_dphi``; the dual-side methods ``d2phi`` and
    ``conjugate`` are optional (see :attr:`has_conjugate`).
    """

    #: Whether ``init_raw`` depends on the labels and weights only through the two class
    #: masses ``Σ s [y > 0]`` and ``Σ s [y < 0]``: a booster then sums them by its row
    #: blocks' lanes (the same bits on any threads and on a cluster).
    init_from_class_masses = False

    #: Methods a loss must override to be usable by :mod:`oracleboost.diagnostics`.
    DUAL_METHODS: tuple[str, ...] = ("d2phi", "conjugate")

    #: ``sup_m −φ'(m)``: the right end of ``dom ℓ*`` (Telgarsky 2012, Lemma 2: dom ℓ* is
    #: ``[0, ∞)`` or ``[0, b]``), i.e. the largest weight one example of unit sample
    #: weight can carry in a dual point.  ``inf`` for the exponential loss, 1 for the
    #: logistic loss.
    dual_bound: float = np.inf

    #: True when ``φ = −φ'`` (the exponential loss): a booster's dual weights and its
    #: risk then share one normaliser, and one ``exp`` a row gives both.
    phi_is_neg_dphi: bool = False

    #: A bound on how fast ``log(−φ'(m))`` and ``log φ(m)`` move with m (their
    #: Lipschitz constant), or None.  With it, a step of the margins by at most δ moves
    #: the largest logit by at most ``L δ``, and a booster shifts the new weights' ``exp``
    #: by that bound instead of waiting for their maximum (one pass fewer a round).
    log_weight_lipschitz: float | None = None

    #: Whether ``log(−φ'(m)) = log φ(m) = −m`` (the exponential loss): the booster's
    #: step then computes the weights' logits in its compiled pass
    #: (:func:`oracleboost.rows.column_kernels.exponential_step`), without calling
    #: ``log_neg_dphi``.
    log_weight_is_neg_margin: bool = False

    @staticmethod
    def _margin(y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        return np.asarray(y, dtype=np.float64) * np.asarray(raw, dtype=np.float64)

    def phi(self, m: np.ndarray) -> np.ndarray:
        """φ(m)."""
        return np.exp(self.log_phi(m))

    def log_phi(self, m: np.ndarray) -> np.ndarray:
        """log φ(m), finite even where φ(m) underflows."""
        raise NotImplementedError(f"{type(self).__name__} does not define log_phi (log φ)")

    def dphi(self, m: np.ndarray) -> np.ndarray:
        """φ'(m) ≤ 0."""
        return -np.exp(self.log_neg_dphi(m))

    def log_neg_dphi(self, m: np.ndarray) -> np.ndarray:
        """log(−φ'(m)): the log of an example's unnormalised boosting weight."""
        raise NotImplementedError(
            f"{type(self).__name__} does not define log_neg_dphi (log(−φ'))")

    def loss(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        return self.phi(self._margin(y, raw))

    def gradient(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        return np.asarray(y, dtype=np.float64) * self.dphi(self._margin(y, raw))

    def inverse_link(self, raw: np.ndarray) -> np.ndarray:
        """P(y = +1 | f) at the population minimiser of the loss."""
        raise NotImplementedError(
            f"{type(self).__name__} does not define inverse_link (no probabilities)")

    #: ``s`` where ``inverse_link(f) = σ(s f)``, the logistic link LightGBM's binary
    #: objective computes; None for other links.
    sigmoid_scale: float | None = None

    # -- what line searches and step rules need (Telgarsky 2012, 2013) ------------------
    #: η with φ'' ≤ η φ everywhere (Telgarsky 2012, Def. 19 and App. D.3), or None when
    #: the loss does not state one: ``step="closed_form"`` (α = slope/η) then refuses
    #: the loss.  A default of 1 would be silently wrong for a steeper loss (e^{−2m}
    #: has η = 4, and α = slope/1 oversteps it fourfold).
    eta: float | None = None

    def log_phi_shift(self, m: np.ndarray, d: np.ndarray) -> np.ndarray:
        """``log φ(m + d) − log φ(m)``: the per-example risk ratio of a step, in log space."""
        return self.log_phi(m + d) - self.log_phi(m)

    def log_neg_dphi_shift(self, m: np.ndarray, d: np.ndarray) -> np.ndarray:
        """``log(−φ'(m + d)) − log φ(m)``: the slope of a step relative to the current loss."""
        return self.log_neg_dphi(m + d) - self.log_phi(m)

    def log_neg_dphi_at_value(self, log_v: float) -> float:
        """``log(−φ'(φ⁻¹(v)))`` from ``log v``: the log of ℓ'(ψ) for the potential
        ``ψ = ℓ⁻¹(Σ_i ℓ(ξ_i))`` of Ji, Srebro & Telgarsky (2021, eq. 2.1 and C.1), with
        ``ℓ(ξ) = φ(−ξ)``; its gradient is ``∇ψ_i = ℓ'(ξ_i)/ℓ'(ψ)``."""
        raise NotImplementedError(f"{type(self).__name__} does not define ℓ'(ℓ⁻¹(v))")

    #: Whether :meth:`log_curvature_constant` reads its argument (a pass over the rows
    #: makes it); False when ``C_ℓ`` is constant.
    curvature_reads_risk: bool = True

    def log_curvature_constant(self, v: float) -> float:
        """``ln C_t`` of Telgarsky (2013, L115): ``C_ℓ(ℓ^{−1}(m L))`` for the current margins,
        from ``v = Σ_j s_j φ(m_j) / min_i s_i``.

        Every step keeps the risk from rising, so example i (weight s_i) keeps
        ``φ(m_i) ≤ Σ_j s_j φ(m_j) / s_i``; ``C_ℓ`` is evaluated at the worst such margin,
        where ``φ = v``.  With unit weights this is the paper's ``ℓ^{−1}(m L(Aλ))``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not define log_curvature_constant (ln C_t of "
            "Telgarsky 2013), which step='quadratic' needs; use step='wolfe' or "
            "'optimal', or define it")

    # -- dual side: curvature, conjugate, Bregman divergence (Telgarsky 2012) ------------
    #
    # Conventions.  Telgarsky writes the loss as an increasing ℓ of z = (A λ)_i = −m with
    # f(z) = Σ_i s_i ℓ(z_i) (unit s in the paper).  A dual point is ψ ∈ R^m_+ in that sum
    # scaling; the dual iterate is ψ_i = s_i ℓ'(z_i) = s_i (−φ'(m_i)), and f's conjugate
    # is f*(ψ) = Σ_i s_i ℓ*(ψ_i / s_i) (the perspective of ℓ*; for unit weights the
    # paper's f*(ψ) = Σ_i ℓ*(ψ_i), Lemma 36).  Every method below is per example: the
    # arguments broadcast against each other and the result has their broadcast shape.

    @property
    def has_conjugate(self) -> bool:
        """True when this loss implements every method of :attr:`DUAL_METHODS`.

        This is what :mod:`oracleboost.diagnostics` checks: Newton's method for the
        optimal risk needs ``d2phi``, ``f*`` and the Bregman identity need ``conjugate``
        (``conjugate_bregman`` has a generic default built on it).  ``conjugate_grad``, the
        mirror map, is optional.
        """
        cls = type(self)
        return all(getattr(cls, n) is not getattr(MarginLoss, n) for n in self.DUAL_METHODS)

    def d2phi(self, m: np.ndarray) -> np.ndarray:
        """φ''(m) ≥ 0: the curvature Newton's method needs (Telgarsky 2012, Def. 1: ℓ'' > 0).

        Equals ``ℓ''(z)`` at ``z = −m``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not implement d2phi (φ''); the optimal-risk "
            "diagnostics need it"
        )

    def conjugate(self, psi: np.ndarray, weight: np.ndarray | float = 1.0) -> np.ndarray:
        """Per-example ``s ℓ*(ψ / s)``, the conjugate of ``z ↦ s ℓ(z)`` at the weight ψ.

        ``ℓ*(p) = sup_z (p z − ℓ(z)) = sup_m (−p m − φ(m))`` (Telgarsky 2012, §3 and
        Example 2; Fenchel conjugacy, App. B.2).  Summed over examples this is
        ``f*(ψ) = Σ_i s_i ℓ*(ψ_i / s_i)``, the dual objective of Thm 4.  The value is
        ``+inf`` outside the domain (``ψ < 0``, ``ψ > s · dual_bound``, or ``s = 0`` with
        ``ψ ≠ 0``); ``s = 0, ψ = 0`` gives 0.

        Parameters
        ----------
        psi : array-like
            Dual weights ψ_i in the sum scaling.
        weight : array-like or float, default=1.0
            Sample weights s_i ≥ 0.

        Returns
        -------
        ndarray
            The broadcast shape of ``psi`` and ``weight``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not implement conjugate (ℓ*); the duality "
            "diagnostics need it"
        )

    def conjugate_grad(self, psi: np.ndarray, weight: np.ndarray | float = 1.0) -> np.ndarray:
        """``∂/∂ψ [s ℓ*(ψ / s)] = (ℓ*)'(ψ / s) = (ℓ')^{-1}(ψ / s)``, the mirror map.

        It inverts the primal-to-dual map: at ``ψ = s (−φ'(m))`` it returns
        ``z = −m`` (Telgarsky 2012, App. B.2: ``∇f*(∇f(x)) = x``).  For the exponential
        loss it is ``ln(ψ / s)``, the entropy mirror map of MABoost.  Defined on the
        interior of the domain; ``±inf`` at its ends, NaN outside.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not implement conjugate_grad ((ℓ')^{{-1}})"
        )

    def conjugate_bregman(
        self, psi: np.ndarray, margin: np.ndarray, weight: np.ndarray | float = 1.0
    ) -> np.ndarray:
        """Per-example ``B_{s ℓ*(·/s)}(ψ, s (−φ'(m)))``, the Bregman divergence of the conjugate.

        The divergence from the dual iterate at margin ``m`` (Telgarsky 2012, Remark 5:
        ``φ_t = ∇f(A λ_t)``) to ψ.  Summed over examples with ψ dual feasible it equals the
        primal gap ``f(A λ) − f̄_A`` when ψ is the dual optimum (Fenchel–Young, Prop. 32,
        with ``<A λ, ψ> = 0``; the equality form of Eq. 20), and ``f(A λ) + f*(ψ)`` for
        every ψ ∈ Φ_A (Remark 6).  The dual iterate is given by its margin so that
        losses can evaluate it in log space.  ``+inf`` where ψ is outside the domain.

        The default is the Fenchel–Young gap
        ``s ℓ*(ψ / s) + s φ(m) + ψ m``, which cancels badly when both sides are large;
        subclasses override it with a relative-entropy formula.
        """
        p, m, w = _broadcast(psi, margin, weight)
        with np.errstate(over="ignore", invalid="ignore"):
            # 0 · m = 0 even at m = ±inf (rows off the hard core have m → +inf)
            out = self.conjugate(p, w) + w * self.phi(m) + np.where(p != 0, p * m, 0.0)
        return np.where(np.isnan(out), np.inf, out)


class Exponential(SecondOrder, MarginLoss):
    """Exponential loss ``φ(m) = exp(−m)`` (AdaBoost; Telgarsky's ℓ(z) = e^z).

    Its hessian in the raw score is ``φ''(y f) = exp(−y f)`` (``y² = 1``), so
    Newton's target ``−g/H`` is ``y`` itself (Friedman, Hastie & Tibshirani 2000,
    Gentle AdaBoost's weighted least-squares fit).

    The population minimiser is ``f = ½ log(p / (1 − p))`` (Friedman, Hastie &
    Tibshirani 2000), so ``P(y = +1) = σ(2f)``.
    """

    init_from_class_masses = True
    #: ``inverse_link(f) = σ(sigmoid_scale · f)`` (LightGBM's ``binary sigmoid:2``)
    sigmoid_scale = 2.0

    name = "exponential"
    phi_is_neg_dphi = True
    eta = 1.0  # φ'' = φ
    log_weight_lipschitz = 1.0  # both logs are −m
    log_weight_is_neg_margin = True

    def log_phi(self, m: np.ndarray) -> np.ndarray:
        return -np.asarray(m, dtype=np.float64)

    def log_neg_dphi(self, m: np.ndarray) -> np.ndarray:
        return -np.asarray(m, dtype=np.float64)

    def init_raw(self, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight)
        pos, neg = w[y > 0].sum(), w[y < 0].sum()
        return 0.5 * float(np.log(pos / neg))

    def inverse_link(self, raw: np.ndarray) -> np.ndarray:
        return expit(2.0 * np.asarray(raw, dtype=np.float64))

    # exp(−(m + d)) / exp(−m) = exp(−d) exactly: no cancellation at margins in the thousands.
    def log_phi_shift(self, m: np.ndarray, d: np.ndarray) -> np.ndarray:
        return _negated_like(d, m)

    def log_neg_dphi_shift(self, m: np.ndarray, d: np.ndarray) -> np.ndarray:
        return _negated_like(d, m)

    def log_neg_dphi_at_value(self, log_v: float) -> float:
        return float(log_v)  # φ = e^{−m}: −φ'(φ⁻¹(v)) = v, so ψ = log-sum-exp

    curvature_reads_risk = False

    def log_curvature_constant(self, v: float) -> float:
        return 0.0  # C_exp ≡ 1

    def d2phi(self, m: np.ndarray) -> np.ndarray:
        """φ''(m) = exp(−m) (Telgarsky 2012, L485: ℓ = ℓ' = ℓ'' = exp)."""
        return np.exp(-np.asarray(m, dtype=np.float64))

    def hessian(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """``∂²l/∂f² = exp(−y f)``, floored at :data:`~oracleboost.losses.base.
        HESSIAN_FLOOR` (a margin above about 37)."""
        return np.maximum(self.d2phi(self._margin(y, raw)), HESSIAN_FLOOR)

    def conjugate(self, psi: np.ndarray, weight: np.ndarray | float = 1.0) -> np.ndarray:
        """``s ℓ*(ψ/s) = ψ ln(ψ/s) − ψ``: Boltzmann–Shannon entropy (Telgarsky 2012, Example 2).

        ``ℓ*(p) = p ln p − p`` on ``p ≥ 0`` with ``0 ln 0 = 0`` (by ``xlogy``), ``+inf``
        for ``p < 0``; see :meth:`MarginLoss.conjugate`.
        """
        p, w, live, out = _dual_domain(psi, weight, self.dual_bound)
        out[live] = xlogy(p, p / w) - p
        return out

    def conjugate_grad(self, psi: np.ndarray, weight: np.ndarray | float = 1.0) -> np.ndarray:
        """``ln(ψ / s)``: the entropy mirror map; ``−inf`` at ψ = 0."""
        p, w = _broadcast(psi, weight)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(p / w)

    def conjugate_bregman(
        self, psi: np.ndarray, margin: np.ndarray, weight: np.ndarray | float = 1.0
    ) -> np.ndarray:
        """Unnormalised KL ``ψ ln(ψ/q) − ψ + q`` with ``q = s e^{−m}`` (Remark 5).

        ``ln q = ln s − m`` is used directly, so the divergence stays exact where ``q``
        underflows (separable runs).
        """
        p, m, w = _broadcast(psi, margin, weight)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_q = np.log(w) + self.log_neg_dphi(m)
            q = np.exp(log_q)
            div = _kl_term(p, log_q) - p + q
        return np.where(_in_domain(p, w, self.dual_bound), div, np.inf)


class Logistic(SecondOrder, MarginLoss):
    """Logistic loss ``φ(m) = ln(1 + exp(−m))`` (Telgarsky's ℓ(z) = ln(1 + e^z)).

    Its hessian in the raw score is ``φ''(y f) = σ(f) σ(−f)`` (``y² = 1``), ``p(1 − p)``,
    as LightGBM's binary objective computes it; Newton's leaves are then LightGBM's
    ``−Σ g / Σ H`` (Friedman, Hastie & Tibshirani 2000, LogitBoost).

    ``φ'' ≤ 1/4``, so it is ¼-strongly smooth in f; ``P(y = +1) = σ(f)``.  ``φ'' ≤ φ``
    everywhere (``ln(1 + e^x) ≥ σ(x)``), so η = 1 is valid globally, tighter than the
    paper's ``2^m/(m ln 2)`` (Telgarsky 2012, Remark 46; the implementer's note §1.2).
    """

    init_from_class_masses = True
    sigmoid_scale = 1.0  # inverse_link(f) = σ(f)

    name = "logistic"
    # d/dm log σ(−m) = −σ(m) and d/dm log softplus(−m) = −σ(−m)/softplus(−m), both in
    # [−1, 0] (log(1 + t) ≥ t/(1 + t))
    log_weight_lipschitz = 1.0
    smoothness = 0.25
    eta = 1.0  # φ'' ≤ φ: see above
    #: −φ' = σ(−m) < 1: dom ℓ* = [0, 1] (Telgarsky 2012, Example 2).
    dual_bound = 1.0

    def log_phi(self, m: np.ndarray) -> np.ndarray:
        m = np.asarray(m, dtype=np.float64)
        out = np.empty_like(m)
        # log(log1p(u)) with u = e^{-m}: for large m, log1p(u) underflows with u, so use
        # log1p(u) = u (1 − u/2 + u²/3 − …), i.e. log φ = −m + log1p(−u/2 + u²/3).
        big = m > 30.0
        u = np.exp(-m[big])
        out[big] = -m[big] + np.log1p(-u / 2.0 + u * u / 3.0)
        out[~big] = np.log(softplus(-m[~big]))
        return out

    def phi(self, m: np.ndarray) -> np.ndarray:
        return softplus(-np.asarray(m, dtype=np.float64))

    def log_neg_dphi(self, m: np.ndarray) -> np.ndarray:
        # −φ'(m) = σ(−m) = 1 / (1 + e^{m})
        return -softplus(np.asarray(m, dtype=np.float64))

    def init_raw(self, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight)
        pos, neg = w[y > 0].sum(), w[y < 0].sum()
        return float(np.log(pos / neg))

    def inverse_link(self, raw: np.ndarray) -> np.ndarray:
        return expit(np.asarray(raw, dtype=np.float64))

    def log_neg_dphi_at_value(self, log_v: float) -> float:
        # φ(m) = v ⇔ e^{−m} = e^v − 1, and −φ'(m) = σ(−m) = 1 − e^{−v}; for tiny v,
        # log(1 − e^{−v}) = log v + log1p(−v/2 + …) (no cancellation)
        v = float(np.exp(log_v))
        return float(np.log(-np.expm1(-v))) if v > 1e-8 else float(log_v + np.log1p(-v / 2))

    def log_curvature_constant(self, v: float) -> float:
        # C_logistic(z) = (1 + e^z)² (Telgarsky 2013 note §1) and ℓ^{−1}(v) = ln(e^v − 1), so
        # ln C = 2 ln(1 + e^{ℓ^{−1}(v)}) = 2v.
        return 2.0 * float(v)

    def d2phi(self, m: np.ndarray) -> np.ndarray:
        """φ''(m) = σ(m) σ(−m) = e^{−|m|} / (1 + e^{−|m|})², without overflow."""
        e = np.exp(-np.abs(m))
        return e / (1.0 + e) ** 2

    def hessian(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """``∂²l/∂f² = σ(f) σ(−f)``, at most ¼, floored at
        :data:`~oracleboost.losses.base.HESSIAN_FLOOR` (a margin past ±37)."""
        return np.maximum(self.d2phi(self._margin(y, raw)), HESSIAN_FLOOR)

    def conjugate(self, psi: np.ndarray, weight: np.ndarray | float = 1.0) -> np.ndarray:
        """``s ℓ*(ψ/s) = ψ ln(ψ/s) + (s − ψ) ln((s − ψ)/s)``: Fermi–Dirac entropy.

        ``ℓ*(p) = p ln p + (1 − p) ln(1 − p)`` on ``[0, 1]`` with ``0 ln 0 = 0`` (by
        ``xlogy``), ``+inf`` outside (Telgarsky 2012, Example 2).  ``s − ψ`` is formed
        directly, so ψ close to ``s`` keeps its precision.
        """
        p, w, live, out = _dual_domain(psi, weight, self.dual_bound)
        q = w - p
        out[live] = xlogy(p, p / w) + xlogy(q, q / w)
        return out

    def conjugate_grad(self, psi: np.ndarray, weight: np.ndarray | float = 1.0) -> np.ndarray:
        """``ln(ψ / (s − ψ))``, the logit of ψ/s; ``∓inf`` at ψ = 0 and ψ = s."""
        p, w = _broadcast(psi, weight)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(p) - np.log(w - p)

    def conjugate_bregman(
        self, psi: np.ndarray, margin: np.ndarray, weight: np.ndarray | float = 1.0
    ) -> np.ndarray:
        """Weighted binary KL ``ψ ln(ψ/q) + (s − ψ) ln((s − ψ)/(s − q))``, ``q = s σ(−m)``.

        ``ln q = ln s − ln(1 + e^m)`` and ``ln(s − q) = ln s − ln(1 + e^{−m})`` are
        formed in log space, so neither side cancels at large ``|m|``.
        """
        p, m, w = _broadcast(psi, margin, weight)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_q = np.log(w) + self.log_neg_dphi(m)
            # s − q = s σ(m) with −φ'(m) = σ(−m)
            log_rest = np.log(w) - np.logaddexp(0.0, -m)
            r = w - p
            div = _kl_term(p, log_q) + xlogy(r, r) - r * np.where(r > 0, log_rest, 0.0)
        return np.where(_in_domain(p, w, self.dual_bound), div, np.inf)


# --------------------------------------------------------------------------------------
# Helpers of the dual-side methods
# --------------------------------------------------------------------------------------


def _negated_like(d, m) -> np.ndarray:
    """``−d`` broadcast to the shape of ``m`` (one pass when the shapes already agree)."""
    d = np.asarray(d, dtype=np.float64)
    if d.shape == np.shape(m):
        return np.negative(d)
    return -d + np.zeros_like(m)


def _broadcast(*arrays: ArrayLike) -> tuple[np.ndarray, ...]:
    """Float64 arrays broadcast to one shape (read-only views)."""
    return np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in arrays))


def _in_domain(p: np.ndarray, w: np.ndarray, bound: float) -> np.ndarray:
    """``0 ≤ ψ ≤ s · bound`` with ``ψ = 0`` where ``s = 0``: the domain of ``s ℓ*(·/s)``."""
    ok = (p >= 0) & ((w > 0) | (p == 0))
    if np.isfinite(bound):
        ok &= p <= w * bound
    return ok


def _dual_domain(psi, weight, bound: float):
    """Split ψ, s into the live entries (in the domain, ``s > 0``) and an output array.

    Returns ``(p, w, live, out)``: ``p`` and ``w`` are the live entries (1-D), ``live``
    the mask and ``out`` an array in the broadcast shape holding ``+inf`` outside the
    domain and 0 at ``s = ψ = 0``, whose ``out[live]`` the caller fills.
    """
    p, w = _broadcast(psi, weight)
    ok = _in_domain(p, w, bound)
    live = ok & (w > 0)
    out = np.where(ok, 0.0, np.inf)
    return p[live], w[live], live, out


def _kl_term(p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """``ψ ln ψ − ψ ln q`` with ``0 ln 0 = 0`` and ``0 · ln q = 0`` even where ``q = 0``."""
    return xlogy(p, p) - p * np.where(p > 0, log_q, 0.0)
