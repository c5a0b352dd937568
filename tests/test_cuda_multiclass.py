"""The multiclass boosters on the GPU backend, on numba's CUDA simulator
(:mod:`cuda_simulator`).  The functional classifier (Grubb & Bagnell 2011, §5(c), §6):
scores of one column a class kept on the device as ``(n, K)`` arrays, the softmax
cross-entropy and the multiclass hinge (either rule for ties), vector-leaf stumps
(``project``) and label-coded stumps (``correlate``) answered from per-class
fixed-point histograms.  MABoost over the ``maboost`` package's N(K − 1) cells, with
both maps, both updates and the capped sets.

The device fit takes the CPU fit's stumps in every round, with its records, intercept
and predictions equal to rounding; two device fits and a fit under another launch
shape are bit-equal; sample weights over 600 decades neither overflow nor lose the
dominant row; the scores of X given on the device are the CPU's bit for bit.

Why the numbers differ from the CPU's at all: every sum over rows on the device is
exact on its terms rounded to fixed point where the CPU adds floats in lane order; the
device's ``exp`` and ``log`` (an ulp); and the softmax loss's ``logsumexp``, which
SciPy sums with NumPy's pairwise sum (the same order as the device's below 8 classes).
Measured: a few 1e-16 relatively; the tests allow 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda_simulator import simulator_here, test_in_a_child_process  # noqa: F401

from oracleboost.boosters import FunctionalGradientClassifier, MirrorBoostingClassifier
from oracleboost.cuda import CudaBackend, DeviceStumps, Launch, cuda_module
from oracleboost.cuda.blocks import DeviceBlocks
from oracleboost.cuda.class_stages import descent, weighted_loss
from oracleboost.cuda.device import TRAFFIC
from oracleboost.engine.backends import is_device_array, register_backend
from oracleboost.losses import MulticlassHinge, SoftmaxCrossEntropy
from oracleboost.oracles import StumpOracle
from oracleboost.oracles.stumps import ConstantHypothesis, LabelCodeStump, VectorStump
from oracleboost.rows.partitioned import NotDistributedError

ROUNDS = 5


def _classes(seed: int, n: int = 180, K: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """K classes by a noisy score's quantiles, on three features (one of few values)."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 3)
    X[:, 2] = np.round(X[:, 2])
    t = 2.0 * X[:, 0] + np.sin(3.0 * X[:, 1]) + 0.5 * rng.randn(n)
    return X, np.digitize(t, np.quantile(t, np.linspace(0, 1, K + 1)[1:-1]))


def _oracle(**kw) -> StumpOracle:
    return StumpOracle(max_bins=16, **kw)


def _host(a):
    return a if isinstance(a, np.ndarray) else a.copy_to_host()


def _split(h) -> tuple:
    if isinstance(h, LabelCodeStump):
        return (h.feature, h.threshold, h.left_class, h.right_class)
    if isinstance(h, VectorStump):
        return (h.feature, h.threshold)
    return ("constant",)


def _leaves(h) -> np.ndarray:
    if isinstance(h, VectorStump):
        return np.concatenate([h.left, h.right])
    return np.atleast_1d(np.asarray(getattr(h, "value", 0.0), dtype=float))


def _bits(model) -> tuple:
    return (tuple(repr(h) for h in model.estimators_), np.asarray(model.coef_).tobytes(),
            np.asarray(model.intercept_).tobytes(),
            tuple((k, v.tobytes()) for k, v in sorted(model.history_.items())
                  if k not in ("time", "cumulative_time")))


