"""LightGBMOracle's LightGBM parameters: each is kept, or refused by the name given.

The oracle refits every leaf to the exact weighted mean of the target and answers each
query as a function of that query alone.  A parameter that bounds the leaf values
(monotone constraints, ``max_delta_step``) would be undone by the refit without a word,
and one that LightGBM charges once over all the trees a booster grows (the lazy and
coupled cost-efficient penalties) would make answers depend on earlier queries: these
are refused.  Regularisers of the split gain and structural settings are kept.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor
from oracleboost.oracles import CachedOracle, LightGBMOracle

REFUSED = [
    # (params, the name the error gives)
    ({"monotone_constraints": [1, 0, 0]}, "monotone_constraints"),
    ({"monotone_constraint": [0, -1, 0]}, "monotone_constraint (monotone_constraints)"),
    ({"mc": "1,0,0"}, "mc (monotone_constraints)"),
    ({"monotonic_cst": (1, 0, 0)}, "monotonic_cst (monotone_constraints)"),
    ({"monotone_constraints_method": "advanced"}, "monotone_constraints_method"),
    ({"mc_method": "intermediate"}, "mc_method (monotone_constraints_method)"),
    ({"monotone_penalty": 2.0}, "monotone_penalty"),
    ({"ms_penalty": 1.0}, "ms_penalty (monotone_penalty)"),
    ({"max_delta_step": 0.5}, "max_delta_step"),
    ({"max_leaf_output": 1.0}, "max_leaf_output (max_delta_step)"),
    ({"cegb_penalty_feature_coupled": [0.0, 50.0, 0.0]}, "cegb_penalty_feature_coupled"),
    ({"cegb_penalty_feature_lazy": [0.3, 0.0, 0.0]}, "cegb_penalty_feature_lazy"),
]

KEPT = [
    {"monotone_constraints": [0, 0, 0]},  # constrains nothing
    {"mc": "0,0,0", "monotone_constraints_method": "basic", "monotone_penalty": 0.0},
    {"max_delta_step": 0.0},  # LightGBM's "no bound"
    {"max_leaf_output": -1.0},
    {"cegb_penalty_feature_coupled": [0.0, 0.0, 0.0], "cegb_penalty_feature_lazy": [0, 0, 0]},
    {"lambda_l1": 5.0},
    {"path_smooth": 10.0},
    {"cegb_penalty_split": 0.02, "cegb_tradeoff": 0.5},
    {"interaction_constraints": [[0], [1, 2]]},
    {"min_sum_hessian_in_leaf": 1e-3},
]


def _data(seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, rng


def _oracle(params):
    return LightGBMOracle(num_leaves=6, min_data_in_leaf=5, params={"num_threads": 1, **params})


@pytest.mark.parametrize("params, named", REFUSED, ids=[n for _, n in REFUSED])
def test_what_the_refit_or_history_would_undo_is_refused_by_its_name(params, named):
    X, _ = _data()
    with pytest.raises(ValueError, match="cannot use params " + re.escape(named) + "="):
        _oracle(params).bind(X)


def test_monotone_constraints_are_refused_for_what_they_would_not_keep():
    """Before the refusal: a regressor on a constrained feature fitted a model that
    fell along it (the refit of the leaves undid LightGBM's bounds)."""
    X, rng = _data(1)
    y = X[:, 0] - 2.0 * np.sin(3.0 * X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=len(X))
    oracle = _oracle({"monotone_constraints": [1, 0, 0]})
    for model, target in ((FunctionalGradientRegressor(oracle, n_estimators=10), y),
                          (CoordinateBoostingClassifier(oracle, n_estimators=10), y > 0),
                          (FunctionalGradientRegressor(CachedOracle(oracle, None)), y)):
        with pytest.raises(ValueError, match="monotone constraints are not kept"):
            model.fit(X, target)


@pytest.mark.parametrize("params", KEPT, ids=lambda p: ",".join(p))
def test_kept_params_give_exact_means_and_answers_of_the_query_alone(params):
    """What is kept leaves the oracle's promises whole: every leaf the exact weighted
    mean of the target in it, and the same query answered alike after others."""
    X, rng = _data(2)
    bound = _oracle(params).bind(X)
    queries = [X[:, 1] + 0.9 * X[:, 0], X[:, 0] + 0.1 * rng.normal(size=len(X)),
               np.sin(X[:, 2]) * X[:, 1]]
    w = rng.uniform(0.1, 2.0, size=len(X))
    first = [bound.project(q, w) for q in queries]
    again = [bound.project(q, w) for q in reversed(queries)][::-1]
    for q, a, b in zip(queries, first, again, strict=True):
        assert a.n_leaves > 1
        np.testing.assert_array_equal(a.train_output, b.train_output)
        for v in np.unique(a.train_output):
            leaf = a.train_output == v
            np.testing.assert_allclose(v, np.average(q[leaf], weights=w[leaf]),
                                       rtol=1e-12, atol=1e-14)


def test_interaction_constraints_shape_the_refit_trees():
    """A structural setting: every root-to-leaf path of every tree uses features of one
    allowed group, as LightGBM grew it (the refit changes only the leaf values)."""
    X, rng = _data(3)
    groups = [{0}, {1, 2}]
    bound = _oracle({"interaction_constraints": [sorted(g) for g in groups]}).bind(X)
    for seed in range(4):
        r = np.random.default_rng(seed)
        target = X @ r.normal(size=3) + X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=len(X))
        tree = bound.project(target).tree_structure()
        assert tree.n_leaves > 1
        for used in _path_features(tree, 0, frozenset()):
            assert any(used <= g for g in groups), used


def _path_features(tree, node, used):
    """The set of features each root-to-leaf path below ``node`` splits on."""
    if node < 0:
        yield used
        return
    here = used | {int(tree.feature[node])}
    yield from _path_features(tree, int(tree.left[node]), here)
    yield from _path_features(tree, int(tree.right[node]), here)


def test_forced_splits_are_the_refit_trees_roots(tmp_path):
    """A structural setting read from a file: the root is the forced split (the refit
    changes only the leaf values)."""
    X, rng = _data(4)
    path = tmp_path / "forced.json"
    path.write_text('{"feature": 2, "threshold": 0.25}')
    bound = _oracle({"forcedsplits_filename": str(path)}).bind(X)
    w = rng.uniform(0.1, 2.0, size=len(X))
    for h in (bound.project(X[:, 0] + X[:, 1]), bound.project(X[:, 1] ** 2, w)):
        tree = h.tree_structure()
        assert tree.feature[0] == 2 and abs(tree.threshold[0] - 0.25) < 0.05
