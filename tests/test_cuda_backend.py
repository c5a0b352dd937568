"""Boosters fitted on the GPU backend (:mod:`oracleboost.cuda.backend`), on numba's
CUDA simulator (:mod:`cuda_simulator`): the device fit takes the CPU fit's stumps and
steps, two device fits and fits under other launch shapes are bit-equal, the extremes of
the weights neither overflow nor give NaN, and what the GPU does not run is refused by
name with the estimator left as it was.

The simulator runs a Python thread a GPU thread (a launch costs milliseconds): the data
are a few hundred rows, three features, 16 bins and a few rounds.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from cuda_simulator import ROOT, simulator_here, test_in_a_child_process  # noqa: F401

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    MirrorBoostingClassifier,
    TotallyCorrectiveClassifier,
)
from oracleboost.boosters.mirror.maps import EntropyMap
from oracleboost.cuda import CudaBackend, Launch, cuda_module
from oracleboost.cuda.stages import TWINS
from oracleboost.engine.backends import backend_for, is_device_array, register_backend
from oracleboost.engine.fit_data import fit_backend
from oracleboost.losses import Exponential
from oracleboost.oracles import StumpOracle, TreeOracle
from oracleboost.oracles.stumps import SignStump
from oracleboost.rows.partitioned import NotDistributedError

ROUNDS = 6


def _data(seed: int, n: int = 200, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    X[:, d - 1] = np.round(X[:, d - 1])  # a feature of few values
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.4 * rng.randn(n) > 0.3, 1, 0)
    return X, y


def _oracle(**kw) -> StumpOracle:
    return StumpOracle(max_bins=16, **kw)


def _stumps(model) -> list[tuple]:
    """Each round's stump: (feature, threshold, sign), or the constant's value."""
    out = []
    for i in model.ensemble_.round_index:
        h = model.estimators_[i]
        out.append((h.feature, h.threshold, h.sign) if isinstance(h, SignStump)
                   else ("constant", h.value))
    return out


def _bits(model) -> tuple:
    """Everything a fit's numbers are: its history and coefficients, as bytes."""
    return (tuple(_stumps(model)), model.ensemble_.coef_.tobytes() if hasattr(
        model.ensemble_, "coef_") else np.asarray(model.coef_).tobytes(),
        tuple((k, v.tobytes()) for k, v in sorted(model.history_.items()) if k not in
              ("time", "cumulative_time")))


# -- the device fit against the CPU fit ----------------------------------------------------
@pytest.mark.parametrize("options, weighted", [
    ({}, False),  # AdaBoost: the exponential loss and its step
    ({}, True),
    ({"loss": "logistic"}, True),
    ({"step": "optimal"}, False),  # the exponential loss' line over a stump's two values
    ({"step": "quadratic", "learning_rate": 0.5}, False),
    ({"step": "constant", "learning_rate": 0.3}, True),
    ({"step": "closed_form"}, False),
    ({"class_weight": "balanced"}, False),  # weights made on the CPU, then uploaded
    # the line searches over every row (the logistic risk along the column)
    ({"loss": "logistic", "step": "wolfe"}, True),
    ({"loss": "logistic", "step": "optimal"}, False),
    ({"loss": "logistic", "step": "closed_form"}, True),
])
def test_the_device_fit_takes_the_cpu_fit_s_stumps(options, weighted):
    """Every round the same stump (feature, threshold, sign); the steps, edges, losses,
    margins and the decision function equal to 1e-12 relatively, not to the bit, for two
    reasons: every sum over rows on the device is exact on the terms rounded to fixed
    point (``2^-e`` of the largest term, e about 52 at 200 rows: ~1e-16 relatively,
    :mod:`oracleboost.rows.fixed_point`) where the CPU's are float sums in lane order,
    and ``exp``/``log`` are the device's (the C library's on the simulator), the CPU's
    ``exp`` its own polynomial, an ulp apart.  (Measured: at most ~4e-15 apart.)  A
    line search compares the risk's sums with its conditions and stops at a tolerance:
    its step is the CPU's to the same rounding unless a sum falls within ~1e-15 of a
    condition's bound, which these data do not (measured: the optimal step 1e-15 apart,
    Wolfe's bisection the same bits)."""
    X, y = _data(0)
    w = np.random.RandomState(1).uniform(0.2, 3.0, size=y.size) if weighted else None
    cpu = CoordinateBoostingClassifier(_oracle(), n_estimators=ROUNDS, **options).fit(X, y, w)
    gpu = CoordinateBoostingClassifier(_oracle(device="cuda"), n_estimators=ROUNDS,
                                       **options).fit(X, y, w)
    assert _stumps(gpu) == _stumps(cpu)
    assert gpu.stop_reason_ == cpu.stop_reason_
    for key in ("step", "edge", "loss", "margin", "entropy", "train_error"):
        np.testing.assert_allclose(gpu.history_[key], cpu.history_[key], rtol=1e-12,
                                   atol=1e-14, err_msg=key)
    np.testing.assert_allclose(gpu.decision_function(X), cpu.decision_function(X),
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))
    assert gpu._state_ is None  # the running state stayed on the device


