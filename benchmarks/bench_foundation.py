"""Speed of the foundation's boosters as ratios against the tools people use instead.

Each job is timed against its anchor in the same run, ``--repeats`` times, and the
median of the per-repeat ratios is reported (the machines are noisy; ratios travel,
seconds do not).  Run from the repository root:

    python benchmarks/bench_foundation.py            # n = 20,000 rows, 5 repeats
    python benchmarks/bench_foundation.py --quick    # small, for a smoke check

Jobs
----
adaboost_stumps
    ``CoordinateBoostingClassifier(StumpOracle())`` (binned stumps, ≤255 bins) against
    ``AdaBoostClassifier(DecisionTreeClassifier(max_depth=1))``.
gradient_boosting_trees
    ``FunctionalGradientRegressor(TreeOracle(max_depth=3))`` against
    ``GradientBoostingRegressor(max_depth=3)`` (the same trees: this measures overhead).
lightgbm_trees
    ``FunctionalGradientRegressor(LightGBMOracle(num_leaves=31))`` against
    ``lightgbm.train`` with the same leaves and learning rate.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def jobs(n: int, d: int, rounds: int):
    import lightgbm as lgb
    from sklearn.datasets import make_classification, make_regression
    from sklearn.ensemble import AdaBoostClassifier, GradientBoostingRegressor
    from sklearn.tree import DecisionTreeClassifier

    from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor
    from oracleboost.oracles import LightGBMOracle, StumpOracle, TreeOracle

    Xc, yc = make_classification(n_samples=n, n_features=d, random_state=0)
    Xr, yr = make_regression(n_samples=n, n_features=d, noise=1.0, random_state=0)
    return {
        "adaboost_stumps": (
            lambda: CoordinateBoostingClassifier(StumpOracle(), n_estimators=rounds).fit(Xc, yc),
            lambda: AdaBoostClassifier(
                DecisionTreeClassifier(max_depth=1), n_estimators=rounds
            ).fit(Xc, yc),
        ),
        "gradient_boosting_trees": (
            lambda: FunctionalGradientRegressor(
                TreeOracle(max_depth=3), n_estimators=rounds, learning_rate=0.1
            ).fit(Xr, yr),
            lambda: GradientBoostingRegressor(
                max_depth=3, n_estimators=rounds, learning_rate=0.1
            ).fit(Xr, yr),
        ),
        "lightgbm_trees": (
            lambda: FunctionalGradientRegressor(
                LightGBMOracle(num_leaves=31), n_estimators=rounds, learning_rate=0.1
            ).fit(Xr, yr),
            lambda: lgb.train(
                {"objective": "regression", "num_leaves": 31, "learning_rate": 0.1,
                 "verbosity": -1},
                lgb.Dataset(Xr, yr),
                num_boost_round=rounds,
            ),
        ),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="n=2000, rounds=20, repeats=3")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.rounds, args.repeats = 2000, 20, 3
    print(f"n={args.n} d={args.d} rounds={args.rounds} repeats={args.repeats}")
    print(f"{'job':26s} {'ours (s)':>10s} {'anchor (s)':>11s} {'ratio ours/anchor':>18s}")
    for name, (ours, anchor) in jobs(args.n, args.d, args.rounds).items():
        t_ours, t_anchor, ratios = [], [], []
        for _ in range(args.repeats):
            a, b = _time(ours), _time(anchor)
            t_ours.append(a)
            t_anchor.append(b)
            ratios.append(a / b)
        print(
            f"{name:26s} {statistics.median(t_ours):10.3f} {statistics.median(t_anchor):11.3f} "
            f"{statistics.median(ratios):18.2f}"
        )


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
