"""Bregman projections for mirror-ascent boosting (MABoost; Naghibi & Pfister 2014).

MABoost (Algorithm 1) takes a mirror step ``∇R(z_{t+1}) = ∇R(w_t) + η_t d_t`` and then
projects back onto a convex set of distributions with the Bregman projection of
Def. 1, eq. (2)::

    Π_S(y) = argmin_{x ∈ S} B_R(x, y).

This module holds every projection the booster needs, for the two mirror maps of the
paper:

* the quadratic ``R(w) = ½‖w‖²``, with ``B(x, y) = ½‖x − y‖²`` (Euclidean);
* the negative entropy ``R(w) = Σ w_i log w_i − w_i`` (Lemma 5's form; adding the
  linear term does not change ``B``), with the generalised KL divergence
  ``B(x, y) = Σ x_i log(x_i/y_i) − x_i + y_i``;

and for the sets

* the simplex ``S = {w : Σ w_i = 1, w ≥ 0}`` (Algorithm 1, step (d));
* the capped simplex ``S_k = {w : Σ w_i = 1, 0 ≤ w_i ≤ k/N}`` of smooth boosting (§3.1);
* the dataset-combining set ``S_c`` of §3.2, eq. (26): caps ``k/N`` on the secondary
  set only, i.e. a capped simplex with per-coordinate caps, ``np.inf`` on the primary
  set;
* the unit hypercube ``K = [0, 1]^N`` of the MadaBoost variant (Algorithm 3, Lemma 5).

Every projection is exact: a sort (O(N log N)) identifies the piece of a monotone
piecewise-linear (Euclidean) or piecewise-exponential (KL) equation on which the
multiplier lies, and the multiplier is then solved in closed form on that piece (no
bisection, no tolerance).  One Newton step on the identified piece (a no-op in exact
arithmetic) then removes the rounding error of the closed form, so that the result
sums to 1 to within a few ulps.  Results are new float64 arrays; coordinates the
projection sets to zero are exactly ``0.0``.  KL projections take and return weights
through ``log z`` so that ``log z = ±1000`` neither overflows nor underflows to NaN;
``log z_i = −inf`` (``z_i = 0``) is allowed and the projection keeps ``w_i = 0``.

Tests: ``tests/test_projections.py`` (against a generic constrained solver, and the
paper's Lemmas 1, 2 and 4).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import rel_entr

__all__ = [
    "euclidean_simplex",
    "euclidean_capped_simplex",
    "kl_simplex",
    "kl_capped_simplex",
    "kl_hypercube",
    "bregman_euclidean",
    "bregman_kl",
    "grad_euclidean",
    "grad_entropy",
]

_EPS = float(np.finfo(np.float64).eps)
# |Σ cap − 1| below which the capped set is the single point w = cap (Σ cap = 1 up to
# the rounding of caps such as 1/N: the exactly-rounded sum of N copies of fl(1/N)
# is within eps of 1).
_TIGHT = 8.0 * _EPS


# ---------------------------------------------------------------------------------------
# input checks
# ---------------------------------------------------------------------------------------


def _as_vector(a, name: str) -> np.ndarray:
    """``a`` as a non-empty 1-D float64 array of finite values."""
    arr = _as_1d(a, name)
    if not np.isfinite(arr).all():
        bad = "NaN" if np.isnan(arr).any() else "inf"
        raise ValueError(f"{name} contains {bad}; every entry must be finite")
    return arr


def _as_log_vector(a, name: str) -> np.ndarray:
    """``a`` as a non-empty 1-D float64 array of log-weights: ``-inf`` allowed."""
    arr = _as_1d(a, name)
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN; log-weights must be finite or -inf")
    if np.isposinf(arr).any():
        raise ValueError(f"{name} contains +inf; log-weights must be finite or -inf")
    return arr


def _as_1d(a, name: str) -> np.ndarray:
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array-like; got {type(a).__name__}") from exc
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got an array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; it needs at least one entry")
    return arr


def _as_caps(cap, n: int) -> np.ndarray:
    """``cap`` (scalar or shape ``(n,)``) as a new float64 array of shape ``(n,)``."""
    try:
        c = np.asarray(cap, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"cap must be a number or a numeric array-like; got {type(cap).__name__}"
        ) from exc
    if c.ndim == 0:
        c = np.full(n, float(c))
    elif c.ndim != 1 or c.shape[0] != n:
        raise ValueError(f"cap must be a scalar or have shape ({n},); got shape {c.shape}")
    else:
        c = c.copy()
    if np.isnan(c).any():
        raise ValueError("cap contains NaN; caps must be non-negative numbers or np.inf")
    if (c < 0).any():
        raise ValueError("cap contains negative values; caps must be >= 0 (np.inf = no cap)")
    return c


def _cap_total(c: np.ndarray) -> float:
    """``Σ c``, exactly rounded when it is close to 1 (where the decision is made)."""
    s = float(c.sum())
    if math.isfinite(s) and abs(s - 1.0) < 1e-8:
        s = math.fsum(c)
    return s


def _check_feasible(c: np.ndarray) -> float:
    total = _cap_total(c)
    if total < 1.0 - _TIGHT:
        raise ValueError(
            f"cap is infeasible: the caps sum to {total!r} < 1, so no distribution "
            "satisfies 0 <= w <= cap"
        )
    return total


# ---------------------------------------------------------------------------------------
# Euclidean projections (R = ½‖w‖²)
# ---------------------------------------------------------------------------------------


def euclidean_simplex(z: np.ndarray) -> np.ndarray:
    """Euclidean projection onto the probability simplex.

    ``argmin_{w ∈ S} ½‖w − z‖²`` with ``S = {w : Σ w_i = 1, w ≥ 0}``: the Bregman
    projection (Def. 1, eq. (2)) of MABoost with ``R = ½‖w‖²`` (Algorithm 1, step (d)).

    The solution is ``w = max(z − τ, 0)``.  ``τ`` is found exactly by the sort
    algorithm of Held, Wolfe & Crowder (1974) / Duchi, Shalev-Shwartz, Singer & Chandra
    (2008, Fig. 1): with ``u`` the entries of ``z`` in decreasing order,
    ``ρ = max{j : u_j − (Σ_{r≤j} u_r − 1)/j > 0}`` and ``τ = (Σ_{r≤ρ} u_r − 1)/ρ``.
    O(N log N).

    Parameters
    ----------
    z : array_like of shape (N,)
        The point to project; finite.

    Returns
    -------
    w : ndarray of shape (N,)
        A new float64 array, ``w ≥ 0`` (exact zeros off the support), ``Σ w = 1``.
    """
    z = _as_vector(z, "z")
    u = np.sort(z)[::-1]
    css = np.cumsum(u)
    j = np.arange(1, z.size + 1)
    support = u - (css - 1.0) / j > 0  # true on a prefix; u_1 always qualifies
    rho = int(np.flatnonzero(support)[-1]) + 1
    tau = (float(u[:rho].sum()) - 1.0) / rho
    w = np.maximum(z - tau, 0.0)
    # Newton step on the identified piece (exactly a no-op in exact arithmetic).
    free = w > 0
    r = 1.0 - float(w.sum())
    if r != 0.0:
        tau -= r / int(free.sum())
        w = np.maximum(z - tau, 0.0)
    return w


def euclidean_capped_simplex(z: np.ndarray, cap: float | np.ndarray) -> np.ndarray:
    """Euclidean projection onto a capped simplex ``{w : Σ w_i = 1, 0 ≤ w_i ≤ cap_i}``.

    With a scalar ``cap = k/N`` this is smooth-MABoost's set ``S_k`` (§3.1); with caps
    ``k/N`` on the secondary data set and ``np.inf`` on the primary one it is the
    dataset-combining set ``S_c`` of §3.2, eq. (26).  The projection is Def. 1, eq. (2)
    with ``R = ½‖w‖²``.

    The solution is ``w = clip(z − τ, 0, cap)``: ``g(τ) = Σ_i clip(z_i − τ, 0, cap_i)``
    is continuous, nonincreasing and piecewise linear with breakpoints
    ``{z_i} ∪ {z_i − cap_i}``.  The breakpoints are sorted; a binary search over them
    (each ``g`` evaluated in O(log N) from sorted suffix sums) finds the segment with
    ``g(left) ≥ 1 > g(right)``, which fixes the sets of zero, free and capped
    coordinates, and on it ``τ = (Σ_free z_i + Σ_capped cap_i − 1)/|free|`` exactly.
    O(N log N), dominated by the sorts.

    Parameters
    ----------
    z : array_like of shape (N,)
        The point to project; finite.
    cap : float or array_like of shape (N,)
        Upper bound on each coordinate, ``≥ 0``; ``np.inf`` leaves a coordinate
        uncapped.  Must satisfy ``Σ cap ≥ 1``; if ``Σ cap = 1`` (up to the rounding of
        the caps, 8 ulps) the set is the single point ``w = cap``, which is returned.

    Returns
    -------
    w : ndarray of shape (N,)
        A new float64 array with ``0 ≤ w ≤ cap`` and ``Σ w = 1``.

    Raises
    ------
    ValueError
        If ``z`` is not a finite non-empty 1-D array, or ``cap`` has a negative or NaN
        entry, the wrong shape, or ``Σ cap < 1`` (empty set).
    """
    z = _as_vector(z, "z")
    c = _as_caps(cap, z.size)
    total = _check_feasible(c)
    if total <= 1.0 + _TIGHT:
        return c  # the set is {cap}; c is already a new array
    w = np.zeros(z.size)
    act = c > 0  # cap 0 forces w_i = 0
    za, ca = z[act], c[act]
    tau = _euclidean_tau(za, ca)
    wa = np.clip(za - tau, 0.0, ca)
    free = (wa > 0) & (wa < ca)
    r = 1.0 - float(wa.sum())
    nfree = int(free.sum())
    if r != 0.0 and nfree:
        tau -= r / nfree
        wa = np.clip(za - tau, 0.0, ca)
    w[act] = wa
    return w


def _euclidean_tau(z: np.ndarray, c: np.ndarray) -> float:
    """The τ with ``Σ clip(z − τ, 0, c) = 1``, for caps ``c > 0`` with ``Σ c > 1``."""
    n = z.size
    # Upper breakpoints U_i = z_i: coordinate i is zero for τ ≥ z_i.
    zs = np.sort(z)
    z_suffix = np.append(np.cumsum(zs[::-1])[::-1], 0.0)  # z_suffix[j] = Σ zs[j:]
    # Lower breakpoints L_i = z_i − c_i (finite caps only): capped for τ ≤ L_i.
    fin = np.isfinite(c)
    low = z[fin] - c[fin]
    order = np.argsort(low)
    ls, cs, zcs = low[order], c[fin][order], z[fin][order]
    c_suffix = np.append(np.cumsum(cs[::-1])[::-1], 0.0)
    zc_suffix = np.append(np.cumsum(zcs[::-1])[::-1], 0.0)

    def g(t: float) -> float:  # Σ_i clip(z_i − t, 0, c_i), from the sorted suffix sums
        i_pos = int(np.searchsorted(zs, t, side="right"))  # z_i > t  ⇔  index ≥ i_pos
        i_cap = int(np.searchsorted(ls, t, side="left"))  # L_i ≥ t  ⇔  index ≥ i_cap
        n_free = (n - i_pos) - (ls.size - i_cap)
        return float(c_suffix[i_cap] + (z_suffix[i_pos] - zc_suffix[i_cap]) - t * n_free)

    # Binary search over the sorted breakpoints for the last one with g ≥ 1 (g is
    # nonincreasing; g(max z) = 0 < 1): O(log N) evaluations of O(log N) each.
    t = np.sort(np.concatenate([zs, ls]))
    if g(t[0]) >= 1.0:
        lo, hi = 0, t.size - 1  # g(t[lo]) ≥ 1 > g(t[hi])
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if g(t[mid]) >= 1.0:
                lo = mid
            else:
                hi = mid
        left, right = t[lo], t[lo + 1]
        zero = z <= left
        capped = fin & (z - c >= right)
    else:  # τ < min breakpoint: every finite cap binds (only if some cap is inf)
        left, right = -np.inf, t[0]
        zero = np.zeros(n, dtype=bool)
        capped = fin.copy()
    free = ~zero & ~capped
    nfree = int(free.sum())
    if nfree == 0:  # g is flat on the segment (only possible through rounding)
        return float(left)
    tau = (float(z[free].sum()) + float(c[capped].sum()) - 1.0) / nfree
    return float(min(max(tau, left), right))


# ---------------------------------------------------------------------------------------
# KL projections (R = Σ w log w − w), in log space
# ---------------------------------------------------------------------------------------


def kl_simplex(log_z: np.ndarray) -> np.ndarray:
    """KL projection onto the simplex: normalisation, ``w = z/‖z‖₁``, from ``log z``.

    ``argmin_{w ∈ S} Σ w_i log(w_i/z_i) − w_i + z_i`` (Def. 1, eq. (2) with the
    negative entropy) is ``w_i = z_i / Σ_j z_j`` (Algorithm 1, entropy row; the
    AdaBoost normalisation).  Computed as the softmax of ``log z`` with the maximum
    subtracted, so ``log z = ±1000`` is exact; ``log z_i = −inf`` gives ``w_i = 0``
    exactly.

    Parameters
    ----------
    log_z : array_like of shape (N,)
        ``log z``; entries finite or ``-inf``, at least one finite.

    Returns
    -------
    w : ndarray of shape (N,)
        A new float64 array on the simplex.
    """
    lz = _as_log_vector(log_z, "log_z")
    m = float(lz.max())
    if m == -np.inf:
        raise ValueError("log_z is -inf everywhere (z = 0): there is nothing to normalise")
    w = np.exp(lz - m)
    return w / w.sum()


def kl_capped_simplex(log_z: np.ndarray, cap: float | np.ndarray) -> np.ndarray:
    """KL projection onto a capped simplex ``{w : Σ w_i = 1, 0 ≤ w_i ≤ cap_i}``.

    ``argmin Σ w_i log(w_i/z_i) − w_i + z_i`` over the capped simplex: Def. 1, eq. (2)
    with the negative entropy, onto smooth-MABoost's ``S_k`` (§3.1, scalar cap ``k/N``)
    or the dataset-combining set ``S_c`` (§3.2, eq. (26): per-coordinate caps,
    ``np.inf`` on the primary set).  §3.1 cites Shalev-Shwartz & Singer (2008) for this
    entropic projection (also Herbster & Warmuth 2001).

    The solution is ``w_i = min(cap_i, c·z_i)`` with ``c > 0`` such that ``Σ w = 1``.
    ``h(log c) = Σ_i min(cap_i, exp(log c + log z_i))`` is increasing, and coordinate
    ``i`` is capped iff ``log c ≥ r_i = log cap_i − log z_i``.  Sorting the ``r_i``
    (smallest ratio capped first), ``h`` at every breakpoint is evaluated in log space
    with a suffix log-sum-exp; the last breakpoint with ``h ≤ 1`` fixes the capped set
    ``C``, and then exactly ``log c = log(1 − Σ_C cap_i) − log Σ_{i∉C} z_i``.
    O(N log N).

    Parameters
    ----------
    log_z : array_like of shape (N,)
        ``log z``; finite or ``-inf`` (``z_i = 0``, which stays ``w_i = 0``).
    cap : float or array_like of shape (N,)
        Upper bound on each coordinate, ``≥ 0``; ``np.inf`` leaves it uncapped.  The
        caps of the coordinates with ``z_i > 0`` must sum to at least 1 (up to 8 ulps;
        if they sum to 1 the answer is ``w = cap`` there and 0 elsewhere).

    Returns
    -------
    w : ndarray of shape (N,)
        A new float64 array with ``0 ≤ w ≤ cap`` and ``Σ w = 1``.

    Raises
    ------
    ValueError
        If ``log_z`` has NaN or ``+inf`` or is all ``-inf``; if ``cap`` is negative,
        NaN, of the wrong shape or sums to less than 1; or if the caps of the
        coordinates with ``z_i > 0`` sum to less than 1 (zeros of ``z`` stay zero under
        a KL projection, so the set cannot be reached).
    """
    lz = _as_log_vector(log_z, "log_z")
    c = _as_caps(cap, lz.size)
    _check_feasible(c)
    pos = lz > -np.inf
    if not pos.any():
        raise ValueError("log_z is -inf everywhere (z = 0): there is nothing to project")
    total = _cap_total(c[pos])
    if total < 1.0 - _TIGHT:
        raise ValueError(
            "cap is infeasible on the support of z: a KL projection keeps w_i = 0 where "
            f"log_z = -inf, and the caps of the other coordinates sum to {total!r} < 1"
        )
    w = np.zeros(lz.size)
    if total <= 1.0 + _TIGHT:
        w[pos] = c[pos]
        return w
    act = pos & (c > 0)
    la, ca = lz[act], c[act]
    with np.errstate(divide="ignore"):
        log_ca = np.log(ca)  # +inf for uncapped coordinates
    # log c = log_c_rel − m: with m the largest log z among the free coordinates,
    # log_c_rel + (log z_i − m) = log w_i ≤ 0 there, so every quantity stays moderate
    # (and the Newton step below is not lost in the ulp of a large log c).
    log_c_rel, m, capped = _kl_log_c(la, ca, log_ca)
    lam = la - m
    wa = _min_cap_exp(log_c_rel + lam, ca, log_ca)
    # Newton step on the identified piece (a no-op in exact arithmetic).
    s_free = float(wa[~capped].sum())
    r = 1.0 - float(wa.sum())
    if r != 0.0 and abs(r) < 0.5 * s_free:
        log_c_rel += math.log1p(r / s_free)
        wa = _min_cap_exp(log_c_rel + lam, ca, log_ca)
    w[act] = wa
    return w


def _min_cap_exp(t: np.ndarray, ca: np.ndarray, log_ca: np.ndarray) -> np.ndarray:
    """``min(ca, exp(t))`` without overflowing ``exp`` where the cap binds."""
    w = ca.copy()
    below = t < log_ca
    w[below] = np.minimum(ca[below], np.exp(t[below]))
    return w


def _kl_log_c(
    la: np.ndarray, ca: np.ndarray, log_ca: np.ndarray
) -> tuple[float, float, np.ndarray]:
    """``Σ min(ca, c·exp(la)) = 1`` for caps ``ca > 0``: ``(log c + m, m, capped mask)``.

    ``m`` is the largest ``la`` among the free (uncapped) coordinates.
    """
    ratio = log_ca - la  # finite, or +inf where uncapped
    order = np.argsort(ratio, kind="stable")
    rs, ls, cs = ratio[order], la[order], ca[order]
    n = rs.size
    # Breakpoint k (0-based, finite ratio): positions ≤ k capped, positions > k free.
    # h(r_k) = P_k + exp(r_k + LSE_{j>k} ls_j) with P_k = Σ_{j≤k} cs_j.
    lse_suffix = np.empty(n)
    lse_suffix[:-1] = np.logaddexp.accumulate(ls[:0:-1])[::-1]
    lse_suffix[-1] = -np.inf
    prefix = np.cumsum(cs)
    nfin = int(np.isfinite(rs).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (prefix[:nfin] <= 1.0) & (
            rs[:nfin] + lse_suffix[:nfin] <= np.log1p(-np.minimum(prefix[:nfin], 1.0))
        )
    below = np.flatnonzero(ok)  # h nondecreasing along the sorted breakpoints
    capped_sorted = np.zeros(n, dtype=bool)
    if below.size:
        k = min(int(below[-1]), n - 2)  # at least one coordinate stays free
        capped_sorted[: k + 1] = True
        mass = 1.0 - float(cs[: k + 1].sum())
        if mass <= 0.0:  # rounding, when the caps nearly fill the simplex
            mass = 1.0 - float(prefix[k])
    else:
        mass = 1.0
    free_ls = ls[~capped_sorted]
    m = float(free_ls.max())
    log_c_rel = math.log(mass) - math.log(float(np.exp(free_ls - m).sum()))
    capped = np.empty(n, dtype=bool)
    capped[order] = capped_sorted
    return log_c_rel, m, capped


def kl_hypercube(log_z: np.ndarray) -> np.ndarray:
    """KL projection onto the unit hypercube ``[0, 1]^N``, in log space (Lemma 5).

    For ``R(w) = Σ w_i log w_i − w_i`` the Bregman projection of ``z ≥ 0`` onto
    ``K = [0, 1]^N`` is ``y_i = min(1, z_i)`` (Lemma 5, supplement eqs. (41)–(44)): the
    first step of the double projection of the MadaBoost variant (Algorithm 3).
    Returned as ``log y = min(0, log z)``.

    Parameters
    ----------
    log_z : array_like of shape (N,)
        ``log z``; finite or ``-inf``.

    Returns
    -------
    log_y : ndarray of shape (N,)
        A new float64 array, ``log y = min(0, log z)`` (``-inf`` stays ``-inf``).
    """
    lz = _as_log_vector(log_z, "log_z")
    return np.minimum(lz, 0.0)


# ---------------------------------------------------------------------------------------
# Bregman divergences (eq. (1)) and mirror maps
# ---------------------------------------------------------------------------------------


def bregman_euclidean(x: np.ndarray, y: np.ndarray) -> float:
    """``B(x, y) = ½‖x − y‖²``: eq. (1) for ``R = ½‖w‖²``.

    Parameters
    ----------
    x, y : array_like of shape (N,)
        Finite vectors of the same length.

    Returns
    -------
    float
    """
    x, y = _pair(x, y)
    d = x - y
    return 0.5 * float(d @ d)


def bregman_kl(x: np.ndarray, y: np.ndarray) -> float:
    """Generalised KL divergence ``B(x, y) = Σ x_i log(x_i/y_i) − x_i + y_i``.

    Eq. (1) for the negative entropy ``R(w) = Σ w_i log w_i − w_i`` (or ``Σ w log w``;
    the linear term cancels).  ``0 log 0 = 0`` (``scipy.special.rel_entr``), and the
    divergence is ``inf`` when ``y_i = 0 < x_i``.

    Parameters
    ----------
    x, y : array_like of shape (N,)
        Non-negative finite vectors of the same length.

    Returns
    -------
    float
    """
    x, y = _pair(x, y)
    if (x < 0).any():
        raise ValueError("x has negative entries; the KL divergence needs x >= 0")
    if (y < 0).any():
        raise ValueError("y has negative entries; the KL divergence needs y >= 0")
    return float(np.sum(rel_entr(x, y) - x + y))


def _pair(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = _as_vector(x, "x")
    y = _as_vector(y, "y")
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape; got {x.shape} and {y.shape}")
    return x, y


def grad_euclidean(w: np.ndarray) -> np.ndarray:
    """``∇R(w) = w`` for ``R = ½‖w‖²`` (the identity mirror map); a new array."""
    return _as_vector(w, "w").copy()


def grad_entropy(w: np.ndarray) -> np.ndarray:
    """``∇R(w) = log w`` for ``R = Σ w_i log w_i − w_i`` (Lemma 5); ``log 0 = -inf``.

    For the paper's ``R = Σ w log w`` the gradient is ``1 + log w``; the constant
    cancels in every difference of gradients (eq. (5), the mirror step (c)).
    """
    w = _as_vector(w, "w")
    if (w < 0).any():
        raise ValueError("w has negative entries; the entropy is defined for w >= 0")
    with np.errstate(divide="ignore"):
        return np.log(w)