def test_eval_sets_and_early_stopping_score_on_the_cpu_as_the_cpu_fit_does():
    """X in memory with ``device="cuda"``: early stopping's held-out rows are split and
    the eval set scored in this process, round by round, as in the CPU's fit (to the
    same rounding as the scores)."""
    X, y = _data(10, n=240)
    X_val, y_val = _data(11, n=80)
    options = {"n_estimators": 8, "n_iter_no_change": 2, "validation_fraction": 0.25,
               "random_state": 0}
    cpu, gpu = (CoordinateBoostingClassifier(_oracle(device=d), **options).fit(
        X, y, eval_set=[(X_val, y_val)]) for d in ("cpu", "cuda"))
    assert _stumps(gpu) == _stumps(cpu)
    assert gpu.best_iteration_ == cpu.best_iteration_
    np.testing.assert_allclose(gpu.validation_loss_, cpu.validation_loss_, rtol=1e-12)
    np.testing.assert_allclose(gpu.history_["val_loss_0"], cpu.history_["val_loss_0"],
                               rtol=1e-12)


def test_the_device_stops_as_the_cpu_stops():
    """A stump right on every row: the perfect-hypothesis stop with the CPU's step (a
    coefficient above ‖λ‖₁: 1 in the first round).  Balanced labels and no split: the
    zero-edge stop, with no round."""
    rng = np.random.RandomState(0)
    X = rng.randn(100, 2)
    y = np.where(X[:, 1] > 0.2, 1, -1)
    fits = [CoordinateBoostingClassifier(StumpOracle(device=d), n_estimators=5).fit(X, y)
            for d in ("cpu", "cuda")]
    assert [f.stop_reason_ for f in fits] == ["perfect_hypothesis"] * 2
    assert [f.history_["step"].tolist() for f in fits] == [[1.0], [1.0]]
    assert _stumps(fits[0]) == _stumps(fits[1])

    X, y = np.ones((10, 1)), np.array([1, -1] * 5)
    fits = [CoordinateBoostingClassifier(StumpOracle(device=d), n_estimators=5).fit(X, y)
            for d in ("cpu", "cuda")]
    assert [f.stop_reason_ for f in fits] == ["zero_edge"] * 2
    assert [len(f.history_["step"]) for f in fits] == [0, 0]


