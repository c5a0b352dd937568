"""Row blocks (issue 21): a fit is bit for bit the same for every ``n_jobs``.

The rows are cut into blocks of ``block_size`` whatever the threads; each block sums its
rows in row order and the blocks are combined in block order (oracleboost.rows.blocks).
Small blocks make many of them on a few hundred rows, and ``_MIN_CELLS = 1`` lets the
stump oracle thread even such small queries, so the threads really interleave here.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

import oracleboost.rows.blocks as blocks_module
from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
)
from oracleboost.oracles import LinearOracle, MatrixOracle, StumpOracle, stumps
from oracleboost.rows.blocks import RowBlocks, ordered_sum


@pytest.fixture
def threads_even_when_small(monkeypatch):
    """Let a few hundred rows use every thread (the library keeps small passes on one,
    where a thread's hand-over would cost more than the pass)."""
    monkeypatch.setattr(stumps, "_MIN_CELLS", 1)
    monkeypatch.setattr(blocks_module, "MIN_ROWS_PER_THREAD", 1)
    calls = []
    real = blocks_module.thread_map

    def counting(fn, items, threads, star=False):
        items = list(items)
        calls.append(min(threads, len(items)))
        return real(fn, items, threads, star)

    monkeypatch.setattr(blocks_module, "thread_map", counting)
    return calls


def _history(model) -> dict[str, np.ndarray]:
    return {k: v for k, v in model.history_.items() if "time" not in k}


def _fit(X, y, s, *, n_jobs, block_size, **params):
    model = CoordinateBoostingClassifier(
        StumpOracle(n_jobs=n_jobs, block_size=block_size), n_jobs=n_jobs,
        block_size=block_size, duality_gap=False, **params)
    return model.fit(X, y, sample_weight=s)


@pytest.mark.parametrize("loss, step", [
    ("exponential", "adaboost"), ("exponential", "optimal"), ("logistic", "wolfe"),
    ("exponential", "quadratic"), ("logistic", "closed_form"), ("logistic", "optimal"),
])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_coordinate_fit_is_the_same_on_one_two_and_three_threads(threads_even_when_small,
                                                                  loss, step, seed):
    X, y = make_classification(n_samples=700, n_features=6, flip_y=0.1, random_state=seed)
    s = np.random.default_rng(seed).uniform(0.1, 3.0, size=y.shape[0])
    params = {"loss": loss, "step": step, "n_estimators": 25, "learning_rate": 0.5}
    fits = [_fit(X, y, s, n_jobs=j, block_size=64, **params) for j in (1, 2, 3)]
    assert max(threads_even_when_small) == 3  # the passes did run on three threads
    assert len(_history(fits[0])["loss"]) == 25  # every round ran: the comparison covers them
    _assert_same_fit(fits, X, "decision_function")


def _assert_same_fit(fits, X, method: str = "predict") -> None:
    base = _history(fits[0])
    for other in fits[1:]:
        got = _history(other)
        assert got.keys() == base.keys()
        for key in base:
            np.testing.assert_array_equal(got[key], base[key], err_msg=key)
        np.testing.assert_array_equal(getattr(other, method)(X), getattr(fits[0], method)(X))


#: MABoost's binary configurations: both maps, both updates, every binary variant (also
#: the cluster's equality test, tests/test_cluster.py)
MIRROR_PARAMS = [
    dict(mirror="entropy"),
    dict(mirror="entropy", update="active"),
    dict(mirror="euclidean"),
    dict(mirror="euclidean", update="lazy"),
    dict(mirror="entropy", variant="smooth", smoothness=3.0),
    dict(mirror="euclidean", variant="smooth", smoothness=3.0),
    dict(mirror="euclidean", variant="max_margin"),
    dict(mirror="euclidean", variant="sparse", sparsity=0.5),
    dict(variant="madaboost"),
]


@pytest.mark.parametrize("params", MIRROR_PARAMS, ids=lambda p: "-".join(map(str, p.values())))
@pytest.mark.parametrize("seed", [0, 1])
def test_mirror_fit_is_the_same_on_one_two_and_three_threads(threads_even_when_small,
                                                              params, seed):
    X, y = make_classification(n_samples=700, n_features=6, flip_y=0.1, random_state=seed)
    s = np.random.default_rng(seed).uniform(0.1, 3.0, size=y.shape[0])
    _assert_same_mirror_fits(threads_even_when_small, X, y, s, 25, params)


def _assert_same_mirror_fits(calls, X, y, s, rounds, params) -> None:
    """MABoost fitted on 1, 2 and 3 threads: the same fit, weights included."""
    fits = [MirrorBoostingClassifier(StumpOracle(n_jobs=j, block_size=64), n_jobs=j,
                                     block_size=64, n_estimators=rounds, **params
                                     ).fit(X, y, sample_weight=s) for j in (1, 2, 3)]
    assert max(calls) == 3
    assert len(_history(fits[0])["loss"]) > 5
    _assert_same_fit(fits, X, "decision_function")
    for other in fits[1:]:
        np.testing.assert_array_equal(other.weights_, fits[0].weights_)


@pytest.mark.parametrize("params", [dict(mirror="entropy"), dict(mirror="euclidean"),
                                    dict(mirror="euclidean", variant="smooth", smoothness=4.0)],
                         ids=lambda p: "-".join(map(str, p.values())))
def test_mirror_multiclass_fit_is_the_same_on_one_two_and_three_threads(
        threads_even_when_small, params):
    """The multiclass cells (row masses, directions, the cells' projection by lanes)."""
    X, y = make_classification(n_samples=700, n_features=6, n_informative=4, n_classes=3,
                               random_state=5)
    s = np.random.default_rng(5).uniform(0.5, 2.0, size=y.shape[0])
    _assert_same_mirror_fits(threads_even_when_small, X, y, s, 15, params)


@pytest.mark.parametrize("projection", ["naive", "repeated", "residual"])
@pytest.mark.parametrize("loss", ["squared", "huber", "absolute"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("weighted", [True, False])
def test_functional_regressor_is_the_same_on_one_two_and_three_threads(
        threads_even_when_small, monkeypatch, projection, loss, seed, weighted):
    # (squared, naive, without weights: the queries' histograms are shifted ones)
    monkeypatch.setattr(stumps, "_MIN_SHIFT_CELLS", 1)
    X, y = make_regression(n_samples=600, n_features=5, noise=5.0, random_state=seed)
    s = np.random.default_rng(seed).uniform(0.1, 3.0, size=y.shape[0]) if weighted else None
    fits = [FunctionalGradientRegressor(
        StumpOracle(n_jobs=j, block_size=50), loss=loss, projection=projection,
        schedule="inv_sqrt", n_estimators=20, learning_rate=0.5, n_jobs=j, block_size=50,
    ).fit(X, y, sample_weight=s) for j in (1, 2, 3)]
    assert len(fits[0].history_["loss"]) == 20
    assert max(threads_even_when_small) == 3
    _assert_same_fit(fits, X)


@pytest.mark.parametrize("loss", ["logistic", "softmax"])
def test_functional_classifier_is_the_same_on_one_two_and_three_threads(
        threads_even_when_small, loss):
    n_classes = 2 if loss == "logistic" else 3
    X, y = make_classification(n_samples=600, n_features=6, n_informative=4,
                               n_classes=n_classes, random_state=0)
    fits = [FunctionalGradientClassifier(
        StumpOracle(n_jobs=j, block_size=50), loss=loss, n_estimators=20, n_jobs=j,
        block_size=50).fit(X, y) for j in (1, 2, 3)]
    assert len(fits[0].history_["loss"]) == 20
    assert max(threads_even_when_small) == 3
    _assert_same_fit(fits, X)


@pytest.mark.parametrize("method", ["accelerated", "normalized", "gradient_descent",
                                    "perceptron", "stochastic"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_accelerated_fit_is_the_same_on_one_two_and_three_threads(threads_even_when_small,
                                                                   method, n_classes):
    """Every product with the columns (LinearOracle's lanes) and every pass of the dual
    point; Algorithm 2's draws too (the running mass by lanes)."""
    X, y = make_classification(n_samples=700, n_features=6, n_informative=4,
                               n_classes=n_classes, flip_y=0.05, random_state=n_classes)
    s = np.random.default_rng(n_classes).uniform(0.1, 3.0, size=y.shape[0])
    fits = [AcceleratedMarginClassifier(
        LinearOracle(n_jobs=j, block_size=64), method=method, loss="logistic",
        fit_intercept=True, n_estimators=40, tol=0.0, random_state=0, n_jobs=j,
        block_size=64).fit(X, y, sample_weight=s) for j in (1, 2, 3)]
    assert max(threads_even_when_small) == 3
    assert len(_history(fits[0])["margin"]) == 40
    _assert_same_fit(fits, X, "decision_function")


@pytest.mark.parametrize("oracle", ["linear", "matrix"])
def test_finite_classes_fit_the_same_on_one_two_and_three_threads(threads_even_when_small,
                                                                  oracle):
    """LinearOracle's and MatrixOracle's correlate and project (Aᵀr by lanes) under the
    coordinate, functional and mirror boosters."""
    X, y = make_classification(n_samples=700, n_features=6, flip_y=0.1, random_state=4)
    rows = np.arange(len(X))
    H = np.sign(X[:, :4] - np.median(X[:, :4], axis=0)) * np.abs(X[:, 4:5]) / 4.0

    def make(j):
        return (LinearOracle(n_jobs=j, block_size=64) if oracle == "linear"
                else MatrixOracle(H, n_jobs=j, block_size=64))

    data = X if oracle == "linear" else rows[:, None]
    for build in (
        lambda j: CoordinateBoostingClassifier(make(j), loss="logistic", step="wolfe",
                                               n_estimators=20, n_jobs=j, block_size=64),
        lambda j: FunctionalGradientRegressor(make(j), n_estimators=20, n_jobs=j,
                                              block_size=64),
        lambda j: MirrorBoostingClassifier(make(j), n_estimators=20, n_jobs=j,
                                           block_size=64),
    ):
        target = X[:, 0] + y if isinstance(build(1), FunctionalGradientRegressor) else y
        fits = [build(j).fit(data, target) for j in (1, 2, 3)]
        assert len(_history(fits[0])["loss"]) > 5
        _assert_same_fit(fits, data)
    assert max(threads_even_when_small) == 3


def test_the_block_size_decides_the_order_of_the_sums():
    """A different cut sums in another order: the fits agree to rounding, not bit for
    bit (were they always equal, the tests above would prove nothing about blocks)."""
    X, y = make_classification(n_samples=700, n_features=6, random_state=0)
    s = np.random.default_rng(0).uniform(0.1, 3.0, size=y.shape[0])
    one = _fit(X, y, s, n_jobs=1, block_size=700, n_estimators=25)
    many = _fit(X, y, s, n_jobs=1, block_size=64, n_estimators=25)
    np.testing.assert_allclose(many.history_["loss"], one.history_["loss"], rtol=1e-12)
    assert not np.array_equal(many.history_["entropy"], one.history_["entropy"])


def test_row_blocks_cut_and_map_in_order(monkeypatch):
    blocks = RowBlocks(10, 4, n_jobs=3)
    assert blocks.bounds == [(0, 4), (4, 8), (8, 10)]
    assert (blocks.lane, blocks.n_lanes) == (4, 3)
    runs = []
    blocks.lane_map(lambda q0, q1, lo, hi: runs.append((q0, q1, lo, hi)))
    assert runs == [(0, 3, 0, 10)]  # 10 rows: too few for a second thread
    assert RowBlocks(0, 4).bounds == [(0, 0)]
    with pytest.raises(ValueError, match="block_size"):
        RowBlocks(10, 0)
    with pytest.raises(ValueError, match="n_jobs"):
        RowBlocks(10, 4, n_jobs=0)
    # ... unless allowed: whole lanes, in order, one run a thread
    monkeypatch.setattr(blocks_module, "MIN_ROWS_PER_THREAD", 1)
    runs.clear()
    blocks = RowBlocks(10, 4, n_jobs=3)  # (a RowBlocks reads its runs once)
    blocks.lane_map(lambda q0, q1, lo, hi: runs.append((q0, q1, lo, hi)))
    assert sorted(runs) == [(0, 1, 0, 4), (1, 2, 4, 8), (2, 3, 8, 10)]
    # left to right, not compensated: (1e16 + 1) + 1 rounds twice
    assert ordered_sum([1e16, 1.0, 1.0]) == 1e16
    np.testing.assert_array_equal(ordered_sum([[1e16, 1.0], [1.0, 2.0], [1.0, 3.0]]),
                                  [1e16, 6.0])


def test_leaf_outputs_when_threads_cut_inside_a_block(threads_even_when_small):
    """Threads take runs of 4,096-row lanes; with 10,000-row blocks a run starts and ends
    inside blocks.  The training outputs must still be those of ``predict``."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30_000, 3))
    r = rng.normal(size=30_000)
    for n_jobs in (1, 3):
        bound = StumpOracle(n_jobs=n_jobs, block_size=10_000).bind(X)
        h = bound.correlate(r)
        np.testing.assert_array_equal(h.train_output, h.predict(X))
        v = bound.project(r)
        np.testing.assert_array_equal(v.train_output, v.predict(X))


@pytest.mark.parametrize("loss_name", ["exponential", "logistic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weights_shifted_by_a_bound_are_the_weights_from_the_maximum(loss_name, seed):
    """step_and_weights shifts the new weights' exp by a bound on the logits' maximum
    (the old maximum plus the step's reach) instead of waiting for the maximum: the same
    weights, query, entropy and risk to rounding; and when the bound lies too far above,
    it makes them from the maximum, exactly as dual_weights does."""
    from oracleboost.losses import get_loss
    from oracleboost.optim import row_passes

    rng = np.random.default_rng(seed)
    n = 3000
    loss = get_loss(loss_name)
    blocks = RowBlocks(n, 256, n_jobs=2)
    unbounded = type("Unbounded", (type(loss),), {"log_weight_lipschitz": None})()
    y = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
    m = rng.normal(scale=3.0, size=n)
    a = np.where(rng.random(n) < 0.7, 1.0, -1.0) * rng.uniform(0.2, 1.0, n)
    s = rng.uniform(0.5, 2.0, n)
    log_s, log_mass = np.log(s), float(np.log(s.sum()))
    before = row_passes.dual_weights(blocks, loss, m.copy(), log_s, y, log_mass)
    # (step, a bound on its reach): the last bound is valid but 100 too high
    for c, reach in ((0.3, 0.3), (-1.7, 1.7), (0.5, 100.5)):
        new_m, low, wrong, got = row_passes.step_and_weights(
            blocks, loss, m.copy(), a, y, c, reach, s, log_s, log_mass, before.tops)
        np.testing.assert_array_equal(new_m, m + c * y * a)
        want = row_passes.dual_weights(blocks, loss, new_m.copy(), log_s, y, log_mass)
        assert got.tops == want.tops
        gaps = [old + reach - new for old, new in zip(before.tops, want.tops, strict=True)]
        same = reach == 100.5
        assert same is (max(gaps[:1 if loss.phi_is_neg_dphi else 2]) > row_passes.SHIFT_SLACK)
        # a loss without the bound: the weights from the maximum, as dual_weights makes
        _, _, _, plain = row_passes.step_and_weights(
            blocks, unbounded, m.copy(), a, y, c, reach, s, log_s, log_mass, before.tops)
        for g, w in ((plain.w, want.w), (plain.entropy(), want.entropy()),
                     (plain.log_loss, want.log_loss)):
            np.testing.assert_array_equal(g, w)
        # the entropy, whichever pass summed it (the exponential loss's fused step, or
        # the normalisation), is −Σ w log w of the weights given
        positive = got.w[got.w > 0]
        assert got.entropy() == pytest.approx(-np.sum(positive * np.log(positive)),
                                              rel=1e-12)
        for g, w in ((got.w, want.w), (got.query, want.query),
                     (got.entropy(), want.entropy()), (got.log_loss, want.log_loss)):
            if same:
                np.testing.assert_array_equal(g, w)
            else:
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300)



@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_predicted_normaliser_gives_the_weights_without_a_normalising_pass(
        weighted, seed, monkeypatch):
    """For the exponential loss, step_and_weights shifts the exps by a predicted
    log-normaliser (AdaBoost's log Z_t from a two-valued column's masses:
    SignedColumn.log_exp_mass) and writes the query in the step's own pass: the weights,
    query, entropy and risk are those of dual_weights at the new margins to rounding,
    and no normalising pass runs.  A wrong prediction (a column of four values, or a
    guess off by 5, 50 or 5,000) changes only how they are made: the same to rounding."""
    from oracleboost.engine.classifier import SignedColumn
    from oracleboost.losses import get_loss
    from oracleboost.optim import row_passes
    from oracleboost.rows.column_kernels import NO_WEIGHTS

    rng = np.random.default_rng(seed)
    n = 4000
    loss = get_loss("exponential")
    blocks = RowBlocks(n, 512, n_jobs=2)
    y = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
    m = rng.normal(scale=2.0, size=n)
    s = rng.uniform(0.5, 2.0, n) if weighted else None
    log_s = None if s is None else np.log(s)
    log_mass = float(np.log(n if s is None else s.sum()))
    kernel_s = NO_WEIGHTS if s is None else s
    before = row_passes.dual_weights(blocks, loss, m.copy(), log_s, y, log_mass)
    passes = []  # the passes after the step that finish the weights

    def counted(stage):
        def run(*args, **kwargs):
            passes.append(stage.__name__)
            return stage(*args, **kwargs)
        run.__name__ = stage.__name__
        run.stat_later = getattr(stage, "stat_later", False)
        if hasattr(stage, "n_outputs"):
            run.n_outputs = stage.n_outputs
        return run

    for name in ("_normalise", "_rescaled"):
        monkeypatch.setattr(row_passes, name, counted(getattr(row_passes, name)))
    # u = y·a of two values: a ±1 stump's, or one whose leaves follow the labels; of
    # four: a stump of leaves {−1, 0.3} (u = ±1 or ±0.3)
    columns = {"stump": rng.choice([-1.0, 1.0], size=n),
               "two": y * rng.choice([-0.4, 1.0], size=n),
               "three": rng.choice([-1.0, 0.3], size=n)}
    for name, a in columns.items():
        h = SimpleNamespace(train_output=a)  # all SignedColumn reads of an answer
        col = SignedColumn.of(h, y, None, True, blocks, query=before.query)
        alpha = 0.37
        log_z = col.log_exp_mass(alpha)
        coef = alpha * col.sign / col.norm
        new_m = m + y * (coef * a)
        want = row_passes.dual_weights(blocks, loss, new_m.copy(), log_s, y, log_mass)
        # Z_t itself: Σ w e^(−α u) over the rows, for a column of two values
        u = col.sign * y * a / col.norm
        direct = float(np.log(np.sum(before.w * np.exp(-alpha * u))))
        if name != "three":
            assert log_z == pytest.approx(direct, rel=1e-13, abs=1e-13)
        # what the booster passes (None: no prediction, as when the masses of a column
        # of more values come out negative)
        predicted = None if log_z is None else before.log_loss + log_mass + log_z
        for miss in (0.0, 5.0, -50.0, -5000.0):
            passes.clear()
            got_m, _, _, got = row_passes.step_and_weights(
                blocks, loss, m.copy(), a, y, coef, abs(coef) * col.norm, kernel_s, log_s,
                log_mass, before.tops, None if predicted is None else predicted + miss)
            np.testing.assert_array_equal(got_m, new_m)
            skipped = name != "three" and miss == 0.0
            assert (not passes) is skipped, (name, miss, passes)
            for g, w in ((got.w, want.w), (got.query, want.query),
                         (got.entropy(), want.entropy()), (got.log_loss, want.log_loss)):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300)
            assert got.tops == want.tops
            np.testing.assert_array_equal(np.sign(got.query), np.where(y > 0, 1.0, -1.0))
            assert abs(float(np.sum(got.w)) - 1.0) <= 1e-12


def test_the_passes_read_the_query_alone_with_the_same_numbers():
    """signed_sums and two_value_masses from the query ``w · y`` alone (its magnitudes
    the weights, its signs the labels, a zero weight's label the sign of its zero) give
    the numbers they give from ``y`` and ``w``, bit for bit."""
    from oracleboost.optim import row_passes

    rng = np.random.default_rng(3)
    n = 3000
    blocks = RowBlocks(n, 700, n_jobs=2)
    y = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
    w = rng.exponential(size=n)
    w[rng.random(n) < 0.1] = 0.0  # zeros of both labels: -0.0 in the query
    w /= w.sum()
    query = w * y
    assert np.signbit(query[(w == 0) & (y < 0)]).all()
    for a in (rng.choice([-1.0, 1.0], size=n), rng.choice([-0.5, 2.0], size=n),
              rng.normal(size=n)):
        for norm in (1.0, 2.0):
            assert row_passes.signed_sums(blocks, a, None, query, norm) == \
                row_passes.signed_sums(blocks, a, y, w, norm)
        lo, hi = float(np.min(y * a / 2.0)), float(np.max(y * a / 2.0))
        for sign in (1.0, -1.0):
            assert row_passes.two_value_masses(blocks, a, None, query, 2.0, sign, lo, hi) \
                == row_passes.two_value_masses(blocks, a, y, w, 2.0, sign, lo, hi)


def test_weighted_quantile_by_passes_is_the_sorted_one():
    """The quantile found by passes over bins of values (no sort) is the lower weighted
    quantile of the sorted values, on any threads and block sizes: ties, zero weights,
    ±0, subnormals and values near ±1e308 included (600 random problems)."""
    from oracleboost.rows.quantile import weighted_quantile

    rng = np.random.default_rng(0)
    for t in range(600):
        n = int(rng.integers(1, 300))
        y = rng.normal(size=n) * 10.0 ** rng.integers(-5, 5)
        if t % 4 == 1:
            y = rng.integers(-3, 4, n).astype(float)
        elif t % 4 == 2:
            y[::5] = -0.0
            y[1::5] = 0.0
        elif t % 4 == 3:
            y = rng.choice([-1e308, 1e308, 0.0, 5e-324, -5e-324, 1.5], n)
        w = None if t % 3 == 0 else rng.exponential(size=n)
        if w is not None and t % 7 == 0:
            w[rng.random(n) < 0.3] = 0.0
            w[0] = 1.0
        q = float(rng.choice([0.5, 0.1, 0.9, rng.random()]))
        ones = np.ones(n) if w is None else w
        order = np.argsort(y, kind="stable")
        cum = np.cumsum(ones[order])
        want = y[order][np.searchsorted(cum, q * cum[-1])]
        for block_size, n_jobs in ((7, 2), (64, 3), (1 << 16, 1)):
            got = weighted_quantile(RowBlocks(n, block_size, n_jobs), y, w, q)
            assert got == want, (t, block_size)


def _margin_cases():
    """Margins whose minimum is nonzero, a zero of either sign (two zeros, of the two
    signs, on every pair of the 4 running minima's rows), NaN, or −inf."""
    rng = np.random.default_rng(7)
    n = 1003
    plain = rng.normal(scale=2.0, size=n) + 3.0
    yield "plain", plain
    for i in range(8):
        for j in range(8):
            if i != j:
                m = np.abs(plain)
                m[i], m[j] = 0.0, -0.0
                yield f"zeros {i} {j}", m
    for name, rows, value in (("nan", [3, 700], np.nan), ("minus inf", [5], -np.inf),
                              ("all nan", slice(None), np.nan)):
        m = plain.copy()
        m[rows] = value
        yield name, m


def test_the_exponential_weights_take_the_logits_peak_from_the_margins_minimum():
    """Without sample weights the logits are ``−m`` and their maximum ``−min m``, which
    the step's pass has already found: the lane kernels take it from there (no logits
    written, no maximum taken), and give what ``max(−m)`` gives, the sign of a zero and
    a NaN included, with the exps, their sums and the query as from the logits."""
    import numba

    from oracleboost.rows import column_kernels as ck

    numba_max = numba.njit(lambda x: x.max())  # what the kernels took (NumPy's max may
    # keep the other zero)
    top = 0.75
    for case, m in _margin_cases():
        n = m.shape[0]
        y = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)
        low = ck._minimum(m)  # what _step_margins gives the lane kernels
        z = -m
        want_e = np.array([ck.exp(t - top) for t in z])
        with np.errstate(invalid="ignore"):  # 0 · (−inf): the entropy's 0 log 0 = 0
            want_terms = np.where(want_e == 0.0, 0.0, want_e * (z - top))
        peak = numba_max(z)
        got_e, query = np.empty(n), np.empty(n)
        got = ck._neg_margin_exps(m, ck.NO_WEIGHTS, top, got_e, np.empty(n), np.empty(n),
                                  low)
        got_q = ck._neg_margin_query(m, ck.NO_WEIGHTS, top, y, query, np.empty(n),
                                     np.empty(n), low)
        for peak_got, total, entropy in (got, got_q):
            np.testing.assert_array_equal([peak_got, total, entropy],
                                          [peak, ck.interleaved_sum(want_e),
                                           ck.interleaved_sum(want_terms)],
                                          err_msg=case)
            assert np.isnan(peak) or np.signbit(peak_got) == np.signbit(peak), case
        np.testing.assert_array_equal(got_e, want_e, err_msg=case)
        np.testing.assert_array_equal(query, want_e * y, err_msg=case)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_exponential_step_in_one_compiled_pass_is_the_numpy_steps(weighted, seed):
    """The exponential loss's step makes its margins, logits, their maxima, the wrong
    rows and the shifted exps in one compiled pass a lane
    (``_column_kernels.exponential_step``): the same numbers as the loss's NumPy steps
    (``log_neg_dphi``, ``+ log s``, ``np.exp``), exactly where no ``exp`` is involved,
    and to rounding for the exps (NumPy may use its own vectorised ``exp`` on AVX-512
    CPUs; the C library's elsewhere, as the compiled pass does)."""
    from oracleboost.losses import get_loss
    from oracleboost.optim import row_passes
    from oracleboost.rows.column_kernels import NO_WEIGHTS

    rng = np.random.default_rng(seed)
    n = 5000
    loss = get_loss("exponential")
    numpy_steps = type("NumpySteps", (type(loss),), {"log_weight_is_neg_margin": False})()
    blocks = RowBlocks(n, 1024, n_jobs=2)
    y = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
    m = rng.normal(scale=3.0, size=n)
    # margins that the step brings to 0 exactly: f = 0 predicts the negative class
    a = np.where(rng.random(n) < 0.6, 1.0, -1.0)
    c = 0.25
    zero = rng.random(n) < 0.1
    m[zero] = -c * y[zero] * a[zero]
    s = rng.uniform(0.5, 2.0, n) if weighted else None
    log_s = None if s is None else np.log(s)
    mass = float(n) if s is None else float(s.sum())
    before = row_passes.dual_weights(blocks, loss, m, log_s, y, np.log(mass))
    kernel_s = NO_WEIGHTS if s is None else s
    runs = [row_passes.step_and_weights(blocks, lo, m, a, y, c, abs(c), kernel_s, log_s,
                                        np.log(mass), before.tops)
            for lo in (loss, numpy_steps)]
    (m1, low1, wrong1, w1), (m2, low2, wrong2, w2) = runs
    np.testing.assert_array_equal(m1, m2)
    assert (low1, wrong1, w1.tops) == (low2, wrong2, w2.tops)
    new = m + y * (c * a)
    assert (new == 0.0).sum() >= 100
    bad = (new < 0) | ((new == 0) & (y > 0))
    assert low1 == new.min()
    if s is None:
        assert wrong1 == bad.sum()
    else:
        assert wrong1 == pytest.approx(float(np.sum(s[bad])), rel=1e-13)
    for g, want in ((w1.w, w2.w), (w1.query, w2.query), (w1.entropy(), w2.entropy()),
                    (w1.log_loss, w2.log_loss)):
        np.testing.assert_allclose(g, want, rtol=1e-14, atol=0)


def _lane_order_sum(terms: np.ndarray, lane: int) -> float:
    """The library's order for a sum over rows: each lane as four running sums (row i
    into sum i mod 4, in row order), ``(s0 + s1) + (s2 + s3)``, the lanes in order."""
    def lane_sum(x):
        s = [np.add.accumulate(np.r_[0.0, x[k::4]])[-1] for k in range(4)]
        return (s[0] + s[1]) + (s[2] + s[3])
    return float(ordered_sum([lane_sum(terms[i:i + lane])
                              for i in range(0, terms.shape[0], lane)]))


@pytest.mark.parametrize("K", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_regressors_passes_sum_their_numpy_terms_in_the_lane_order(K, weighted, seed):
    """The functional-gradient round's compiled passes (``_column_kernels``) are the
    NumPy terms summed in the library's order, bit for bit: the inner products, the
    residual's norm, the peak, and the squared loss's fused step."""
    from oracleboost.optim import row_passes

    rng = np.random.default_rng(seed)
    n = 5003
    blocks = RowBlocks(n, 1024, n_jobs=2)
    shape = (n,) if K == 1 else (n, K)
    a, b = rng.normal(size=shape) * 1e3, rng.normal(size=shape) * 1e-3
    s = rng.uniform(0.5, 2.0, n) if weighted else None
    sk = np.ones(n) if s is None else s
    rows = (lambda t: t) if K == 1 else (lambda t: t.sum(axis=1))

    def want(terms):
        return _lane_order_sum(terms, blocks.lane)

    top, (aa, ab) = row_passes.peak_and_inners(blocks, a, [a, b], s)
    assert top == np.abs(a).max()
    assert aa == want(rows(a * a) * sk if weighted else rows(a * a))
    assert ab == want(rows(a * b) * sk if weighted else rows(a * b))
    assert row_passes.weighted_inner(blocks, a, b, s) == ab
    # the same numbers from the one-column pass (peak_products) in its other cases
    assert row_passes.peak_and_inners(blocks, a, [a], s) == (top, [aa])
    if K == 1:
        col = a[:, None]
        assert row_passes.peak_and_inners(blocks, col, [col, b[:, None]], s) == (top, [aa, ab])
    r = a - 0.3 * b
    assert row_passes.weighted_residual(blocks, a, b, 0.3, s) == (
        want(rows(r * r) * sk if weighted else rows(r * r)))
    if K == 1:
        # the loss weighs by s, the inner products by s or by nothing (equal weights
        # cancel from them); the residual's target t and step coef are the oracle's
        y, f, h, t = (rng.normal(size=n) for _ in range(4))
        s_loss = s if weighted else rng.uniform(0.5, 2.0, n)
        for inner_s in (s, None):
            for residual_of in ((t, 0.3), None):
                step = row_passes.squared_step(blocks, y, f, h, 0.1, s_loss,
                                               float(s_loss.sum()), inner_s=inner_s,
                                               residual_of=residual_of)
                np.testing.assert_array_equal(step.f, f + 0.1 * h)
                v = -(step.f - y)
                np.testing.assert_array_equal(step.descent, v)
                half = 0.5 * (step.f - y) ** 2
                assert step.loss == want(half * s_loss) / float(s_loss.sum())
                # the next round's peak_and_inners of v with itself, and this round's
                # weighted_residual, as those passes give them
                assert (step.descent_peak, [step.descent_square]) == (
                    row_passes.peak_and_inners(blocks, v, [v], inner_s))
                if residual_of is None:
                    assert step.residual_square is None
                else:
                    assert step.residual_square == row_passes.weighted_residual(
                        blocks, t, h, 0.3, inner_s)
                # the new scores written over (a copy of) h: the same numbers, in h
                spare = h.copy()
                over = row_passes.squared_step(blocks, y, f, spare, 0.1, s_loss,
                                               float(s_loss.sum()), inner_s=inner_s,
                                               residual_of=residual_of, into_h=True)
                assert over.f is spare
                np.testing.assert_array_equal(over.f, step.f)
                np.testing.assert_array_equal(over.descent, step.descent)
                assert (over.loss, over.descent_peak, over.descent_square,
                        over.residual_square) == (step.loss, step.descent_peak,
                                                  step.descent_square, step.residual_square)


def test_kernel_threads_sets_numbas_count_inside_and_restores_it():
    import numba

    from oracleboost.rows.parallel import kernel_threads, max_threads

    before = numba.get_num_threads()
    top = max_threads()
    try:
        numba.set_num_threads(top)
        with kernel_threads(1):
            assert numba.get_num_threads() == 1
            with kernel_threads(top + 5):  # at most numba's pool
                assert numba.get_num_threads() == top
            with kernel_threads(1):  # already so: left alone
                assert numba.get_num_threads() == 1
            assert numba.get_num_threads() == 1
        assert numba.get_num_threads() == top
        with pytest.raises(KeyError), kernel_threads(1):
            raise KeyError  # an error inside still restores
        assert numba.get_num_threads() == top
    finally:
        numba.set_num_threads(before)


def test_the_workers_pool_hands_out_again_only_what_nothing_else_holds():
    """A worker's pooled output arrays (``_cluster.pooled_empty``; a fresh array of
    megabytes faults on every page there) are handed out again once dropped, and never
    while something still reads them: the array itself or a view of it."""
    from oracleboost.distributed.cluster import pooled_empty, release_pool

    try:
        a = pooled_empty(1000)
        b = pooled_empty(1000)
        assert a is not b and a.shape == (1000,) and a.dtype == np.float64
        a[:] = 1.0
        view = a[10:20]
        a_memory = a.__array_interface__["data"][0]
        del a
        c = pooled_empty(1000)
        assert c is not b and not np.shares_memory(c, view)  # the view still holds a
        assert np.all(view == 1.0)
        del view
        d = pooled_empty(1000)  # a is free now: handed out again
        assert d.__array_interface__["data"][0] == a_memory
        assert not np.shares_memory(d, b) and not np.shares_memory(d, c)
    finally:
        release_pool()
