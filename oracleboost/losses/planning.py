"""Maximum margin planning (Ratliff, Bagnell & Zinkevich 2006; Ratliff et al. 2009).

The imitation-learning objective of Grubb & Bagnell's (2011) Figure 1.  A learner's raw
output f is a cost on states; on map i with demonstrated path ξ_i and loss field L_i ≥ 0
(0 on the demonstration),

    R[f] = (1/M) Σ_i [ C_f(ξ_i) − min_ξ ( C_f(ξ) − L_i(ξ) ) ],    C_f(ξ) = Σ_{s∈ξ} f(s),

convex (a maximum of affine functions of f, negated minimum), piecewise linear, non-smooth
and ≥ 0.  Paths live on a DAG (see :class:`oracleboost.datasets.GridWorlds`: left to
right, one cell per column, moves up-right / right / down-right), so dynamic programming
finds the exact minimiser for costs of any sign and no positivity constraint (which
would break convexity) is needed.  The planner, :func:`dag_shortest_paths`, is here,
with the loss that plans with it; :mod:`oracleboost.datasets.planning` demonstrates paths
on its worlds with it (the losses' room imports no data module).

Function space (P10 of the implementer's note): P̂ is uniform over **all** N states of the
training maps, ``<a, b> = (1/N) Σ_n a_n b_n``, so the L2(P̂) subgradient is
``g_n = N ∂R/∂F_n = (N/M) (visits of n by ξ_i − visits of n by ξ*_i)`` with ξ*_i the
loss-augmented plan (the argmin above); most targets are 0.

References
----------
Ratliff, N., Bagnell, J. A. & Zinkevich, M. (2006). Maximum margin planning. ICML.
Ratliff, N., Silver, D. & Bagnell, J. A. (2009). Learning to search: functional gradient
techniques for imitation learning. Autonomous Robots 27(1), 25–53.
Grubb, A. & Bagnell, J. A. (2011). Generalized boosting algorithms for convex
optimization. ICML.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from oracleboost._typing import ArrayLike
from oracleboost._validation import check_finite_array, check_sample_weight
from oracleboost.losses.base import Loss

__all__ = ["dag_shortest_paths", "PlanningLoss", "planning_test_loss"]


class PlanningWorlds(Protocol):
    """What :class:`PlanningLoss` reads of its maps: the fields of
    :class:`oracleboost.datasets.GridWorlds` (which the losses' room does not import)."""

    @property
    def shape(self) -> tuple[int, int]: ...

    @property
    def paths(self) -> np.ndarray: ...

    @property
    def loss_field(self) -> np.ndarray: ...

    @property
    def start_rows(self) -> np.ndarray | None: ...

    @property
    def goal_rows(self) -> np.ndarray | None: ...


class PlanningLoss(Loss):
    """The maximum-margin-planning loss R[f] on a fixed set of maps (module docstring).

    ``raw`` is the cost f on every state of ``worlds``, aligned with ``worlds.X`` rows;
    ``y`` is accepted for the :class:`Loss` interface (length n_states, e.g.
    ``worlds.map_index``) and otherwise ignored — the targets are the demonstrations
    held by ``worlds``.

    * ``loss(y, raw)[n]`` = R_i of the map i of state n, so the mean over states is
      R[f] (every map has H·W states).
    * ``gradient(y, raw)`` = ``(N/M)(1[n ∈ ξ_i] − 1[n ∈ ξ*_i])`` with ξ*_i the
      loss-augmented plan, i.e. N ∂R/∂F_n for P̂ uniform over all N states (P10).  A
      subgradient: R[g] ≥ R[f] + <g − f, ∇R[f]>_P̂ for every g.  When the
      demonstration is itself a loss-augmented optimum (R_i = 0, e.g. at a tie) the
      demonstration is taken as the plan, so that map contributes a zero gradient.
    * ``init_raw`` is 0: with a DAG planner the loss is convex for costs of any sign,
      so no positive offset is needed (at f = 0 the plan is the path with most cells off
      the demonstration).
    * Sample weights are not supported: ``__call__`` raises on non-uniform weights.

    The loss of held-out maps is ``PlanningLoss(test_worlds)(y, raw_test)``
    (:func:`planning_test_loss`).

    Step sizes: the subgradient has entries ±H·W, so a first step η_1 = 1 moves path
    costs by far more than the margins asked (at most 1 a cell).  On the 12×12 terrain
    maps of ``grubb2011-figure1`` one 5-unit net with η_1 = 1 takes training R from 12
    to 23.9 and held-out R to 39.9; with η_1 = 0.03 to 9.29 and 9.73 (η_t = 0.03/√t
    is the figure's schedule).

    Parameters
    ----------
    worlds : GridWorlds
        From :func:`oracleboost.datasets.make_terrain_worlds` or
        :func:`~oracleboost.datasets.make_grid_worlds` (or any object with their
        ``shape``, ``paths``, ``loss_field``, ``start_rows`` and ``goal_rows``).
    augmentation : float, default=1.0
        Scale a ≥ 0 of the loss field: the margin required is ``a L_i(ξ)``; a = 0 gives
        the structured perceptron loss (R = 0 at f = 0).
    """

    name = "planning"
    differentiable = False

    def __init__(self, worlds: PlanningWorlds, augmentation: float = 1.0) -> None:
        missing = [
            a
            for a in ("shape", "paths", "loss_field", "start_rows", "goal_rows")
            if not hasattr(worlds, a)
        ]
        if missing:
            raise TypeError(f"worlds must be a GridWorlds; {type(worlds).__name__} lacks {missing}")
        if not (np.isfinite(augmentation) and augmentation >= 0):
            raise ValueError(f"augmentation must be finite and ≥ 0; got {augmentation!r}")
        self.worlds = worlds
        self.augmentation = float(augmentation)

    # -- geometry ------------------------------------------------------------------------
    @property
    def n_states(self) -> int:
        H, W = self.worlds.shape
        return int(self.worlds.paths.shape[0]) * H * W

    def _grid(self, raw: ArrayLike) -> np.ndarray:
        raw = check_finite_array(raw, "raw", ndim=(1,))
        if raw.shape[0] != self.n_states:
            raise ValueError(
                f"raw has {raw.shape[0]} entries but the worlds have {self.n_states} states"
            )
        return raw.reshape(-1, *self.worlds.shape)

    def _check_y(self, y: ArrayLike | None) -> None:
        if y is not None and np.shape(y)[:1] != (self.n_states,):
            raise ValueError(
                f"y must have {self.n_states} entries (one per state); got shape {np.shape(y)}"
            )

    def _solve(self, raw: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-map R_i, the loss-augmented plans and the demonstrations' paths."""
        f = self._grid(raw)
        M, H, W = f.shape
        augmented = f - self.augmentation * np.asarray(self.worlds.loss_field).reshape(M, H, W)
        plans, v_plan = dag_shortest_paths(augmented, self.worlds.start_rows, self.worlds.goal_rows)
        demo = np.asarray(self.worlds.paths)
        maps, cols = np.arange(M)[:, None], np.arange(W)[None, :]
        v_demo = augmented[maps, demo, cols].sum(axis=1)
        c_demo = f[maps, demo, cols].sum(axis=1)
        # The demonstration is feasible, so min ≤ v_demo; on ties (and rounding) use it.
        demo_wins = v_plan >= v_demo
        plans = np.where(demo_wins[:, None], demo, plans)
        per_map = c_demo - np.where(demo_wins, v_demo, v_plan)
        return per_map, plans, demo

    # -- public --------------------------------------------------------------------------
    def plan(self, raw: ArrayLike, *, augmented: bool = True) -> np.ndarray:
        """Optimal paths under cost ``raw`` (minus ``a·L`` if ``augmented``), (n_maps, W)."""
        f = self._grid(raw)
        if augmented:
            f = f - self.augmentation * np.asarray(self.worlds.loss_field).reshape(f.shape)
        return dag_shortest_paths(f, self.worlds.start_rows, self.worlds.goal_rows)[0]

    def map_losses(self, raw: ArrayLike) -> np.ndarray:
        """R_i for each map, shape (n_maps,); their mean is R[f]."""
        return self._solve(raw)[0]

    def loss(self, y: ArrayLike | None, raw: ArrayLike) -> np.ndarray:
        self._check_y(y)
        H, W = self.worlds.shape
        return np.repeat(self._solve(raw)[0], H * W)

    def gradient(self, y: ArrayLike | None, raw: ArrayLike) -> np.ndarray:
        self._check_y(y)
        _, plans, demo = self._solve(raw)
        M, W = demo.shape
        H = self.worlds.shape[0]
        g = np.zeros((M, H, W))
        maps, cols = np.arange(M)[:, None], np.arange(W)[None, :]
        g[maps, demo, cols] += 1.0
        g[maps, plans, cols] -= 1.0
        return g.ravel() * (H * W)  # N / M

    def init_raw(self, y: ArrayLike | None, sample_weight: ArrayLike | None = None) -> float:
        return 0.0

    def __call__(
        self, y: ArrayLike | None, raw: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> float:
        """R[f]; ``sample_weight`` must be None or uniform."""
        if sample_weight is not None:
            w = check_sample_weight(sample_weight, self.n_states)
            if not np.all(w == w[0]):
                raise ValueError(
                    "PlanningLoss does not support non-uniform sample_weight: P̂ is uniform "
                    "over the states of the maps (pass None or equal weights)"
                )
        self._check_y(y)
        return float(np.mean(self._solve(raw)[0]))


def planning_test_loss(
    worlds: PlanningWorlds, raw: ArrayLike, augmentation: float = 1.0
) -> float:
    """R[f] on (held-out) ``worlds`` for costs ``raw`` on their states."""
    loss = PlanningLoss(worlds, augmentation)
    return loss(None, raw)


# -- the planner (loss-augmented inference: the max over paths) ----------------------------

# Row offsets of the predecessor, in tie-breaking order (straight first, then from above).
_OFFSETS = np.array([0, -1, 1], dtype=np.int64)


def _endpoint_mask(rows: ArrayLike | None, M: int, H: int, name: str) -> np.ndarray | None:
    if rows is None:
        return None
    rows = np.asarray(rows)
    if rows.shape != (M,) or not np.issubdtype(rows.dtype, np.integer):
        raise ValueError(f"{name} must be None or {M} integer rows; got {rows!r}")
    if rows.min() < 0 or rows.max() >= H:
        raise ValueError(f"{name} must lie in [0, {H}); got {rows}")
    mask = np.zeros((M, H), dtype=bool)
    mask[np.arange(M), rows] = True
    return mask


def dag_shortest_paths(
    cost: ArrayLike, start_rows: ArrayLike | None = None, goal_rows: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray | float]:
    """Cheapest left-to-right path on each grid, exact for costs of any sign.

    A path visits one cell per column, moving from row r in column c to row r − 1, r or
    r + 1 in column c + 1; its cost is the sum of its cells' costs.  Dynamic programming
    over columns, vectorised over maps and rows (a Python loop over the W columns only).
    Ties go to the straight move, then to the predecessor above, then below; among
    equally cheap end cells, to the lowest row.

    Parameters
    ----------
    cost : array-like of shape (n_maps, H, W) or (H, W)
    start_rows, goal_rows : array-like of int, shape (n_maps,), or None
        Fixed row in column 0 / column W − 1 of each map; None leaves it free.

    Returns
    -------
    paths : ndarray of int64, shape (n_maps, W) (or (W,) for a 2-D ``cost``)
        The row of the path in each column.
    values : ndarray of float64, shape (n_maps,) (or a float)
        ``cost`` summed along each path (``cost[i, paths[i], arange(W)].sum()``).

    Raises
    ------
    ValueError
        When a fixed goal is unreachable from the fixed start (|Δrow| > W − 1).
    """
    cost = np.asarray(cost, dtype=np.float64)
    single = cost.ndim == 2
    if single:
        cost = cost[None]
    cost = check_finite_array(cost, "cost", ndim=(3,))
    M, H, W = cost.shape
    if H < 1 or W < 1 or M < 1:
        raise ValueError(f"cost must be non-empty; got shape {cost.shape}")
    start = _endpoint_mask(start_rows, M, H, "start_rows")
    goal = _endpoint_mask(goal_rows, M, H, "goal_rows")

    value = cost[:, :, 0].copy()
    if start is not None:
        value[~start] = np.inf
    back = np.zeros((M, H, W), dtype=np.int64)  # predecessor offset per (map, row, column)
    padded = np.full((M, H + 2), np.inf)
    for c in range(1, W):
        padded[:, 1:-1] = value
        # candidates[k, i, r] = best value of (map i, row r + _OFFSETS[k]) in column c − 1
        candidates = np.stack([padded[:, 1:-1], padded[:, :-2], padded[:, 2:]])
        k = np.argmin(candidates, axis=0)
        back[:, :, c] = _OFFSETS[k]
        value = np.take_along_axis(candidates, k[None], axis=0)[0] + cost[:, :, c]
    if goal is not None:
        value = np.where(goal, value, np.inf)
    if not np.all(np.isfinite(value.min(axis=1))):
        raise ValueError("a goal row is unreachable from its start row (|Δrow| > W − 1)")

    maps = np.arange(M)
    paths = np.empty((M, W), dtype=np.int64)
    paths[:, -1] = np.argmin(value, axis=1)
    for c in range(W - 1, 0, -1):
        paths[:, c - 1] = paths[:, c] + back[maps, paths[:, c], c]
    values = cost[maps[:, None], paths, np.arange(W)[None, :]].sum(axis=1)
    if single:
        return paths[0], float(values[0])
    return paths, values