# -- bit for bit -------------------------------------------------------------------------
def test_two_device_fits_and_any_launch_give_the_same_bits():
    """The same fit twice on ``device="cuda"``, and on X given as a device array under
    two other launch shapes (a backend with its own ``Launch``): the same bytes in every
    history entry and coefficient.  (Every sum is on integers, every extreme exact.)"""
    X, y = _data(2, n=150)
    w = np.random.RandomState(3).uniform(0.5, 2.0, size=y.size)

    def fit(X_given):
        return CoordinateBoostingClassifier(_oracle(device="cuda" if X_given is X else "cpu"),
                                            n_estimators=4).fit(X_given, y, w)

    first, second = fit(X), fit(X)
    assert _bits(first) == _bits(second)
    on_device = cuda_module().to_device(X)
    for launch in (Launch(threads=3, rows_per_block=40, features_per_block=1, row_blocks=5),
                   Launch(threads=16, rows_per_block=200, features_per_block=3,
                          row_blocks=1)):
        with register_backend(is_device_array, CudaBackend(launch)):
            assert _bits(fit(on_device)) == _bits(first)


def test_a_line_search_on_the_device_gives_the_same_bits_under_any_launch():
    """The logistic loss's Wolfe search (each evaluation of the risk or its slope a
    pass and a fixed-point sum): the same bytes under another launch shape."""
    X, y = _data(12, n=100)
    on_device = cuda_module().to_device(X)

    def fit(X_given):
        return CoordinateBoostingClassifier(_oracle(), n_estimators=2, loss="logistic",
                                            step="wolfe").fit(X_given, y)

    first = fit(on_device)
    assert first.history_["line_evaluations"].sum() > 0
    with register_backend(is_device_array, CudaBackend(Launch(
            threads=5, rows_per_block=30, features_per_block=1, row_blocks=3))):
        assert _bits(fit(on_device)) == _bits(first)


def test_x_on_the_device_selects_the_backend_and_predicts_from_it():
    X, y = _data(4, n=120)
    on_device = cuda_module().to_device(X)
    assert backend_for(on_device).name == "cuda"
    assert backend_for(X) is None
    assert fit_backend(X, _oracle(device="cuda")).name == "cuda"
    assert fit_backend(X, _oracle()).name == "memory"
    model = CoordinateBoostingClassifier(_oracle(), n_estimators=3).fit(on_device, y)
    reference = CoordinateBoostingClassifier(_oracle(device="cuda"), n_estimators=3).fit(X, y)
    assert _bits(model) == _bits(reference)
    # the scores are summed on the device and stay there (tests/test_cuda_predict.py)
    scores = model.decision_function(on_device)
    assert is_device_array(scores)
    np.testing.assert_array_equal(scores.copy_to_host(), model.decision_function(X))
    staged = list(model.staged_decision_function(on_device))
    np.testing.assert_array_equal(staged[-1].copy_to_host(), model.decision_function(X))


# -- the extremes ------------------------------------------------------------------------
@pytest.mark.parametrize("options", [{}, {"loss": "logistic", "step": "wolfe"}])
def test_weights_from_1e_300_to_1e300_neither_overflow_nor_give_nan(options):
    """Sample weights spread over 600 decades, one of them 1e300 (dominant): every
    record and score is finite on the device, and the first stump is the CPU's (the
    dominant row decides it).  The fixed-point sums scale by the largest term, so no
    sum overflows; the weights below 2^-e of the largest count as 0 there, where the
    CPU keeps them (they change no float sum that holds the large one).  The logistic
    loss's line search reads the weights as their logarithms (the risk's shares): the
    same holds there."""
    X, y = _data(5, n=120)
    w = np.logspace(-300, 300, y.size)
    w[7] = 1e300
    gpu = CoordinateBoostingClassifier(_oracle(device="cuda"), n_estimators=4,
                                       **options).fit(X, y, w)
    cpu = CoordinateBoostingClassifier(_oracle(), n_estimators=4, **options).fit(X, y, w)
    for key in ("step", "edge", "loss", "log_loss", "margin", "entropy", "train_error"):
        assert np.isfinite(gpu.history_[key]).all(), key
    assert np.isfinite(gpu.decision_function(X)).all()
    assert _stumps(gpu)[0] == _stumps(cpu)[0]
    np.testing.assert_allclose(gpu.history_["step"][0], cpu.history_["step"][0], rtol=1e-12)


