"""Pictures of a fit: its history, its features' importances and its margins
=========================================================================

:mod:`oracleboost.plotting` draws what a fitted booster records, on one figure here:

* ``plot_history``: discrete AdaBoost (``CoordinateBoostingClassifier()``, ±1 stumps) on
  scikit-learn's breast cancer data (569 rows, 30 features; 400 to train, the rest to
  test, watched with ``eval_set``): its loss and training error, each beside the same
  curve on the test rows, and its ℓ1 margin ``min_i y_i f(x_i) / ||λ||_1``; and the
  certificate of hard-margin LPBoost (``TotallyCorrectiveClassifier(nu=1)``, Demiriz,
  Bennett & Shawe-Taylor 2002) on the same rows: the restricted LP's value below the
  optimum, the least edge so far above it, the band between them closing as stumps
  join.  The optimum is the largest ℓ1 margin any vote of stumps has on these rows,
  which AdaBoost's margin approaches from below (Rätsch & Warmuth 2005 show how closely
  and how fast).
* ``plot_importance``: AdaBoost's features by ``importance_type="weight"`` (each round's
  coefficient on its stump's feature), the largest eight.
* ``plot_margins``: the cumulative distribution of AdaBoost's normalised margins
  ``y f(x) / ||λ||_1`` on the training rows after 5, 50 and every round: Schapire,
  Freund, Bartlett & Lee (1998, Figure 2).  Its left end moves right as the rounds go
  on, also after the training error reached 0: boosting goes on raising the smallest
  margins (while the largest come down), and the paper's bound on the test error
  depends on the share of small margins, not on the number of rounds.

It prints the errors, the share of training rows of margin at most 0.1 at each stage,
the top features, and LPBoost's bracket beside AdaBoost's margin; ``--plot FILE.png``
saves the figure.
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from oracleboost import CoordinateBoostingClassifier, TotallyCorrectiveClassifier


def fit(rounds: int, seed: int):
    data = load_breast_cancer()
    X_train, X_test, y_train, y_test = train_test_split(
        data.data, data.target, train_size=400, stratify=data.target, random_state=seed)
    ada = CoordinateBoostingClassifier(n_estimators=rounds).fit(
        X_train, y_train, eval_set=[(X_test, y_test)], eval_names=["test"])
    lpboost = TotallyCorrectiveClassifier(nu=1, n_estimators=rounds).fit(X_train, y_train)
    return ada, lpboost, X_train, y_train, list(data.feature_names)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="rounds of each booster")
    parser.add_argument("--seed", type=int, default=0, help="the train/test split")
    parser.add_argument("--plot", metavar="FILE.png", help="save the figure here")
    parser.add_argument("--show", action="store_true",
                        help="show the figure (plt.show(); in the docs' gallery, its picture)")
    args = parser.parse_args(argv)
    from oracleboost.plotting import staged_normalised_margins

    ada, lpboost, X_train, y_train, names = fit(args.rounds, args.seed)
    h = ada.history_
    n = ada.n_estimators_
    print(f"AdaBoost, {n} rounds of stumps on breast cancer: training error "
          f"{h['train_error'][-1]:.3f}, test error {h['val_error_0'][-1]:.3f} "
          f"(least {h['val_error_0'].min():.3f}, round {np.argmin(h['val_error_0']) + 1})")
    stages = sorted({min(5, n), min(50, n), n})
    margins = staged_normalised_margins(ada, X_train, y_train, stages)
    print(f"{'rounds':>7} {'train error':>12} {'margin <= 0.1':>14} {'least margin':>13}")
    for t, m in margins.items():
        print(f"{t:>7} {h['train_error'][t - 1]:>12.3f} {np.mean(m <= 0.1):>14.3f} "
              f"{m.min():>13.4f}")
    importance = ada.feature_importances_
    top = np.argsort(importance, kind="stable")[::-1][:5]
    print("top features (weight): " + ", ".join(
        f"{names[i]} {importance[i]:.3f}" for i in top))
    print(f"LPBoost (nu=1), {lpboost.n_estimators_} rounds: the largest l1 margin of a "
          f"vote of stumps lies in [{lpboost.lp_value_:.5f}, {lpboost.upper_bound_:.5f}] "
          f"(stop: {lpboost.stop_reason_}); AdaBoost's is {h['margin'][-1]:.5f}")
    if args.plot or args.show:
        plot(ada, lpboost, X_train, y_train, names, stages, args.plot, args.show)
    return {"ada": ada, "lpboost": lpboost, "margins": margins, "train": (X_train, y_train)}


def plot(ada, lpboost, X_train, y_train, names, stages, path=None, show=False) -> None:
    import matplotlib

    if not show:
        matplotlib.use("Agg")  # a file only: no display needed
    import matplotlib.pyplot as plt

    from oracleboost.plotting import plot_history, plot_importance, plot_margins

    fig, axes = plt.subplots(2, 3, figsize=(13, 7), layout="constrained")
    plot_history(ada, keys=["loss", "train_error", "margin"], ax=axes[0])
    for ax in axes[0]:
        ax.set_title(f"AdaBoost: {ax.get_title()}")
    axes[0, 0].set_yscale("log")  # the exponential loss on the test rows grows manyfold
    plot_importance(ada, max_num_features=8, feature_names=names, ax=axes[1, 0],
                    title="AdaBoost: feature importance")
    plot_margins(ada, X_train, y_train, stages=stages, ax=axes[1, 1])
    axes[1, 1].set_title("AdaBoost: margins (training rows)")
    plot_history(lpboost, keys="bracket", ax=axes[1, 2])
    axes[1, 2].set_title("LPBoost (nu=1): certificate")
    if path:
        fig.savefig(path, dpi=100)
        print(f"saved {path}")
    if show:
        plt.show()  # under Agg (the docs' gallery) a no-op that leaves the figure open
    else:
        plt.close(fig)


if __name__ == "__main__":
    main()
