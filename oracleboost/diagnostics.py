"""Exact diagnostics of a boosting instance given by its margin matrix.

Every function takes the **margin matrix** ``M`` of shape (m examples, n hypotheses),
``M[i, j] = y_i h_j(x_i)`` (positive when hypothesis j is right on example i), the
library's convention.  Telgarsky (2012, 2013) works with ``A = -M`` (``A_ij = -y_i
h_j(x_i)``) and increasing losses ``g(z)`` of ``z = A λ = -M λ``; a margin loss φ of
:mod:`oracleboost.losses` is ``φ(m) = g(-m)``, so ``g'(z) = -φ'(-z)``.  Results are
reported in the margin convention, with the paper's quantities named where they differ.
The hypothesis class is closed under negation: weightings λ are signed, and the ℓ1
margin of λ is ``min_i (M λ)_i / ||λ||_1``.

Scaling of risks.  The library's risk is a weighted **mean**,
``L(λ) = Σ_i s_i φ((M λ)_i) / Σ_i s_i`` (uniform ``s`` by default); Telgarsky (2012)
works with the **sum** ``f(A λ) = Σ_i g((A λ)_i)``, i.e. ``m`` times the uniform mean.
Functions that return a risk return both (``risk`` is the mean, ``risk_sum`` the sum
``Σ_i s_i φ``).  Dual vectors ψ are in the sum scaling: they are gradients
``∇f(A λ)`` of the weighted sum ``f(z) = Σ_i s_i g(z_i)``, so ``ψ_i = s_i g'(z_i)``, and
the conjugate is ``f*(ψ) = Σ_i s_i g*(ψ_i / s_i)``; with uniform unit weights these are
the paper's ψ and f* exactly.

What is computed
----------------
* :func:`max_margin` and :func:`weak_learning_rate`: the two linear programs for the
  weak-learning rate ``γ = max_{||λ||_1 ≤ 1} min_i (M λ)_i = min_{w ∈ Δ_m} ||M^T w||_∞``
  (Telgarsky 2013 §1; Telgarsky 2012 Eq. 3).
* :func:`hard_core`: the hard core ``H(A)`` (Telgarsky 2012 Def. 10) by two LPs that
  certify each other (Gordan/Stiemke/Motzkin alternatives, Thm 11, 14, 17).
* :func:`optimal_risk`: the optimal risk ``f̄_A = inf_λ f(A λ)`` and the unique dual
  optimum ``ψ_A^f`` (Thm 4), by Newton's method on the hard-core rows only (Thm 17).
* :func:`conjugate` and :func:`bregman_gap`: ``f*`` and the identity
  ``f(A λ) − f̄_A = B_{f*}(ψ_A^f, ∇f(A λ))`` (Remark 5, Eq. 20).
* :func:`dual_feasible_certificate`: a dual-feasible point near a dual iterate and the
  duality-gap bound it certifies (Remark 6).

References
----------
Telgarsky, M. (2012). A primal-dual convergence analysis of boosting. JMLR 13, 561–606.
Telgarsky, M. (2013). Margins, shrinkage, and boosting. ICML.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.special import xlogy

from ._validation import check_finite_array, check_sample_weight
from .losses import Exponential, Logistic, MarginLoss, get_loss

__all__ = [
    "MaxMargin",
    "WeakLearningRate",
    "HardCore",
    "Optimum",
    "BregmanGap",
    "DualCertificate",
    "max_margin",
    "weak_learning_rate",
    "hard_core",
    "optimal_risk",
    "conjugate",
    "bregman_gap",
    "dual_feasible_certificate",
]

# HiGHS tolerances: the matrices here are small and well scaled, so ask for tight ones.
_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


# --------------------------------------------------------------------------------------
# Result types
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MaxMargin:
    """The maximum ℓ1 margin and a weighting attaining it.

    Attributes
    ----------
    gamma : float
        ``min_i (M w)_i / ||w||_1`` for the returned ``weights`` (0 if they are zero),
        i.e. the value the LP solution actually achieves.
    weights : ndarray of shape (n_hypotheses,)
        Signed λ with ``||λ||_1 = 1`` (or all zeros when γ = 0 and the LP returned 0).
    """

    gamma: float
    weights: np.ndarray


@dataclass(frozen=True)
class WeakLearningRate:
    """The weak-learning rate and the hardest distribution.

    Attributes
    ----------
    gamma : float
        ``||M^T w||_∞`` for the returned ``distribution``: the best edge any (possibly
        negated) hypothesis has against it.
    distribution : ndarray of shape (n_examples,)
        ``w ∈ Δ_m`` minimising ``||M^T w||_∞``.
    """

    gamma: float
    distribution: np.ndarray


@dataclass(frozen=True)
class HardCore:
    """The hard core H(A) of Telgarsky (2012, Def. 10) with its two certificates.

    Attributes
    ----------
    core : ndarray of bool, shape (n_examples,)
        ``core[i]`` iff some ψ ≥ 0 with ``M^T ψ = 0`` has ``ψ_i > 0``.
    witness : ndarray of shape (n_examples,)
        A ψ ≥ 0 with ``M^T ψ ≈ 0``, positive exactly on the core, normalised to sum 1
        (all zeros when the core is empty): a distribution under which every hypothesis
        has edge 0.
    certificate : ndarray of shape (n_hypotheses,)
        A λ with ``(M λ)_i ≥ 1`` off the core and ``(M λ)_i ≈ 0`` on it (Eq. 15 in
        margin form): scaling it up drives the loss of every non-core row to 0.
    dual_value : float
        Optimal value of the dual LP (= ``|H(A)|``).
    primal_value : float
        Optimal value of the primal LP (= ``m − |H(A)|``).
    """

    core: np.ndarray
    witness: np.ndarray
    certificate: np.ndarray
    dual_value: float
    primal_value: float

    @property
    def kind(self) -> str:
        """``"separable"`` (empty core: weakly learnable, γ > 0), ``"attainable"`` (every
        row in the core: the infimum is attained) or ``"mixed"``."""
        if not self.core.any():
            return "separable"
        if self.core.all():
            return "attainable"
        return "mixed"

    @property
    def size(self) -> int:
        """``|H(A)|``."""
        return int(self.core.sum())


@dataclass(frozen=True)
class Optimum:
    """The optimal risk and the dual optimum (Telgarsky 2012, Thm 4 and 17).

    Attributes
    ----------
    risk : float
        ``inf_λ L(λ)``, the weighted **mean** risk ``Σ_i s_i φ / Σ_i s_i``.
    risk_sum : float
        ``inf_λ Σ_i s_i φ((M λ)_i)``: the paper's ``f̄_A`` for unit weights.
    dual : ndarray of shape (n_examples,)
        ``ψ_A^f`` in the paper's (sum) scaling: ``ψ_i = s_i g'(z̄_i) = −s_i φ'(m̄_i)`` on
        the core, 0 off it.  ``M^T ψ ≈ 0``, and ``ψ / Σ ψ`` is the limit of the booster's
        normalised example weights.
    margins : ndarray of shape (n_examples,)
        The unique optimal margins ``m̄ = −z̄`` on the core; ``+inf`` off the core (the
        limit of every minimising sequence, Remark 18); NaN on zero-weight rows.
    core : ndarray of bool, shape (n_examples,)
        The hard core of the rows with positive weight.
    weights : ndarray of shape (n_hypotheses,)
        The minimum-norm λ̄ minimising the risk of the core rows (``M[core] λ̄`` are the
        core margins).  It does not minimise the full risk unless the core is everything.
    kkt_residual : float
        ``||M^T ψ||_∞``, which is 0 in exact arithmetic.
    """

    risk: float
    risk_sum: float
    dual: np.ndarray
    margins: np.ndarray
    core: np.ndarray
    weights: np.ndarray
    kkt_residual: float


@dataclass(frozen=True)
class BregmanGap:
    """Both sides of ``f(A λ) − f̄_A = B_{f*}(ψ_A^f, ∇f(A λ))`` (sum scaling).

    Attributes
    ----------
    risk_sum : float
        ``f(A λ) = Σ_i s_i φ((M λ)_i)``.
    gap : float
        ``f(A λ) − f̄_A`` by subtraction.
    bregman : float
        ``B_{f*}(ψ_A^f, ∇f(A λ))`` from the relative-entropy formula (unnormalised KL for
        exp, a sum of binary KLs for logistic).
    total_weight : float
        ``Σ_i s_i``; divide ``gap`` and ``bregman`` by it for the mean scaling.
    """

    risk_sum: float
    gap: float
    bregman: float
    total_weight: float


@dataclass(frozen=True)
class DualCertificate:
    """A dual-feasible ψ' ∈ Φ_A and the primal-gap bound it gives (Remark 6).

    Attributes
    ----------
    dual : ndarray of shape (n_examples,)
        ψ' ≥ 0 with ``M^T ψ' ≈ 0`` (and ψ' ≤ s for the logistic loss).
    gap_bound : float
        ``f(A λ) + f*(ψ') ≥ f(A λ) − f̄_A`` (sum scaling).
    total_weight : float
        ``Σ_i s_i``.
    """

    dual: np.ndarray
    gap_bound: float
    total_weight: float


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def _check_matrix(M) -> np.ndarray:
    M = check_finite_array(M, "M", ndim=(2,))
    if M.shape[0] == 0 or M.shape[1] == 0:
        raise ValueError(f"M must have at least one row and one column; got shape {M.shape}")
    return M


def _check_loss(loss) -> MarginLoss:
    loss = get_loss(loss, MarginLoss)
    if not isinstance(loss, (Exponential, Logistic)):
        raise ValueError(
            f"loss={loss!r}: only the exponential and logistic losses (Telgarsky's G) have "
            "the curvature and conjugate these diagnostics need"
        )
    return loss


def _linprog(c, **kw):
    res = linprog(c, method="highs", options=_HIGHS, **kw)
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on a diagnostics LP: {res.message}")
    return res


def _d2phi(loss: MarginLoss, m: np.ndarray) -> np.ndarray:
    """φ''(m) for the two supported losses."""
    if isinstance(loss, Logistic):
        # σ(m) σ(−m) = exp(−|m|) / (1 + exp(−|m|))²
        e = np.exp(-np.abs(m))
        return e / (1.0 + e) ** 2
    return np.exp(-m)


# --------------------------------------------------------------------------------------
# Weak-learning rate
# --------------------------------------------------------------------------------------


def max_margin(M) -> MaxMargin:
    """Maximum ℓ1 margin ``γ = max_{||λ||_1 ≤ 1} min_i (M λ)_i`` by LP (HiGHS).

    Telgarsky (2013, §1) writes the maximum over the sphere ``||λ||_1 = 1``; both agree
    whenever γ > 0 (the weakly learnable case), and the ball version is the one equal to
    :func:`weak_learning_rate` by LP duality in every case (it is ≥ 0, attained at λ = 0
    when no λ ≠ 0 has ``M λ ≥ 0``).  λ = p − q with ``p, q ≥ 0``, ``Σ p + Σ q = 1``.

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)
        Margin matrix ``M[i, j] = y_i h_j(x_i)``.

    Returns
    -------
    MaxMargin
    """
    M = _check_matrix(M)
    m, n = M.shape
    # variables [p (n), q (n), t]; maximise t s.t. t ≤ (M (p − q))_i
    c = np.zeros(2 * n + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-M, M, np.ones((m, 1))])
    A_eq = np.concatenate([np.ones(2 * n), [0.0]])[None, :]
    bounds = [(0, None)] * (2 * n) + [(None, None)]
    res = _linprog(c, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=[1.0], bounds=bounds)
    lam = res.x[:n] - res.x[n : 2 * n]
    norm = np.abs(lam).sum()
    if norm <= 1e-12:
        return MaxMargin(gamma=0.0, weights=np.zeros(n))
    # p and q may overlap (p_j q_j > 0); rescaling to the sphere can only raise a margin ≥ 0.
    lam = lam / norm
    return MaxMargin(gamma=float(np.min(M @ lam)), weights=lam)


def weak_learning_rate(M) -> WeakLearningRate:
    """Weak-learning rate ``γ = min_{w ∈ Δ_m} ||M^T w||_∞`` by LP (Telgarsky 2012, Eq. 3).

    The dual of :func:`max_margin`.  γ is an edge (a correlation, ``1 − 2 ε_err`` for ±1
    hypotheses), not the γ of ``ε = ½ − γ``.  γ > 0 iff the hard core is empty (Prop. 7).

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)

    Returns
    -------
    WeakLearningRate
    """
    M = _check_matrix(M)
    m, n = M.shape
    # variables [w (m), s]; minimise s s.t. ±(M^T w)_j ≤ s, w ∈ Δ_m
    c = np.zeros(m + 1)
    c[-1] = 1.0
    A_ub = np.vstack([np.hstack([M.T, -np.ones((n, 1))]), np.hstack([-M.T, -np.ones((n, 1))])])
    A_eq = np.concatenate([np.ones(m), [0.0]])[None, :]
    bounds = [(0, None)] * (m + 1)
    res = _linprog(c, A_ub=A_ub, b_ub=np.zeros(2 * n), A_eq=A_eq, b_eq=[1.0], bounds=bounds)
    w = np.clip(res.x[:m], 0.0, None)
    w = w / w.sum()
    return WeakLearningRate(gamma=float(np.max(np.abs(M.T @ w))), distribution=w)


# --------------------------------------------------------------------------------------
# Hard core
# --------------------------------------------------------------------------------------


def hard_core(M) -> HardCore:
    """The hard core ``H(A)`` (Telgarsky 2012, Def. 10) by two certifying LPs.

    * Dual LP (support of ``Φ_A = Ker(M^T) ∩ R^m_+``):
      ``max Σ_i t_i`` s.t. ``M^T ψ = 0``, ``ψ ≥ t``, ``0 ≤ t ≤ 1``, ``ψ ≥ 0``.
      Φ_A is a cone, so at every optimum ``t`` is the indicator of ``H(A)``.
    * Primal LP (the certificate of Eq. 15, margin form):
      ``max Σ_i s_i`` s.t. ``s ≤ M λ``, ``0 ≤ s ≤ 1``, λ free.
      At every optimum ``s`` is the indicator of the complement of ``H(A)`` and λ has
      positive margins off the core and zero margins on it.

    The two values sum to ``m`` and the two 0/1 vectors are complementary (thresholded
    at ½); a disagreement (an ill-conditioned ``M``) raises ``RuntimeError``.
    A zero row is always in the core.

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)

    Returns
    -------
    HardCore
    """
    M = _check_matrix(M)
    m, n = M.shape
    eye = np.eye(m)

    # dual LP: variables [ψ (m), t (m)]
    c = np.concatenate([np.zeros(m), -np.ones(m)])
    A_eq = np.hstack([M.T, np.zeros((n, m))])
    A_ub = np.hstack([-eye, eye])  # t − ψ ≤ 0
    bounds = [(0, None)] * m + [(0, 1)] * m
    dual = _linprog(c, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=np.zeros(n), bounds=bounds)
    t = dual.x[m:]
    core = t > 0.5

    # primal LP: variables [λ (n), s (m)]
    c = np.concatenate([np.zeros(n), -np.ones(m)])
    A_ub = np.hstack([-M, eye])  # s − M λ ≤ 0
    bounds = [(None, None)] * n + [(0, 1)] * m
    primal = _linprog(c, A_ub=A_ub, b_ub=np.zeros(m), bounds=bounds)
    s = primal.x[n:]

    dual_value, primal_value = -float(dual.fun), -float(primal.fun)
    if not np.array_equal(core, s <= 0.5) or abs(dual_value + primal_value - m) > 1e-6:
        raise RuntimeError(
            "hard_core: the dual and primal LPs disagree (dual value "
            f"{dual_value:.9g}, primal value {primal_value:.9g}, m = {m}); M is too "
            "ill-conditioned for the LP tolerances"
        )
    witness = np.where(core, np.clip(dual.x[:m], 0.0, None), 0.0)
    if core.any():
        witness = witness / witness.sum()
    return HardCore(
        core=core,
        witness=witness,
        certificate=primal.x[:n].copy(),
        dual_value=dual_value,
        primal_value=primal_value,
    )


# --------------------------------------------------------------------------------------
# Optimal risk and dual optimum
# --------------------------------------------------------------------------------------


def _newton_core(U: np.ndarray, s: np.ndarray, loss: MarginLoss) -> np.ndarray:
    """Minimise ``F(μ) = Σ_i s_i φ((U μ)_i)`` for ``U`` of full column rank.

    F is strictly convex; it is coercive because the rows are the hard core (Thm 14), so
    damped Newton with Armijo backtracking converges, quadratically at the end.
    """
    r = U.shape[1]
    mu = np.zeros(r)
    if r == 0:
        return mu

    def value(mu):
        with np.errstate(over="ignore"):
            return float(s @ loss.phi(U @ mu))

    def newton_step(mu):
        z = U @ mu
        g = U.T @ (s * loss.dphi(z))
        H = U.T @ ((s * _d2phi(loss, z))[:, None] * U)
        d = -np.linalg.solve(H, g)
        dec = -float(g @ d)  # Newton decrement squared
        if not np.isfinite(dec):
            raise RuntimeError("optimal_risk: Newton's method produced a non-finite step")
        return d, dec

    F = value(mu)
    for _ in range(200):
        d, dec = newton_step(mu)
        if dec <= 1e-12 * max(1.0, F):
            break
        step = 1.0
        while True:
            F_new = value(mu + step * d)
            if np.isfinite(F_new) and F_new <= F - 0.25 * step * dec:
                break
            step *= 0.5
            if step < 1e-20:
                raise RuntimeError("optimal_risk: Newton's line search failed")
        mu, F = mu + step * d, F_new
    else:
        raise RuntimeError("optimal_risk: Newton's method did not converge in 200 steps")
    # Quadratic region (decrement ≤ 1e-6 relative): full steps, where Armijo tests would
    # only compare rounding errors of F.  Two or three steps reach machine precision.
    for _ in range(6):
        mu = mu + d
        d, dec = newton_step(mu)
        if dec <= 1e-30 * max(1.0, F):
            break
    return mu


def optimal_risk(M, loss, sample_weight=None) -> Optimum:
    """Optimal risk and dual optimum ``ψ_A^f`` (Telgarsky 2012, Thm 4 and Thm 17).

    By Thm 17, ``f̄_A = inf_λ f(A_+ λ)`` where ``A_+`` holds the hard-core rows, the
    infimum over the core rows is attained, the optimal core margins are unique, and the
    rows off the core contribute 0 (their margins go to +∞ along ``λ̄ + c λ_cert``,
    c → ∞).  The core problem is solved by damped Newton in the coordinates
    ``μ = Σ_r V_r^T λ`` of the row space of ``M[core]`` (thin SVD), where it is strictly
    convex: ``M[core]`` may have a nontrivial kernel, so λ̄ itself is not unique.

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)
    loss : {"exponential", "logistic"} or Exponential or Logistic
        ``φ(m) = exp(−m)`` (paper's ``g = exp``) or ``ln(1 + exp(−m))``.
    sample_weight : array-like of shape (n_examples,), default=None
        Non-negative weights ``s``; None means all ones (the paper).  Zero-weight rows
        are dropped from the problem (core False, dual 0, margin NaN).

    Returns
    -------
    Optimum
        ``risk`` (weighted mean) and ``risk_sum`` (weighted sum, the paper's f̄_A for
        unit weights); ``dual`` in the sum scaling, ``ψ_i = s_i g'(z̄_i)``.
    """
    M = _check_matrix(M)
    loss = _check_loss(loss)
    m, n = M.shape
    s = check_sample_weight(sample_weight, m)
    active = s > 0

    core = np.zeros(m, dtype=bool)
    core[active] = hard_core(M[active]).core
    margins = np.full(m, np.inf)
    margins[~active] = np.nan
    dual = np.zeros(m)
    lam = np.zeros(n)
    risk_sum = 0.0
    if core.any():
        Mc, sc = M[core], s[core]
        U, sv, Vt = np.linalg.svd(Mc, full_matrices=False)
        r = int(np.sum(sv > max(Mc.shape) * np.finfo(float).eps * (sv[0] if sv.size else 0)))
        mu = _newton_core(U[:, :r], sc, loss)
        lam = Vt[:r].T @ (mu / sv[:r])
        zc = Mc @ lam
        margins[core] = zc
        dual[core] = sc * np.exp(loss.log_neg_dphi(zc))
        risk_sum = float(sc @ loss.phi(zc))
    return Optimum(
        risk=risk_sum / float(s.sum()),
        risk_sum=risk_sum,
        dual=dual,
        margins=margins,
        core=core,
        weights=lam,
        kkt_residual=float(np.max(np.abs(M.T @ dual))),
    )


# --------------------------------------------------------------------------------------
# Conjugate, Bregman identity, dual certificates
# --------------------------------------------------------------------------------------


def conjugate(loss, psi, sample_weight=None) -> float:
    """``f*(ψ) = Σ_i s_i g*(ψ_i / s_i)``, the conjugate of ``f(z) = Σ_i s_i g(z_i)``.

    With ``g(z) = φ(−z)`` (Telgarsky 2012, Example 2):

    * exponential: ``g*(p) = p ln p − p`` on ``p ≥ 0`` (Boltzmann–Shannon entropy);
    * logistic: ``g*(p) = p ln p + (1 − p) ln(1 − p)`` on ``[0, 1]`` (Fermi–Dirac entropy);

    with ``0 ln 0 = 0`` and ``+inf`` outside the domain.  A zero-weight row contributes 0
    if ``ψ_i = 0`` and ``+inf`` otherwise.  For unit weights this is the paper's f*.

    Parameters
    ----------
    loss : {"exponential", "logistic"} or Exponential or Logistic
    psi : array-like of shape (n_examples,)
    sample_weight : array-like of shape (n_examples,), default=None

    Returns
    -------
    float
    """
    loss = _check_loss(loss)
    psi = check_finite_array(psi, "psi")
    s = check_sample_weight(sample_weight, psi.shape[0])
    if np.any(psi < 0) or np.any((s == 0) & (psi != 0)):
        return float("inf")
    pos = s > 0
    p, w = psi[pos], s[pos]
    if isinstance(loss, Logistic):
        if np.any(p > w):
            return float("inf")
        q = w - p
        # s g*(p/s) = p ln(p/s) + (s − p) ln((s − p)/s)
        return float(np.sum(xlogy(p, p) + xlogy(q, q) - xlogy(w, w)))
    # s g*(p/s) = p ln(p/s) − p
    return float(np.sum(xlogy(p, p) - xlogy(p, w) - p))


def _risk_sum(M, lam, loss, s) -> float:
    with np.errstate(over="ignore"):
        return float(s @ loss.phi(M @ lam))


def bregman_gap(M, weights, loss, optimum: Optimum | None = None, sample_weight=None):
    """Primal gap and the Bregman divergence it equals (Telgarsky 2012, Remark 5, Eq. 20).

    For every λ, with ``φ = ∇f(A λ)`` (``φ_i = s_i g'(z_i)``, ``z = −M λ``) and the dual
    optimum ψ = ``ψ_A^f``, Fenchel–Young and ``<A λ, ψ> = 0`` give

        ``f(A λ) − f̄_A = B_{f*}(ψ, φ)``,

    where ``B`` is computed here from the relative-entropy formulas, not from ``f*``:

    * exponential: ``Σ_i ψ_i ln(ψ_i/φ_i) − ψ_i + φ_i`` (unnormalised KL);
    * logistic: ``Σ_i ψ_i ln(ψ_i/φ_i) + (s_i − ψ_i) ln((s_i − ψ_i)/(s_i − φ_i))``.

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)
    weights : array-like of shape (n_hypotheses,)
        The weighting λ (signed).
    loss : {"exponential", "logistic"} or Exponential or Logistic
    optimum : Optimum, default=None
        From :func:`optimal_risk` with the same ``M``, loss and weights; computed if None.
    sample_weight : array-like of shape (n_examples,), default=None

    Returns
    -------
    BregmanGap
        In the sum scaling; divide by ``total_weight`` for the mean.
    """
    M = _check_matrix(M)
    loss = _check_loss(loss)
    lam = check_finite_array(weights, "weights")
    if lam.shape[0] != M.shape[1]:
        raise ValueError(f"weights has {lam.shape[0]} entries but M has {M.shape[1]} columns")
    s = check_sample_weight(sample_weight, M.shape[0])
    if optimum is None:
        optimum = optimal_risk(M, loss, sample_weight)
    psi = optimum.dual
    pos = s > 0
    margin = (M @ lam)[pos]
    p, w = psi[pos], s[pos]
    # ln φ_i = ln s_i + ln(−φ'(m_i)), kept in log space so that tiny φ_i stay exact
    log_phi = np.log(w) + loss.log_neg_dphi(margin)
    with np.errstate(over="ignore"):
        phi = np.exp(log_phi)
    kl = xlogy(p, p) - p * np.where(p > 0, log_phi, 0.0)
    if isinstance(loss, Logistic):
        # s − φ = s σ(m) with −φ'(m) = σ(−m)
        log_rest = np.log(w) - np.logaddexp(0.0, -margin)
        q = w - p
        div = kl + xlogy(q, q) - q * np.where(q > 0, log_rest, 0.0)
    else:
        div = kl - p + phi
    risk_sum = _risk_sum(M, lam, loss, s)
    return BregmanGap(
        risk_sum=risk_sum,
        gap=risk_sum - optimum.risk_sum,
        bregman=float(np.sum(div)),
        total_weight=float(s.sum()),
    )


def dual_feasible_certificate(
    M, weights, loss, sample_weight=None, core: HardCore | None = None
) -> DualCertificate:
    """A dual-feasible point near the dual iterate, and the gap bound it certifies.

    Remark 6 of Telgarsky (2012): any ψ' ∈ Φ_A gives ``f(A λ) − f̄_A ≤ f(A λ) + f*(ψ')``.
    The dual iterate ``φ = ∇f(A λ)`` is not feasible; its ℓ2 projection onto the
    subspace ``Ker(M^T)`` may have negative entries (then ``f* = +∞``), so this projects
    onto the subspace restricted to the hard core (every ψ ∈ Φ_A vanishes off it) and
    then moves towards the positive :class:`HardCore` witness just far enough to be
    non-negative (and, for the logistic loss, scales into ``ψ ≤ s``).  The result lies
    in Φ_A exactly up to rounding, but it is not the ℓ2 projection onto Φ_A; the bound is
    valid, not tight, and tends to 0 as λ approaches optimality when the core is
    everything (attainable case).

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)
    weights : array-like of shape (n_hypotheses,)
    loss : {"exponential", "logistic"} or Exponential or Logistic
    sample_weight : array-like of shape (n_examples,), default=None
    core : HardCore, default=None
        ``hard_core(M[sample_weight > 0])`` expanded to all rows; computed if None.

    Returns
    -------
    DualCertificate
    """
    M = _check_matrix(M)
    loss = _check_loss(loss)
    lam = check_finite_array(weights, "weights")
    if lam.shape[0] != M.shape[1]:
        raise ValueError(f"weights has {lam.shape[0]} entries but M has {M.shape[1]} columns")
    m = M.shape[0]
    s = check_sample_weight(sample_weight, m)
    active = s > 0
    if core is None:
        hc = hard_core(M[active])
        mask = np.zeros(m, dtype=bool)
        mask[active] = hc.core
        witness = np.zeros(m)
        witness[active] = hc.witness
    else:
        mask, witness = core.core, core.witness
    psi = np.zeros(m)
    if mask.any():
        phi = s[mask] * np.exp(loss.log_neg_dphi(M[mask] @ lam))
        # ℓ2 projection onto Ker(M_core^T): subtract the component in Im(M_core)
        U, sv, _ = np.linalg.svd(M[mask], full_matrices=False)
        r = int(np.sum(sv > max(M[mask].shape) * np.finfo(float).eps * sv[0])) if sv.size else 0
        proj = phi - U[:, :r] @ (U[:, :r].T @ phi)
        wc = witness[mask]
        neg = proj < 0
        c = float(np.max(-proj[neg] / wc[neg])) if neg.any() else 0.0
        cand = proj + c * wc
        if isinstance(loss, Logistic):
            ratio = float(np.max(cand / s[mask]))
            if ratio > 1.0:
                cand = cand / ratio
        psi[mask] = np.clip(cand, 0.0, None)
    risk_sum = _risk_sum(M, lam, loss, s)
    return DualCertificate(
        dual=psi,
        gap_bound=risk_sum + conjugate(loss, psi, s),
        total_weight=float(s.sum()),
    )
