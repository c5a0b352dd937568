"""LPBoost's restricted LP: warm-started HiGHS against solving from scratch (issue 24).

``TotallyCorrectiveClassifier`` (LPBoost, ν = ``--nu`` × N) on decision stumps over
``--rows`` × 20 rows of a noisy problem, ``--rounds`` rounds (``tol=0``: no early stop).
:class:`~oracleboost.boosters.totally_corrective.soft_margin_lp.SoftMarginLP` holds the
LP's dual form (one row per hypothesis) and re-solves it each round by the dual simplex
method from the last basis.  At rounds ``k`` in ``--at``:

* ours: what the fit's rounds paid for the LP, the median of ``solver_time`` over rounds
  k − 4 … k (each a warm-started solve after one new row, timed whole: the row into
  HiGHS's model, HiGHS's run, reading the solution and checking its feasibility and
  duality gap), and their simplex iterations;
* from scratch, the same LP on the same ``k`` columns: our own HiGHS model built anew
  and solved once, with HiGHS's default settings (its iterations: a warm start takes
  far fewer), and
  ``scipy.optimize.linprog(method="highs")`` (presolve on, sparse constraint matrix) on
  the primal and on the dual form, ``--repeats`` times each, as a booster without an
  incremental solver would.  The ratio is against the faster form (goal at round 500:
  ≥ 10).

Also: the solver's share of a round in the fit (the median of ``solver_time / time``
over its last tenth of rounds).  One thread (``OMP_NUM_THREADS`` and HiGHS's
``threads``).  With ν = N/10 this problem's soft-margin optimum is 0 from the second
round on (the rows are too noisy for a positive soft margin with so few violators), a
highly degenerate LP; ``--nu 0.5`` is a less degenerate one, on which a new row moves
``d`` much further.  A new row costs from tens to a few hundred dual simplex iterations,
growing with the rounds, in both cases: report both.  Run with nothing else
running.

Measured on 2026-11-28 (a 2-core AMD EPYC, KVM, about 2.5 times slower than the machine
of ``benchmarks/README.md``; nothing else running; OpenBLAS Haswell kernels; one
thread), ``--repeats 5 --forms primal`` (the dual form from scratch took 44 s at round
250 against the primal's 5.8 s, ν = N/10, in an earlier run), 10,000 rows, the rows of
the LP written sparse by offsets and differences (``soft_margin_lp``); ranges in
brackets (ours: over rounds k − 4 … k; linprog: over the repeats):

=====  =====  ====================  ==========  =======================  =====
ν      round  warm HiGHS            iterations  linprog primal           ratio
=====  =====  ====================  ==========  =======================  =====
N/10   100    97 ms (80–108)        137         4.8 s (4.2–5.2)          50×
N/10   250    253 ms (197–360)      239         13.6 s (12.5–14.5)       54×
N/10   500    1,049 ms (948–1,400)  451         57.4 s (55.6–58.6)       55×
N/2    100    212 ms (163–240)      404         41.9 s (39.5–46.1)       198×
N/2    250    590 ms (500–725)      908         129.3 s (122.1–135.9)    219×
=====  =====  ====================  ==========  =======================  =====

The fits took 192 s (ν = N/10; HiGHS 188 s of it) and 376 s (ν = N/2; HiGHS 373 s)
for 500 rounds, the solver's share of a round 0.99 over the last 50 in both.  Round 500
at ν = N/2 was not timed (five solves from scratch there take well over half an hour);
its ratio grows with the rounds.  Our own model built from scratch at round 500 took 10,874
iterations (19.5 s) against a warm round's 451.  With ν = N/10 this LP's optimum is 0
from round 2 on (the zero vote); each new row costs more degenerate pivots as the rounds
go on, and the warm solve grows about as fast as linprog's from scratch.

Before the difference rows (offsets only; the same command on the same day, but the
degenerate LP then took other vertices and so the oracle other columns, on which
linprog took less time): ν = N/10 took 98 ms against 3.0 s at round 100 (31×) and 591 ms
against 5.8 s at 250 (10×), the fit 542 s; ν = N/2 took 392 ms (313–423) against 24.6 s
(23.3–27.8) at 100 (63×) and 1,835 ms (1,381–1,999) against 158 s (142–166) at 250 (86×),
the fit 1,350 s.

::

    python benchmarks/bench_lpboost.py                      # 10,000 rows, 500 rounds
    python benchmarks/bench_lpboost.py --rows 2000 --rounds 300 --at 100,200,300 --repeats 3
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.optimize import linprog  # noqa: E402


def _data(n: int, d: int = 20, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    score = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] - 0.25 * X[:, 3] + rng.standard_normal(n)
    return X, np.where(score > 0, 1, -1)


def _scratch(columns: list[np.ndarray], cost: np.ndarray, nu: float) -> float:
    """``linprog`` on the soft-margin LP over ``columns``, from scratch; its value."""
    U = np.column_stack(columns)
    N, J = U.shape
    c = np.concatenate([np.zeros(J), [-1.0], cost / nu])
    A_ub = sp.hstack([sp.csr_matrix(-U), sp.csr_matrix(np.ones((N, 1))), -sp.eye(N)]).tocsr()
    A_eq = sp.csr_matrix(np.concatenate([np.ones(J), [0.0], np.zeros(N)])[None, :])
    bounds = [(0, None)] * J + [(None, None)] + [(0, None)] * N
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(N), A_eq=A_eq, b_eq=[1.0], bounds=bounds,
                  method="highs")
    assert res.status == 0, res.message
    return -float(res.fun)


def _scratch_dual(columns: list[np.ndarray], cost: np.ndarray, nu: float) -> float:
    """``linprog`` on the LP's dual form (min γ s.t. d · u_j ≤ γ, d on the capped
    simplex) over ``columns``, from scratch; its value."""
    U = sp.csr_matrix(np.vstack(columns))
    J, N = U.shape
    c = np.append(np.zeros(N), 1.0)
    A_ub = sp.hstack([U, sp.csr_matrix(-np.ones((J, 1)))]).tocsr()
    A_eq = sp.csr_matrix(np.append(np.ones(N), 0.0)[None, :])
    bounds = [(0, ci / nu) for ci in cost] + [(None, None)]
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(J), A_eq=A_eq, b_eq=[1.0], bounds=bounds,
                  method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--nu", type=float, default=0.1, help="ν as a fraction of the rows")
    parser.add_argument("--at", default="100,250,500", help="rounds to time, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--forms", default="primal,dual",
                        help="linprog's forms from scratch, comma-separated (the dual form "
                             "took 44 s at 10,000 rows and round 250 against the primal's "
                             "5.8 s: --forms primal saves that)")
    args = parser.parse_args(argv)
    forms = [f for f in args.forms.split(",") if f]
    if not forms or set(forms) - {"primal", "dual"}:
        parser.error(f"--forms takes primal and/or dual; got {args.forms!r}")

    from oracleboost.boosters import TotallyCorrectiveClassifier
    from oracleboost.boosters.totally_corrective.soft_margin_lp import SoftMarginLP
    from oracleboost.oracles import StumpOracle

    X, y = _data(args.rows)
    nu = max(1.0, args.rows * args.nu)
    start = time.perf_counter()
    model = TotallyCorrectiveClassifier(StumpOracle(n_jobs=1), nu=nu, tol=0.0, n_jobs=1,
                                        n_estimators=args.rounds).fit(X, y)
    fit_seconds = time.perf_counter() - start
    h = model.history_
    rounds = len(h["loss"])
    tail = slice(rounds - max(1, rounds // 10), rounds)
    share = statistics.median((h["solver_time"][tail] / h["time"][tail]).tolist())
    print(f"LPBoost, stumps, {args.rows:,} x 20, nu = {nu:g}: {rounds} rounds in "
          f"{fit_seconds:.1f} s ({model.stop_reason_}; LP value {h['lp_value'][-1]:.3g}); "
          f"HiGHS {h['solver_time'].sum():.1f} s in all; the solver's share of a round "
          f"over the last tenth: {share:.2f}", flush=True)
    lp_columns, cost = model._state_.lp.columns, model._state_.lp.cost
    results = {}
    for k in [int(v) for v in args.at.split(",") if int(v) <= len(lp_columns)]:
        window = slice(max(0, k - 5), k)
        ours = statistics.median(h["solver_time"][window].tolist())
        warm_iterations = statistics.median(h["solver_iterations"][window].tolist())
        cold = SoftMarginLP(cost, nu)
        for u in lp_columns[:k]:
            cold.add_column(u)
        solution = cold.solve()
        assert abs(solution.value - h["lp_value"][k - 1]) <= 1e-7, (solution.value, k)
        solvers = {"primal": _scratch, "dual": _scratch_dual}
        times: dict[str, list[float]] = {form: [] for form in forms}
        for _ in range(args.repeats):
            for form in forms:  # interleaved
                t0 = time.perf_counter()
                v = solvers[form](lp_columns[:k], cost, nu)
                times[form].append(time.perf_counter() - t0)
                assert abs(v - h["lp_value"][k - 1]) <= 1e-7 * (1 + abs(v)), (v, k, form)
        medians = {form: statistics.median(t) for form, t in times.items()}
        scratch = min(medians.values())
        results[k] = scratch / ours
        spread = ", ".join(f"{form} {medians[form] * 1e3:.0f} ms (range "
                           f"{min(t) * 1e3:.0f}-{max(t) * 1e3:.0f})" for form, t in times.items())
        print(f"round {k}: warm-started HiGHS {ours * 1e3:.1f} ms (range over rounds "
              f"{k - 4}-{k}: {min(h['solver_time'][window]) * 1e3:.1f}-"
              f"{max(h['solver_time'][window]) * 1e3:.1f}; {warm_iterations:.0f} "
              f"iterations; our model from scratch: {solution.iterations} iterations, "
              f"{solution.seconds * 1e3:.0f} ms); linprog from scratch, {spread}: "
              f"{results[k]:.1f}x faster than the faster; goal at round 500: >= 10x",
              flush=True)
    return {"share": share, "ratios": results, "rounds": rounds, "fit_seconds": fit_seconds}


if __name__ == "__main__":
    main()
