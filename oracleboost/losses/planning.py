"""Maximum margin planning (Ratliff, Bagnell & Zinkevich 2006; Ratliff et al. 2009).

The imitation-learning objective of Grubb & Bagnell's (2011) Figure 1.  A learner's raw
output f is a cost on states; on map i with demonstrated path ξ_i and loss field L_i ≥ 0
(0 on the demonstration),

    R[f] = (1/M) Σ_i [ C_f(ξ_i) − min_ξ ( C_f(ξ) − L_i(ξ) ) ],    C_f(ξ) = Σ_{s∈ξ} f(s),

convex (a maximum of affine functions of f, negated minimum), piecewise linear, non-smooth
and ≥ 0.  Paths live on a DAG (see :class:`oracleboost.datasets.GridWorlds`: left to
right, one cell per column, moves up-right / right / down-right), so dynamic programming
finds the exact minimiser for costs of any sign and no positivity constraint (which
would break convexity) is needed.  The planner, :func:`dag_shortest_paths`, lives in
:mod:`oracleboost.datasets.planning` beside the worlds it plans on and is re-exported here.

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

import numpy as np

from .._validation import check_finite_array, check_sample_weight
from ..datasets.planning import dag_shortest_paths  # lives beside the worlds
from .base import Loss

__all__ = ["dag_shortest_paths", "PlanningLoss", "planning_test_loss"]


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

    def __init__(self, worlds, augmentation: float = 1.0):
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

    def _grid(self, raw) -> np.ndarray:
        raw = check_finite_array(raw, "raw", ndim=(1,))
        if raw.shape[0] != self.n_states:
            raise ValueError(
                f"raw has {raw.shape[0]} entries but the worlds have {self.n_states} states"
            )
        return raw.reshape(-1, *self.worlds.shape)

    def _check_y(self, y) -> None:
        if y is not None and np.shape(y)[:1] != (self.n_states,):
            raise ValueError(
                f"y must have {self.n_states} entries (one per state); got shape {np.shape(y)}"
            )

    def _solve(self, raw) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    def plan(self, raw, *, augmented: bool = True) -> np.ndarray:
        """Optimal paths under cost ``raw`` (minus ``a·L`` if ``augmented``), (n_maps, W)."""
        f = self._grid(raw)
        if augmented:
            f = f - self.augmentation * np.asarray(self.worlds.loss_field).reshape(f.shape)
        return dag_shortest_paths(f, self.worlds.start_rows, self.worlds.goal_rows)[0]

    def map_losses(self, raw) -> np.ndarray:
        """R_i for each map, shape (n_maps,); their mean is R[f]."""
        return self._solve(raw)[0]

    def loss(self, y, raw) -> np.ndarray:
        self._check_y(y)
        H, W = self.worlds.shape
        return np.repeat(self._solve(raw)[0], H * W)

    def gradient(self, y, raw) -> np.ndarray:
        self._check_y(y)
        _, plans, demo = self._solve(raw)
        M, W = demo.shape
        H = self.worlds.shape[0]
        g = np.zeros((M, H, W))
        maps, cols = np.arange(M)[:, None], np.arange(W)[None, :]
        g[maps, demo, cols] += 1.0
        g[maps, plans, cols] -= 1.0
        return g.ravel() * (H * W)  # N / M

    def init_raw(self, y, sample_weight=None) -> float:
        return 0.0

    def __call__(self, y, raw, sample_weight=None) -> float:
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


def planning_test_loss(worlds, raw, augmentation: float = 1.0) -> float:
    """R[f] on (held-out) ``worlds`` for costs ``raw`` on their states."""
    loss = PlanningLoss(worlds, augmentation)
    return loss(None, raw)
