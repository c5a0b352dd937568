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
* :func:`hard_core`: the hard core ``H(A)`` (Telgarsky 2012 Def. 10) by an LP whose
  primal and dual solutions certify each other (Gordan/Stiemke/Motzkin alternatives,
  Thm 11, 14, 17).
* :func:`optimal_risk`: the optimal risk ``f̄_A = inf_λ f(A λ)`` and the unique dual
  optimum ``ψ_A^f`` (Thm 4), by Newton's method on the hard-core rows only (Thm 17).
* :func:`conjugate` and :func:`bregman_gap`: ``f*`` and the identity
  ``f(A λ) − f̄_A = B_{f*}(ψ_A^f, ∇f(A λ))`` (Remark 5, Eq. 20).
* :func:`dual_feasible_certificate`: a dual-feasible point near a dual iterate and the
  duality-gap bound it certifies (Remark 6).
* :func:`optimal_risk_cost`: the memory :func:`optimal_risk` needs, from the shape alone.
* :func:`soft_margin` and :func:`max_soft_margin`: the soft margin at capping ν of given
  normalised margins, and its maximum over the class, LPBoost's LP (Demiriz, Bennett &
  Shawe-Taylor 2002); ν = 1 is :func:`max_margin`.

The loss-specific pieces (φ'', the conjugate ℓ*, its Bregman divergence) are methods of
the margin losses (:meth:`~oracleboost.losses.MarginLoss.d2phi`,
:meth:`~oracleboost.losses.MarginLoss.conjugate`,
:meth:`~oracleboost.losses.MarginLoss.conjugate_bregman`); every loss with
:attr:`~oracleboost.losses.MarginLoss.has_conjugate` is accepted here.

Column scaling.  The hard core and the optimal risk over ``span(M)`` do not change when
a column is multiplied by a positive constant (λ absorbs it; for the hard core also by a
negative one).  :func:`hard_core` and :func:`optimal_risk` therefore divide each nonzero
column by the smallest power of two ≥ its largest |entry| (so that this entry lies in
``(½, 1]``; a power of two makes the scaling exact and leaves already normalised columns
bit for bit unchanged) and drop all-zero columns before the LPs and Newton's method;
returned weights are mapped back.  Columns scaled by 1e20 or 1e300 (features of a linear
class in odd units) give the same answers as unscaled ones.  :func:`max_margin` and
:func:`weak_learning_rate` are not scale invariant (an ℓ1 margin depends on the scale)
and use ``M`` as given.

Memory and failures.  Every LP has O(m n) nonzeros for ``m`` rows and ``n`` columns (the
hard-core LP is built and passed to HiGHS in sparse form); nothing allocates an m × m
array (see :func:`optimal_risk_cost`).  A failed LP, a disagreement between the two
certificates of the hard core, or a failed Newton solve raises :class:`DiagnosticsError`,
a ``RuntimeError`` that callers (boosters tracking a duality gap) can catch on its own.

References
----------
Telgarsky, M. (2012). A primal-dual convergence analysis of boosting. JMLR 13, 561–606.
Telgarsky, M. (2013). Margins, shrinkage, and boosting. ICML.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from oracleboost._typing import ArrayLike
from oracleboost._validation import check_finite_array, check_sample_weight
from oracleboost.losses import MarginLoss, get_loss

__all__ = [
    "DiagnosticsError",
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
    "optimal_risk_cost",
    "L2MaxMargin",
    "max_margin_l2",
    "SoftMargin",
    "soft_margin",
    "max_soft_margin",
]

# HiGHS tolerances: the matrices here are well scaled (columns normalised), so ask for
# tight ones.
_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


class DiagnosticsError(RuntimeError):
    """A diagnostic could not be computed: an LP failed, the two hard-core certificates
    disagree, or Newton's method for the optimal risk broke down.

    The message names the computation that failed.  It subclasses ``RuntimeError``, so
    code catching ``RuntimeError`` keeps working; catch ``DiagnosticsError`` to skip a
    diagnostic without hiding other errors.
    """


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
        Optimal value of the support LP (= ``|H(A)|``).
    primal_value : float
        ``Σ_i min(1, max(0, (M λ)_i))`` at the certificate: the value of the primal LP
        ``max Σ s_i`` s.t. ``s ≤ M λ``, ``0 ≤ s ≤ 1`` at ``λ = certificate``, which is
        its optimum ``m − |H(A)|`` up to the LP tolerances.
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
        A λ̄ minimising the risk of the core rows (``M[core] λ̄`` are the core margins):
        the minimum-norm one in the column-normalised coordinates (see the module
        docstring), mapped back; 0 on all-zero columns.  It does not minimise the full
        risk unless the core is everything.
    kkt_residual : float
        ``||M̃^T ψ||_∞`` for the column-normalised ``M̃`` (every column's max |entry| in
        ``(½, 1]``), which is 0 in exact arithmetic; it equals ``||M^T ψ||_∞`` when ``M``
        is already normalised, and does not depend on the columns' scales.
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
        ``B_{f*}(ψ_A^f, ∇f(A λ))`` summed from the loss's per-example
        :meth:`~oracleboost.losses.MarginLoss.conjugate_bregman` (unnormalised KL for
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
        ψ' ≥ 0 with ``M^T ψ' ≈ 0`` and ``ψ' ≤ s · loss.dual_bound`` (ψ' ≤ s for the
        logistic loss).
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


