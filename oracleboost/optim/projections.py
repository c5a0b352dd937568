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

Every projection is exact, and has one implementation: the four on the simplex and
capped simplex delegate to :mod:`.row_projections`, which runs them as stages of row
blocks (in memory here, on ``RowBlocks(N, n_jobs=1)``; on a Dask cluster's workers in a
fit).  The multiplier (``τ``, or ``log c``) is found by an exact map-reduce selection
over the breakpoints of a monotone piecewise-linear (Euclidean) or piecewise-exponential
(KL) equation, solved in closed form on the identified piece (no bisection, no
tolerance), and one Newton step on the piece (a no-op in exact arithmetic) removes the
rounding error of the closed form, so that the result sums to 1 to within a few ulps.
Results are new float64 arrays; coordinates the projection sets to zero are exactly
``0.0``.  KL projections take and return weights through ``log z`` so that
``log z = ±1000`` neither overflows nor underflows to NaN; ``log z_i = −inf``
(``z_i = 0``) is allowed and the projection keeps ``w_i = 0``.

Tests: ``tests/test_projections.py`` (against a generic constrained solver, and the
paper's Lemmas 1, 2 and 4).
"""

from __future__ import annotations

import numpy as np
from scipy.special import rel_entr

from oracleboost.optim.row_projections import euclidean_simplex_rows, kl_simplex_rows
from oracleboost.rows.blocks import RowBlocks

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


def _as_caps(cap, n: int) -> float | np.ndarray:
    """``cap`` checked, as the row projections take it: a float when it is a scalar (no
    per-row array needed), else a new float64 array of shape ``(n,)``."""
    try:
        c = np.asarray(cap, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"cap must be a number or a numeric array-like; got {type(cap).__name__}"
        ) from exc
    if c.ndim != 0 and (c.ndim != 1 or c.shape[0] != n):
        raise ValueError(f"cap must be a scalar or have shape ({n},); got shape {c.shape}")
    if np.isnan(c).any():
        raise ValueError("cap contains NaN; caps must be non-negative numbers or np.inf")
    if (c < 0).any():
        raise ValueError("cap contains negative values; caps must be >= 0 (np.inf = no cap)")
    return float(c) if c.ndim == 0 else c.copy()


def _blocks(n: int) -> RowBlocks:
    """The rows of an in-memory projection: one thread (the caller's)."""
    return RowBlocks(n, n_jobs=1)


# ---------------------------------------------------------------------------------------
# Euclidean projections (R = ½‖w‖²)
# ---------------------------------------------------------------------------------------


def euclidean_simplex(z: np.ndarray) -> np.ndarray:
    """Euclidean projection onto the probability simplex.

    ``argmin_{w ∈ S} ½‖w − z‖²`` with ``S = {w : Σ w_i = 1, w ≥ 0}``: the Bregman
    projection (Def. 1, eq. (2)) of MABoost with ``R = ½‖w‖²`` (Algorithm 1, step (d)).

    The solution is ``w = max(z − τ, 0)`` with ``Σ_i max(z_i − τ, 0) = 1`` (Held, Wolfe
    & Crowder 1974; Duchi, Shalev-Shwartz, Singer & Chandra 2008, Fig. 1, who find ``τ``
    by a sort).  ``τ`` is found exactly by :func:`.row_projections.euclidean_simplex_rows`
    (a selection over the breakpoints ``z_i`` in a few O(N) passes, no sort of the N
    values), then the closed form ``τ = (Σ_{z_i > τ} z_i − 1)/ρ``, ``ρ`` the size of the
    support, on the identified piece and one Newton step.

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
    return euclidean_simplex_rows(_blocks(z.size), z)


def euclidean_capped_simplex(z: np.ndarray, cap: float | np.ndarray) -> np.ndarray:
    """Euclidean projection onto a capped simplex ``{w : Σ w_i = 1, 0 ≤ w_i ≤ cap_i}``.

    With a scalar ``cap = k/N`` this is smooth-MABoost's set ``S_k`` (§3.1); with caps
    ``k/N`` on the secondary data set and ``np.inf`` on the primary one it is the
    dataset-combining set ``S_c`` of §3.2, eq. (26).  The projection is Def. 1, eq. (2)
    with ``R = ½‖w‖²``.

    The solution is ``w = clip(z − τ, 0, cap)``: ``g(τ) = Σ_i clip(z_i − τ, 0, cap_i)``
    is continuous, nonincreasing and piecewise linear with breakpoints
    ``{z_i} ∪ {z_i − cap_i}``.  :func:`.row_projections.euclidean_simplex_rows` finds the
    segment between consecutive breakpoints with ``g(left) ≥ 1 > g(right)`` by a
    selection (pivots, exact counts between them, then the few breakpoints left),
    which fixes the sets of zero, free and capped coordinates, and on it
    ``τ = (Σ_free z_i + Σ_capped cap_i − 1)/|free|`` exactly, then one Newton step.

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
    return euclidean_simplex_rows(_blocks(z.size), z, _as_caps(cap, z.size))


# ---------------------------------------------------------------------------------------
# KL projections (R = Σ w log w − w), in log space
# ---------------------------------------------------------------------------------------


def kl_simplex(log_z: np.ndarray) -> np.ndarray:
    """KL projection onto the simplex: normalisation, ``w = z/‖z‖₁``, from ``log z``.

    ``argmin_{w ∈ S} Σ w_i log(w_i/z_i) − w_i + z_i`` (Def. 1, eq. (2) with the
    negative entropy) is ``w_i = z_i / Σ_j z_j`` (Algorithm 1, entropy row; the
    AdaBoost normalisation).  Computed as the softmax of ``log z`` with the maximum
    subtracted (:func:`.row_projections.kl_simplex_rows`), so ``log z = ±1000`` is
    exact; ``log z_i = −inf`` gives ``w_i = 0`` exactly.

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
    return kl_simplex_rows(_blocks(lz.size), lz)


def kl_capped_simplex(log_z: np.ndarray, cap: float | np.ndarray) -> np.ndarray:
    """KL projection onto a capped simplex ``{w : Σ w_i = 1, 0 ≤ w_i ≤ cap_i}``.

    ``argmin Σ w_i log(w_i/z_i) − w_i + z_i`` over the capped simplex: Def. 1, eq. (2)
    with the negative entropy, onto smooth-MABoost's ``S_k`` (§3.1, scalar cap ``k/N``)
    or the dataset-combining set ``S_c`` (§3.2, eq. (26): per-coordinate caps,
    ``np.inf`` on the primary set).  §3.1 cites Shalev-Shwartz & Singer (2008) for this
    entropic projection (also Herbster & Warmuth 2001).

    The solution is ``w_i = min(cap_i, c·z_i)`` with ``c > 0`` such that ``Σ w = 1``.
    ``h(log c) = Σ_i min(cap_i, exp(log c + log z_i))`` is increasing, and coordinate
    ``i`` is capped iff ``log c ≥ r_i = log cap_i − log z_i``.
    :func:`.row_projections.kl_simplex_rows` finds the last breakpoint ``r_i`` with
    ``h ≤ 1`` by a selection over the ``r_i`` (``h`` evaluated in log space, no term
    above its cap), which fixes the capped set ``C``, and then exactly
    ``log c = log(1 − Σ_C cap_i) − log Σ_{i∉C} z_i``, with one Newton step.

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
    return kl_simplex_rows(_blocks(lz.size), lz, _as_caps(cap, lz.size))


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