# -- refusals by name ----------------------------------------------------------------------
class _MyExponential(Exponential):
    """A subclass may change the formulas: the device runs the library's classes only."""


def _refused(make, fit_args, error, match):
    model = make()
    before = dict(vars(model))
    with pytest.raises(error, match=match):
        model.fit(*fit_args)
    assert vars(model).keys() == before.keys()  # a failed fit leaves it as it was


@pytest.mark.parametrize("case", [
    "loss", "init_score", "exact", "monotone", "nan", "sparse",
    "oracle", "device", "bind", "eval_set", "validation_fraction", "dask_like",
    "totally_corrective", "categorical",
])
def test_what_the_gpu_does_not_run_is_refused_by_name(case):
    X, y = _data(6, n=60)
    dev = cuda_module().to_device(X)
    gpu = _oracle(device="cuda")

    def coordinate(**kw):
        return lambda: CoordinateBoostingClassifier(kw.pop("oracle", gpu), n_estimators=2,
                                                    **kw)

    if case == "loss":
        _refused(coordinate(loss=_MyExponential()), (X, y), NotDistributedError,
                 "loss='exponential' does not run on the GPU")
    elif case == "init_score":
        model = coordinate()()
        with pytest.raises(NotDistributedError, match="init_score does not run on the GPU"):
            model.fit(X, y, init_score=np.zeros(y.size))
        assert not hasattr(model, "ensemble_")
    elif case == "exact":
        _refused(coordinate(oracle=_oracle(device="cuda", exact=True)), (X, y),
                 NotImplementedError, "exact=True")
    elif case == "monotone":
        _refused(coordinate(oracle=_oracle(device="cuda", monotone_constraints=[1, 0, 0])),
                 (X, y), NotImplementedError, "monotone_constraints")
    elif case == "nan":
        X_nan = X.copy()
        X_nan[3, 1] = np.nan
        _refused(coordinate(), (X_nan, y), NotImplementedError, "missing values")
    elif case == "sparse":
        _refused(coordinate(), (sp.csr_matrix(X), y), NotDistributedError, "sparse X")
    elif case == "oracle":
        _refused(coordinate(oracle=TreeOracle()), (dev, y), NotDistributedError,
                 "oracle=TreeOracle does not answer on the GPU")
    elif case == "device":
        _refused(coordinate(oracle=_oracle(device="gpu")), (X, y), ValueError,
                 "device must be 'cpu' or 'cuda'")
    elif case == "bind":
        with pytest.raises(ValueError, match=r"device='cuda'\)\.bind\(X\)"):
            gpu.bind(X)
    elif case == "eval_set":
        model = coordinate()()
        with pytest.raises(NotDistributedError, match=r"eval_set\[0\] does not run on the GPU"):
            model.fit(X, y, eval_set=[(dev, y)])
    elif case == "validation_fraction":
        _refused(coordinate(oracle=_oracle(), n_iter_no_change=2), (dev, y),
                 NotDistributedError, "early stopping with validation_fraction")
    elif case == "dask_like":
        class _Held:  # another backend's collection with a device oracle
            shape = X.shape

        with register_backend(lambda a: isinstance(a, _Held), _HeldElsewhere()):
            _refused(coordinate(), (_Held(), y), ValueError, "device='cuda' runs a fit on")
    elif case == "totally_corrective":
        _refused(lambda: TotallyCorrectiveClassifier(gpu, n_estimators=2), (X, y),
                 NotDistributedError, "TotallyCorrectiveClassifier does not run on the GPU")
    elif case == "categorical":  # checked in memory, as the CPU's fit checks it
        pd = pytest.importorskip("pandas")
        frame = pd.DataFrame({"a": X[:, 0], "b": pd.Categorical(np.where(y > 0, "u", "v"))})
        _refused(coordinate(), (frame, y), ValueError, "column 'b' .*categorical")


