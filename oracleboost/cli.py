"""Command-line front end.

``oracleboost demo``                 AdaBoost on stumps, round by round (seconds)
``oracleboost list``                 the registered paper reproductions
``oracleboost reproduce [NAME ...]`` run reproductions (all by default), print their tables
                                     and save their figures (``--quick``: CI-sized budgets)
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

__all__ = ["main", "demo", "reproduce"]


def demo(n_rounds: int = 30, every: int = 3, out=sys.stdout) -> dict[str, np.ndarray]:
    """Boost ±1 decision stumps with AdaBoost on scikit-learn's breast-cancer data.

    Prints the round-by-round empirical risk, edge γ_t, step α_t, ℓ1 margin and
    training/test error, then the same booster with shrinkage ν = 0.5 for contrast;
    returns the first run's history.
    """
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    from .boosters import CoordinateBoostingClassifier
    from .oracles import StumpOracle

    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
    print(
        f"AdaBoost on ±1 stumps (StumpOracle), breast cancer: {len(X_tr)} train / "
        f"{len(X_te)} test rows, {X.shape[1]} features",
        file=out,
    )
    histories = {}
    for nu in (1.0, 0.5):
        clf = CoordinateBoostingClassifier(
            StumpOracle(), loss="exponential", step="adaboost",
            n_estimators=n_rounds, learning_rate=nu, random_state=0,
        ).fit(X_tr, y_tr)
        h = clf.history_
        test_err = [float(np.mean(p != y_te)) for p in clf.staged_predict(X_te)]
        print(f"\nshrinkage nu = {nu:g}   (stop: {clf.stop_reason_})", file=out)
        print(f"{'round':>5} {'loss':>10} {'edge':>8} {'step':>8} {'margin':>9} "
              f"{'train err':>9} {'test err':>9}", file=out)
        for t in range(len(h["loss"])):
            if t % every == every - 1 or t == 0 or t == len(h["loss"]) - 1:
                print(
                    f"{t + 1:5d} {h['loss'][t]:10.4g} {h['edge'][t]:8.4f} "
                    f"{h['step'][t]:8.4f} {h['margin'][t]:9.4f} "
                    f"{h['train_error'][t]:9.4f} {test_err[t]:9.4f}",
                    file=out,
                )
        histories[nu] = h
    return histories[1.0]


def reproduce(
    names: list[str] | None = None, quick: bool = False, out_dir: str = "figures", out=sys.stdout
) -> dict:
    """Run registered reproductions; print each one's table and save its figure as PNG."""
    import time
    from pathlib import Path

    from .experiments import EXPERIMENTS

    names = list(EXPERIMENTS) if not names else names
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        raise ValueError(f"unknown experiment(s) {unknown}; choose from {sorted(EXPERIMENTS)}")
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    results = {}
    for name in names:
        start = time.perf_counter()
        print(f"== {name} ({'quick' if quick else 'full size'}) ...", file=out, flush=True)
        result = EXPERIMENTS[name](quick=quick)
        path = Path(out_dir) / f"{name}.png"
        result.save(path)
        print(result.to_text(), file=out)
        print(f"   figure: {path}   ({time.perf_counter() - start:.1f}s)\n", file=out, flush=True)
        results[name] = result
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="oracleboost",
        description="Boosting through an Oracle protocol: demos and paper reproductions.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="AdaBoost on stumps, round by round (built-in data)")
    p_demo.add_argument("--rounds", type=int, default=30, help="boosting rounds (default 30)")
    p_demo.add_argument("--every", type=int, default=3, help="print every k-th round")
    sub.add_parser("list", help="list the registered paper reproductions")
    p_rep = sub.add_parser("reproduce", help="reproduce the papers' figures on built-in data")
    p_rep.add_argument("names", nargs="*", help="experiments to run (default: all)")
    p_rep.add_argument("--quick", action="store_true", help="CI-sized round budgets")
    p_rep.add_argument("--out", default="figures", help="folder for the PNG figures")
    args = parser.parse_args(argv)
    if args.command == "demo":
        if args.rounds < 1 or args.every < 1:
            parser.error("--rounds and --every must be positive")
        demo(args.rounds, args.every)
    elif args.command == "list":
        from .experiments import EXPERIMENTS

        for name, fn in EXPERIMENTS.items():
            doc = (fn.__doc__ or "").strip().splitlines()
            print(f"{name:32s} {doc[0] if doc else ''}")
    elif args.command == "reproduce":
        try:
            reproduce(args.names, quick=args.quick, out_dir=args.out)
        except ValueError as exc:
            parser.error(str(exc))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
