"""LPBoost's restricted LP: warm-started HiGHS against solving from scratch (issue 24).

``TotallyCorrectiveClassifier`` (LPBoost, ν = N/10) on decision stumps over ``--rows``
× 20 rows of a noisy problem, ``--rounds`` rounds (``tol=0``: no early stop).  At rounds
``k`` in ``--at``, the LP with ``k`` columns is solved two ways, interleaved, ``--repeats``
times:

* ours: :class:`~oracleboost.boosters.soft_margin_lp.SoftMarginLP` holding the first
  ``k − 1`` columns and solved (untimed), then the k-th column added and the LP solved
  again from the last basis (timed: what a round of the fit pays);
* the anchor: ``scipy.optimize.linprog(method="highs")`` on the same ``k`` columns from
  scratch (sparse constraint matrix), as a booster without an incremental solver would.

The ratio is the median of anchor / ours per repeat, with the spread (goal at round
500: ≥ 10).  Also: the solver's share of a round in the fit itself (the median of
``solver_time / time`` over its last tenth of rounds).  One thread (``OMP_NUM_THREADS``
and HiGHS's ``threads``).  Run with nothing else running::

    python benchmarks/bench_lpboost.py                      # 10,000 rows, 500 rounds
    python benchmarks/bench_lpboost.py --rows 2000 --rounds 200 --at 100,200 --repeats 3
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


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--at", default="100,250,500", help="rounds to time, comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    from oracleboost.boosters import TotallyCorrectiveClassifier
    from oracleboost.boosters.soft_margin_lp import SoftMarginLP
    from oracleboost.oracles import StumpOracle

    X, y = _data(args.rows)
    nu = args.rows / 10
    start = time.perf_counter()
    model = TotallyCorrectiveClassifier(StumpOracle(n_jobs=1), nu=nu, tol=0.0, n_jobs=1,
                                        n_estimators=args.rounds).fit(X, y)
    fit_seconds = time.perf_counter() - start
    h = model.history_
    rounds = len(h["loss"])
    tail = slice(rounds - max(1, rounds // 10), rounds)
    share = statistics.median((h["solver_time"][tail] / h["time"][tail]).tolist())
    print(f"LPBoost, stumps, {args.rows:,} x 20, nu = {nu:g}: {rounds} rounds in "
          f"{fit_seconds:.1f} s ({model.stop_reason_}); the solver's share of a round "
          f"over the last tenth: {share:.2f}")
    lp_columns, cost = model._state_.lp.columns, model._state_.lp.cost
    results = {}
    for k in [int(v) for v in args.at.split(",") if int(v) <= len(lp_columns)]:
        ratios, ours_t, scratch_t = [], [], []
        for _ in range(args.repeats):
            lp = SoftMarginLP(cost, nu)
            for u in lp_columns[:k - 1]:
                lp.add_column(u)
            lp.solve()
            lp.add_column(lp_columns[k - 1])
            t0 = time.perf_counter()
            ours = lp.solve().value
            t1 = time.perf_counter()
            value = _scratch(lp_columns[:k], cost, nu)
            t2 = time.perf_counter()
            assert abs(value - ours) <= 1e-7 * (1 + abs(value)), (value, ours)
            ours_t.append(t1 - t0)
            scratch_t.append(t2 - t1)
            ratios.append((t2 - t1) / (t1 - t0))
        results[k] = (statistics.median(ratios), min(ratios), max(ratios))
        print(f"round {k}: warm-started HiGHS {statistics.median(ours_t) * 1e3:.1f} ms, "
              f"linprog from scratch {statistics.median(scratch_t) * 1e3:.0f} ms: "
              f"{results[k][0]:.0f}x faster ({results[k][1]:.0f}-{results[k][2]:.0f}); "
              "goal at round 500: >= 10x")
    return {"share": share, "ratios": results, "rounds": rounds}


if __name__ == "__main__":
    main()