# -- the oracle: K columns -------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vector_project_answers_the_cpu_stump(seed):
    """(n, K) targets, with and without weights, NumPy and device arrays: the CPU's
    vector-leaf stump (split equal, leaves and outputs equal to rounding); a feature
    subset is kept."""
    X, _ = _classes(seed, n=240)
    bound = StumpOracle(max_bins=16).bind(X)
    device = DeviceStumps(bound)
    rng = np.random.RandomState(20 + seed)
    cuda = cuda_module()
    for K in (2, 4):
        t = np.column_stack([X[:, k % 3] * (k + 1) for k in range(K)]) + rng.randn(240, K)
        for w in (None, rng.uniform(0.2, 3.0, 240)):
            g = bound.project(t, w)
            for h in (device.project(t, w),
                      device.project(cuda.to_device(t),
                                     None if w is None else cuda.to_device(w))):
                assert type(h) is type(g) and _split(h) == _split(g), (h, g)
                np.testing.assert_allclose(_leaves(h), _leaves(g), rtol=1e-12, atol=0)
                np.testing.assert_allclose(_host(h.train_output), g.train_output,
                                           rtol=1e-12, atol=0)
        for features in ([1], [0, 2]):
            assert _split(device.project(t, features=features)) == \
                _split(bound.project(t, features=features))
    # a target whose columns are constant: the constant answer, a row of K means
    flat = np.tile([1.0, -2.0, 0.5], (240, 1))
    h = device.project(cuda.to_device(flat))
    assert isinstance(h, ConstantHypothesis)
    np.testing.assert_array_equal(_host(h.train_output), flat)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_label_coded_correlate_answers_the_cpu_stump(seed):
    """(n, K) queries: the CPU's label-coded stump (its classes on each side), outputs
    equal; rows sharing a large offset (which the row centring removes) too."""
    X, y = _classes(seed, n=240, K=4)
    bound = StumpOracle(max_bins=16).bind(X)
    device = DeviceStumps(bound)
    rng = np.random.RandomState(30 + seed)
    onehot = np.eye(4)[y]
    for r in (onehot + 0.3 * rng.randn(240, 4), onehot + 1e6 * rng.randn(240, 1),
              rng.randn(240, 4)):
        g = bound.correlate(r)
        for h in (device.correlate(r), device.correlate(cuda_module().to_device(r))):
            assert type(h) is type(g) and _split(h) == _split(g), (h, g)
            np.testing.assert_array_equal(_host(h.train_output), g.train_output)


@pytest.mark.parametrize("K", [3, 11])
def test_the_columns_sums_by_bins_are_each_column_s_alone(K):
    """The columns' histograms, summed up to eight at once in one pass over the codes
    (11 classes: a group of eight and one of three), are bit-equal to each column's
    summed alone on its own scale, under two launches; and the vector stump at 11
    classes is the CPU's."""
    X, _ = _classes(4, n=200)
    bound = StumpOracle(max_bins=16).bind(X)
    rng = np.random.RandomState(K)
    v = rng.randn(200, K) * 10.0 ** rng.uniform(-30, 30, K)  # a scale a column
    v[:, 1] = 0.0  # a column of zeros: no scale, every bin 0
    cuda = cuda_module()
    dev_v = cuda.to_device(v)
    for launch in (None, Launch(4, 37, 2, 3)):
        device = DeviceStumps(bound, launch=launch)
        alone = np.stack([device._bin_sums(dev_v[:, k]) for k in range(K)], axis=2)
        together = device._column_sums(dev_v)
        assert together.shape == (X.shape[1], device.bins, K)
        assert together.tobytes() == alone.tobytes()
    t = rng.randn(200, K) + X[:, :1] * np.arange(K)
    g, h = bound.project(t), DeviceStumps(bound).project(t)
    assert _split(h) == _split(g)
    np.testing.assert_allclose(_leaves(h), _leaves(g), rtol=1e-12, atol=0)


# -- the passes -------------------------------------------------------------------------
@pytest.mark.parametrize("loss", [SoftmaxCrossEntropy(), MulticlassHinge("first"),
                                  MulticlassHinge("average")])
def test_the_descent_and_the_loss_are_the_cpu_s(loss):
    """Row by row the CPU's ``−∇l`` (the softmax's bits exactly: the same operations;
    the hinge's ties by its rule, scores tied on purpose) and the loss's weighted sum to
    rounding, at scores of ±1e4 too."""
    rng = np.random.RandomState(3)
    n, K = 90, 4
    f = rng.randn(n, K)
    f[::5, 1:3] = f[::5, 3:4]  # wrong classes tied with each other
    f[::7] = 0.0  # every class tied (the hinge at f_0 = 0)
    f[1::9] *= 1e4
    y = rng.randint(0, K, n)
    s = rng.uniform(0.5, 2.0, n)
    blocks = DeviceBlocks(n)
    cuda = cuda_module()
    yd, fd = cuda.to_device(y.astype(np.int64)), cuda.to_device(f)
    (out,), _ = descent(blocks, yd, fd, loss=loss)
    got, want = _host(out), -loss.gradient(y, f)
    np.testing.assert_allclose(got, want, rtol=1e-15 if loss.name == "softmax" else 0,
                               atol=0)
    if loss.name != "softmax":
        np.testing.assert_array_equal(got, want)
    _, stat = weighted_loss(blocks, yd, fd, cuda.to_device(s), loss=loss)
    np.testing.assert_allclose(stat[0, 0], float(np.sum(loss.loss(y, f) * s)), rtol=1e-13)


