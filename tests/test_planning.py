"""The maximum-margin-planning loss and its DAG planner (Grubb & Bagnell 2011, §5(a))."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from oracleboost.datasets import (
    GridWorlds,
    grid_world_cost,
    make_grid_worlds,
    make_terrain_worlds,
)
from oracleboost.losses.base import Loss
from oracleboost.losses.planning import PlanningLoss, dag_shortest_paths, planning_test_loss


def all_paths(H, W, start=None, goal=None):
    """Every left-to-right path (moves −1, 0, +1 per column), by brute force."""
    out = []
    for rows in itertools.product(range(H), repeat=W):
        if any(abs(a - b) > 1 for a, b in itertools.pairwise(rows)):
            continue
        if start is not None and rows[0] != start:
            continue
        if goal is not None and rows[-1] != goal:
            continue
        out.append(rows)
    return np.array(out)


def brute_force_plan(cost, start=None, goal=None):
    H, W = cost.shape
    paths = all_paths(H, W, start, goal)
    values = cost[paths, np.arange(W)[None, :]].sum(axis=1)
    best = int(np.argmin(values))
    return paths[best], values[best], np.sort(values)


def brute_force_loss(worlds, raw, a=1.0):
    """(1/M) Σ_i [C_f(ξ_i) − min_ξ (C_f(ξ) − a L_i(ξ))] by enumerating every path."""
    H, W = worlds.shape
    f = raw.reshape(-1, H, W)
    L = worlds.loss_field.reshape(-1, H, W)
    total = 0.0
    for i in range(worlds.n_maps):
        s = None if worlds.start_rows is None else worlds.start_rows[i]
        g = None if worlds.goal_rows is None else worlds.goal_rows[i]
        paths = all_paths(H, W, s, g)
        cols = np.arange(W)[None, :]
        aug = f[i][paths, cols].sum(axis=1) - a * L[i][paths, cols].sum(axis=1)
        total += f[i][worlds.paths[i], np.arange(W)].sum() - aug.min()
    return total / worlds.n_maps


def ip(a, b):
    """<a, b>_P̂ with P̂ uniform over all states."""
    return float(np.sum(a * b)) / a.shape[0]


# -- the planner ---------------------------------------------------------------------------
@pytest.mark.parametrize("H, W", [(4, 4), (3, 5), (5, 3), (1, 4), (4, 1)])
def test_dp_equals_brute_force_free_endpoints(H, W):
    rng = np.random.default_rng(H * 10 + W)
    for _ in range(20):
        cost = rng.normal(size=(H, W))  # both signs
        path, value = dag_shortest_paths(cost)
        best, best_value, _ = brute_force_plan(cost)
        np.testing.assert_array_equal(path, best)
        assert value == pytest.approx(best_value, rel=1e-12, abs=1e-12)


def test_dp_equals_brute_force_fixed_endpoints_batched():
    rng = np.random.default_rng(1)
    M, H, W = 6, 4, 4
    cost = rng.normal(size=(M, H, W))
    starts = rng.integers(0, H, size=M)
    goals = rng.integers(0, H, size=M)
    paths, values = dag_shortest_paths(cost, starts, goals)
    assert paths.shape == (M, W) and paths.dtype == np.int64 and values.shape == (M,)
    for i in range(M):
        best, best_value, _ = brute_force_plan(cost[i], starts[i], goals[i])
        np.testing.assert_array_equal(paths[i], best)
        assert values[i] == pytest.approx(best_value, rel=1e-12, abs=1e-12)
        assert paths[i, 0] == starts[i] and paths[i, -1] == goals[i]
        # batched = one map at a time
        single, _ = dag_shortest_paths(cost[i], starts[i : i + 1], goals[i : i + 1])
        np.testing.assert_array_equal(single, paths[i])


def test_dp_rejects_unreachable_goal_and_bad_input():
    with pytest.raises(ValueError, match="unreachable"):
        dag_shortest_paths(np.zeros((1, 5, 2)), [0], [4])
    with pytest.raises(ValueError, match="start_rows"):
        dag_shortest_paths(np.zeros((1, 3, 3)), [3])
    with pytest.raises(ValueError, match="NaN"):
        dag_shortest_paths(np.full((2, 2), np.nan))


# -- the generator -------------------------------------------------------------------------
def test_grid_worlds_structure():
    w = make_grid_worlds(n_maps=3, size=8, n_features=4, random_state=0)
    M, H, W = 3, 8, 8
    assert isinstance(w, GridWorlds) and w.shape == (H, W)
    assert w.X.shape == (M * H * W, 4) and w.X.dtype == np.float64
    np.testing.assert_array_equal(w.map_index, np.repeat(np.arange(M), H * W))
    assert w.paths.shape == (M, W) and w.start_rows is None and w.goal_rows is None
    assert np.all(np.abs(np.diff(w.paths, axis=1)) <= 1)
    # loss field: exactly 0 on the demonstration, 1 elsewhere
    on_path = np.zeros(M * H * W, dtype=bool)
    on_path[w.path_states().ravel()] = True
    np.testing.assert_array_equal(w.loss_field, np.where(on_path, 0.0, 1.0))
    # hidden cost: positive, the documented function of the features
    assert np.all(w.true_cost >= 0.1)
    np.testing.assert_array_equal(w.true_cost, grid_world_cost(w.X, 0))
    # features are standardised per map and feature
    F = w.X.reshape(M, H * W, 4)
    np.testing.assert_allclose(F.mean(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(F.std(axis=1), 1.0, rtol=1e-12)
    # smooth random fields: neighbouring cells are strongly correlated
    G = w.X.reshape(M, H, W, 4)
    assert np.corrcoef(G[:, :, :-1].ravel(), G[:, :, 1:].ravel())[0, 1] > 0.5
    # demonstrations are the optimal paths under the hidden cost
    paths, _ = dag_shortest_paths(w.true_cost.reshape(M, H, W))
    np.testing.assert_array_equal(paths, w.paths)


@pytest.mark.parametrize("fixed", [False, True])
def test_demonstrations_are_brute_force_optimal(fixed):
    w = make_grid_worlds(n_maps=4, size=4, n_features=3, random_state=5, fixed_endpoints=fixed)
    cost = w.true_cost.reshape(4, 4, 4)
    for i in range(4):
        s = None if not fixed else w.start_rows[i]
        g = None if not fixed else w.goal_rows[i]
        best, _, _ = brute_force_plan(cost[i], s, g)
        np.testing.assert_array_equal(w.paths[i], best)


def test_generator_determinism_and_shared_cost():
    a = make_grid_worlds(n_maps=2, size=6, random_state=3)
    b = make_grid_worlds(n_maps=2, size=6, random_state=3)
    c = make_grid_worlds(n_maps=2, size=6, random_state=4)
    for field in ("X", "map_index", "paths", "loss_field", "true_cost"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.X, c.X)
    # the hidden cost function depends on cost_seed only, not on random_state
    np.testing.assert_array_equal(c.true_cost, grid_world_cost(c.X, 0))
    d = make_grid_worlds(n_maps=2, size=6, random_state=3, cost_seed=1)
    np.testing.assert_array_equal(d.X, a.X)
    assert not np.allclose(d.true_cost, a.true_cost)


def test_terrain_worlds_structure():
    M, n, K = 3, 10, 4
    w = make_terrain_worlds(n_maps=M, size=n, n_terrains=K, random_state=0)
    assert w.X.shape == (M * n * n, K + 1) and w.shape == (n, n)
    terrain, elevation = w.X[:, :K], w.X[:, K]
    # one-hot terrain codes, every terrain present, elevation standardised per map
    np.testing.assert_array_equal(terrain.sum(axis=1), 1.0)
    assert set(np.unique(terrain.argmax(axis=1))) == set(range(K))
    np.testing.assert_allclose(elevation.reshape(M, -1).mean(axis=1), 0.0, atol=1e-12)
    # the hidden cost is the documented function of the features alone
    expected = np.geomspace(0.25, 8.0, K)[terrain.argmax(axis=1)] * np.exp(0.5 * elevation)
    np.testing.assert_allclose(w.true_cost, expected, rtol=1e-12)
    # demonstrations are the optimal paths under it
    paths, _ = dag_shortest_paths(w.true_cost.reshape(M, n, n))
    np.testing.assert_array_equal(paths, w.paths)
    # distance loss field: row distance to the demonstration over margin_width, capped at 1
    rows = np.arange(n)[None, :, None]
    expected_field = np.minimum(np.abs(rows - w.paths[:, None, :]) / 2.0, 1.0)
    np.testing.assert_array_equal(w.loss_field.reshape(M, n, n), expected_field)
    ham = make_terrain_worlds(n_maps=M, size=n, random_state=0, loss_field="hamming")
    np.testing.assert_array_equal(ham.X, w.X)
    np.testing.assert_array_equal(ham.loss_field, (expected_field > 0).ravel().astype(float))


def test_terrain_worlds_held_out_loss_is_meaningful():
    """The reason the generator exists: on held-out maps the true cost, scaled up,
    beats f = 0 by far (on smooth grid worlds it hardly does: see make_grid_worlds)."""
    w = make_terrain_worlds(n_maps=8, size=12, random_state=1)
    zero = planning_test_loss(w, np.zeros(w.n_states))
    assert zero == 12.0  # max L of a path: every column ≥ 2 rows off
    losses = [planning_test_loss(w, k * w.true_cost) for k in (1, 10, 100)]
    assert losses[0] < zero and losses[2] < 0.1 * zero
    assert np.all(np.diff(losses) < 0)


def test_terrain_worlds_validation():
    with pytest.raises(ValueError, match="terrain_costs"):
        make_terrain_worlds(n_maps=2, size=5, n_terrains=3, terrain_costs=[1.0, 2.0])
    with pytest.raises(ValueError, match="terrain_costs"):
        make_terrain_worlds(n_maps=2, size=5, n_terrains=2, terrain_costs=[1.0, -2.0])
    with pytest.raises(ValueError, match="loss_field"):
        make_terrain_worlds(n_maps=2, size=5, loss_field="manhattan")
    with pytest.raises(ValueError, match="margin_width"):
        make_terrain_worlds(n_maps=2, size=5, margin_width=0.0)
    with pytest.raises(ValueError, match="n_terrains"):
        make_terrain_worlds(n_maps=2, size=5, n_terrains=1)
    with pytest.raises(ValueError, match="elevation_weight"):
        make_terrain_worlds(n_maps=2, size=5, elevation_weight=np.nan)


def test_select_and_validation():
    w = make_grid_worlds(n_maps=4, size=5, random_state=0, fixed_endpoints=True)
    sub = w.select([2, 0])
    assert sub.n_maps == 2 and sub.n_states == 50
    np.testing.assert_array_equal(sub.X[:25], w.X[50:75])
    np.testing.assert_array_equal(sub.paths, w.paths[[2, 0]])
    np.testing.assert_array_equal(sub.start_rows, w.start_rows[[2, 0]])
    np.testing.assert_array_equal(sub.map_index, np.repeat([0, 1], 25))
    with pytest.raises(ValueError):
        w.select([4])
    with pytest.raises(ValueError, match="paths"):
        GridWorlds(w.X, w.map_index, w.shape, w.paths + 10, w.loss_field, w.true_cost)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError):
            make_grid_worlds(n_maps=bad)


# -- the loss ------------------------------------------------------------------------------
def tiny_worlds(fixed=False, seed=0):
    return make_grid_worlds(
        n_maps=3, size=4, n_features=3, random_state=seed, fixed_endpoints=fixed
    )


def test_interface():
    w = tiny_worlds()
    loss = PlanningLoss(w)
    assert isinstance(loss, Loss)
    assert loss.name == "planning" and loss.differentiable is False
    assert loss.init_raw(w.map_index) == 0.0
    assert "GridWorlds(n_maps=3" in repr(loss)
    assert loss == loss and hash(loss) == hash(loss)


@pytest.mark.parametrize("fixed", [False, True])
@pytest.mark.parametrize("a", [1.0, 0.3, 0.0])
def test_loss_equals_brute_force(fixed, a):
    w = tiny_worlds(fixed, seed=2)
    loss = PlanningLoss(w, augmentation=a)
    rng = np.random.default_rng(0)
    for _ in range(10):
        raw = rng.normal(size=w.n_states)
        R = loss(w.map_index, raw)
        assert R == pytest.approx(brute_force_loss(w, raw, a), rel=1e-12, abs=1e-12)
        assert R >= 0.0
        per_state = loss.loss(w.map_index, raw)
        assert per_state.shape == (w.n_states,)
        assert np.mean(per_state) == pytest.approx(R, rel=1e-12)
        np.testing.assert_array_equal(np.unique(per_state.reshape(3, -1), axis=1).shape, (3, 1))


def test_zero_loss_threshold_on_scaled_true_cost():
    """R[α c] = 0 iff α(C(ξ) − C(ξ_demo)) ≥ L(ξ) for every path ξ."""
    w = tiny_worlds(seed=7)
    H, W = w.shape
    cost = w.true_cost.reshape(-1, H, W)
    field = w.loss_field.reshape(-1, H, W)
    paths = all_paths(H, W)
    cols = np.arange(W)[None, :]
    alpha_star = 0.0
    for i in range(w.n_maps):
        gap = cost[i][paths, cols].sum(axis=1) - cost[i][w.paths[i], np.arange(W)].sum()
        margin = field[i][paths, cols].sum(axis=1)
        other = margin > 0
        assert np.all(gap[other] > 0)  # the demonstration is the unique optimum
        alpha_star = max(alpha_star, float(np.max(margin[other] / gap[other])))
    loss = PlanningLoss(w)
    assert loss(w.map_index, 1.01 * alpha_star * w.true_cost) == 0.0
    assert loss(w.map_index, 0.99 * alpha_star * w.true_cost) > 0.0
    np.testing.assert_array_equal(loss.gradient(w.map_index, 1.01 * alpha_star * w.true_cost), 0)


def test_zero_loss_with_margin_equal_to_loss_field():
    """The demonstration beats every path by exactly L(ξ): a tie, R = 0, gradient 0."""
    w = make_grid_worlds(n_maps=4, size=12, random_state=1)
    loss = PlanningLoss(w)
    off_path = w.loss_field.copy()  # 1 off the demonstration, 0 on it
    for f in (off_path, off_path - 1.0, 3.0 * off_path):
        assert loss(w.map_index, f) == 0.0
        np.testing.assert_array_equal(loss.gradient(w.map_index, f), 0.0)
    # a smaller margin than the loss field is penalised
    assert loss(w.map_index, 0.9 * off_path) > 0.0
    assert PlanningLoss(w, augmentation=0.9)(w.map_index, 0.9 * off_path) == 0.0


def test_loss_at_zero_and_gradient_masses():
    w = make_grid_worlds(n_maps=5, size=10, random_state=2)
    loss = PlanningLoss(w)
    H, W = w.shape
    # at f = 0 the plan avoids the demonstration entirely (a free-endpoint grid of
    # height ≥ 3 always has a disjoint path), so R_i = W
    assert loss(w.map_index, np.zeros(w.n_states)) == pytest.approx(W)
    rng = np.random.default_rng(3)
    for raw in (np.zeros(w.n_states), rng.normal(size=w.n_states)):
        g = loss.gradient(w.map_index, raw)
        plans = loss.plan(raw)
        demo = np.zeros(w.n_states, dtype=bool)
        demo[w.path_states().ravel()] = True
        plan = np.zeros(w.n_states, dtype=bool)
        plan[w.path_states(plans).ravel()] = True
        np.testing.assert_array_equal(g[demo & ~plan], H * W)  # N/M
        np.testing.assert_array_equal(g[plan & ~demo], -H * W)
        np.testing.assert_array_equal(g[~(plan ^ demo)], 0.0)
        assert np.all(g.reshape(w.n_maps, -1).sum(axis=1) == 0.0)


def test_subgradient_inequality_and_local_linearity():
    w = make_grid_worlds(n_maps=4, size=8, random_state=4, fixed_endpoints=True)
    loss = PlanningLoss(w, augmentation=0.7)
    y = w.map_index
    rng = np.random.default_rng(5)
    for _ in range(50):
        f = rng.normal(scale=rng.choice([0.1, 1.0, 10.0]), size=w.n_states)
        g = rng.normal(scale=rng.choice([0.1, 1.0, 10.0]), size=w.n_states)
        Rf, grad = loss(y, f), loss.gradient(y, f)
        assert loss(y, g) >= Rf + ip(g - f, grad) - 1e-12 * (1 + abs(Rf))
    # R is piecewise linear: along a tiny step the planned paths do not change and the
    # first-order prediction is exact (this pins the N/M scale of the gradient)
    for _ in range(20):
        f = rng.normal(size=w.n_states)
        d = 1e-6 * rng.normal(size=w.n_states)
        np.testing.assert_array_equal(loss.plan(f), loss.plan(f + d))
        assert loss(y, f + d) - loss(y, f) == pytest.approx(ip(d, loss.gradient(y, f)), rel=1e-6)


def test_subgradient_descent_on_costs_drives_training_loss_down():
    """Unrestricted functional subgradient descent f ← f − η ∇R reaches R ≈ 0."""
    w = make_grid_worlds(n_maps=3, size=8, random_state=6)
    loss = PlanningLoss(w)
    f = np.zeros(w.n_states)
    values = []
    for t in range(1, 201):
        values.append(loss(w.map_index, f))
        f = f - (0.05 / np.sqrt(t)) * loss.gradient(w.map_index, f)
    assert values[0] == 8.0
    assert min(values) == 0.0


def test_held_out_worlds_and_errors():
    train = make_grid_worlds(n_maps=3, size=6, random_state=0)
    test = make_grid_worlds(n_maps=2, size=6, random_state=1)
    raw = 5.0 * test.true_cost
    value = PlanningLoss(test)(test.map_index, raw)
    assert planning_test_loss(test, raw) == value
    assert planning_test_loss(test, raw, augmentation=0.0) == 0.0
    loss = PlanningLoss(train)
    with pytest.raises(ValueError, match="states"):
        loss(train.map_index, raw)  # the test maps' raw on the training maps
    with pytest.raises(ValueError, match="y must"):
        loss.gradient(np.zeros(3), np.zeros(train.n_states))
    with pytest.raises(ValueError, match="sample_weight"):
        loss(train.map_index, np.zeros(train.n_states), np.arange(train.n_states) + 1.0)
    ones = np.full(train.n_states, 2.0)
    assert loss(train.map_index, np.zeros(train.n_states), ones) == 6.0
    with pytest.raises(ValueError, match="augmentation"):
        PlanningLoss(train, augmentation=-1.0)
    with pytest.raises(TypeError, match="GridWorlds"):
        PlanningLoss(object())
