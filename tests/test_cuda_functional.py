"""The functional boosters (Grubb & Bagnell 2011) on the GPU backend, on numba's CUDA
simulator (:mod:`cuda_simulator`): the regressor with the squared, absolute, Huber and
quantile losses and the binary classifier with the logistic and exponential losses,
under each projection and query.
The device's least-squares stumps are the CPU oracle's, the device fit takes the CPU
fit's stumps in every round with its records and predictions equal to rounding, two
device fits and fits under other launch shapes are bit-equal, and what the GPU does not
run is refused by name with the estimator left as it was.

Why the numbers differ from the CPU's at all (never the stumps chosen here): every sum
over rows on the device is exact on its terms rounded to fixed point (``2^-e`` of the
largest term, e about 52 at 200 rows: ~1e-16 relatively,
:mod:`oracleboost.rows.fixed_point`) where the CPU adds floats in lane order, and the
CPU oracle divides the weights by a constant before its histograms (the leaves are
ratios: equal to rounding).  So the stumps' features and thresholds are equal, their
leaves and every record equal to 1e-12 relatively (measured: a few 1e-16).
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda_simulator import simulator_here, test_in_a_child_process  # noqa: F401

from oracleboost.boosters import FunctionalGradientClassifier, FunctionalGradientRegressor
from oracleboost.cuda import CudaBackend, DeviceStumps, Launch, cuda_module
from oracleboost.engine.backends import is_device_array, register_backend
from oracleboost.losses import Huber
from oracleboost.oracles import StumpOracle
from oracleboost.oracles.stumps import ConstantHypothesis, RegressionStump, SignStump
from oracleboost.rows.partitioned import NotDistributedError

ROUNDS = 6


def _data(seed: int, n: int = 200, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    X[:, d - 1] = np.round(X[:, d - 1])  # a feature of few values
    y = 2.0 * X[:, 0] + np.sin(3.0 * X[:, 1]) + 0.3 * rng.randn(n)
    return X, y


def _oracle(**kw) -> StumpOracle:
    return StumpOracle(max_bins=16, **kw)


def _labels(seed: int, n: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """A binary problem on :func:`_data`'s features."""
    X, t = _data(seed, n)
    return X, np.where(t + 0.5 * np.random.RandomState(seed + 50).randn(n) > 0.2, 1, 0)


def _split(h) -> tuple:
    """A stump's split (feature, threshold; a ±1 stump's sign too), or the constant's
    kind."""
    if isinstance(h, SignStump):
        return (h.feature, h.threshold, h.sign)
    return (h.feature, h.threshold) if isinstance(h, RegressionStump) else ("constant",)


def _leaves(h) -> list[float]:
    if isinstance(h, SignStump):
        return [float(h.sign)]
    return [h.left, h.right] if isinstance(h, RegressionStump) else [h.value]


def _bits(model) -> tuple:
    return (tuple(repr(h) for h in model.estimators_), np.asarray(model.coef_).tobytes(),
            tuple((k, v.tobytes()) for k, v in sorted(model.history_.items())
                  if k not in ("time", "cumulative_time")))


# -- project: the CPU oracle's least-squares stump -----------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_project_answers_the_cpu_stump(seed):
    """Random targets, with and without weights, on NumPy and device arrays: the same
    split, leaves equal to rounding, outputs on the training rows likewise; a feature
    subset keeps the constant."""
    X, _ = _data(seed, n=300, d=4)
    bound = StumpOracle(max_bins=16).bind(X)
    device = DeviceStumps(bound)
    rng = np.random.RandomState(10 + seed)
    cuda = cuda_module()
    for t in (X[:, 0] * 2 + rng.randn(300), rng.randn(300), 1e-200 * rng.randn(300)):
        for w in (None, rng.uniform(0.2, 3.0, 300)):
            g = bound.project(t, w)
            for h in (device.project(t, w),
                      device.project(cuda.to_device(t),
                                     None if w is None else cuda.to_device(w))):
                assert type(h) is type(g) and _split(h) == _split(g), (h, g)
                np.testing.assert_allclose(_leaves(h), _leaves(g), rtol=1e-12, atol=0)
                out = h.train_output
                out = out if isinstance(out, np.ndarray) else out.copy_to_host()
                np.testing.assert_allclose(out, g.train_output, rtol=1e-12, atol=0)
    t = rng.randn(300)
    for features in ([1], [2, 3]):
        assert _split(device.project(t, features=features)) == \
            _split(bound.project(t, features=features))