# -- the fit ------------------------------------------------------------------------------
def _same_fit(gpu, cpu, X) -> None:
    assert [_split(h) for h in gpu.estimators_] == [_split(h) for h in cpu.estimators_]
    for h, g in zip(gpu.estimators_, cpu.estimators_, strict=True):
        np.testing.assert_allclose(_leaves(h), _leaves(g), rtol=1e-12, atol=1e-15)
    for key in ("loss", "edge", "step", "grad_norm", "residual_norm", "margin",
                "train_error"):
        np.testing.assert_allclose(gpu.history_[key], cpu.history_[key], rtol=1e-12,
                                   atol=1e-15, err_msg=key)
    np.testing.assert_allclose(gpu.intercept_, cpu.intercept_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gpu.decision_function(X), cpu.decision_function(X),
                               rtol=1e-12, atol=1e-13)
    if hasattr(cpu, "predict_proba"):  # (the hinge has no link to probabilities)
        np.testing.assert_allclose(gpu.predict_proba(X), cpu.predict_proba(X),
                                   rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))
    assert gpu.stop_reason_ == cpu.stop_reason_
    assert getattr(gpu, "_state_", None) is None


@pytest.mark.parametrize("options, K, weighted", [
    ({}, 3, False),  # softmax ('auto'), vector-leaf stumps, the priors' start
    ({}, 3, True),
    ({"loss": "softmax"}, 2, True),  # two classes, a score each
    ({"loss": "multiclass_hinge"}, 4, False),  # f_0 = 0: every wrong class tied
    ({"loss": MulticlassHinge("average")}, 4, True),
    ({"projection": "residual", "class_weight": "balanced"}, 3, False),
    ({"projection": "repeated"}, 3, True),
    ({"query": "correlate"}, 3, True),  # label-coded stumps of s · v
    ({}, 10, False),  # more classes than a reduction's channels (the masses)
])
def test_the_device_fit_takes_the_cpu_fit_s_stumps(options, K, weighted):
    X, y = _classes(0, K=K)
    w = np.random.RandomState(1).uniform(0.2, 3.0, size=y.size) if weighted else None
    options = {"n_estimators": ROUNDS, "validation_fraction": None, **options}
    cpu = FunctionalGradientClassifier(_oracle(), **options).fit(X, y, w)
    gpu = FunctionalGradientClassifier(_oracle(device="cuda"), **options).fit(X, y, w)
    assert np.shape(gpu.intercept_) == (K,) and len(gpu.history_["loss"]) == ROUNDS
    _same_fit(gpu, cpu, X)


def test_two_device_fits_and_any_launch_give_the_same_bits():
    X, y = _classes(2, n=120, K=4)
    w = np.random.RandomState(3).uniform(0.5, 2.0, size=y.size)
    on_device = cuda_module().to_device(X)

    def fit(X_given):
        oracle = _oracle(device="cuda" if X_given is X else "cpu")
        return FunctionalGradientClassifier(oracle, n_estimators=3,
                                            validation_fraction=None).fit(X_given, y, w)

    first = fit(X)
    assert _bits(fit(X)) == _bits(first)
    with register_backend(is_device_array, CudaBackend(Launch(
            threads=5, rows_per_block=30, features_per_block=1, row_blocks=3))):
        assert _bits(fit(on_device)) == _bits(first)


def test_the_fit_at_the_extremes_of_the_weights():
    """Weights over 600 decades, two rows of 1e300 (of classes 0 and 1): the records
    and scores are finite, and every stump separates the two dominant rows, as the
    CPU's do, with the same losses to rounding.  (Which of the splits that separate
    them wins is a tie at float64's precision, left to rounding: here the device's
    first stump is the CPU's second, the loss the same.)"""
    X, y = _classes(5, n=120)
    w = np.logspace(-300, 300, y.size)
    w[7] = 1e300
    assert y[7] != y[-1]
    options = {"n_estimators": 3, "validation_fraction": None}
    gpu = FunctionalGradientClassifier(_oracle(device="cuda"), **options).fit(X, y, w)
    cpu = FunctionalGradientClassifier(_oracle(), **options).fit(X, y, w)
    for key in ("loss", "edge", "step", "grad_norm", "margin", "train_error"):
        assert np.isfinite(gpu.history_[key]).all(), key
    assert np.isfinite(gpu.decision_function(X)).all()
    for h in (*gpu.estimators_, *cpu.estimators_):
        assert isinstance(h, VectorStump)
        left = X[[7, -1], h.feature] <= h.threshold
        assert left[0] != left[1], h
    np.testing.assert_allclose(gpu.history_["loss"], cpu.history_["loss"], rtol=1e-12)
    np.testing.assert_allclose(gpu.intercept_, cpu.intercept_, rtol=1e-12)


