"""The GPU stumps (:mod:`oracleboost.cuda`) on numba's CUDA simulator: the device's answer
is the CPU oracle's stump, two device runs are bit-equal whatever the launch shape, the
fixed-point sums do not overflow at the extremes of the weights, AdaBoost's rounds on the
device take the CPU fit's stumps and steps, and what the GPU does not do is refused by name.

No GPU is needed: :mod:`cuda_simulator` selects numba's simulator (the first test checks
the switch in a fresh process).  The simulator runs a Python thread a GPU thread: the
data are small (a few hundred rows, a few features, 16 bins).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from cuda_simulator import ROOT, simulator_here, test_in_a_child_process  # noqa: F401

from oracleboost.cuda import (  # noqa: E402
    DeviceStumps,
    Launch,
    NoDeviceError,
    bind_on_device,
    cuda_module,
)
from oracleboost.oracles import StumpOracle  # noqa: E402
from oracleboost.oracles.stumps import ConstantHypothesis, SignStump  # noqa: E402
from oracleboost.rows.fixed_point import HEADROOM, fixed_point_exponent, to_fixed  # noqa: E402

SEEDS = [0, 1, 2]


def _data(seed: int, n: int = 300, d: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    X[:, d - 1] = np.round(X[:, d - 1])  # a feature of few values: fewer bins than others
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.4 * rng.randn(n) > 0.3, 1, -1)
    return X, y


def _same(h, g) -> bool:
    """The same hypothesis: class, feature, threshold, sign or value."""
    if type(h) is not type(g):
        return False
    if isinstance(h, SignStump):
        return (h.feature, h.threshold, h.sign, h.default_left) == \
            (g.feature, g.threshold, g.sign, g.default_left)
    return h.value == g.value


def _fixed_scores(codes_T: np.ndarray, n_bins: np.ndarray, q: np.ndarray) -> dict:
    """Every candidate's exact score on the fixed-point query ``q``, in Python's integers:
    {("constant", s) or (j, t, s): Σ q h}."""
    q = [int(x) for x in q]
    total = sum(q)
    scores = {("constant", 1): total, ("constant", -1): -total}
    for j in range(codes_T.shape[0]):
        c = codes_T[j]
        for t in range(int(n_bins[j]) - 1):
            right = sum(x for x, b in zip(q, c, strict=True) if b > t)
            e = right - (total - right)
            scores[(j, t, 1)], scores[(j, t, -1)] = e, -e
    return scores


def _key(h, bound) -> tuple:
    if isinstance(h, ConstantHypothesis):
        return ("constant", int(h.value))
    t = int(np.searchsorted(bound.thresholds[h.feature], h.threshold))
    return (h.feature, t, h.sign)


# -- the module and the device ------------------------------------------------------------
def test_importing_the_library_does_not_import_numba_cuda_and_the_switch_works():
    """In a fresh process: ``import oracleboost`` (and its GPU package) leaves
    ``numba.cuda`` unimported; setting ``ENABLE_CUDASIM`` after numba is imported and
    before ``numba.cuda`` is selects the simulator (what this module relies on)."""
    script = textwrap.dedent("""
        import sys
        import oracleboost, oracleboost.cuda
        assert 'numba.cuda' not in sys.modules
        import numba.core.config
        numba.core.config.ENABLE_CUDASIM = True
        from oracleboost.cuda import cuda_module
        cuda = cuda_module()
        assert cuda.is_available()
        assert cuda.jit.__module__ == 'numba.cuda.simulator.api', cuda.jit.__module__
    """)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


def test_no_gpu_is_refused_naming_the_device(monkeypatch):
    cuda = cuda_module()
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    with pytest.raises(NoDeviceError, match='device="cuda".*is_available'):
        cuda_module()


# -- correlate: the CPU oracle's stump -----------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_correlate_answers_the_cpu_stump(seed):
    """Random float queries: the device's stump is the CPU's (their scores differ by far
    more than the rounding), with the same outputs on the training rows."""
    X, y = _data(seed)
    bound = StumpOracle(max_bins=16).bind(X)
    device = DeviceStumps(bound)
    rng = np.random.RandomState(100 + seed)
    queries = [rng.randn(X.shape[0]),
               y * rng.exponential(size=X.shape[0]),  # a booster's query: w ∘ y
               y * 1e-200 * rng.rand(X.shape[0])]  # scale-free: tiny weights
    for r in queries:
        h, g = device.correlate(r), bound.correlate(r)
        assert _same(h, g), (h, g)
        np.testing.assert_array_equal(h.train_output, g.train_output)
        assert h.key == g.key and h.scale == g.scale


@pytest.mark.parametrize("seed", SEEDS)
def test_ties_are_broken_as_the_cpu_breaks_them(seed):
    """Queries of small integers sum exactly in floats too, so equal scores tie exactly on
    both sides, and the tie rule decides: constants first (+1 before −1), features in
    order, thresholds left to right, +1 before −1.  The zero query gives the constant +1;
    a feature subset keeps the constants."""
    X, _ = _data(seed)
    bound = StumpOracle(max_bins=4).bind(X)
    device = DeviceStumps(bound)
    rng = np.random.RandomState(seed)
    n = X.shape[0]
    for r in (rng.randint(-2, 3, n).astype(float), np.zeros(n), np.ones(n), -np.ones(n),
              np.where(X[:, 3] > 0, 1.0, -1.0)):
        assert _same(device.correlate(r), bound.correlate(r))
    r = rng.randint(-3, 4, n).astype(float)
    for features in ([1], [2, 3], [0, 3]):
        assert _same(device.correlate(r, features=features),
                     bound.correlate(r, features=features))


def test_the_choice_is_exact_on_the_rounded_query():
    """The device's answer is the best candidate on the fixed-point query by exact
    integer scores (checked against every candidate's score in Python's integers)."""
    X, _ = _data(5, n=120, d=3)
    bound = StumpOracle(max_bins=8).bind(X)
    device = DeviceStumps(bound)
    r = np.random.RandomState(5).randn(120)
    q = to_fixed(r, fixed_point_exponent(float(np.abs(r).max()), r.size))
    scores = _fixed_scores(bound.codes.T, bound.n_bins, q)
    h = device.correlate(r)
    assert scores[_key(h, bound)] == max(scores.values())


def test_weights_at_the_extremes_do_not_overflow():
    """Weights from 1e-300 to 1e300 (one dominant, many orders of magnitude): the
    histogram is the exact integer sum of the rounded query (no overflow), the answer the
    exact best on it; the CPU's answer (float sums) scores within the rounding of it.  A
    lone dominant weight decides both alike: every candidate right on its row ties with
    the constant, which comes first."""
    X, y = _data(7, n=200, d=3)
    bound = StumpOracle(max_bins=8).bind(X)
    device = DeviceStumps(bound)
    rng = np.random.RandomState(7)
    r = y * 10.0 ** rng.uniform(-300, 300, size=200)
    r[17] = 1e300 * y[17]
    e = fixed_point_exponent(float(np.abs(r).max()), r.size)
    q = to_fixed(r, e)
    h = device.correlate(r)
    # the device's histogram: every bin the exact sum of its rows' integers
    hist = device._dev.hist.copy_to_host()[0]
    codes_T = bound.codes.T
    for j in range(3):
        expected = [sum(int(x) for x, b in zip(q, codes_T[j], strict=True) if b == k)
                    for k in range(device.bins)]
        assert hist[j].tolist() == expected
        assert sum(abs(int(x)) for x in q) < HEADROOM
    scores = _fixed_scores(codes_T, bound.n_bins, q)
    best = max(scores.values())
    assert scores[_key(h, bound)] == best
    cpu = scores[_key(bound.correlate(r), bound)]
    assert 0 <= best - cpu <= r.size * 2**10  # float sums: each within n ulps of 2^62
    lone = np.zeros(200)
    lone[17] = 1e300 * y[17]
    lone[18:40] = 1e-300 * y[18:40]  # lost in fixed point, as in the float sums beside it
    assert _same(device.correlate(lone), bound.correlate(lone))
    assert isinstance(device.correlate(lone), ConstantHypothesis)


def test_two_runs_and_any_launch_give_the_same_bits():
    """Integer atomics: the histogram and the answer are bit-equal run to run and for any
    launch shape (threads, rows and features a block); rows given as codes and thresholds
    (``from_codes``) answer as the bound oracle's."""
    X, _ = _data(3, n=200, d=5)
    bound = StumpOracle(max_bins=16).bind(X)
    r = np.random.RandomState(3).randn(200)
    results = []
    for launch in (None, Launch(4, 37, 1, 3), Launch(16, 200, 5, 1), Launch(8, 64, 2, 2)):
        device = DeviceStumps(bound, launch=launch)
        for _ in range(2):
            h = device.correlate(r)
            results.append((device._dev.hist.copy_to_host()[0].tobytes(), repr(h)))
    device = DeviceStumps.from_codes(bound.codes.T, bound.thresholds)
    h = device.correlate(r)
    results.append((device._dev.hist.copy_to_host()[0].tobytes(), repr(h)))
    assert len(set(results)) == 1