def _check_matrix(M: ArrayLike) -> np.ndarray:
    M = check_finite_array(M, "M", ndim=(2,))
    if M.shape[0] == 0 or M.shape[1] == 0:
        raise ValueError(f"M must have at least one row and one column; got shape {M.shape}")
    return M


def _check_loss(loss) -> MarginLoss:
    loss = get_loss(loss, MarginLoss)
    if not loss.has_conjugate:
        raise ValueError(
            f"loss={loss!r} does not implement {' and '.join(MarginLoss.DUAL_METHODS)}: "
            "these diagnostics need the curvature φ'' and the conjugate ℓ* of the loss "
            "(Exponential and Logistic implement them)"
        )
    return loss


def _linprog(c, what: str, **kw):
    """HiGHS; a failure raises :class:`DiagnosticsError` naming the LP ``what``."""
    res = linprog(c, method="highs", options=_HIGHS, **kw)
    if res.status != 0:
        raise DiagnosticsError(f"HiGHS failed on the {what} (status {res.status}): {res.message}")
    return res


def _normalise_columns(M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Drop the all-zero columns of ``M`` and scale each other one by a power of two.

    Returns ``(M̃, nonzero, shift)`` with ``M̃ = M[:, nonzero] · 2^{−shift}`` (exact) and
    every column's max |entry| in ``(½, 1]``; ``M`` itself when nothing changes.  The
    hard core and the optimal risk over span(M) are invariant under this rescaling.
    """
    colmax = np.max(np.abs(M), axis=0)
    nonzero = colmax > 0
    mant, expo = np.frexp(colmax[nonzero])
    shift = expo - (mant == 0.5)  # colmax = mant 2^expo, mant ∈ [½, 1)
    if nonzero.all() and not shift.any():
        return M, nonzero, shift
    return np.ldexp(M[:, nonzero], -shift), nonzero, shift


def _unscale(lam: np.ndarray, nonzero: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Weights for ``M`` from weights ``lam`` for ``M̃`` (so that ``M λ = M̃ lam``)."""
    out = np.zeros(nonzero.shape[0])
    out[nonzero] = np.ldexp(lam, -shift)
    return out


# --------------------------------------------------------------------------------------
# Weak-learning rate
# --------------------------------------------------------------------------------------


def max_margin(M: ArrayLike) -> MaxMargin:
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
    res = _linprog(
        c, "max_margin LP", A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=[1.0], bounds=bounds
    )
    lam = res.x[:n] - res.x[n : 2 * n]
    norm = np.abs(lam).sum()
    if norm <= 1e-12:
        return MaxMargin(gamma=0.0, weights=np.zeros(n))
    # p and q may overlap (p_j q_j > 0); rescaling to the sphere can only raise a margin ≥ 0.
    lam = lam / norm
    return MaxMargin(gamma=float(np.min(M @ lam)), weights=lam)


def weak_learning_rate(M: ArrayLike) -> WeakLearningRate:
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
    res = _linprog(
        c, "weak_learning_rate LP", A_ub=A_ub, b_ub=np.zeros(2 * n), A_eq=A_eq, b_eq=[1.0],
        bounds=bounds,
    )
    w = np.clip(res.x[:m], 0.0, None)
    w = w / w.sum()
    return WeakLearningRate(gamma=float(np.max(np.abs(M.T @ w))), distribution=w)


# --------------------------------------------------------------------------------------
# Hard core
# --------------------------------------------------------------------------------------


def hard_core(M: ArrayLike) -> HardCore:
    """The hard core ``H(A)`` (Telgarsky 2012, Def. 10) by one LP and its LP dual.

    * Support LP (support of ``Φ_A = Ker(M^T) ∩ R^m_+``): ``max Σ_i t_i`` s.t.
      ``M^T ψ = 0``, ``ψ ≥ t``, ``0 ≤ t ≤ 1``.  Φ_A is a cone, so at every optimum ``t``
      is the indicator of ``H(A)`` and ψ is a witness positive exactly on it.  It is
      solved as ``M^T (t + u) = 0`` with ``u = ψ − t ≥ 0``: ``n`` equality rows and no
      row per example, so HiGHS' simplex works with an n × n basis.
    * Its LP dual, ``min_λ Σ_i max(0, 1 − (M λ)_i)`` s.t. ``M λ ≥ 0``, is the primal LP
      of Eq. 15 in margin form (``max Σ_i s_i`` s.t. ``s ≤ M λ``, ``0 ≤ s ≤ 1``, value
      ``m − |H(A)|``): every optimal λ has ``(M λ)_i ≥ 1`` off the core and
      ``(M λ)_i = 0`` on it (``0 = ψ^T M λ`` for the witness).  HiGHS returns it as the
      multipliers of the equality rows, so one solve gives both certificates.
    * Shortcut for wide matrices (``m ≤ n``): if the least-squares solution of
      ``M λ = 1`` has every margin positive, the core is empty (Gordan's alternative,
      Thm 11) and no LP is solved.

    The two certificates are checked numerically: the 0/1 vectors ``t`` and
    ``min(1, max(0, M λ))`` must be complementary (thresholded at ½) and the two values
    must sum to ``m``; a disagreement (an ill-conditioned ``M``) raises
    :class:`DiagnosticsError`, as does a failed LP.  A zero row is always in the core.

    Columns are normalised first (module docstring), so the result does not depend on
    their positive scales.  Memory is O(m n): the LP is sparse, with ``2 m n``
    nonzeros.

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)

    Returns
    -------
    HardCore
    """
    M = _check_matrix(M)
    Mt, nonzero, shift = _normalise_columns(M)
    core, witness, lam, dual_value, primal_value = _hard_core(Mt)
    return HardCore(
        core=core,
        witness=witness,
        certificate=_unscale(lam, nonzero, shift),
        dual_value=dual_value,
        primal_value=primal_value,
    )


def _least_squares_separator(M: np.ndarray) -> np.ndarray | None:
    """λ with ``M λ ≥ 1`` from least squares, or None (for ``m ≤ n``, where it often works).

    Accepted only when the smallest margin is positive by far more than the rounding
    error of ``M λ`` (``|M| ≤ 1``), so a nonempty core can never pass.
    """
    try:
        lam = np.linalg.lstsq(M, np.ones(M.shape[0]), rcond=None)[0]
    except np.linalg.LinAlgError:
        return None
    low = float(np.min(M @ lam))
    if not low > 0 or np.abs(lam).sum() / low > 1e8:
        return None
    return lam / low


def _hard_core(M: np.ndarray):
    """:func:`hard_core` on a column-normalised ``M`` (zero columns dropped; may have none).

    Returns ``(core, witness, certificate, dual_value, primal_value)``.
    """
    m, n = M.shape
    if n == 0:  # M = 0: every row is in the core, ψ = 1 is a witness, λ is empty
        return np.ones(m, dtype=bool), np.full(m, 1.0 / m), np.zeros(0), float(m), 0.0

    lam = _least_squares_separator(M) if m <= n else None
    if lam is not None:  # weakly learnable: H(A) = ∅, Φ_A = {0} (Thm 11)
        core, witness, dual_value = np.zeros(m, dtype=bool), np.zeros(m), 0.0
    else:
        # support LP: variables [t (m), u (m)], maximise Σ t s.t. M^T (t + u) = 0
        MT = sparse.csr_matrix(M.T)
        bounds = np.zeros((2 * m, 2))
        bounds[:m, 1] = 1.0
        bounds[m:, 1] = np.inf
        res = _linprog(
            np.concatenate([-np.ones(m), np.zeros(m)]), "hard_core support LP (Φ_A)",
            A_eq=sparse.hstack([MT, MT], format="csr"), b_eq=np.zeros(n), bounds=bounds,
        )
        t = res.x[:m]
        core = t > 0.5
        dual_value = -float(res.fun)
        witness = np.where(core, np.clip(t + res.x[m:], 0.0, None), 0.0)
        if core.any():
            witness = witness / witness.sum()
        # The LP dual's λ: SciPy's marginals y = ∂(min c^T x)/∂b_eq; reduced costs
        # c − A^T y ≥ 0 at u = 0 give M(−y) ≥ 0, and at t = 0 give (M(−y))_i ≥ 1.
        lam = -np.asarray(res.eqlin.marginals, dtype=np.float64)
    s = np.clip(M @ lam, 0.0, 1.0)
    primal_value = float(s.sum())
    if not np.array_equal(core, s <= 0.5) or abs(dual_value + primal_value - m) > 1e-6 + 1e-8 * m:
        raise DiagnosticsError(
            "hard_core: the support LP and its dual certificate disagree (dual value "
            f"{dual_value:.9g}, primal value {primal_value:.9g}, m = {m}); M is too "
            "ill-conditioned for the LP tolerances"
        )
    return core, witness, lam, dual_value, primal_value


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
        H = U.T @ ((s * loss.d2phi(z))[:, None] * U)
        try:
            d = -np.linalg.solve(H, g)
        except np.linalg.LinAlgError as exc:
            raise DiagnosticsError(f"optimal_risk: singular Newton system ({exc})") from exc
        dec = -float(g @ d)  # Newton decrement squared
        if not np.isfinite(dec):
            raise DiagnosticsError("optimal_risk: Newton's method produced a non-finite step")
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
                raise DiagnosticsError("optimal_risk: Newton's line search failed")
        mu, F = mu + step * d, F_new
    else:
        raise DiagnosticsError("optimal_risk: Newton's method did not converge in 200 steps")
    # Quadratic region (decrement ≤ 1e-6 relative): full steps, where Armijo tests would
    # only compare rounding errors of F.  Two or three steps reach machine precision.
    for _ in range(6):
        mu = mu + d
        d, dec = newton_step(mu)
        if dec <= 1e-30 * max(1.0, F):
            break
    return mu


def optimal_risk(
    M: ArrayLike, loss: str | MarginLoss, sample_weight: ArrayLike | None = None
) -> Optimum:
    """Optimal risk and dual optimum ``ψ_A^f`` (Telgarsky 2012, Thm 4 and Thm 17).

    By Thm 17, ``f̄_A = inf_λ f(A_+ λ)`` where ``A_+`` holds the hard-core rows, the
    infimum over the core rows is attained, the optimal core margins are unique, and the
    rows off the core contribute 0 (their margins go to +∞ along ``λ̄ + c λ_cert``,
    c → ∞).  The core problem is solved by damped Newton in the coordinates
    ``μ = Σ_r V_r^T λ`` of the row space of ``M[core]`` (thin SVD), where it is strictly
    convex: ``M[core]`` may have a nontrivial kernel, so λ̄ itself is not unique.

    Both the hard core and Newton's method work on the column-normalised matrix (module
    docstring): the risk, the dual and the margins do not depend on the columns'
    positive scales.  Memory is O(m n) (:func:`optimal_risk_cost` estimates it); a
    failure raises :class:`DiagnosticsError`.

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)
    loss : {"exponential", "logistic"} or MarginLoss
        Any margin loss with :attr:`~oracleboost.losses.MarginLoss.has_conjugate` (it
        implements ``d2phi`` and ``conjugate``): ``φ(m) = exp(−m)`` (paper's
        ``g = exp``), ``ln(1 + exp(−m))``, or a user-defined one.
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
    m = M.shape[0]
    s = check_sample_weight(sample_weight, m)
    active = s > 0
    Mt, nonzero, shift = _normalise_columns(M)

    core = np.zeros(m, dtype=bool)
    core[active] = _hard_core(Mt[active])[0]
    margins = np.full(m, np.inf)
    margins[~active] = np.nan
    dual = np.zeros(m)
    lam = np.zeros(Mt.shape[1])
    risk_sum = 0.0
    if core.any():
        Mc, sc = Mt[core], s[core]
        try:
            U, sv, Vt = np.linalg.svd(Mc, full_matrices=False)
        except np.linalg.LinAlgError as exc:
            raise DiagnosticsError(f"optimal_risk: SVD of the core rows failed ({exc})") from exc
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
        weights=_unscale(lam, nonzero, shift),
        kkt_residual=float(np.max(np.abs(Mt.T @ dual), initial=0.0)),
    )


#: Bytes per stored nonzero of the support LP's constraint matrix, all copies included
#: (SciPy's CSC conversion, HiGHS' column- and row-wise copies, presolve and scaling),
#: per row of ``M`` (bounds, costs and solutions of the 2 m LP variables, HiGHS' work
#: arrays), and fixed.  About twice the measured peaks (:func:`optimal_risk_cost`).
_COST_PER_NONZERO = 400.0
_COST_PER_ROW = 2048.0
_COST_FIXED = 64.0 * 2**20


def optimal_risk_cost(shape: Sequence[int]) -> float:
    """Estimated peak memory, in bytes, of :func:`optimal_risk` on an (m, n) matrix.

    A cheap, conservative, linear estimate for deciding whether to track a duality gap
    (``duality_gap="auto"``), not a measurement.  The dominant term is the support LP
    of :func:`hard_core`, whose constraint matrix ``[M^T, M^T]`` has ``2 m n`` nonzeros,
    of which SciPy and HiGHS keep several copies (CSC conversion, row-wise copy,
    presolve, scaling).  The rest is O(m + n): bounds, costs and solutions of the 2 m LP
    variables, HiGHS' work arrays, and the few m × n float arrays of the column
    normalisation, the SVD and Newton's method on the core:

        ``cost = 400 · 2 m n + 2048 · m + 64 MiB``

    Measured peak resident memory above the interpreter's baseline (NumPy and SciPy
    imported) with SciPy 1.17 / HiGHS 1.12 was 160–190 bytes per LP nonzero plus about
    1 KiB per row: 42 MiB for (10⁴, 8), 0.36–0.40 GiB for (10⁵, 8) (±1, Gaussian,
    separable or mixed), 1.1–1.2 GiB for (10⁵, 32), 2.4 GiB for (10⁵, 64), 0.9 GiB for
    (5000, 500).  The estimate is 2.1–3.5 times these.  It is linear in ``m`` and
    ``n``: no m × m array is ever formed.  Wide matrices (``m ≤ n``) that least squares
    separates skip the LP and need far less.

    Parameters
    ----------
    shape : tuple of int
        ``(n_examples, n_hypotheses)``.

    Returns
    -------
    float
        Bytes.
    """
    m, n = (int(v) for v in shape)
    if m < 0 or n < 0:
        raise ValueError(f"shape must be non-negative; got {tuple(shape)}")
    return _COST_PER_NONZERO * 2.0 * m * n + _COST_PER_ROW * m + _COST_FIXED


# --------------------------------------------------------------------------------------
# Conjugate, Bregman identity, dual certificates
# --------------------------------------------------------------------------------------


def conjugate(
    loss: str | MarginLoss, psi: ArrayLike, sample_weight: ArrayLike | None = None
) -> float:
    """``f*(ψ) = Σ_i s_i g*(ψ_i / s_i)``, the conjugate of ``f(z) = Σ_i s_i g(z_i)``.

    A thin wrapper summing the loss's per-example
    :meth:`~oracleboost.losses.MarginLoss.conjugate`.  With ``g(z) = φ(−z)`` (Telgarsky
    2012, Example 2):

    * exponential: ``g*(p) = p ln p − p`` on ``p ≥ 0`` (Boltzmann–Shannon entropy);
    * logistic: ``g*(p) = p ln p + (1 − p) ln(1 − p)`` on ``[0, 1]`` (Fermi–Dirac entropy);

    with ``0 ln 0 = 0`` and ``+inf`` outside the domain.  A zero-weight row contributes 0
    if ``ψ_i = 0`` and ``+inf`` otherwise.  For unit weights this is the paper's f*
    (Lemma 36), the dual objective of Thm 4: ``−f*(ψ_A^f) = f̄_A``.

    Parameters
    ----------
    loss : {"exponential", "logistic"} or MarginLoss
        A margin loss with ``has_conjugate``.
    psi : array-like of shape (n_examples,)
    sample_weight : array-like of shape (n_examples,), default=None

    Returns
    -------
    float
    """
    loss = _check_loss(loss)
    psi = check_finite_array(psi, "psi")
    s = check_sample_weight(sample_weight, psi.shape[0])
    pos = s > 0
    if np.any(psi[~pos] != 0):
        return float("inf")
    return float(np.sum(loss.conjugate(psi[pos], s[pos])))


def _risk_sum(M: np.ndarray, lam: np.ndarray, loss: MarginLoss, s: np.ndarray) -> float:
    with np.errstate(over="ignore"):
        return float(s @ loss.phi(M @ lam))


def bregman_gap(
    M: ArrayLike, weights: ArrayLike, loss: str | MarginLoss, optimum: Optimum | None = None,
    sample_weight: ArrayLike | None = None,
) -> BregmanGap:
    """Primal gap and the Bregman divergence it equals (Telgarsky 2012, Remark 5, Eq. 20).

    For every λ, with ``φ = ∇f(A λ)`` (``φ_i = s_i g'(z_i)``, ``z = −M λ``) and the dual
    optimum ψ = ``ψ_A^f``, Fenchel–Young and ``<A λ, ψ> = 0`` give

        ``f(A λ) − f̄_A = B_{f*}(ψ, φ)``,

    where ``B`` is summed from the loss's per-example
    :meth:`~oracleboost.losses.MarginLoss.conjugate_bregman`, which evaluates the dual
    iterate in log space from the margins, not by subtracting values of ``f*``:

    * exponential: ``Σ_i ψ_i ln(ψ_i/φ_i) − ψ_i + φ_i`` (unnormalised KL);
    * logistic: ``Σ_i ψ_i ln(ψ_i/φ_i) + (s_i − ψ_i) ln((s_i − ψ_i)/(s_i − φ_i))``.

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)
    weights : array-like of shape (n_hypotheses,)
        The weighting λ (signed).
    loss : {"exponential", "logistic"} or MarginLoss
        A margin loss with ``has_conjugate``.
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
    pos = s > 0
    div = loss.conjugate_bregman(optimum.dual[pos], (M @ lam)[pos], s[pos])
    risk_sum = _risk_sum(M, lam, loss, s)
    return BregmanGap(
        risk_sum=risk_sum,
        gap=risk_sum - optimum.risk_sum,
        bregman=float(np.sum(div)),
        total_weight=float(s.sum()),
    )


