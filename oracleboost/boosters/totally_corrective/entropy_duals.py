"""The entropy-regularised problems of ERLPBoost and SoftBoost, solved through their
duals over the ``t`` multipliers of the edge constraints; each inner minimisation is the
KL projection onto the capped simplex (:func:`.projections.kl_capped_simplex`).

Notation as in :mod:`.totally_corrective`: ``N`` rows, the columns so far ``u_1 … u_t``
(entries in [−1, 1]) as the columns of ``U`` (N × t), row costs ``c_i`` (mean 1), the
capping ``ν``, the capped simplex ``S = {d : Σ d = 1, 0 ≤ d_i ≤ c_i/ν}``, ``d⁰ = c/N``
and the relative entropy ``Δ(d, d⁰) = Σ d_i log(d_i/d⁰_i)``, which lies in
``[0, ln(N/ν)]`` on ``S`` (``d_i/d⁰_i ≤ N/ν``).

**The two problems.**

* ERLPBoost (Warmuth, Glocer & Vishwanathan, ALT 2008), the regularised dual of
  LPBoost: ``P^t(d) = max_{q ≤ t} d·u_q + Δ(d, d⁰)/η``, ``d^t = argmin_{d ∈ S} P^t(d)``.
* SoftBoost (Warmuth, Glocer & Rätsch, NIPS 2007): the relative-entropy projection
  ``d^t = argmin_{d ∈ S} Δ(d, d⁰)`` s.t. ``d·u_q ≤ b`` for every ``q ≤ t``
  (``b = γ̂_t − ε``).

**Their duals** (derived here; the papers solve the primal with a generic solver).  With
multipliers ``α ≥ 0`` on the edge constraints, ``λ = ηα`` for ERLPBoost and ``λ = α``
for SoftBoost (``η = 1``, ``b = 0`` in ERLPBoost's formulas below), the Lagrangian's
minimum over ``d ∈ S`` is attained at the KL projection of ``d⁰ ∘ exp(−U λ)``::

    d(α) = argmin_{d ∈ S} λ·Uᵀd + Δ(d, d⁰) = kl_capped_simplex(log d⁰ − U λ, c/ν)

(``λ·Uᵀd + Δ(d, d⁰)`` is ``KL(d ‖ d⁰ e^{−Uλ})`` up to a constant on ``S``), and the
dual function, concave, is::

    θ(α) = α·(Uᵀd(α) − b) + Δ(d(α), d⁰)/η,   ∇θ = Uᵀd(α) − b   (Danskin),
    ∇²θ = −η Uᵀ(D_F − d_F d_Fᵀ/s_F)U          (where the capped set is locally fixed),

``F`` the rows below their cap, ``D_F`` their diagonal, ``s_F = Σ_F d_i``.  ERLPBoost's
``γ`` in ``min γ + Δ/η s.t. Uᵀd ≤ γ`` forces ``Σ α = 1``: its dual is
``max_{α ∈ simplex} θ(α)``; SoftBoost's is ``max_{α ≥ 0} θ(α)``.

**Certificates.**  ``d(α)`` is exactly on ``S`` (the projection is exact), so

* ERLPBoost: ``P^t(d(α)) − θ(α) = max_q e_q − α·e ≥ 0`` with ``e = Uᵀd(α)``: the primal
  value at a feasible point and a dual value, so the regularised optimum ``P^t(d^t)``
  lies between them, and the gap measures both errors at once;
* SoftBoost: ``d(α)`` minimises the Lagrangian exactly, so the KKT conditions left are
  primal feasibility, ``max_q e_q − b ≤ tol``, and complementary slackness,
  ``α·(b − e) ≤ tol · max(1, Σ α)``; then ``Δ(d(α)) − min Δ ≤ α·(b − e)``.

**The method.**  Bertsekas's projected Newton method on the dual (on the simplex, in the
variables left after eliminating the largest multiplier): the multipliers near 0 whose
gradient points out move along the scaled gradient, the others by Newton's step (the
``t × t`` system factored by Cholesky, with a small ridge where the curvature is
singular: duplicate columns, every row capped), the trial point projected back onto
``α ≥ 0``, Armijo's rule along that arc.  Every solve starts from the last round's
multipliers (a new column's at 0) and usually ends in a few steps.  When it does not
within :data:`_WARM_ITER` steps (large η: a distribution near a vertex of the simplex,
where θ is flat to rounding and Newton crawls), the solve starts again from the
multipliers of Clarabel (an interior-point solver with exponential cones, MiniBoosts'
choice) on the primal, polished by Newton, the better point kept.

*Why this and not Clarabel alone:* the dual answer is certified from the answer itself
(``d`` exactly on ``S``, the gap above computed from it, not reported by a solver), a
warm-started solve costs a few ``N × t²`` products instead of an interior-point solve
from scratch with ``N`` cones, and the gaps reach ~1e-12.  Clarabel's multipliers at its
default tolerance (1e-8) certify gaps of only ~1e-5 (the gap is first order in their
error, times curvatures up to ~1e5), so it runs at 1e-12 here.  *Why not Newton alone:*
from a vertex-like distribution it stalls (measured on breast cancer with ε = 0.01: one
solve in four needed the cold start, and continuation in η did not fix it).

Sums run in a fixed order (:mod:`._entropy_kernels`), so a fit's bits do not depend on
the CPU or the thread count.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from oracleboost._running_state import stored_as
from oracleboost.boosters.totally_corrective import entropy_kernels as kernels
from oracleboost.optim.projections import bregman_kl, kl_capped_simplex

__all__ = ["ColumnStore", "EntropySolution", "EntropySolveError", "solve_regularized",
           "solve_projection", "SOLVER_TOL", "ACCEPT_TOL"]

#: The gap (ERLPBoost) or KKT residual (SoftBoost) a solve aims at.
SOLVER_TOL = 1e-11
#: What a solve that can no longer make progress in floating point is still accepted at;
#: above it the solve fails (:class:`EntropySolveError`).
ACCEPT_TOL = 1e-9
_MAX_ITER = 200
_CLARABEL_MISSING = ("ERLPBoost and SoftBoost start their entropy problems' harder solves "
                     "from Clarabel: pip install clarabel (or oracleboost[lp])")
_WARM_ITER = 25  # Newton steps from the last round's multipliers before Clarabel
_POLISH_ITER = 30  # Newton steps from Clarabel's answer
_CLARABEL_TOL = 1e-12  # Clarabel's gap and feasibility tolerances (its default: 1e-8)
_ARMIJO = 1e-4
_ACTIVE_WIDTH = 1e-3  # Bertsekas's ε̄: the widest band at 0 taken as active
_ROUNDING = 1e-13  # relative: θ's rounding error (sums of N terms), with room


def _measure(dual: _Dual, point: _Point) -> float:
    gap, violation = dual.residual(point)
    return max(abs(gap), violation)


class EntropySolveError(RuntimeError):
    """The dual method did not reach a certified answer.  ``solution`` is the best point
    it reached (its gap and violation certified, only larger than asked), or None."""

    def __init__(self, message: str, solution: EntropySolution | None = None) -> None:
        super().__init__(message)
        self.solution = solution


@stored_as("ColumnStore")
class ColumnStore:
    """The columns ``u_1 … u_t`` as a row-major ``(N, capacity)`` array, grown by
    doubling.  Append-only and shared between a booster's states: a state holds the
    store and its own count ``t`` and reads ``columns[:, :t]``; :meth:`appended` writes in
    place only when the store holds exactly ``t`` columns (no later state has written
    there), else it copies first, so an earlier state is never changed."""

    def __init__(self, n_rows: int, capacity: int = 16) -> None:
        self.data = np.zeros((n_rows, max(1, capacity)))
        self.filled = 0

    def appended(self, t: int, u: np.ndarray) -> ColumnStore:
        """The store of the first ``t`` columns and ``u`` (this one when possible)."""
        store = self
        if self.filled != t or t == self.data.shape[1]:
            store = ColumnStore(self.data.shape[0], 2 * max(t, 8))
            store.data[:, :t] = self.data[:, :t]
        store.data[:, t] = u
        store.filled = t + 1
        return store


@dataclass(frozen=True)
class EntropySolution:
    """One certified solve.

    Attributes
    ----------
    d : ndarray of shape (N,)
        The distribution ``d(α)``, on the capped simplex.
    alpha : ndarray of shape (t,)
        The multipliers (on the simplex for ERLPBoost, ``≥ 0`` for SoftBoost).
    edges : ndarray of shape (t,)
        ``Uᵀ d``.
    entropy : float
        ``Δ(d, d⁰)``.
    value : float
        The primal objective at ``d``: ``max edges + Δ/η`` (ERLPBoost) or ``Δ``
        (SoftBoost).
    dual_value : float
        ``θ(α)``: a lower bound on the problem's optimum (weak duality).
    gap : float
        ERLPBoost: ``value − dual_value`` (≥ 0, bounds both errors).  SoftBoost: the
        complementary slackness ``α·(b − e)`` (``value − dual_value``; it bounds
        ``Δ(d) − min Δ`` when ``d`` is feasible).
    violation : float
        ``max(0, max edges − b)`` (SoftBoost; 0 for ERLPBoost).
    iterations : int
        Newton steps.
    conic : bool
        Whether Newton started from Clarabel's answer (the last round's multipliers did
        not converge within a few steps).
    seconds : float
    """

    d: np.ndarray
    alpha: np.ndarray
    edges: np.ndarray
    entropy: float
    value: float
    dual_value: float
    gap: float
    violation: float
    iterations: int
    conic: bool
    seconds: float


@dataclass(frozen=True)
class _Point:
    alpha: np.ndarray
    d: np.ndarray
    edges: np.ndarray
    entropy: float
    theta: float
    grad: np.ndarray


class _Dual:
    """``θ`` and its derivatives for one problem (see the module docstring)."""

    def __init__(self, U: np.ndarray, t: int, log_d0: np.ndarray, caps: np.ndarray,
                 eta: float, bound: float, simplex: bool) -> None:
        self.U, self.t, self.log_d0, self.caps = U, t, log_d0, caps
        self.eta, self.bound, self.simplex = eta, bound, simplex
        self._z = np.empty(U.shape[0])
        self._d0 = np.exp(log_d0)

    def at(self, alpha: np.ndarray) -> _Point:
        kernels.mix(self.U, self.t, self.eta * alpha, self.log_d0, self._z)
        d = kl_capped_simplex(self._z, self.caps)
        e = np.empty(self.t)
        kernels.edges(self.U, self.t, d, e)
        # Δ(d, d⁰): the library's KL divergence (its −Σd + Σd⁰ is 0 on the simplex)
        entropy = bregman_kl(d, self._d0)
        grad = e - self.bound
        theta = float(kernels.ordered_dot(alpha, grad)) + entropy / self.eta
        return _Point(alpha, d, e, entropy, theta, grad)

    def curvature(self, point: _Point) -> np.ndarray:
        """``−∇²θ`` (positive semi-definite)."""
        G = np.empty((self.t, self.t))
        kernels.centred_gram(self.U, self.t, point.d, point.d < self.caps, G)
        return self.eta * G

    def residual(self, point: _Point) -> tuple[float, float]:
        """(the gap, the violation): ERLPBoost ``max e − α·e`` and 0; SoftBoost the
        scaled complementary slackness and ``max(0, max e − b)``."""
        if self.simplex:
            return float(point.edges.max() - kernels.ordered_dot(point.alpha, point.edges)), 0.0
        slack = float(kernels.ordered_dot(point.alpha, -point.grad))
        return slack, max(0.0, float(point.grad.max()))

    def converged(self, point: _Point, tol: float) -> bool:
        gap, violation = self.residual(point)
        if self.simplex:
            return gap <= tol
        scale = max(1.0, float(np.add.accumulate(point.alpha)[-1]))
        return violation <= tol and abs(gap) <= tol * scale


def _reduced(point: _Point, B: np.ndarray, simplex: bool
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The problem in variables bounded below only: ``α`` itself (SoftBoost), or on the
    simplex ``x = α`` without its largest coordinate ``r``, ``α_r = 1 − Σ x``
    (``Z = [I; −1ᵀ]``: gradient ``Zᵀg``, curvature ``ZᵀBZ``).  ``α_r ≥ 1/t`` keeps its
    own bound far from active; the line search guards it.  Returns (x, gradient,
    curvature, r), ``r = −1`` without elimination."""
    if not simplex:
        return point.alpha, point.grad, B, -1
    r = int(np.argmax(point.alpha))
    keep = np.arange(point.alpha.shape[0]) != r
    g = point.grad[keep] - point.grad[r]
    Bk = (B[np.ix_(keep, keep)] - B[keep, r][:, None] - B[r, keep][None, :] + B[r, r])
    return point.alpha[keep], g, Bk, r


