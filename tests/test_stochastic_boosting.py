"""Stochastic boosting (Friedman 2002): ``subsample`` and ``colsample_bytree``.

Each round's rows and features are drawn from the fit's seed and the round alone
(:mod:`oracleboost.rows.subsample`): a row's draw is found from its index without the
rows before it, so the fit is the same for any ``n_jobs``, any partitioning of the rows
(the two-worker backend of ``test_backend_extension``) and after a warm start; the
defaults draw nothing and are the booster without draws.  The weak learner sees its
sample alone: a stump oracle's answer on ``features`` is the best stump of those columns,
and a row of weight 0 is a row left out.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.utils._param_validation import InvalidParameterError
from test_backend_extension import BLOCK, Held, HeldBackend, _data, _scores
from test_row_blocks import threads_even_when_small  # noqa: F401  (a fixture)

from oracleboost.boosters import BOOSTERS
from oracleboost.engine.backends import register_backend
from oracleboost.model_json import from_json, to_json
from oracleboost.oracles import (
    CachedOracle,
    LightGBMOracle,
    MLPOracle,
    OracleCapabilityError,
    SklearnOracle,
    StumpOracle,
    TreeOracle,
)
from oracleboost.rows.blocks import RowBlocks
from oracleboost.rows.subsample import RoundDraws, kept_features, row_uniforms

SEEDS = (0, 1, 2)

#: The boosters that take the draws (the rest do not have the parameters: see
#: test_the_boosters_whose_certificates_need_the_best_column_do_not_take_them).
STOCHASTIC = ("adaboost", "logistic-wolfe", "maboost", "madaboost", "gradient-logistic",
              "gradient-softmax", "gradient-regression", "gradient-ranking")
DRAWS = dict(subsample=0.6, colsample_bytree=0.5)


def _fit(name: str, X, y, *, oracle=None, **params):
    spec = BOOSTERS[name]
    params = {"n_estimators": 6, "block_size": BLOCK, "random_state": 3, **params}
    model = spec.make(oracle or StumpOracle(block_size=BLOCK), **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a few rows: early stops, tiny edges)
        if spec.task == "ranking":
            return model.fit(X, y, qid=np.repeat(np.arange(len(X) // 10 + 1), 10)[:len(X)])
        return model.fit(X, y)


def _same(a, b, X) -> None:
    np.testing.assert_array_equal(_scores(a, X), _scores(b, X))
    for key, values in a.history_.items():
        if "time" not in key:
            np.testing.assert_array_equal(b.history_[key], values, err_msg=key)


# -- the draws ---------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_a_rows_draw_does_not_depend_on_the_rows_drawn_with_it(seed):
    rng = np.random.RandomState(seed)
    whole = row_uniforms(seed, 7, 0, 1000)
    cuts = np.sort(rng.choice(np.arange(1, 1000), 5, replace=False))
    parts = [row_uniforms(seed, 7, a, b - a) for a, b in zip([0, *cuts], [*cuts, 1000],
                                                                 strict=True)]
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    assert ((0 <= whole) & (whole < 1)).all()
    # another round, another seed: other draws
    assert (row_uniforms(seed, 8, 0, 1000) != whole).mean() > 0.99
    assert (row_uniforms(seed + 10, 7, 0, 1000) != whole).mean() > 0.99


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_about_subsample_of_the_rows_are_kept(seed, fraction):
    kept = RoundDraws.of(fraction, 1.0, 3).rows(RowBlocks(20_000, 256), seed, 0)
    assert set(np.unique(kept)) <= {0.0, 1.0}
    # a binomial count: within 5 standard deviations (sd ≤ 0.0036 of the rows)
    assert abs(kept.mean() - fraction) < 0.018


@pytest.mark.parametrize("d, fraction, k", [(10, 0.5, 5), (10, 0.01, 1), (7, 0.99, 6),
                                            (3, 0.34, 1)])
def test_colsample_keeps_max_1_floor_fraction_d_features(d, fraction, k):
    rounds = [kept_features(5, t, d, fraction) for t in range(20)]
    for f in rounds:
        assert len(f) == k and (np.diff(f) > 0).all() and 0 <= f[0] and f[-1] < d
    np.testing.assert_array_equal(kept_features(5, 3, d, fraction), rounds[3])
    if 1 < k < d:  # the rounds do not all draw the same features
        assert len({tuple(f) for f in rounds}) > 1


def test_no_draws_when_both_fractions_are_1():
    assert RoundDraws.of(1.0, 1.0, 5) is None
    draws = RoundDraws.of(1.0, 0.5, 5)
    a = np.arange(6.0)
    assert draws.rows(RowBlocks(6), 0, 0, a) is a  # every row: the query as it is
    assert draws.query(RowBlocks(6), 0, 0, None)[0] is None


# -- the oracle's answers on a sample ----------------------------------------------------

def _stump_fields(h):
    return (getattr(h, "feature", None), getattr(h, "threshold", None),
            h._split_leaves()[3:5])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("query", ["correlate", "project", "project_weighted",
                                   "correlate_codes", "project_vector"])
def test_a_stump_on_features_is_the_best_stump_of_those_columns(seed, query):
    rng = np.random.RandomState(seed)
    X = rng.randn(120, 6)
    X[rng.rand(120) < 0.1, 2] = np.nan  # a missing-value bin too
    features = np.sort(rng.choice(6, 3, replace=False))
    vector = query in ("correlate_codes", "project_vector")
    r = rng.randn(120, 3) if vector else rng.randn(120)
    w = rng.rand(120) if query == "project_weighted" else None

    def ask(bound, **kw):
        if query.startswith("correlate"):
            return bound.correlate(r, **kw)
        return bound.project(r, w, **kw)

    full = StumpOracle(max_bins=255).bind(X)
    h = ask(full, features=features)
    alone = ask(StumpOracle(max_bins=255).bind(X[:, features]))
    np.testing.assert_array_equal(h.train_output, alone.train_output)
    if getattr(alone, "feature", None) is not None:
        assert h.feature == features[alone.feature]
        assert h.threshold == alone.threshold
    # every feature given: the answer without features
    assert _stump_fields(ask(full, features=np.arange(6))) == _stump_fields(ask(full)) \
        if not vector else np.array_equal(ask(full, features=np.arange(6)).train_output,
                                          ask(full).train_output)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("oracle", [StumpOracle(max_bins=255, exact=True),
                                    TreeOracle(max_depth=3, min_samples_leaf=6)],
                         ids=["stumps", "trees"])
def test_a_row_of_weight_0_is_a_row_left_out(seed, oracle):
    rng = np.random.RandomState(seed)
    X, t = rng.randn(150, 4), rng.randn(150)
    keep = rng.rand(150) < 0.6
    w = rng.rand(150) + 0.5
    h = oracle.bind(X).project(t, np.where(keep, w, 0.0))
    alone = oracle.bind(X[keep]).project(t[keep], w[keep])
    # the same function on the rows the learner saw (thresholds may sit elsewhere in
    # the gaps the left-out rows leave): the same leaves (scikit-learn's tree sums them
    # in another order: to rounding), the same rows in each
    seen = h.train_output[keep]
    if isinstance(oracle, StumpOracle):
        np.testing.assert_array_equal(seen, alone.train_output)
    np.testing.assert_allclose(seen, alone.train_output, rtol=1e-12, atol=0)
    assert len(np.unique(alone.train_output)) > 1
    for value in np.unique(alone.train_output):
        np.testing.assert_array_equal(np.isclose(seen, value, rtol=1e-12, atol=0),
                                      alone.train_output == value)


def test_features_are_checked_and_refused_by_oracles_that_do_not_declare_them():
    X, r = np.random.RandomState(0).randn(30, 4), np.random.RandomState(1).randn(30)
    bound = StumpOracle().bind(X)
    for bad in ([2, 1], [0, 0], [4], [-1]):
        with pytest.raises(ValueError, match="features must be sorted distinct"):
            bound.correlate(r, features=bad)
    with pytest.raises(TypeError, match="features must be a non-empty"):
        bound.project(r, features=[])
    for oracle in (SklearnOracle(Ridge()), CachedOracle(StumpOracle())):
        with pytest.raises(OracleCapabilityError, match=type(oracle).__name__):
            oracle.bind(X).project(r, features=[0, 1])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("query", ["correlate", "project", "project_vector"])
def test_a_tree_on_features_is_the_tree_of_those_columns(seed, query):
    rng = np.random.RandomState(seed)
    X, X_new = rng.randn(100, 6), rng.randn(40, 6)
    features = np.sort(rng.choice(6, 3, replace=False))
    r = rng.randn(100, 2) if query == "project_vector" else rng.randn(100)
    oracle = TreeOracle(max_depth=3)

    def ask(bound, **kw):
        if query == "correlate":
            return bound.correlate(r, random_state=seed, **kw)
        return bound.project(r, rng.rand(100) if seed else None, random_state=seed, **kw)

    state = rng.get_state()
    h = ask(oracle.bind(X), features=features)
    rng.set_state(state)  # (the same weights)
    alone = ask(oracle.bind(X[:, features]))
    np.testing.assert_array_equal(h.train_output, alone.train_output)
    np.testing.assert_array_equal(h.predict(X_new), alone.predict(X_new[:, features]))
    importances = h.feature_importances(6)
    np.testing.assert_array_equal(importances[features], alone.feature_importances(3))
    assert importances.sum() > 0 and not importances[np.setdiff1d(range(6), features)].any()
    if query != "project_vector":  # (a tree of one output: exported)
        tree = h.tree_structure()
        assert tree.n_features == 6 and set(tree.feature) <= set(features)
        np.testing.assert_array_equal(
            features[alone.tree_structure().feature], tree.feature)
    with pytest.raises(ValueError, match="fitted on 6"):
        h.predict(X_new[:, :5])
    with pytest.raises(ValueError, match="column indices from 0 below 6"):
        ask(oracle.bind(X), features=[1, 6])


def test_a_model_of_trees_on_drawn_features_exports_and_saves():
    X, y = _data("regression", 0)
    X = np.column_stack([X, -X])
    model = _fit("gradient-regression", X, y, oracle=TreeOracle(max_depth=2),
                 colsample_bytree=0.5, subsample=0.7, n_estimators=8)
    assert len({tuple(h.columns) for h in model.ensemble_.hypotheses}) > 1
    np.testing.assert_array_equal(model.to_lightgbm().predict(X), model.predict(X))
    np.testing.assert_array_equal(from_json(to_json(model)).predict(X), model.predict(X))
    assert model.feature_importances_.shape == (8,)
    _fit("gradient-regression", X, y, oracle=MLPOracle(max_iter=20), colsample_bytree=0.5,
         n_estimators=2)


# -- the boosters ------------------------------------------------------------------------

@pytest.mark.parametrize("name", STOCHASTIC)
def test_the_defaults_are_the_fit_without_draws(name):
    spec = BOOSTERS[name]
    X, y = _data(spec.task, 0)
    plain = _fit(name, X, y)
    assert plain.get_params()["subsample"] == 1.0
    assert plain.get_params()["colsample_bytree"] == 1.0
    # the draws' path with every row drawn (u < 1 − 2**-53 fails with chance 2**-53):
    # every row at weight 1, the same fit
    every = _fit(name, X, y, subsample=1.0 - 2.0**-53,
                 oracle=StumpOracle(block_size=BLOCK, histogram_refresh=1))
    _same(_fit(name, X, y, oracle=StumpOracle(block_size=BLOCK, histogram_refresh=1)),
          every, X)


@pytest.mark.parametrize("seed", (0, 1))
@pytest.mark.parametrize("name", STOCHASTIC)
def test_a_stochastic_fit_is_the_same_for_any_n_jobs_and_on_two_workers(
        threads_even_when_small, name, seed):  # noqa: F811  (the fixture imported)
    spec = BOOSTERS[name]
    X, y = _data(spec.task, seed)
    one = _fit(name, X, y, **DRAWS, n_jobs=1,
               oracle=StumpOracle(block_size=BLOCK, n_jobs=1))
    two = _fit(name, X, y, **DRAWS, n_jobs=2,
               oracle=StumpOracle(block_size=BLOCK, n_jobs=2))
    _same(one, two, X)
    assert max(threads_even_when_small) == 2  # (the passes ran on two threads)
    assert (_scores(one, X) != _scores(_fit(name, X, y), X)).any()  # it drew something
    if spec.task == "ranking":
        return  # (the ranker fits in memory only)
    backend = HeldBackend()
    with register_backend(lambda a: isinstance(a, Held), backend):
        held = _fit(name, Held(X), y, **DRAWS)
    assert "bind_stumps" in backend.calls  # (over partitions of 64, 64 and 22 rows)
    _same(one, held, X)


@pytest.mark.parametrize("random_state", [4, "instance", None])
@pytest.mark.parametrize("name", STOCHASTIC)
def test_a_warm_start_draws_as_one_longer_fit(name, random_state):
    spec = BOOSTERS[name]
    X, y = _data(spec.task, 1)

    def seed():
        return np.random.RandomState(9) if random_state == "instance" else random_state

    warm = _fit(name, X, y, **DRAWS, n_estimators=3, warm_start=True, random_state=seed())
    drawn_with, first = warm._state_.draw_seed, dict(warm.history_)
    warm = _fit_more(warm, X, y, spec.task, 7)
    if random_state is None:  # a fresh seed a fit, kept for its warm start
        # (not "more rounds": on a fresh seed's draws MABoost may stop early, rightly)
        assert drawn_with is not None and warm._state_.draw_seed == drawn_with
        for key, values in first.items():
            if "time" not in key:
                np.testing.assert_array_equal(warm.history_[key][:len(values)], values)
        return
    once = _fit(name, X, y, **DRAWS, n_estimators=7, random_state=seed())
    _same(once, warm, X)


def _fit_more(model, X, y, task, n):
    model.set_params(n_estimators=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if task == "ranking":
            return model.fit(X, y, qid=np.repeat(np.arange(len(X) // 10 + 1), 10)[:len(X)])
        return model.fit(X, y)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", ["adaboost", "gradient-regression", "maboost"])
def test_each_round_splits_on_its_drawn_features(name, seed):
    X, y = _data(BOOSTERS[name].task, seed)
    X = np.column_stack([X, X[:, ::-1] + 0.01 * np.arange(len(X))[:, None]])  # 8 features
    model = _fit(name, X, y, colsample_bytree=0.25, random_state=seed, n_estimators=10)
    inner = [getattr(h, "inner", h) for h in model.ensemble_.hypotheses]  # (votes)
    used = [(t, h.feature) for t, h in enumerate(inner)
            if getattr(h, "feature", None) is not None]
    assert used
    for t, j in used:
        assert j in kept_features(seed, t, 8, 0.25)


@pytest.mark.parametrize("name", ["adaboost", "gradient-regression", "maboost"])
def test_the_fractions_are_validated_by_name(name):
    X, y = _data(BOOSTERS[name].task, 0)
    for param in ("subsample", "colsample_bytree"):
        for bad in (0.0, -0.5, 1.5, "half"):
            with pytest.raises(InvalidParameterError, match=param):
                _fit(name, X, y, **{param: bad})


@pytest.mark.parametrize("oracle", [SklearnOracle(Ridge()), LightGBMOracle(),
                                    CachedOracle(StumpOracle())],
                         ids=["sklearn", "lightgbm", "cached"])
def test_colsample_is_refused_by_an_oracle_that_cannot_answer_on_features(oracle):
    if isinstance(oracle, LightGBMOracle):
        pytest.importorskip("lightgbm")
    X, y = _data("regression", 0)
    with pytest.raises(OracleCapabilityError, match=type(oracle).__name__):
        _fit("gradient-regression", X, y, oracle=oracle, colsample_bytree=0.5)
    _fit("gradient-regression", X, y, oracle=oracle, subsample=0.5)  # rows: any oracle


def test_the_boosters_whose_certificates_need_the_best_column_do_not_take_them():
    for name, spec in BOOSTERS.items():
        params = spec.make(StumpOracle()).get_params()
        assert ("subsample" in params) == (name in STOCHASTIC), name
        assert ("colsample_bytree" in params) == (name in STOCHASTIC), name


@pytest.mark.parametrize("name", ["gradient-regression", "gradient-logistic", "adaboost"])
def test_a_stochastic_fit_still_learns(name):
    # over three seeds: the training loss of the last round is below the first's
    for seed in SEEDS:
        X, y = _data(BOOSTERS[name].task, seed)
        model = _fit(name, X, y, **DRAWS, n_estimators=20, random_state=seed)
        loss = model.history_["loss"]
        assert loss[-1] < loss[0]


@pytest.mark.parametrize("name", ["adaboost", "gradient-regression", "maboost"])
def test_a_model_saved_before_the_parameters_loads_without_draws(name):
    X, y = _data(BOOSTERS[name].task, 0)
    model = _fit(name, X, y)
    doc = json.loads(to_json(model))
    for param in ("subsample", "colsample_bytree"):
        del doc["estimator"]["state"][param]  # (a file written before they existed)
    loaded = from_json(json.dumps(doc))
    assert loaded.get_params()["subsample"] == loaded.get_params()["colsample_bytree"] == 1.0
    np.testing.assert_array_equal(_scores(loaded, X), _scores(model, X))
    del doc["estimator"]["state"]["n_estimators"]  # others are still needed
    with pytest.raises(ValueError, match="n_estimators"):
        from_json(json.dumps(doc))