def dual_feasible_certificate(
    M: ArrayLike, weights: ArrayLike, loss: str | MarginLoss,
    sample_weight: ArrayLike | None = None, core: HardCore | None = None,
) -> DualCertificate:
    """A dual-feasible point near the dual iterate, and the gap bound it certifies.

    Remark 6 of Telgarsky (2012): any ψ' ∈ Φ_A gives ``f(A λ) − f̄_A ≤ f(A λ) + f*(ψ')``.
    The dual iterate ``φ = ∇f(A λ)`` is not feasible; its ℓ2 projection onto the
    subspace ``Ker(M^T)`` may have negative entries (then ``f* = +∞``), so this projects
    onto the subspace restricted to the hard core (every ψ ∈ Φ_A vanishes off it) and
    then moves towards the positive :class:`HardCore` witness just far enough to be
    non-negative (and, when ``dom ℓ*`` is bounded, scales into ``ψ ≤ s · dual_bound``:
    ``ψ ≤ s`` for the logistic loss).  The projection uses the column-normalised
    ``M`` (``Ker(M^T)`` does not depend on the columns' scales).  The result lies
    in Φ_A exactly up to rounding, but it is not the ℓ2 projection onto Φ_A; the bound is
    valid, not tight, and tends to 0 as λ approaches optimality when the core is
    everything (attainable case).

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)
    weights : array-like of shape (n_hypotheses,)
    loss : {"exponential", "logistic"} or MarginLoss
        A margin loss with ``has_conjugate``.
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
    Mt = _normalise_columns(M)[0]
    if core is None:
        mask = np.zeros(m, dtype=bool)
        witness = np.zeros(m)
        mask[active], witness[active] = _hard_core(Mt[active])[:2]
    else:
        mask, witness = core.core, core.witness
    psi = np.zeros(m)
    if mask.any():
        phi = s[mask] * np.exp(loss.log_neg_dphi(M[mask] @ lam))
        # ℓ2 projection onto Ker(M_core^T) = Ker(M̃_core^T): subtract the part in Im(M̃_core)
        Mc = Mt[mask]
        try:
            U, sv, _ = np.linalg.svd(Mc, full_matrices=False)
        except np.linalg.LinAlgError as exc:
            raise DiagnosticsError(
                f"dual_feasible_certificate: SVD of the core rows failed ({exc})"
            ) from exc
        r = int(np.sum(sv > max(Mc.shape) * np.finfo(float).eps * sv[0])) if sv.size else 0
        proj = phi - U[:, :r] @ (U[:, :r].T @ phi)
        wc = witness[mask]
        neg = proj < 0
        c = float(np.max(-proj[neg] / wc[neg])) if neg.any() else 0.0
        cand = proj + c * wc
        if np.isfinite(loss.dual_bound):
            ratio = float(np.max(cand / (loss.dual_bound * s[mask])))
            if ratio > 1.0:
                cand = cand / ratio
        psi[mask] = np.clip(cand, 0.0, None)
    risk_sum = _risk_sum(M, lam, loss, s)
    return DualCertificate(
        dual=psi,
        gap_bound=risk_sum + conjugate(loss, psi, s),
        total_weight=float(s.sum()),
    )


# --------------------------------------------------------------------------------------
# ℓ2 maximum margin of a linear class (Ji, Srebro & Telgarsky 2021)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class L2MaxMargin:
    """The ℓ2 maximum margin ``γ̄ = max_{‖w‖₂ ≤ 1} min_i y_i ⟨w, x_i⟩`` (no intercept).

    Attributes
    ----------
    gamma : float
        γ̄ (0 when the data are not linearly separable through the origin).
    direction : ndarray of shape (n_features,)
        The unit max-margin direction ū (zeros when γ̄ = 0).
    dual : ndarray of shape (n_samples,)
        A dual optimum q̄ on the simplex: ``γ̄ = ‖Zᵀq̄‖`` and ``−Zᵀq̄ = γ̄ ū`` with
        ``z_i = −y_i x_i`` (Ji et al., Lemma A; the paper's L152 drops the minus sign).
    support : ndarray of bool, shape (n_samples,)
        The support vectors (``q̄_i > 0``).
    """

    gamma: float
    direction: np.ndarray
    dual: np.ndarray
    support: np.ndarray


def max_margin_l2(X: ArrayLike, y: ArrayLike) -> L2MaxMargin:
    """The ℓ2 max margin by its dual, ``min_{q ∈ Δ} ‖Zᵀq‖₂`` (a QP; not an LP, and not
    an SVM with an intercept).

    The simplex QP is solved as a non-negative least-squares problem,
    ``min_{q ≥ 0} ‖Zᵀq‖² + M²(1ᵀq − 1)²`` (Lawson–Hanson active set, exact on its
    support), and then polished on that support by the hard-margin SVM's KKT system
    ``Z_S Z_Sᵀ α_S = 1`` (``α = q/γ̄²``), which holds exactly at the optimum; the polish
    is kept when it is feasible (α_S > 0 and every margin ≥ 1 − 1e-9).  Memory is
    O(n d); time is that of NNLS on a (d + 1) × n matrix.  For tests and plots.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels ±1 (any two values: the larger is +1).

    Returns
    -------
    L2MaxMargin
    """
    from scipy.optimize import nnls

    X = check_finite_array(X, "X", ndim=(2,))
    y = np.asarray(y)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},); got {y.shape}")
    labels = np.unique(y)
    if len(labels) != 2:
        raise ValueError(f"y must hold exactly two classes; got {labels[:5]}")
    ypm = np.where(y == labels[1], 1.0, -1.0)
    Z = -ypm[:, None] * X
    n, d = Z.shape
    M = 1e3 * max(1.0, float(np.abs(Z).max()))
    A = np.vstack([Z.T, np.full((1, n), M)])
    b = np.zeros(d + 1)
    b[-1] = M
    q, _ = nnls(A, b, maxiter=max(1000, 50 * n))
    q = q / q.sum()
    v = Z.T @ q
    gamma = float(np.linalg.norm(v))
    scale = float(np.abs(Z).max())
    if gamma <= 1e-9 * max(scale, 1e-300):
        return L2MaxMargin(0.0, np.zeros(d), q, q > 0)
    support = q > 1e-12 * q.max()
    ZS = Z[support]
    alpha, *_ = np.linalg.lstsq(ZS @ ZS.T, np.ones(int(support.sum())), rcond=None)
    if np.all(alpha > 0):
        w = -ZS.T @ alpha  # the hard-margin SVM without intercept: min_i y_i⟨w, x_i⟩ = 1
        if float((-(Z @ w)).min()) >= 1.0 - 1e-9:
            gamma = 1.0 / float(np.linalg.norm(w))
            q = np.zeros(n)
            q[support] = alpha / alpha.sum()
            v = Z.T @ q
    direction = -v / np.linalg.norm(v)
    return L2MaxMargin(gamma, direction, q, q > 0)


# --------------------------------------------------------------------------------------
# Soft ℓ1 margin (LPBoost's LP; Demiriz, Bennett & Shawe-Taylor 2002)
# --------------------------------------------------------------------------------------


def soft_margin(margins: ArrayLike, nu: float) -> float:
    """The soft margin at capping ν of a combination with normalised margins ``m``:
    ``max_ρ ρ − (1/ν) Σ_i max(0, ρ − m_i)``, LPBoost's objective with the slacks at
    their best for that combination (Demiriz, Bennett & Shawe-Taylor 2002, LP (4)).

    The objective is concave and piecewise linear in ρ with slope
    ``1 − #{i : m_i < ρ}/ν``, so it peaks at ρ = m_(k), the k-th smallest margin with
    ``k = ⌈ν⌉``, and equals ``(1/ν) Σ_{i<k} m_(i) + (1 − (k − 1)/ν) m_(k)``: for an
    integer ν the mean of the ν smallest margins, for ν = 1 the smallest (the hard ℓ1
    margin).  Summed in sorted order with ``math.fsum`` (no BLAS).

    Parameters
    ----------
    margins : array-like of shape (n_examples,)
        ``y_i f(x_i) / ‖λ‖₁``, each hypothesis scaled to max |h| = 1 on these rows.
    nu : float
        The capping ν ∈ [1, n_examples] (a count, as in
        :class:`~oracleboost.boosters.TotallyCorrectiveClassifier`).

    Returns
    -------
    float
    """
    m = check_finite_array(margins, "margins", ndim=(1,))
    if m.shape[0] == 0:
        raise ValueError("margins must hold at least one value")
    nu = float(nu)
    if not 1.0 <= nu <= m.shape[0]:
        raise ValueError(f"nu must lie in [1, {m.shape[0]}] (the number of margins); "
                         f"got {nu!r}")
    k = math.ceil(nu - 1e-12)  # ν within rounding of an integer counts as that integer
    low = np.sort(m)[:k].tolist()
    return math.fsum(low[:-1]) / nu + (1.0 - (k - 1) / nu) * low[-1]


@dataclass(frozen=True)
class SoftMargin:
    """The soft-margin LP's optimum over a finite class closed under negation.

    Attributes
    ----------
    value : float
        ``P* = max_{‖λ‖₁ = 1} soft_margin(M λ, ν)``, HiGHS's optimum.
    weights : ndarray of shape (n_hypotheses,)
        Signed λ with ``‖λ‖₁ = 1`` attaining it (to the solver's tolerance).
    achieved : float
        :func:`soft_margin` of ``M λ`` for the returned weights: a certificate from
        below, within the solver's tolerance of ``value``.
    """

    value: float
    weights: np.ndarray
    achieved: float


def max_soft_margin(M: ArrayLike, nu: float = 1.0) -> SoftMargin:
    """The best soft margin at capping ν over every signed combination of the columns of
    ``M``: ``max ρ − (1/ν) Σ ξ_i`` s.t. ``(M λ)_i ≥ ρ − ξ_i``, ``‖λ‖₁ = 1``, ``ξ ≥ 0``
    (Demiriz, Bennett & Shawe-Taylor 2002, LP (4), with the class closed under
    negation: λ = p − q, p, q ≥ 0).  ν = 1 gives :func:`max_margin`'s γ whenever γ > 0.

    Solved from scratch by HiGHS on the whole matrix (sparse constraint matrix, O(m n)
    nonzeros): the reference that column generation is checked against.

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)
        Margin matrix ``M[i, j] = y_i h_j(x_i)``, columns scaled into [−1, 1].
    nu : float, default=1.0
        The capping ν ∈ [1, n_examples].

    Returns
    -------
    SoftMargin
    """
    M = _check_matrix(M)
    m, n = M.shape
    nu = float(nu)
    if not 1.0 <= nu <= m:
        raise ValueError(f"nu must lie in [1, {m}] (the rows of M); got {nu!r}")
    # variables [p (n), q (n), ρ, ξ (m)]; minimise −ρ + (1/ν) Σ ξ
    c = np.concatenate([np.zeros(2 * n), [-1.0], np.full(m, 1.0 / nu)])
    Ms = sparse.csr_matrix(M)
    A_ub = sparse.hstack([-Ms, Ms, sparse.csr_matrix(np.ones((m, 1))),
                          -sparse.identity(m, format="csr")], format="csr")
    A_eq = sparse.csr_matrix(np.concatenate([np.ones(2 * n), np.zeros(1 + m)])[None, :])
    bounds = [(0, None)] * (2 * n) + [(None, None)] + [(0, None)] * m
    res = _linprog(c, "soft margin LP", A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq,
                   b_eq=[1.0], bounds=bounds)
    lam = res.x[:n] - res.x[n: 2 * n]
    norm = math.fsum(np.abs(lam).tolist())
    if norm > 0:
        lam = lam / norm
    achieved = soft_margin(M @ lam, nu) if norm > 0 else soft_margin(np.zeros(m), nu)
    return SoftMargin(value=-float(res.fun), weights=lam, achieved=achieved)