def test_warm_start_is_refused_by_name():
    X, y = _data(7, n=60)
    model = CoordinateBoostingClassifier(_oracle(device="cuda"), n_estimators=2,
                                         warm_start=True).fit(X, y)
    fitted = _bits(model)
    model.set_params(n_estimators=3)
    with pytest.raises(NotDistributedError, match="warm_start does not run on the GPU"):
        model.fit(X, y)
    assert _bits(model) == fitted


class _HeldElsewhere(CudaBackend):
    name, collection = "elsewhere", "held elsewhere"


@pytest.mark.parametrize("options, weighted", [
    ({}, False),  # the entropy map's lazy, uncapped round: one fused pass
    ({}, True),
    ({"update": "active"}, True),  # (c) from ln w, (d) the softmax in three passes
    ({"variant": "madaboost"}, True),  # Algorithm 3: min(0, log z) + ln s, then (d)
    ({"variant": "sparse", "mirror": "euclidean", "sparsity": 0.3}, False),  # Alg. 2
    # the Euclidean map: (d) by the selection of its threshold on the device
    ({"mirror": "euclidean"}, True),  # its active update, as the authors' package
    ({"mirror": "euclidean", "update": "lazy"}, False),
    ({"mirror": "euclidean", "variant": "smooth", "smoothness": 3.0}, False),  # S_k
    ({"mirror": "euclidean", "smoothness": 2.0, "sample_group": True}, False),  # S_c
    # the entropy map's KL projections onto the capped sets: the same selection
    ({"variant": "smooth", "smoothness": 3.0}, True),
    ({"smoothness": 2.0, "sample_group": True}, False),
])
def test_the_mirror_booster_takes_the_cpu_fit_s_stumps(options, weighted):
    """MABoost on the device: the CPU fit's stumps every round, its records and
    decision function equal to 1e-12 relatively (the sums' fixed-point rounding and the
    device's ``exp`` and ``log``, as for the coordinate booster; measured: at most a few
    1e-15), and a second device fit bit-equal to the first."""
    X, y = _data(8)
    w = np.random.RandomState(9).uniform(0.2, 3.0, size=y.size) if weighted else None
    options = dict(options)
    group = np.arange(y.size) % 3 == 0 if options.pop("sample_group", False) else None
    cpu = MirrorBoostingClassifier(_oracle(), n_estimators=ROUNDS, **options).fit(
        X, y, w, group)
    fits = [MirrorBoostingClassifier(_oracle(device="cuda"), n_estimators=ROUNDS,
                                     **options).fit(X, y, w, group) for _ in range(2)]
    gpu = fits[0]
    assert [repr(h) for h in gpu.estimators_] == [repr(h) for h in cpu.estimators_]
    for key in ("loss", "train_error", "edge", "step", "margin", "max_weight",
                "n_zero_weights", "bound"):
        np.testing.assert_allclose(gpu.history_[key], cpu.history_[key], rtol=1e-12,
                                   atol=1e-14, err_msg=key)
    np.testing.assert_allclose(gpu.decision_function(X), cpu.decision_function(X),
                               rtol=1e-12, atol=1e-13)
    assert _bits(fits[1]) == _bits(gpu)
    assert gpu.weights_ is None  # they stayed on the device


def test_sparseboost_stops_on_the_device_as_on_the_cpu():
    """SparseBoost (ℓ1 weight s = 0.5) drives weights to exact zeros by round 8: the
    same counts of zero weights every round as the CPU's (each ``max(0, ·)`` is the
    same comparison of the same bits: the state is elementwise, only its mass is a
    sum)."""
    X, y = _data(13, n=120)
    options = {"variant": "sparse", "mirror": "euclidean", "sparsity": 0.5,
               "n_estimators": 10}
    cpu = MirrorBoostingClassifier(_oracle(), **options).fit(X, y)
    gpu = MirrorBoostingClassifier(_oracle(device="cuda"), **options).fit(X, y)
    assert _stumps(gpu) == _stumps(cpu)
    np.testing.assert_array_equal(gpu.history_["n_zero_weights"],
                                  cpu.history_["n_zero_weights"])
    assert gpu.history_["n_zero_weights"][-1] > 0
    assert gpu.stop_reason_ == cpu.stop_reason_