def test_scores_of_x_on_the_device_are_the_cpu_s():
    """X given on the device: the (n, K) scores summed there equal the CPU's bit for
    bit, staged too; labels and probabilities are made from them."""
    X, y = _classes(4, n=150, K=4)
    clf = FunctionalGradientClassifier(_oracle(), n_estimators=6,
                                       validation_fraction=None).fit(X, y)
    on_device = cuda_module().to_device(X)
    launches = TRAFFIC.launches
    got = clf.decision_function(on_device)  # (the class's own _decision: on the host)
    assert TRAFFIC.launches > launches  # summed on the device, not on a copy of X
    np.testing.assert_array_equal(_host(got), clf.decision_function(X))
    for a, b in zip(clf.staged_decision_function(on_device), clf.staged_decision_function(X),
                    strict=True):
        np.testing.assert_array_equal(_host(a), b)
    np.testing.assert_array_equal(clf.predict(on_device), clf.predict(X))
    np.testing.assert_array_equal(clf.predict_proba(on_device), clf.predict_proba(X))


# -- MABoost's multiclass cells -------------------------------------------------------------
@pytest.mark.parametrize("options, weighted", [
    ({}, False),  # the entropy map, lazy: the softmax over the cells
    ({}, True),
    ({"mirror": "euclidean"}, True),  # the Euclidean projection over the cells
    ({"update": "active"}, False),
    ({"update": "active", "mirror": "euclidean"}, True),
    ({"variant": "smooth", "smoothness": 2.0}, True),  # the capped simplex over the cells
    ({"variant": "smooth", "smoothness": 2.0, "mirror": "euclidean"}, False),
    ({"variant": "max_margin"}, True),
    ({"smoothness": 2.0, "group": True}, False),  # the secondary rows' cells capped
])
def test_maboost_over_the_cells_takes_the_cpu_fit_s_stumps(options, weighted):
    """The ``maboost`` package's multiclass round on the device: the row masses, the
    label-coded query and answer, the cells' directions and edge, the mirror step and
    the projection over the N(K − 1) cells, the vote: the CPU fit's stumps, records
    equal to rounding."""
    X, y = _classes(3, n=150)
    options = dict(options)
    kw = {"sample_group": np.arange(y.size) % 3 == 0} if options.pop("group", False) else {}
    w = np.random.RandomState(2).uniform(0.5, 2.0, y.size) if weighted else None
    cpu = MirrorBoostingClassifier(_oracle(), n_estimators=4, **options).fit(X, y, w, **kw)
    gpu = MirrorBoostingClassifier(_oracle(device="cuda"), n_estimators=4,
                                   **options).fit(X, y, w, **kw)
    assert len(gpu.history_["edge"]) == 4
    assert [repr(h) for h in gpu.estimators_] == [repr(h) for h in cpu.estimators_]
    for key in ("edge", "step", "loss", "train_error", "margin", "max_weight",
                "n_zero_weights"):
        np.testing.assert_allclose(gpu.history_[key], cpu.history_[key], rtol=1e-12,
                                   atol=1e-15, err_msg=key)
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))
    assert gpu.weights_ is None


def test_maboost_over_the_cells_gives_the_same_bits_under_any_launch():
    X, y = _classes(4, n=90, K=4)
    on_device = cuda_module().to_device(X)

    def fit():
        return MirrorBoostingClassifier(_oracle(), n_estimators=3,
                                        mirror="euclidean").fit(on_device, y)

    first = fit()
    with register_backend(is_device_array, CudaBackend(Launch(
            threads=3, rows_per_block=20, features_per_block=1, row_blocks=4))):
        second = fit()
    assert [repr(h) for h in second.estimators_] == [repr(h) for h in first.estimators_]
    for key, value in first.history_.items():
        if key not in ("time", "cumulative_time"):
            assert value.tobytes() == second.history_[key].tobytes(), key


class _MySoftmax(SoftmaxCrossEntropy):
    """A subclass may change the formulas: the device runs the library's classes only."""


def test_what_does_not_run_is_refused_by_name():
    X, y = _classes(6, n=60)
    model = FunctionalGradientClassifier(_oracle(device="cuda"), loss=_MySoftmax(),
                                         n_estimators=2, validation_fraction=None)
    before = dict(vars(model))
    with pytest.raises(NotDistributedError, match="with several classes: it has no device"):
        model.fit(X, y)
    assert vars(model).keys() == before.keys()