def test_project_at_the_extremes_of_the_weights():
    """Weights from 1e-300 to 1e300, one of them dominant: the histograms' fixed-point
    sums do not overflow (each channel on the scale of its own largest term) and the
    answer is the CPU's, leaves finite and equal to rounding.

    A constant target is where rounding decides: unweighted both give the constant (the
    counts are exact, the target's sums exact multiples of it); weighted, ``Σ w t / Σ
    w`` is 3 only to rounding on both (float sums on the CPU, each channel rounded on
    its own scale on the device), so both give a split whose leaves are 3 to an ulp,
    scoring above the constant by rounding, and which of the near-tied thresholds wins
    is rounding's choice too (here they differ).  Every output is 3 to an ulp on both."""
    X, _ = _data(7, n=200, d=3)
    bound = StumpOracle(max_bins=8).bind(X)
    device = DeviceStumps(bound)
    rng = np.random.RandomState(7)
    w = 10.0 ** rng.uniform(-300, 300, size=200)
    w[17] = 1e300
    t = rng.randn(200)
    h, g = device.project(t, w), bound.project(t, w)
    assert _split(h) == _split(g)
    assert np.isfinite(_leaves(h)).all()
    np.testing.assert_allclose(_leaves(h), _leaves(g), rtol=1e-12)
    three = np.full(200, 3.0)
    assert isinstance(device.project(three), ConstantHypothesis)
    assert isinstance(bound.project(three), ConstantHypothesis)
    for answer in (device.project(three, w), bound.project(three, w)):
        np.testing.assert_allclose(answer.train_output, 3.0, rtol=2**-51, atol=0)


def test_project_refuses_by_name():
    X, _ = _data(0, n=60)
    bound = StumpOracle(max_bins=8).bind(X)
    device = DeviceStumps(bound)
    with pytest.raises(NotImplementedError, match="from_codes"):
        DeviceStumps.from_codes(bound.codes.T, bound.thresholds).project(np.ones(60))
    bad = np.ones(60)
    bad[5] = np.nan
    with pytest.raises(ValueError, match="target"):
        device.project(bad)
    with pytest.raises(ValueError, match="target contains NaN; every entry must be finite"):
        device.project(cuda_module().to_device(bad))
    with pytest.raises(ValueError, match="features"):
        device.project(np.ones(60), features=[7])


# -- the fit -------------------------------------------------------------------------------
def _same_fit(gpu, cpu, keys, X) -> None:
    """Every round the CPU fit's split; leaves, records, the intercept and the scores
    equal to 1e-12 relatively; the running state stayed on the device."""
    assert [_split(h) for h in gpu.estimators_] == [_split(h) for h in cpu.estimators_]
    for h, g in zip(gpu.estimators_, cpu.estimators_, strict=True):
        np.testing.assert_allclose(_leaves(h), _leaves(g), rtol=1e-12)
    for key in keys:
        np.testing.assert_allclose(gpu.history_[key], cpu.history_[key], rtol=1e-12,
                                   atol=1e-15, err_msg=key)
    # (balanced classes: f_0 = ln(Σ s₊ / Σ s₋) is 0 from exact masses, an ulp of the
    # ratio (~7e-16) from the CPU's float sums)
    np.testing.assert_allclose(gpu.intercept_, cpu.intercept_, rtol=1e-12, atol=2e-15)
    score = "decision_function" if hasattr(cpu, "decision_function") else "predict"
    np.testing.assert_allclose(getattr(gpu, score)(X), getattr(cpu, score)(X), rtol=1e-12,
                               atol=1e-13)
    assert gpu.stop_reason_ == cpu.stop_reason_
    assert getattr(gpu, "_state_", None) is None


