"""Synthetic planning maps of Grubb & Bagnell's (2011) experiments, §5, Figure 1.

:func:`make_terrain_worlds` / :func:`make_grid_worlds` build synthetic
maximum-margin-planning maps (:class:`GridWorlds`), used with
:class:`oracleboost.losses.planning.PlanningLoss`.  The paths are demonstrated with the
loss' own planner, :func:`oracleboost.losses.planning.dag_shortest_paths`, which also
plans the loss-augmented paths (the losses' room imports no data module).

References
----------
Grubb, A. & Bagnell, J. A. (2011). Generalized boosting algorithms for convex
optimization. ICML.
Ratliff, N., Silver, D. & Bagnell, J. A. (2009). Learning to search: functional gradient
techniques for imitation learning. Autonomous Robots 27(1), 25–53.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter
from sklearn.utils import check_random_state

from oracleboost._typing import ArrayLike, RandomStateLike
from oracleboost._validation import check_finite_array
from oracleboost.datasets._common import _check_size
from oracleboost.losses.planning import dag_shortest_paths  # the planner the loss plans with

__all__ = [
    "GridWorlds",
    "make_terrain_worlds",
    "grid_world_cost",
    "make_grid_worlds",
]

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

    def __post_init__(self) -> None:
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

    def path_states(self, paths: ArrayLike | None = None) -> np.ndarray:
        """Row indices into ``X`` of the cells of one path per map, shape (n_maps, W)."""
        H, W = self.shape
        paths = self.paths if paths is None else np.asarray(paths)
        maps = np.arange(self.n_maps)[:, None]
        return maps * (H * W) + paths * W + np.arange(W)[None, :]

    def select(self, maps: ArrayLike) -> GridWorlds:
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


def grid_world_cost(X: ArrayLike, cost_seed: int = 0) -> np.ndarray:
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
    random_state: RandomStateLike = None,
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
    random_state: RandomStateLike = None,
    *,
    terrain_costs: ArrayLike | None = None,
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


def _check_loss_field(loss_field: str, margin_width: float) -> None:
    if loss_field not in ("hamming", "distance"):
        raise ValueError(f"loss_field must be 'hamming' or 'distance'; got {loss_field!r}")
    if not (np.isfinite(margin_width) and margin_width > 0):
        raise ValueError(f"margin_width must be finite and > 0; got {margin_width!r}")


def _smooth_fields(
    rng: np.random.RandomState, M: int, p: int, n: int, width: float = 8.0
) -> np.ndarray:
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
    X: np.ndarray, true_cost: np.ndarray, M: int, n: int, rng: np.random.RandomState,
    fixed_endpoints: bool, loss_field: str, margin_width: float,
) -> GridWorlds:
    """Endpoints, the optimal (demonstrated) paths under ``true_cost`` and the loss field."""
    start_rows: np.ndarray | None
    goal_rows: np.ndarray | None
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
