"""Our ``lpboost-margins`` experiment (issue 24, in no paper): the soft margin against
the round for LPBoost, ERLPBoost, SoftBoost and TotalBoost next to AdaBoost, MABoost's
max-margin variant and dual acceleration, with the LP optimum over the whole class.

Quick mode is run once (about 12–20 s on a loaded 2-core machine).  Measured there
(rows offset 0) and on the other subsamples of quick mode (breast cancer from rows 1
and 2, digits from rows 2, 4, 6, 8): LPBoost ends within 1e-15 of P*; ERLPBoost within
0.002–0.011 of it, SoftBoost within 0.012–0.025 and TotalBoost within 0.004–0.024 of
the hard-margin optimum (ε = 0.1), each far inside its round bound; and every one of
the four reaches its final soft margin with fewer distinct hypotheses than AdaBoost
needs for that margin within 300 rounds (AdaBoost needs 1.3–2.9 times as many, or never
gets there), which the tests assert on offset 0 and on two further subsamples.  At full
size (not tested: about 11 minutes) it held for all four on digits and for LPBoost,
ERLPBoost and SoftBoost on breast cancer, but not for TotalBoost there (52 hypotheses
against AdaBoost's 45: TotalBoost maximises the hard margin, not the soft one measured);
the claim in claims.py says so.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from quick_runs import quick_run, reads_quick_runs

from oracleboost.datasets import rudin_matrix
from oracleboost.diagnostics import max_margin, max_soft_margin, soft_margin
from oracleboost.experiments import EXPERIMENTS, Curves
from oracleboost.experiments import soft_margins as lm
from oracleboost.experiments.runner import write_experiment
from oracleboost.oracles import StumpOracle

pytest.importorskip("highspy")
pytest.importorskip("clarabel")

NAME = "lpboost-margins"


def _run() -> lm.MarginCurves:
    return quick_run(NAME)  # (shared with test_experiments_telgarsky)


def _curve(curves, problem: str, method: str) -> tuple[np.ndarray, np.ndarray]:
    margins = np.asarray(curves.series[f"{problem}: {method}"])
    counts = np.asarray(curves.aux[f"{problem}: {method} (distinct hypotheses)"])
    return margins, counts


# -- the margin ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_soft_margin_is_the_best_rho(seed):
    """max_ρ ρ − (1/ν) Σ (ρ − m_i)_+ over a fine grid of ρ, against the closed form:
    the mean of the ν smallest margins (ν integer), the smallest at ν = 1."""
    m = np.random.default_rng(seed).normal(size=40)
    for nu in (1.0, 3.0, 7.5, 40.0):
        rhos = np.concatenate([m, np.linspace(m.min() - 1, m.max() + 1, 2001)])
        brute = np.max(rhos - np.maximum(0.0, rhos[:, None] - m[None, :]).sum(axis=1) / nu)
        assert soft_margin(m, nu) == pytest.approx(brute, abs=1e-12)
    assert soft_margin(m, 1) == m.min()
    assert soft_margin(m, 5) == pytest.approx(np.sort(m)[:5].mean(), abs=1e-15)
    with pytest.raises(ValueError, match="nu"):
        soft_margin(m, 41)
    with pytest.raises(ValueError, match="nu"):
        soft_margin(m, 0.5)


@pytest.mark.parametrize("seed", [0, 1])
def test_max_soft_margin_certifies_itself_and_is_max_margin_at_nu_1(seed):
    M = np.random.default_rng(seed).choice([-1.0, 1.0], size=(60, 25))
    M[:, 0] = 1.0  # a separable class: γ > 0
    for nu in (1.0, 4.0, 12.0):
        res = max_soft_margin(M, nu)
        assert abs(res.achieved - res.value) <= 1e-7
        assert np.abs(res.weights).sum() == pytest.approx(1.0, abs=1e-12)
    assert max_soft_margin(M, 1).value == pytest.approx(max_margin(M).gamma, abs=1e-9)
    assert max_soft_margin(rudin_matrix(), 1).value == pytest.approx(3 / 8, abs=1e-12)
    # more capping can only lower the optimum (a larger ν averages more rows)
    values = [max_soft_margin(M, nu).value for nu in (1, 4, 12, 60)]
    assert all(a >= b - 1e-9 for a, b in zip(values, values[1:], strict=False))


def test_the_class_matrix_holds_every_answer_of_the_oracle():
    X, y, H, oracle, _ = lm._problem("breast_cancer", quick=True)
    bound = oracle.bind(X)
    rng = np.random.default_rng(0)
    for _ in range(5):
        r = rng.normal(size=X.shape[0])
        h = bound.correlate(r).train_output
        # h is a column of H or its negation, and no column has a larger |edge|
        match = np.all(H == h[:, None], axis=0) | np.all(H == -h[:, None], axis=0)
        assert match.any()
        assert np.max(np.abs(r @ H)) == pytest.approx(abs(r @ h), rel=1e-12)


# -- the run ---------------------------------------------------------------------------


@reads_quick_runs
def test_registered_and_labelled_as_ours():
    curves = _run()
    assert EXPERIMENTS[NAME] is lm.lpboost_margins
    assert isinstance(curves, lm.MarginCurves) and isinstance(curves, Curves)
    assert "OUR experiment" in curves.title and "in no paper" in curves.title
    assert curves.notes.startswith("OUR experiment")
    assert set(curves.series) == {f"{p}: {m}" for p in lm.PROBLEMS for m in lm.METHODS}
    assert len(curves.reference) == len(lm.PROBLEMS)


@reads_quick_runs
@pytest.mark.parametrize("problem", lm.PROBLEMS)
def test_lpboost_ends_at_the_full_lps_optimum(problem):
    info = _run().results[problem]
    e = info["methods"]["LPBoost"]
    assert e["stop"] == "gap_closed"
    assert abs(e["final"] - info["optimum"]) <= 1e-6
    # the certificate brackets P*, and the soft margin measured is the LP's own value
    assert e["lp_value"] - 1e-9 <= info["optimum"] <= e["upper_bound"] + 1e-9
    assert abs(e["final"] - e["lp_value"]) <= 1e-9
    if problem == "rudin":
        assert info["optimum"] == pytest.approx(3 / 8, abs=1e-12)


@reads_quick_runs
@pytest.mark.parametrize("problem", lm.PROBLEMS)
@pytest.mark.parametrize("method", ["ERLPBoost", "SoftBoost", "TotalBoost"])
def test_entropy_methods_end_within_eps_within_their_bounds(problem, method):
    info = _run().results[problem]
    e = info["methods"][method]
    eps = info["epsilon"]
    assert e["tol"] == eps
    assert e["stop"] == ("gap_closed" if method == "ERLPBoost" else "infeasible")
    assert e["rounds"] <= e["round_bound"]
    # TotalBoost is the hard margin: its LP and its optimum are at ν = 1
    optimum = info["hard_optimum"] if method == "TotalBoost" else info["optimum"]
    assert optimum - eps - 1e-9 <= e["lp_value"] <= optimum + 1e-9
    if method != "TotalBoost":
        assert abs(e["final"] - e["lp_value"]) <= 1e-9


def _fewer_than_adaboost(margins: dict) -> dict:
    """For each totally corrective method: (its distinct hypotheses at the end, the
    fewest AdaBoost needs for the same soft margin, NaN if it never gets there)."""
    ada = margins["AdaBoost"]
    out = {}
    for method in lm.TOTALLY_CORRECTIVE:
        m, c = margins[method]
        last = np.flatnonzero(np.isfinite(m))[-1]
        out[method] = (c[last], lm._first_reaching(*ada, m[last]))
    return out


@reads_quick_runs
@pytest.mark.parametrize("problem", lm.PROBLEMS)
def test_totally_corrective_methods_need_fewer_hypotheses_than_adaboost(problem):
    curves = _run()
    margins = {m: _curve(curves, problem, m) for m in lm.METHODS}
    for method, (mine, adaboost) in _fewer_than_adaboost(margins).items():
        assert math.isnan(adaboost) or mine < adaboost, (method, mine, adaboost)


@pytest.mark.parametrize("problem, offset", [("breast_cancer", 1), ("digits", 4)])
def test_fewer_hypotheses_holds_on_other_subsamples(problem, offset):
    X, y, H, oracle, nu = lm._problem(problem, quick=True, offset=offset)
    margins = {}
    for method in (*lm.TOTALLY_CORRECTIVE, "AdaBoost"):
        m, c, _ = lm._fit(method, X, y, H, oracle, nu, lm._ROUNDS[True], lm.EPSILON[True])
        margins[method] = (m, c)
    for method, (mine, adaboost) in _fewer_than_adaboost(margins).items():
        assert math.isnan(adaboost) or mine < adaboost, (method, mine, adaboost)


@reads_quick_runs
def test_adaboost_misses_the_rudin_optimum():
    e = _run().results["rudin"]["methods"]["AdaBoost"]
    assert e["final"] <= 1 / 3 + 1e-3 < 3 / 8


@reads_quick_runs
def test_every_curve_is_finite_where_it_ran():
    curves = _run()
    for problem, info in curves.results.items():
        for method, e in info["methods"].items():
            m, c = _curve(curves, problem, method)
            if method == "dual acceleration":  # its checkpoints only
                assert np.isfinite(m[0]) and np.isfinite(m[e["rounds"] - 1])
                continue
            assert np.all(np.isfinite(m[: e["rounds"]])) and np.all(np.isnan(m[e["rounds"]:]))
            # at most one new hypothesis a round (none while LPBoost weighs h and −h alike)
            r = e["rounds"]
            assert np.all((c[:r] >= 0) & (c[:r] <= np.arange(1, r + 1)))


@reads_quick_runs
def test_files_written(tmp_path):
    pytest.importorskip("matplotlib")
    files = write_experiment(tmp_path / NAME, NAME, _run(), {"mode": "quick"}, ["png"])
    assert files == ["figure.png", "curves.csv", "aux.csv"]
    summary = (tmp_path / NAME / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith(f"# {NAME}") and "Our experiment, in no paper" in summary
    assert "OUR experiment" in summary and "P* =" in summary
    header = (tmp_path / NAME / "curves.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("round t,rudin: LPBoost")
    fig = _run().plot()
    assert len(fig.axes) == len(lm.PROBLEMS)


def test_stump_class_matrix_refuses_nan():
    X = np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 3.0]])
    with pytest.raises(ValueError, match="NaN"):
        lm.stump_class_matrix(X, StumpOracle())
