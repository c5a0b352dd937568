"""Boost any scikit-learn regressor on a non-smooth loss
=====================================================

``FunctionalGradientRegressor`` (Grubb & Bagnell 2011, Algorithm 1) takes a descent
direction v = −∇R[f] of the risk in function space, asks the oracle for its least-squares
projection (eq. 4), and steps along it.  For the absolute loss ``|f(x) − y|`` the gradient is
only a subgradient, sign(f − y), so the step must decrease: η_t = c/√t
(``schedule="inv_sqrt"``, the schedule of the paper's Theorems 5 and 7 for non-smooth
losses).  Any scikit-learn regressor is a hypothesis class through ``SklearnOracle``;
here a ``Ridge`` (the boosted model stays linear: this is subgradient descent for least
absolute deviations) and a ``KNeighborsRegressor``, on scikit-learn's diabetes data.

``KNeighborsRegressor.fit`` takes no ``sample_weight``.  ``SklearnOracle`` accepts it all
the same: an unweighted fit never passes weights to the regressor.  Only a weighted fit
(``fit(X, y, sample_weight=...)`` with weights not all equal: equal ones cancel) needs
them, and then ``SklearnOracle`` raises a
``TypeError`` naming the estimator; the script shows that message.

It prints the training loss every ~10% of the rounds for both regressors, then their
test error against the best constant.  ``--loss huber`` or ``--loss quantile --alpha
0.9`` swap the loss (then it also prints the share of test targets below the predicted
quantile); ``--plot FILE.png`` saves the loss curves.
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsRegressor
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from oracleboost import (
    Absolute,
    FunctionalGradientRegressor,
    Huber,
    Quantile,
    SklearnOracle,
)


def make_loss(name: str, alpha: float):
    if name == "quantile":
        return Quantile(alpha)
    # Huber's δ is in y's units (y spans 25–346 here), so δ = 1 keeps its gradient in
    # [−1, 1] as for |r|, and the step c/√t means the same; a larger δ needs a smaller c
    return Huber(delta=1.0) if name == "huber" else Absolute()


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--loss", choices=["absolute", "huber", "quantile"], default="absolute")
    parser.add_argument("--alpha", type=float, default=0.9, help="the quantile (--loss quantile)")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument(
        "--learning-rate", type=float, default=20.0,
        help="c in η_t = c/√t; the subgradient is ±1, so c is in y's units",
    )
    parser.add_argument("--plot", metavar="FILE.png", help="save the loss curves here")
    parser.add_argument("--show", action="store_true",
                        help="show the figure (plt.show(); in the docs' gallery, its picture)")
    args = parser.parse_args(argv)
    loss = make_loss(args.loss, args.alpha)

    X, y = load_diabetes(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
    scaler = StandardScaler().fit(X_train)  # the neighbours need comparable features
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

    regressors = {"Ridge": Ridge(alpha=1.0), "15-NN": KNeighborsRegressor(n_neighbors=15)}
    models = {}
    # A few hundred rows: one BLAS/OpenMP thread is faster than several, and threads that
    # spin for cores on a busy machine can make every weak-learner fit much slower.
    with threadpool_limits(limits=1):
        for name, estimator in regressors.items():
            models[name] = FunctionalGradientRegressor(
                SklearnOracle(estimator),
                loss=loss,
                schedule="inv_sqrt",
                learning_rate=args.learning_rate,
                n_estimators=args.rounds,
                random_state=0,
            ).fit(X_train, y_train)
        test_pred = {n: m.predict(X_test) for n, m in models.items()}
    test_loss = {n: float(loss(y_test, p)) for n, p in test_pred.items()}

    print(
        f"FunctionalGradientRegressor(loss={loss!r}, schedule='inv_sqrt', "
        f"learning_rate={args.learning_rate}) on diabetes ({len(y_train)} train rows)"
    )
    print(f"{'round':>5}  " + "  ".join(f"{name:>9}" for name in models))
    # round 0: f_0, the loss' best constant (the median for the absolute loss)
    start = {n: float(loss(y_train, np.full(len(y_train), m.ensemble_.intercept)))
             for n, m in models.items()}
    print(f"{0:>5}  " + "  ".join(f"{start[n]:>9.3f}" for n in models))
    every = max(1, args.rounds // 10)
    for t in sorted({*range(every, args.rounds + 1, every), args.rounds}):
        print(f"{t:>5}  " + "  ".join(f"{m.history_['loss'][t - 1]:>9.3f}"
                                      for m in models.values()))

    constant = np.full(len(y_test), next(iter(models.values())).ensemble_.intercept)
    print(f"test loss: constant f_0 {float(loss(y_test, constant)):.3f}; "
          + "; ".join(f"{n} {v:.3f}" for n, v in test_loss.items()))
    if args.loss == "quantile":
        print(f"share of test y below the predicted {args.alpha:g}-quantile: "
              + "; ".join(f"{n} {np.mean(y_test <= p):.2f}" for n, p in test_pred.items()))

    # a weighted fit (weights not all equal: equal ones cancel, as no weights) needs
    # sample_weight in the regressor's fit: the neighbours refuse
    try:
        FunctionalGradientRegressor(SklearnOracle(KNeighborsRegressor()), n_estimators=2).fit(
            X_train, y_train, sample_weight=np.linspace(0.5, 1.5, len(y_train))
        )
        weighted = "accepted"
    except TypeError as exc:
        weighted = f"TypeError: {exc}"
    print(f"weighted fit with KNeighborsRegressor: {weighted}")

    if args.plot or args.show:
        plot(models, start, args.plot, args.show)
    return {
        "initial_loss": start,
        "loss": {n: m.history_["loss"] for n, m in models.items()},
        "test_loss": test_loss,
        "constant_test_loss": float(loss(y_test, constant)),
        "weighted": weighted,
    }


def plot(models, start, path=None, show=False) -> None:
    import matplotlib

    if not show:
        matplotlib.use("Agg")  # a file only: no display needed
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name, model in models.items():
        ax.plot(np.r_[start[name], model.history_["loss"]], label=name)
    ax.set_xlabel("round t")
    ax.set_ylabel("training loss")
    ax.legend()
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