# -- refusals by name -----------------------------------------------------------------------
def test_a_query_is_refused_with_the_cpu_s_message():
    """A NaN, an infinity, or finite entries whose sums overflow float64, in a query on
    the device: the CPU oracle's error, word for word (the device array is read on the
    host only to refuse it)."""
    X, _ = _data(2, n=80, d=3)
    bound = StumpOracle(max_bins=8).bind(X)
    device = DeviceStumps(bound)
    cuda = cuda_module()
    nan, inf, huge = np.ones(80), np.ones(80), np.full(80, 1e308)
    nan[3], inf[7] = np.nan, -np.inf
    tall = np.column_stack([np.ones(80), huge])
    cases = [("correlate", nan), ("correlate", inf), ("project", nan), ("project", inf),
             ("project", huge), ("project", tall), ("correlate", tall),
             ("correlate", np.column_stack([nan, nan]))]
    for method, q in cases:
        with pytest.raises(ValueError) as cpu:
            getattr(bound, method)(q)
        with pytest.raises(ValueError) as gpu:
            getattr(device, method)(cuda.to_device(q))
        assert str(gpu.value) == str(cpu.value), (method, q.shape)



def test_what_the_gpu_does_not_do_is_refused_by_name():
    X, y = _data(0, n=60, d=3)
    use_cpu = "use the CPU oracle"
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    with pytest.raises(NotImplementedError, match=f"missing values.*{use_cpu}"):
        DeviceStumps(StumpOracle().bind(X_nan))
    with pytest.raises(NotImplementedError, match=f"missing values.*{use_cpu}"):
        DeviceStumps.from_codes(np.array([[0, 2]], dtype=np.uint8), [np.array([0.5])])
    with pytest.raises(NotImplementedError, match=f"sparse X.*{use_cpu}"):
        bind_on_device(StumpOracle(), sp.csr_matrix(X))
    with pytest.raises(NotImplementedError, match=f"categorical features.*{use_cpu}"):
        bind_on_device(StumpOracle(), X, categorical_features=[0])
    with pytest.raises(NotImplementedError, match=f"monotone_constraints.*{use_cpu}"):
        DeviceStumps(StumpOracle(monotone_constraints=[1, 0, 0]).bind(X))
    with pytest.raises(NotImplementedError, match=f"exact=True.*{use_cpu}"):
        bind_on_device(StumpOracle(exact=True), X)
    device = bind_on_device(StumpOracle(max_bins=8), X)
    # (K columns are answered: test_cuda_multiclass; one column alone is refused)
    with pytest.raises(ValueError, match="K >= 2"):
        device.correlate(np.ones((60, 1)))
    with pytest.raises(ValueError, match="K >= 2"):
        device.project(np.ones((60, 1)))
    with pytest.raises(NotImplementedError, match=f"from_codes.*{use_cpu}"):
        DeviceStumps.from_codes(device._codes, device.thresholds).correlate(np.ones((60, 3)))
    with pytest.raises(TypeError, match="StumpOracle bound in this process"):
        DeviceStumps(object())
    with pytest.raises(ValueError, match="r"):
        device.correlate(np.full(60, np.nan))
    with pytest.raises(ValueError, match="shared memory"):
        DeviceStumps(StumpOracle(max_bins=8).bind(X), launch=Launch(8, 10, 10**6, 1))
