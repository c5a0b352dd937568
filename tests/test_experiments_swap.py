"""Our "swap the weak learner" experiment (in no paper): every booster × every class on
digits even vs odd, in quick mode (60 rounds, about 10 s a seed on one thread; seeds 0,
1 and 2 are run, about 35 s in all, and some 2.5 times that on a slow 2-core machine).
Seed 0 is the registered experiment's own run (shared with other files in this
process: tests/quick_runs.py); seeds 1 and 2 are made here, once each.  The tests that
read them are ``slow`` (CI's step of its own) and in the quick runs' xdist group, so that
one worker makes every run once.

Measured in quick mode on seeds 0–9, with OpenBLAS's Haswell kernels and again with
its SkylakeX kernels: the worst measured cell on any seed errs on 0.170 of the test rows
(FunctionalGradient × linear, seed 6) under both, against chance 0.49–0.50; AdaBoost on
stumps ends with training error 0.027–0.055 (0.038, 0.046, 0.029 on seeds 0–2), the
same under both.  Between the two kernels only the MLP cells move visibly (L-BFGS takes
another path: test errors up to 0.019 apart, worst 0.078); the other cells agree to the
last digits of their losses.  The assertions leave a wide margin over those numbers:
test error < 0.25 for every measured cell and training error < 0.08 for AdaBoost on
stumps; nothing about the MLP's exact numbers is asserted.

StumpOracle and MatrixOracle(all stumps) are the same class: AdaBoost's training loss
through them is the same on seeds 0–3 and 5–9 and 2% apart on seed 4, where two stumps
tie exactly in round 1 and rounding breaks the tie differently.  Only a 10% agreement
is asserted, since BLAS kernels can break such ties either way.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from quick_runs import quick_run, reads_quick_runs
from sklearn.linear_model import Ridge

from oracleboost.boosters import AcceleratedMarginClassifier
from oracleboost.experiments import EXPERIMENTS, Curves
from oracleboost.experiments.naghibi2014 import load_binary
from oracleboost.experiments.swap import (
    BOOSTERS,
    CLASSES,
    MEASURED,
    NOT_APPLICABLE,
    SwapCurves,
    format_table,
    stump_matrix,
    swap_table,
    swap_weak_learner,
)
from oracleboost.oracles import (
    LightGBMOracle,
    LinearOracle,
    MatrixOracle,
    MLPOracle,
    OracleCapabilityError,
    SklearnOracle,
    StumpOracle,
    TreeOracle,
)

NAME = "swap-weak-learner"
ROUNDS = 60  # quick mode
SEEDS = (0, 1, 2)
FINITE = ("linear", "stump matrix")  # the classes with explicit columns
ORACLE_TYPES = {
    "stumps": StumpOracle,
    "trees": TreeOracle,
    "LightGBM": LightGBMOracle,
    "Ridge": SklearnOracle,
    "MLP": MLPOracle,
    "linear": LinearOracle,
    "stump matrix": MatrixOracle,
}
_cache: dict = {}


def _run() -> Curves:
    return quick_run(NAME)  # (shared with test_experiments_telgarsky)


def _table(seed: int) -> list[dict]:
    if seed == 0:
        return list(_run().table)  # the experiment's own cells (random_state=0)
    if ("rows", seed) not in _cache:
        _cache["rows", seed] = swap_table(quick=True, random_state=seed)
    return _cache["rows", seed]


def _cells(rows):
    return {(r["booster"], r["hypothesis_class"]): r for r in rows}


def _oracle(name: str):
    return {
        "stumps": StumpOracle(),
        "trees": TreeOracle(max_depth=3),
        "LightGBM": LightGBMOracle(num_leaves=8),
        "Ridge": SklearnOracle(Ridge()),
        "MLP": MLPOracle(),
        "linear": LinearOracle(),
        "stump matrix": MatrixOracle(np.ones((2, 2))),
    }[name]


@reads_quick_runs
def test_registered():
    assert EXPERIMENTS[NAME] is swap_weak_learner
    assert swap_weak_learner.__doc__.strip().splitlines()[0]
    assert isinstance(_run(), SwapCurves) and isinstance(_run(), Curves)


@reads_quick_runs
def test_labelled_as_ours():
    curves = _run()
    assert "OUR experiment" in curves.title and "in no paper" in curves.title
    assert "OUR experiment" in curves.notes


@reads_quick_runs
@pytest.mark.parametrize("seed", SEEDS)
def test_every_cell_measured_or_not_applicable_with_reason(seed):
    rows = _table(seed)
    cells = _cells(rows)
    assert len(rows) == len(BOOSTERS) * len(CLASSES)
    assert set(cells) == {(b, c) for b in BOOSTERS for c in CLASSES}
    for (_b, c), r in cells.items():
        assert r["status"] in (MEASURED, NOT_APPLICABLE)
        if r["status"] == NOT_APPLICABLE:
            # the booster's own capability check gave the reason, naming the oracle
            assert "correlation_vector" in r["reason"]
            assert ORACLE_TYPES[c].__name__ in r["reason"]
            assert math.isnan(r["test_error"]) and math.isnan(r["time_per_round"])
        else:
            assert r["reason"] == ""
    # only the accelerated booster refuses, and exactly the classes whose capabilities
    # lack the whole correlation vector (the finite classes with explicit columns)
    refused = {k for k, r in cells.items() if r["status"] == NOT_APPLICABLE}
    assert refused == {("AcceleratedMargin", c) for c in CLASSES
                       if not _oracle(c).capabilities.correlation_vector}
    assert refused == {("AcceleratedMargin", c) for c in CLASSES if c not in FINITE}


@reads_quick_runs
def test_not_applicable_is_the_librarys_own_message():
    X_tr, _, y_tr, _ = load_binary("digits_parity", random_state=0)
    with pytest.raises(OracleCapabilityError) as info:
        AcceleratedMarginClassifier(StumpOracle(n_jobs=1), n_estimators=2).fit(X_tr, y_tr)
    assert _cells(_table(0))["AcceleratedMargin", "stumps"]["reason"] == str(info.value)


@reads_quick_runs
@pytest.mark.parametrize("seed", SEEDS)
def test_every_measured_cell_beats_chance(seed):
    _, _, y_tr, y_te = load_binary("digits_parity", random_state=seed)
    chance = float(np.mean(y_te != np.bincount(y_tr).argmax()))
    assert chance > 0.45  # even vs odd is balanced
    at_zero = set()
    for r in _table(seed):
        if r["status"] != MEASURED:
            continue
        assert 0.0 <= r["train_error"] <= 1.0
        if r["booster"] == "LPBoost" and r["lp_value"] <= 1e-9:
            # LPBoost maximises the soft margin, and no vote of these hypotheses has a
            # positive one at capping ν = N/10: the optimum is 0, which the vote of a
            # hypothesis and its negation reaches (every margin 0), and HiGHS's vertex
            # may be that vote or one as poor
            at_zero.add(r["hypothesis_class"])
            continue
        # worst seen on seeds 0–9: 0.170 (LPBoost's other cells on seeds 0–2: 0.107)
        assert r["test_error"] < 0.25, (r["booster"], r["hypothesis_class"])
    # measured on seeds 0–2: exactly the two linear classes (a vote of linear functions
    # is linear; AdaBoost's training errors there are 0.07 and 0.13 on seed 0)
    assert at_zero == {"Ridge", "linear"}


@reads_quick_runs
@pytest.mark.parametrize("seed", SEEDS)
def test_adaboost_stumps_fit_the_training_set(seed):
    r = _cells(_table(seed))["AdaBoost", "stumps"]
    assert r["rounds"] == ROUNDS
    assert r["train_error"] < 0.08  # 0.027–0.055 on seeds 0–9
    assert 0.0 < r["train_loss"] < 1.0  # exponential risk below its start, 1


@reads_quick_runs
@pytest.mark.parametrize("seed", SEEDS)
def test_time_per_round_positive_and_rows_complete(seed):
    for r in _table(seed):
        if r["status"] != MEASURED:
            continue
        assert r["time_per_round"] > 0 and math.isfinite(r["time_per_round"])
        assert 1 <= r["rounds"] <= ROUNDS
        assert math.isfinite(r["train_loss"]) and r["train_loss"] >= 0
        if math.isnan(r["margin"]):  # the zero vote (Σ |α_t| = 0): LPBoost at optimum 0
            assert r["booster"] == "LPBoost" and r["lp_value"] <= 1e-9
            assert r["train_error"] >= 0.45  # every row's vote a tie
        else:
            assert -1.0 - 1e-9 <= r["margin"] <= 1.0 + 1e-9
        assert r["test_error_by_round"].shape == (ROUNDS,)
        assert r["test_error_by_round"][-1] == r["test_error"]
        assert r["loss_by_round"][-1] == r["train_loss"]


@reads_quick_runs
@pytest.mark.parametrize("seed", SEEDS)
def test_stumps_through_two_oracles_agree(seed):
    cells = _cells(_table(seed))
    for b in ("AdaBoost", "MABoost"):
        s, m = cells[b, "stumps"], cells[b, "stump matrix"]
        assert m["train_loss"] == pytest.approx(s["train_loss"], rel=0.1, abs=0.005), b
        assert abs(m["test_error"] - s["test_error"]) <= 0.03, b


@reads_quick_runs
def test_curves_series_aux_and_notes():
    curves = _run()
    np.testing.assert_array_equal(curves.x, np.arange(1, ROUNDS + 1))
    assert "AdaBoost stumps" in curves.series and "AdaBoost trees" in curves.series
    assert any(k.startswith("Accel.* ") for k in curves.series)
    for values in curves.series.values():
        assert np.all(np.isfinite(values)) and np.all((values >= 0) & (values <= 1))
    measured = [r for r in _table(0) if r["status"] == MEASURED]
    for r in measured:
        cell = f"{r['booster']} · {r['hypothesis_class']}"
        assert curves.aux[f"test error: {cell}"][-1] == r["test_error"]
        assert curves.aux[f"train loss: {cell}"][-1] == r["train_loss"]
    assert len(curves.aux) == 2 * len(measured)
    (chance,) = curves.reference.values()
    assert 0.45 < chance < 0.55
    # the whole table is in the notes
    assert format_table(_table(0)) in curves.notes
    for name in (*BOOSTERS, *CLASSES, NOT_APPLICABLE, "ms/round", "ℓ1 margin"):
        assert name in curves.notes
    assert curves.runtime > 0


@reads_quick_runs
def test_draws_png_and_prints(tmp_path):
    curves = _run()
    path = curves.save(tmp_path / f"{NAME}.png")
    with open(path, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    text = curves.to_text()
    assert curves.title in text and "test error (booster × class" in text


def test_stump_matrix_columns():
    X_tr = np.array([[0.0, 5.0], [1.0, 5.0], [3.0, 5.0]])
    X_te = np.array([[2.0, 7.0]])
    H = stump_matrix(X_tr, X_te)
    # feature 0: thresholds 0.5 and 2 (+1 strictly above); feature 1 is constant (no
    # stump); the test row x_0 = 2 sits on the second threshold, so that stump says −1
    np.testing.assert_array_equal(H, [[-1, -1], [1, -1], [1, 1], [1, -1]])
    with pytest.raises(ValueError, match="constant"):
        stump_matrix(np.ones((3, 2)), np.ones((1, 2)))


def test_subsets_and_bad_arguments():
    rows = swap_table(n_estimators=3, boosters=("AcceleratedMargin",),
                      classes=("stumps", "linear"))
    assert [(r["booster"], r["hypothesis_class"], r["status"]) for r in rows] == [
        ("AcceleratedMargin", "stumps", NOT_APPLICABLE),
        ("AcceleratedMargin", "linear", MEASURED),
    ]
    with pytest.raises(ValueError, match="boosters"):
        swap_table(n_estimators=2, boosters=("XGBoost",))
    with pytest.raises(ValueError, match="classes"):
        swap_table(n_estimators=2, classes=())
    with pytest.raises(ValueError, match="n_estimators"):
        swap_table(n_estimators=0)