@pytest.mark.parametrize("options, weighted", [
    ({}, False),
    ({}, True),
    ({"projection": "residual"}, True),  # Alg. 3: the residual carried to the next round
    ({"projection": "repeated"}, False),  # Alg. 2: several learners a round, one step
    ({"query": "correlate"}, True),  # the weighted target s · v made on the device
    # the other pointwise losses, from a given start and from their own (a weighted
    # quantile of y, by the passes of rows.quantile on the device)
    ({"loss": "absolute", "init": 0.0}, False),
    ({"loss": "huber", "init": 0.5}, True),
    ({"loss": "quantile", "init": 0.0}, False),
    ({"loss": "absolute"}, True),
    ({"loss": "huber"}, False),
    ({"loss": "quantile"}, True),
])
def test_the_device_fit_takes_the_cpu_fit_s_stumps(options, weighted):
    """The regressor: every round the CPU fit's split; leaves, steps, edges, losses and
    gradient norms equal to 1e-12 relatively, and so are the predictions (the model's
    sums of the same terms)."""
    X, y = _data(0)
    w = np.random.RandomState(1).uniform(0.2, 3.0, size=y.size) if weighted else None
    cpu = FunctionalGradientRegressor(_oracle(), n_estimators=ROUNDS, **options).fit(X, y, w)
    gpu = FunctionalGradientRegressor(_oracle(device="cuda"), n_estimators=ROUNDS,
                                      **options).fit(X, y, w)
    assert len(gpu.history_["loss"]) == ROUNDS
    _same_fit(gpu, cpu, ("loss", "edge", "step", "grad_norm", "residual_norm"), X)


@pytest.mark.parametrize("options, weighted", [
    ({}, False),  # the logistic loss, least-squares stumps of its gradient
    ({}, True),
    ({"loss": "exponential"}, True),
    ({"class_weight": "balanced", "projection": "repeated"}, False),
    ({"query": "correlate"}, False),  # ±1 stumps of the gradient's signs
])
def test_the_device_classifier_takes_the_cpu_fit_s_stumps(options, weighted):
    """The binary classifier (its start from the classes' masses, the margin loss's
    gradient and mean on the device, the training error and margin of each round): the
    same as the regressor's, and the same predictions."""
    X, y = _labels(0)
    w = np.random.RandomState(1).uniform(0.2, 3.0, size=y.size) if weighted else None
    options = {"n_estimators": ROUNDS, "validation_fraction": None, **options}
    cpu = FunctionalGradientClassifier(_oracle(), **options).fit(X, y, w)
    gpu = FunctionalGradientClassifier(_oracle(device="cuda"), **options).fit(X, y, w)
    assert len(gpu.history_["loss"]) == ROUNDS
    _same_fit(gpu, cpu, ("loss", "edge", "step", "grad_norm", "margin", "train_error"), X)
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))


def test_two_device_fits_and_any_launch_give_the_same_bits():
    """The same fit twice with ``device="cuda"``, and on X given as a device array under
    two other launch shapes: the same bytes in every stump, coefficient and record."""
    X, y = _data(2, n=150)
    w = np.random.RandomState(3).uniform(0.5, 2.0, size=y.size)

    def fit(X_given):
        oracle = _oracle(device="cuda" if X_given is X else "cpu")
        return FunctionalGradientRegressor(oracle, n_estimators=4).fit(X_given, y, w)

    first = fit(X)
    assert _bits(fit(X)) == _bits(first)
    on_device = cuda_module().to_device(X)
    for launch in (Launch(threads=3, rows_per_block=40, features_per_block=1, row_blocks=5),
                   Launch(threads=16, rows_per_block=150, features_per_block=3,
                          row_blocks=1)):
        with register_backend(is_device_array, CudaBackend(launch)):
            assert _bits(fit(on_device)) == _bits(first)


def test_the_classifier_gives_the_same_bits_under_any_launch():
    """The logistic classifier, weighted, under the default launch and another: the same
    bytes in every stump, coefficient and record."""
    X, y = _labels(3, n=120)
    w = np.random.RandomState(4).uniform(0.5, 2.0, size=y.size)
    on_device = cuda_module().to_device(X)

    def fit():
        return FunctionalGradientClassifier(_oracle(), n_estimators=3,
                                            validation_fraction=None).fit(on_device, y, w)

    first = fit()
    with register_backend(is_device_array, CudaBackend(Launch(
            threads=5, rows_per_block=30, features_per_block=1, row_blocks=3))):
        assert _bits(fit()) == _bits(first)


