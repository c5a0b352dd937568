"""Swap the weak learner under one booster: the hypothesis class is one argument
=============================================================================

One booster, ``FunctionalGradientClassifier`` with the logistic loss (Grubb & Bagnell
2011, Algorithm 1: naive projection of the functional gradient, eq. 4, with a constant
step; Friedman's gradient boosting), is fitted on scikit-learn's breast-cancer data with
every hypothesis class of the library plugged in through the Oracle protocol:

* ``StumpOracle``: binned decision stumps (two-valued regression stumps here);
* ``TreeOracle``: scikit-learn regression trees of depth 3;
* ``LightGBMOracle``: LightGBM trees with 8 leaves;
* ``MLPOracle``: a 5-hidden-unit net (Grubb & Bagnell's class in their planning runs);
* ``SklearnOracle(...)``: any scikit-learn estimator: a ``Ridge`` (the boosted model
  stays linear), a k-nearest-neighbours regressor, and a classifier (Gaussian naive
  Bayes) that answers ``correlate`` only, as weighted classification with labels
  sign(r) and weights ``|r|`` (eq. 3): the booster reads the oracle's capabilities and asks
  the query the class can answer.

It prints one row per class: test error, the final training (logistic) loss, and the
seconds ``fit`` took; ``--plot FILE.png`` draws the table as bars.  Run
``python examples/swap_weak_learner.py [--rounds N]``.
"""

from __future__ import annotations

import argparse
import time

from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsRegressor
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from oracleboost import (
    FunctionalGradientClassifier,
    LightGBMOracle,
    MLPOracle,
    SklearnOracle,
    StumpOracle,
    TreeOracle,
)


def weak_learners() -> dict:
    """One oracle per hypothesis class, by the name printed in the table."""
    return {
        "stumps (StumpOracle)": StumpOracle(),
        "sklearn trees, depth 3 (TreeOracle)": TreeOracle(max_depth=3),
        # One thread: on a few hundred rows LightGBM's threads cost more than they
        # gain, and they spin badly when the machine is busy.
        "LightGBM trees, 8 leaves": LightGBMOracle(num_leaves=8, params={"num_threads": 1}),
        # a weak learner need not be trained to convergence: 50 L-BFGS iterations
        "5-unit MLP (MLPOracle)": MLPOracle(hidden_layer_sizes=(5,), max_iter=50),
        "SklearnOracle(Ridge())": SklearnOracle(Ridge(alpha=1.0)),
        "SklearnOracle(KNeighborsRegressor(10))": SklearnOracle(KNeighborsRegressor(10)),
        "SklearnOracle(GaussianNB())": SklearnOracle(GaussianNB()),
    }


def fit_one(name, oracle, args, X_train, y_train, X_test, y_test) -> dict:
    """Fit the booster on one oracle, print its row and return it."""
    booster = FunctionalGradientClassifier(
        oracle,
        loss="logistic",
        n_estimators=args.rounds,
        learning_rate=args.learning_rate,
        random_state=0,
    )
    start = time.perf_counter()
    booster.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    # the booster asks project (least squares, eq. 4) when the class can answer it,
    # else correlate (eq. 3): a classifier answers weighted classification only
    query = "project" if oracle.capabilities.project else "correlate"
    row = {
        "query": query,
        "test_error": 1.0 - booster.score(X_test, y_test),
        "train_loss": float(booster.history_["loss"][-1]),
        "seconds": seconds,
        "rounds": len(booster.history_["loss"]),
    }
    print(
        f"{name:<40} {query:>9} {row['test_error']:>8.3f} "
        f"{row['train_loss']:>10.4f} {seconds:>6.2f}"
    )
    return row


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rounds", type=int, default=100, help="weak learners per fit")
    parser.add_argument("--learning-rate", type=float, default=0.3, help="the step ν")
    parser.add_argument("--plot", metavar="FILE.png", help="save a bar chart of the table here")
    parser.add_argument("--show", action="store_true",
                        help="show the chart (plt.show(); in the docs' gallery, its picture)")
    args = parser.parse_args(argv)

    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y
    )
    # Trees do not care; the MLP, Ridge and the neighbours need comparable features.
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

    print(
        f"FunctionalGradientClassifier(loss='logistic', n_estimators={args.rounds}, "
        f"learning_rate={args.learning_rate}) on breast cancer, "
        f"{len(y_train)} train / {len(y_test)} test rows"
    )
    header = f"{'weak learner':<40} {'query':>9} {'test err':>8} {'train loss':>10} {'sec':>6}"
    print(header)
    print("-" * len(header))
    results = {}
    # The matrices here are tiny: one BLAS/OpenMP thread is faster than several, and
    # much faster when the machine is busy (threads that spin wait for cores).
    with threadpool_limits(limits=1):
        for name, oracle in weak_learners().items():
            results[name] = fit_one(name, oracle, args, X_train, y_train, X_test, y_test)
    base = max(y_test.mean(), 1.0 - y_test.mean())
    print(f"(predicting the majority class: test error {1.0 - base:.3f})")
    if args.plot or args.show:
        plot(results, 1.0 - base, args.plot, args.show)
    return results


def plot(results: dict, majority_error: float, path=None, show=False) -> None:
    """Test error and training loss of each weak learner, as bars."""
    import matplotlib

    if not show:
        matplotlib.use("Agg")  # a file only: no display needed
    import matplotlib.pyplot as plt

    names = list(results)[::-1]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    left.barh(names, [results[n]["test_error"] for n in names])
    left.axvline(majority_error, color="gray", linestyle=":", label="majority class")
    left.set_xlabel("test error")
    left.legend(fontsize="small")
    right.barh(names, [results[n]["train_loss"] for n in names])
    right.set_xlabel("training logistic loss")
    fig.suptitle("one booster, every weak learner (breast cancer)")
    fig.tight_layout()
    if path:
        fig.savefig(path, dpi=120)
        print(f"saved {path}")
    if show:
        plt.show()  # under Agg (the docs' gallery) a no-op that leaves the figure open
    else:
        plt.close(fig)


if __name__ == "__main__":
    main()