def _expanded(x: np.ndarray, r: int) -> np.ndarray:
    """``α`` from the reduced variables (see :func:`_reduced`)."""
    if r < 0:
        return x
    return np.insert(x, r, 1.0 - np.add.accumulate(x)[-1] if x.size else 1.0)


def _newton_direction(B: np.ndarray, g: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Bertsekas's (1982) projected Newton direction: Newton's step ``(B_FF)⁻¹ g_F`` on the
    free variables, the gradient scaled by the diagonal on the others; a ridge ``μ I``
    where ``B_FF`` is singular (duplicate columns, every row capped)."""
    diag = np.diag(B)
    top = max(1.0, float(np.abs(diag).max())) if diag.size else 1.0
    p = g / np.maximum(diag, 1e-12 * top)
    idx = np.flatnonzero(free)
    if idx.size == 0:
        return p
    Bf = np.ascontiguousarray(B[np.ix_(idx, idx)])
    L = np.empty_like(Bf)
    mu = 1e-12 * top
    while not kernels.cholesky(Bf + mu * np.eye(idx.size), L):
        mu *= 100.0
        if mu > 1e6 * top:  # pragma: no cover - B is symmetric PSD plus the ridge
            raise EntropySolveError("the Newton system could not be factored")
    x = np.empty(idx.size)
    kernels.cholesky_solve(L, np.ascontiguousarray(g[idx]), x)
    p[idx] = x
    return p


def _maximise(dual: _Dual, alpha: np.ndarray, tol: float, max_iter: int
              ) -> tuple[_Point, int, str]:
    """Bertsekas's projected Newton method (SIAM J. Control Optim. 20, 1982) on the
    variables of :func:`_reduced`: the ε-active set (variables within ε of 0 whose
    gradient points out) moves along the scaled gradient, the others by Newton's step,
    the trial point projected back onto ``x ≥ 0``, and Armijo's rule along that arc.
    Returns the last point, the steps taken, and why it stopped short of ``tol`` ("" when
    it did not)."""
    point = dual.at(alpha)
    iterations = 0
    status = "the iteration limit"
    while iterations < max_iter:
        if dual.converged(point, tol):
            return point, iterations, ""
        x, g, B, r = _reduced(point, dual.curvature(point), dual.simplex)
        width = min(_ACTIVE_WIDTH, float(np.abs(x - np.maximum(x + g, 0.0)).max()))
        free = ~((x <= width) & (g < 0.0))
        p = _newton_direction(B, g, free)
        s, accepted = 1.0, None
        for _ in range(60):
            trial = np.maximum(x + s * p, 0.0)
            alpha_trial = _expanded(trial, r)
            if r >= 0 and alpha_trial[r] < 0.0:  # α_r's own bound: shorten the step
                s *= 0.5
                continue
            if r >= 0:
                alpha_trial = alpha_trial / np.add.accumulate(alpha_trial)[-1]
            rise = (s * float(kernels.ordered_dot(g[free], p[free]))
                    + float(kernels.ordered_dot(g[~free], trial[~free] - x[~free])))
            candidate = dual.at(alpha_trial)
            if candidate.theta >= point.theta + _ARMIJO * rise:
                accepted = candidate
                break
            # near the optimum θ's rise is below its rounding (the rise ~ gap², the gap
            # ~1e-10): Armijo's test is noise there, so a step that leaves θ within its
            # rounding is taken when it shrinks the residual
            noise = _ROUNDING * (1.0 + abs(point.theta))
            if (rise <= noise and candidate.theta >= point.theta - noise
                    and _measure(dual, candidate) < _measure(dual, point)):
                accepted = candidate
                break
            s *= 0.5
        if accepted is None:
            status = "the line search found no ascent"
            break
        point = accepted
        iterations += 1
    return point, iterations, status


def _solve(dual: _Dual, alpha: np.ndarray, start: float, accept: float) -> EntropySolution:
    """Newton from ``alpha`` (the last round's multipliers); when that does not converge
    within :data:`_WARM_ITER` steps, Clarabel's interior-point answer, polished by
    Newton, the better of the two kept (see the module docstring).  Raises
    :class:`EntropySolveError` when neither certifies to ``accept``, carrying the best
    point reached (Newton's own when Clarabel fails) for a caller that can take a larger
    certified gap."""
    point, iterations, status = _maximise(dual, alpha, SOLVER_TOL, _WARM_ITER)
    conic = ""
    if status:
        warm = point
        try:
            alpha, conic = _conic_multipliers(dual)
        except EntropySolveError as exc:
            # Clarabel gave nothing: Newton's warm point stays, certified as far as it got
            conic = f"none ({exc})"
        else:
            cold = dual.at(alpha)
            point, steps, status = _maximise(dual, alpha, SOLVER_TOL, _POLISH_ITER)
            iterations += steps
            if _measure(dual, cold) < _measure(dual, point):
                point = cold
            if status and _measure(dual, warm) < _measure(dual, point):
                point = warm
    used_conic = bool(conic) and not conic.startswith("none")
    if status and not dual.converged(point, accept):
        gap, violation = dual.residual(point)
        raise EntropySolveError(
            f"the dual Newton method stopped at {status} after {iterations} steps "
            f"(from Clarabel's answer, status {conic}) with gap {gap:.3g} and violation "
            f"{violation:.3g} (accepted: {accept:g})",
            _solution(dual, point, iterations, start, used_conic))
    return _solution(dual, point, iterations, start, used_conic)


def _conic_multipliers(dual: _Dual) -> tuple[np.ndarray, str]:
    """The multipliers of the edge constraints from Clarabel (Goulart & Chen 2024), an
    interior-point solver with exponential cones, on the primal problem from scratch::

        min  γ + (1/η) Σ r_i   (ERLPBoost)   or   Σ r_i   (SoftBoost)
        s.t. Uᵀd ≤ γ 1 (or ≤ b),  Σ d = 1,  0 ≤ d ≤ c/ν,
             (−r_i, d_i, d⁰_i) ∈ K_exp = {(x, y, z) : y e^{x/y} ≤ z}  (r_i ≥ d_i log(d_i/d⁰_i))

    Returns (α, Clarabel's status).  Raises :class:`EntropySolveError` when Clarabel
    does not end solved (or almost: Newton's polish certifies the answer either way)."""
    try:
        import clarabel
    except ImportError as exc:  # pragma: no cover - the lp extra installs it
        raise ImportError(_CLARABEL_MISSING) from exc
    from scipy import sparse

    N, t = dual.U.shape[0], dual.t
    with_gamma = dual.simplex
    n = 2 * N + int(with_gamma)  # d, r (and γ)
    if with_gamma:
        q = np.concatenate([np.zeros(N), np.full(N, 1.0 / dual.eta), [1.0]])
    else:
        q = np.concatenate([np.zeros(N), np.ones(N)])
    eye = sparse.identity(N, format="csr")
    none = sparse.csr_matrix((N, n - N))
    edges = sparse.hstack([sparse.csr_matrix(dual.U[:, :t].T), sparse.csr_matrix((t, N))]
                          + ([sparse.csr_matrix(-np.ones((t, 1)))] if with_gamma else []))
    cone_rows = np.arange(2 * N) + np.repeat(np.arange(N), 2)  # rows 3i and 3i + 1
    cone_cols = np.column_stack([N + np.arange(N), np.arange(N)]).ravel()
    cone_vals = np.tile([1.0, -1.0], N)
    A = sparse.vstack([
        sparse.csr_matrix(np.concatenate([np.ones(N), np.zeros(n - N)])[None, :]),
        edges,
        sparse.hstack([eye, none]),
        sparse.hstack([-eye, none]),
        sparse.csr_matrix((cone_vals, (cone_rows, cone_cols)), shape=(3 * N, n)),
    ]).tocsc()
    b = np.concatenate([[1.0], np.full(t, 0.0 if with_gamma else dual.bound), dual.caps,
                        np.zeros(N), np.column_stack([np.zeros(N), np.zeros(N),
                                                      np.exp(dual.log_d0)]).ravel()])
    cones = ([clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(t + 2 * N)]
             + [clarabel.ExponentialConeT()] * N)
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    # tight: the certified gap of its multipliers is first order in their error, times
    # the curvature η Uᵀ(D − ddᵀ)U (up to ~1e5 here): 1e-8 left gaps of ~1e-5
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = _CLARABEL_TOL
    solution = clarabel.DefaultSolver(sparse.csc_matrix((n, n)), q, A, b, cones,
                                      settings).solve()
    status = str(solution.status)
    if status not in ("Solved", "AlmostSolved"):
        raise EntropySolveError(f"Clarabel ended with status {status}")
    alpha = np.maximum(np.asarray(solution.z[1:1 + t], dtype=np.float64), 0.0)
    if with_gamma:
        total = float(np.add.accumulate(alpha)[-1])
        if not (math.isfinite(total) and total > 0):
            raise EntropySolveError(f"Clarabel ({status}) returned multipliers summing to "
                                    f"{total!r}")
        alpha = alpha / total
    if not np.isfinite(alpha).all():
        raise EntropySolveError(f"Clarabel ({status}) returned non-finite multipliers")
    return alpha, status


def _solution(dual: _Dual, point: _Point, iterations: int, start: float,
              conic: bool) -> EntropySolution:
    gap, violation = dual.residual(point)
    if dual.simplex:
        value = float(point.edges.max()) + point.entropy / dual.eta
    else:
        value = point.entropy
    return EntropySolution(point.d, point.alpha, point.edges, point.entropy, value,
                           point.theta, gap, violation, iterations, conic,
                           time.perf_counter() - start)


def _checked(U: np.ndarray, t: int, log_d0: np.ndarray, caps: np.ndarray,
             alpha0: np.ndarray | None) -> np.ndarray:
    if not 1 <= t <= U.shape[1]:
        raise ValueError(f"t={t} columns; the store holds {U.shape[1]}")
    if log_d0.shape != (U.shape[0],) or caps.shape != (U.shape[0],):
        raise ValueError("log_d0 and caps need one entry per row of U")
    alpha = np.zeros(t)
    if alpha0 is not None:
        a = np.asarray(alpha0, dtype=np.float64)
        if a.shape[0] > t or not np.isfinite(a).all() or (a < 0).any():
            raise ValueError("alpha0 must be at most t finite non-negative multipliers")
        alpha[:a.shape[0]] = a
    return alpha


def solve_regularized(U: np.ndarray, t: int, log_d0: np.ndarray, caps: np.ndarray,
                      eta: float, alpha0: np.ndarray | None = None,
                      accept: float = ACCEPT_TOL) -> EntropySolution:
    """ERLPBoost's ``d^t = argmin_{d ∈ S} max_{q ≤ t} d·u_q + Δ(d, d⁰)/η``.

    Parameters
    ----------
    U : ndarray of shape (N, capacity)
        The columns (row-major); the first ``t`` are read.
    t : int
    log_d0 : ndarray of shape (N,)
        ``log d⁰``.
    caps : ndarray of shape (N,)
        ``c_i/ν``, summing to at least 1.
    eta : float
        ``η > 0``.
    alpha0 : ndarray of shape (t') with t' ≤ t, default=None
        Where to start (the last solve's multipliers; the rest 0).  None: ``α = e_1``.
    accept : float, default=ACCEPT_TOL
        The largest certified gap accepted when Newton cannot reach
        :data:`SOLVER_TOL` (the booster passes ``max(ACCEPT_TOL, 1e-6 ε)``).

    Raises
    ------
    EntropySolveError
        No certified answer (the gap above ``accept``).
    """
    start = time.perf_counter()
    alpha = _checked(U, t, log_d0, caps, alpha0)
    if not (math.isfinite(eta) and eta > 0):
        raise ValueError(f"eta must be positive and finite; got {eta!r}")
    total = np.add.accumulate(alpha)[-1]
    alpha = alpha / total if total > 0 else np.eye(1, t).ravel()
    dual = _Dual(U, t, log_d0, caps, float(eta), 0.0, simplex=True)
    return _solve(dual, alpha, start, accept)


def solve_projection(U: np.ndarray, t: int, log_d0: np.ndarray, caps: np.ndarray,
                     bound: float, alpha0: np.ndarray | None = None,
                     accept: float = ACCEPT_TOL) -> EntropySolution:
    """SoftBoost's ``d^t = argmin_{d ∈ S} Δ(d, d⁰)`` s.t. ``d·u_q ≤ bound`` (q ≤ t).

    The set must be non-empty (the caller decides feasibility by the LP: the problem is
    feasible iff ``min_{d ∈ S} max_q d·u_q ≤ bound``); near an empty set the dual's
    optimum grows without bound.  Parameters as :func:`solve_regularized`, with the
    bound ``b`` in place of ``η``; ``alpha0`` None starts at 0 (``d = d⁰``).
    """
    start = time.perf_counter()
    alpha = _checked(U, t, log_d0, caps, alpha0)
    if not math.isfinite(bound):
        raise ValueError(f"bound must be finite; got {bound!r}")
    dual = _Dual(U, t, log_d0, caps, 1.0, float(bound), simplex=False)
    return _solve(dual, alpha, start, accept)