def test_the_classifier_at_the_extremes_of_the_weights():
    """Sample weights over 600 decades, one of them 1e300: the records and scores are
    finite, the first split is the CPU's (the dominant row's gradient decides it)."""
    X, y = _labels(5, n=120)
    w = np.logspace(-300, 300, y.size)
    w[7] = 1e300
    options = {"n_estimators": 3, "validation_fraction": None}
    gpu = FunctionalGradientClassifier(_oracle(device="cuda"), **options).fit(X, y, w)
    cpu = FunctionalGradientClassifier(_oracle(), **options).fit(X, y, w)
    for key in ("loss", "edge", "step", "grad_norm", "margin", "train_error"):
        assert np.isfinite(gpu.history_[key]).all(), key
    assert np.isfinite(gpu.decision_function(X)).all()
    assert _split(gpu.estimators_[0]) == _split(cpu.estimators_[0])
    np.testing.assert_allclose(gpu.history_["loss"][0], cpu.history_["loss"][0], rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_weighted_quantile_is_the_cpu_s(seed):
    """The passes of :func:`oracleboost.rows.quantile.weighted_quantile` on the device:
    the CPU's quantile for values of both signs and any magnitude (keys whose span
    passes 2^63), ±0, ties, and weights over 600 decades."""
    from oracleboost.cuda.blocks import DeviceBlocks
    from oracleboost.rows.blocks import RowBlocks
    from oracleboost.rows.quantile import weighted_quantile

    rng = np.random.RandomState(seed)
    n = 150
    cuda = cuda_module()
    wide = rng.randn(n) * 10.0 ** rng.uniform(-300, 300, n)
    ties = np.round(rng.randn(n))
    ties[:10] = -0.0
    for y in (rng.randn(n), wide, ties):
        for s in (None, rng.uniform(0.2, 3.0, n), 10.0 ** rng.uniform(-300, 300, n)):
            for q in (0.5, 0.1, 0.9):
                want = weighted_quantile(RowBlocks(n), y, s, q)
                got = weighted_quantile(DeviceBlocks(n), cuda.to_device(y),
                                        None if s is None else cuda.to_device(s), q)
                assert got == want, (q, got, want)


def _refused(make, fit_args, error, match, fit_kw=None):
    model = make()
    before = dict(vars(model))
    with pytest.raises(error, match=match):
        model.fit(*fit_args, **(fit_kw or {}))
    assert vars(model).keys() == before.keys()  # a failed fit leaves it as it was


class _MyHuber(Huber):
    """A subclass may change the formulas: the device runs the library's classes only."""


@pytest.mark.parametrize("options, match", [
    ({"loss": _MyHuber(), "init": 0.0}, "does not run on the GPU: it has no device"),
    ({"query": "newton"}, "query='newton' does not run on the GPU"),
    ({"init_score": True}, "init_score does not run on the GPU"),
])
def test_what_the_gpu_does_not_run_is_refused_by_name(options, match):
    X, y = _data(6, n=60)
    options = dict(options)
    kw = {"init_score": np.zeros(y.size)} if options.pop("init_score", False) else {}
    w = np.linspace(0.5, 2.0, y.size) if options.pop("weighted", False) else None
    _refused(lambda: FunctionalGradientRegressor(_oracle(device="cuda"), n_estimators=3,
                                                 **options),
             (X, y, w), NotDistributedError, match, kw)


@pytest.mark.parametrize("options, classes, match", [
    ({"loss": "exponential", "query": "newton"}, 2, "query='newton' does not run on the GPU"),
    ({"query": "newton"}, 3, "query='newton' does not run on the GPU"),
])
def test_what_the_gpu_does_not_run_of_the_classifier_is_refused_by_name(options, classes,
                                                                        match):
    X, t = _data(7, n=60)
    y = np.digitize(t, np.quantile(t, np.linspace(0, 1, classes + 1)[1:-1]))
    _refused(lambda: FunctionalGradientClassifier(_oracle(device="cuda"), n_estimators=3,
                                                  validation_fraction=None, **options),
             (X, y), NotDistributedError, match)