@pytest.mark.parametrize("options", [
    {}, {"update": "active"}, {"variant": "madaboost"},
    {"variant": "sparse", "mirror": "euclidean"}, {"mirror": "euclidean"},
])
def test_the_mirror_booster_at_the_extremes_of_the_weights(options):
    """Sample weights over 600 decades, one of them 1e300: every record and score
    finite on the device, the first round the CPU's.  (Later rounds may differ: with
    one row holding all but 1e-36 of the mass, every stump right on it has the edge 1
    to rounding; the device's sums count the other rows' terms as 0 below their
    fixed-point step, the CPU's floats keep some of them, and the tie goes another
    way.)"""
    X, y = _data(5, n=120)
    w = np.logspace(-300, 300, y.size)
    w[7] = 1e300
    gpu = MirrorBoostingClassifier(_oracle(device="cuda"), n_estimators=3,
                                   **options).fit(X, y, w)
    cpu = MirrorBoostingClassifier(_oracle(), n_estimators=3, **options).fit(X, y, w)
    for key in ("loss", "train_error", "edge", "step", "margin", "max_weight"):
        assert np.isfinite(gpu.history_[key]).all(), key
    assert np.isfinite(gpu.decision_function(X)).all()
    assert _stumps(gpu)[0] == _stumps(cpu)[0]
    for key in ("edge", "step", "max_weight", "n_zero_weights"):
        np.testing.assert_allclose(gpu.history_[key][0], cpu.history_[key][0], rtol=1e-12,
                                   err_msg=key)


class _MyEntropy(EntropyMap):
    """A map of the user's may compute otherwise: the device runs the library's maps."""


def test_a_mirror_map_of_the_user_s_is_refused_by_name():
    X, y = _data(8, n=60)
    _refused(lambda: MirrorBoostingClassifier(_oracle(device="cuda"), n_estimators=2,
                                              mirror=_MyEntropy()),
             (X, y), NotDistributedError, "does not run on the GPU: it has no device twin")


# -- the tables and the package ------------------------------------------------------------
def test_the_twins_table_names_the_stages_that_exist():
    for name in TWINS:
        module, function = name.rsplit(".", 1)
        assert callable(getattr(importlib.import_module(module), function)), name


def test_without_a_gpu_asking_for_it_is_refused_naming_the_device():
    """A fresh process with the simulator off: a CPU fit imports no ``numba.cuda``, and
    ``device="cuda"`` raises ``NoDeviceError`` naming it (where no GPU is present)."""
    script = textwrap.dedent("""
        import sys
        import numpy as np
        from oracleboost.boosters import CoordinateBoostingClassifier
        from oracleboost.oracles import StumpOracle
        X = np.arange(40.0).reshape(20, 2); y = np.arange(20) % 2
        CoordinateBoostingClassifier(StumpOracle(), n_estimators=2).fit(X, y)
        assert 'numba.cuda' not in sys.modules
        from numba import cuda
        if cuda.is_available():
            print('a GPU is present'); sys.exit(0)
        from oracleboost.cuda import NoDeviceError
        model = CoordinateBoostingClassifier(StumpOracle(device='cuda'), n_estimators=2)
        try:
            model.fit(X, y)
        except NoDeviceError as exc:
            assert 'device="cuda"' in str(exc), exc
            assert not hasattr(model, 'ensemble_')
        else:
            raise AssertionError('no NoDeviceError')
    """)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
