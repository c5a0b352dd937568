"""Small boosting instances given as margin matrices, and how to feed them to a booster.

Every matrix here is in the library's **margin convention** ``M[i, j] = y_i h_j(x_i)``
(positive when right), with entries in [−1, 1].  Telgarsky's (2012, 2013) matrices are
``A = −M``.  :func:`matrix_problem` turns a margin matrix into the ``(X, y, H)`` that
``CoordinateBoostingClassifier(MatrixOracle(H)).fit(X, y)`` takes.

The random generators follow the recipes of the implementer's note on Telgarsky (2012),
§5.2, and return the hard core they build alongside the matrix; see
:func:`oracleboost.diagnostics.hard_core`.

References
----------
Telgarsky, M. (2012). A primal-dual convergence analysis of boosting. JMLR 13.
Telgarsky, M. (2013). Margins, shrinkage, and boosting. ICML.
Rudin, C., Daubechies, I. & Schapire, R. E. (2004). The dynamics of AdaBoost: cyclic
behavior and convergence of margins. JMLR 5, 1557–1595.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from oracleboost._typing import ArrayLike, RandomStateLike
from oracleboost._validation import check_finite_array
from oracleboost.datasets._common import _check_size

__all__ = [
    "rudin_matrix",
    "schapire_matrix",
    "matrix_problem",
    "separable_matrix",
    "attainable_matrix",
    "mixed_matrix",
]

# Rows whose margin along the construction's direction is below this (in units of the
# direction's ℓ2 norm) are redrawn, so the LP certificates stay well scaled.
_MIN_MARGIN = 0.05


def rudin_matrix() -> np.ndarray:
    """The 8×8 ±1 matrix of Rudin, Daubechies & Schapire (2004, Theorem 7).

    In the margin convention (Rudin's ``M_ij = y_i h_j(x_i)``).  Its maximum ℓ1 margin is
    ``γ = 3/8``, attained at ``λ* = (2, 3, 4, 1, 2, 2, 1, 1)/16``, while AdaBoost started
    from the uniform distribution converges to margin 1/3 (Rudin et al. start from a
    special non-uniform distribution).  Telgarsky (2013, Figures 2 and 3) uses it to show
    that shrinkage (ν ≲ 0.92) or a Wolfe search recovers the maximum margin.

    Returns
    -------
    ndarray of shape (8, 8)
    """
    return np.array(
        [
            [-1, 1, 1, 1, 1, -1, -1, 1],
            [-1, 1, 1, -1, -1, 1, 1, 1],
            [1, -1, 1, 1, 1, -1, 1, 1],
            [1, -1, 1, 1, -1, 1, 1, 1],
            [1, -1, 1, -1, 1, 1, 1, -1],
            [1, 1, -1, 1, 1, 1, 1, -1],
            [1, 1, -1, 1, 1, 1, -1, 1],
            [1, 1, 1, 1, -1, -1, 1, -1],
        ],
        dtype=np.float64,
    )


def schapire_matrix() -> np.ndarray:
    """Schapire's (2010) 3×2 matrix, in the **margin** convention.

    Telgarsky (2012, §6.3) writes it as ``S = [[−1, 1], [1, −1], [−1, −1]]`` in his
    ``A = −y h`` convention; this returns ``M = −S = [[1, −1], [−1, 1], [1, 1]]``.
    Its hard core is rows {0, 1} (``Ker(M^T) = {z (1, 1, 0)}``), the dual optimum is
    ``ψ^f = g'(0) (1, 1, 0)``, and the optimal summed risk is ``f̄ = 2 g(0)``: 2 ln 2 for
    the logistic loss, 2 for the exponential.  The optimum pushes ``λ_1 = λ_2 → ∞``
    with margins → (0, 0, ∞), and exact-line-search logistic boosting has gap
    ``≥ 1/(8t)`` (Thm 28).

    Returns
    -------
    ndarray of shape (3, 2)
    """
    return np.array([[1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]])


def matrix_problem(M: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Turn a margin matrix into a classification problem over a fixed hypothesis matrix.

    Parameters
    ----------
    M : array-like of shape (n_examples, n_hypotheses)
        ``M[i, j] = y_i h_j(x_i)``.

    Returns
    -------
    X : ndarray of int64, shape (n_examples, 1)
        Row indices ``0, …, m − 1`` (what :class:`~oracleboost.oracles.MatrixOracle` reads).
    y : ndarray of shape (n_examples,)
        Labels ``+1, −1, +1, …`` (both classes present as soon as m ≥ 2).
    H : ndarray of shape (n_examples, n_hypotheses)
        ``H = y[:, None] * M``, so that ``y_i H[i, j] = M[i, j]``.

    Examples
    --------
    >>> from oracleboost.datasets import matrix_problem, rudin_matrix
    >>> X, y, H = matrix_problem(rudin_matrix())
    >>> bool((y[:, None] * H == rudin_matrix()).all())
    True
    """
    M = check_finite_array(M, "M", ndim=(2,))
    m = M.shape[0]
    y = np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
    X = np.arange(m, dtype=np.int64)[:, None]
    return X, y, y[:, None] * M


def _signed_rows(rng: np.random.RandomState, k: int, n: int, u: np.ndarray) -> np.ndarray:
    """``k`` rows from U[−1, 1]^n with ``a · u ≥ _MIN_MARGIN ||u||_2`` (sign-flipped, redrawn)."""
    rows = np.empty((k, n))
    unit = u / np.linalg.norm(u)
    filled = 0
    while filled < k:
        a = rng.uniform(-1.0, 1.0, size=n)
        proj = float(a @ unit)
        if abs(proj) >= _MIN_MARGIN:
            rows[filled] = a if proj > 0 else -a
            filled += 1
    return rows


def _kernel_rows(rng: np.random.RandomState, k: int, n: int) -> np.ndarray:
    """``k`` rows with ``ψ_0^T B = 0`` for a strictly positive ψ_0 (all of them in the core)."""
    psi0 = rng.uniform(0.5, 1.5, size=k)
    B = rng.uniform(-1.0, 1.0, size=(k, n))
    return B - np.outer(psi0, psi0 @ B) / (psi0 @ psi0)


def _scale(M: np.ndarray) -> np.ndarray:
    top = float(np.max(np.abs(M)))
    return M / top if top > 0 else M


def separable_matrix(
    m: int, n: int, random_state: RandomStateLike = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A weakly learnable instance: empty hard core, γ > 0.

    Rows drawn from U[−1, 1]^n and sign-flipped so that ``M λ* > 0`` for a Gaussian λ*
    (rows nearly orthogonal to λ* are redrawn).

    Parameters
    ----------
    m, n : int
        Examples and hypotheses (≥ 1 each).
    random_state : int, RandomState instance or None, default=0

    Returns
    -------
    M : ndarray of shape (m, n)
        Entries in [−1, 1].
    core : ndarray of bool, shape (m,)
        All False.
    """
    m, n = _check_size(m, "m", 1), _check_size(n, "n", 1)
    rng = check_random_state(random_state)
    lam = rng.standard_normal(n)
    return _scale(_signed_rows(rng, m, n, lam)), np.zeros(m, dtype=bool)


def attainable_matrix(
    m: int, n: int, random_state: RandomStateLike = 0
) -> tuple[np.ndarray, np.ndarray]:
    """An attainable instance: every row in the hard core.

    ``M = B − ψ_0 (ψ_0^T B)/||ψ_0||²`` for ``B ~ U[−1, 1]^{m×n}`` and a strictly positive
    ψ_0, rescaled to ``max |M_ij| = 1``; then ``M^T ψ_0 = 0`` (Stiemke, Thm 14).

    Parameters
    ----------
    m, n : int
        Examples (≥ 2) and hypotheses (≥ 1).
    random_state : int, RandomState instance or None, default=0

    Returns
    -------
    M : ndarray of shape (m, n)
    core : ndarray of bool, shape (m,)
        All True.
    """
    m, n = _check_size(m, "m", 2), _check_size(n, "n", 1)
    rng = check_random_state(random_state)
    return _scale(_kernel_rows(rng, m, n)), np.ones(m, dtype=bool)


def mixed_matrix(
    m0: int, m_plus: int, n: int, random_state: RandomStateLike = 0
) -> tuple[np.ndarray, np.ndarray]:
    """A mixed instance whose hard core is ``m_plus`` known rows.

    Core rows: as in :func:`attainable_matrix`, then projected so that ``M_+ u = 0`` for a
    random unit direction u.  Non-core rows: drawn from U[−1, 1]^n and sign-flipped so
    that ``a · u > 0`` (Eq. 15 with certificate u).  The rows are shuffled and the whole
    matrix rescaled to ``max |M_ij| = 1``.

    Parameters
    ----------
    m0 : int
        Rows off the core (≥ 1).
    m_plus : int
        Rows in the core (≥ 2).
    n : int
        Hypotheses (≥ 2).
    random_state : int, RandomState instance or None, default=0

    Returns
    -------
    M : ndarray of shape (m0 + m_plus, n)
    core : ndarray of bool, shape (m0 + m_plus,)
        True on the ``m_plus`` core rows.
    """
    m0 = _check_size(m0, "m0", 1)
    m_plus = _check_size(m_plus, "m_plus", 2)
    n = _check_size(n, "n", 2)
    rng = check_random_state(random_state)
    u = rng.standard_normal(n)
    u /= np.linalg.norm(u)
    plus = _kernel_rows(rng, m_plus, n)
    plus = plus - np.outer(plus @ u, u)
    zero = _signed_rows(rng, m0, n, u)
    M = np.vstack([zero, plus])
    core = np.concatenate([np.zeros(m0, dtype=bool), np.ones(m_plus, dtype=bool)])
    order = rng.permutation(m0 + m_plus)
    return _scale(M[order]), core[order]
