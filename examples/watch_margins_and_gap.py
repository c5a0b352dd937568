"""Watch the margin, the edge and the duality gap round by round
=============================================================

Two finite hypothesis classes given as matrices (``MatrixOracle(H)``, H[i, j] = h_j(x_i),
X holding row indices), two papers:

1. **Telgarsky (2012), A primal-dual convergence analysis of boosting.**
   ``CoordinateBoostingClassifier`` with the logistic loss and the Wolfe step (his BOOST
   with WOLFE, Fig. 7, c1 = 1/3, c2 = 1/2) on a random instance with a nonempty *hard
   core* (Definition 10: rows to which no combination of hypotheses gives all positive
   margins).  The optimal risk f̄ is then positive; the booster computes it once with
   ``oracleboost.diagnostics`` (an LP for the hard core, then Newton on the core), and
   every round records ``history_["gap"]`` = risk − f̄, which by his key identity equals
   the Bregman divergence between the dual iterate and the dual optimum: non-negative,
   falling to 0 at rate O(1/t) (Theorem 27: t·gap stays bounded).  The edge γ_t shrinks
   with it, and the ℓ1 margin min_i y_i f(x_i)/||λ||_1 stays negative while it climbs
   towards 0: the core rows are never separated.

2. **Ji, Srebro & Telgarsky (2021), Fast margin maximization via dual acceleration.**
   ``AcceleratedMarginClassifier`` (their Algorithm 1, eq. 1.1: Nesterov's method on
   the dual) on a separable instance.  Every round brackets the maximum ℓ2 margin γ̄:
   ``history_["margin"]`` (the margin of w_t) is a lower bound and
   ``history_["margin_upper_bound"]`` (||Zᵀq|| at the dual points and at their average
   of Lemma 3.2, a running minimum: weak duality, Lemma A) an upper bound; their
   difference ``history_["gap"]`` is a certificate that closes at rate Õ(1/t²)
   (Theorem 3.1: t²·gap levels off).

The script prints both every ~10% of the rounds; ``--plot FILE.png`` draws the gap and
the margin bracket on log axes.
"""

from __future__ import annotations

import argparse

import numpy as np

from oracleboost import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    MatrixOracle,
)
from oracleboost.datasets import matrix_problem, mixed_matrix, separable_matrix
from oracleboost.optim.steps import WolfeStep


def checkpoints(n_rounds: int) -> list[int]:
    """Round indices (0-based) every ~10% of a run, with the first and the last."""
    every = max(1, n_rounds // 10)
    return sorted({0, *range(every - 1, n_rounds, every), n_rounds - 1})


def duality_gap(rounds: int) -> CoordinateBoostingClassifier:
    # 40 rows off the hard core, 10 on it, 10 hypotheses with values in [−1, 1]
    M, core = mixed_matrix(40, 10, 10, random_state=0)
    X, y, H = matrix_problem(M)
    booster = CoordinateBoostingClassifier(
        MatrixOracle(H),
        loss="logistic",
        step=WolfeStep(c1=1 / 3, c2=1 / 2),  # the constants of Telgarsky 2012's rates
        n_estimators=rounds,
        duality_gap=True,
        random_state=0,
    ).fit(X, y)
    h = booster.history_
    print(
        f"1. Telgarsky 2012: logistic loss, Wolfe step, {M.shape[0]} x {M.shape[1]} matrix "
        f"with a hard core of {core.sum()} rows; optimal risk f̄ = {booster.optimal_loss_:.5f}"
    )
    print(f"{'round':>6} {'risk':>9} {'gap':>10} {'t*gap':>7} {'edge':>9} {'l1 margin':>10}")
    for t in checkpoints(len(h["gap"])):
        print(f"{t + 1:>6} {h['loss'][t]:>9.5f} {h['gap'][t]:>10.3e} "
              f"{(t + 1) * h['gap'][t]:>7.3f} {h['edge'][t]:>9.5f} {h['margin'][t]:>10.5f}")
    print(f"   stop: {booster.stop_reason_}")
    return booster


def margin_certificate(rounds: int) -> AcceleratedMarginClassifier:
    M, _ = separable_matrix(200, 30, random_state=0)
    X, y, H = matrix_problem(M)
    booster = AcceleratedMarginClassifier(
        MatrixOracle(H), method="accelerated", n_estimators=rounds, tol=1e-9
    ).fit(X, y)
    h = booster.history_
    print(f"2. Ji, Srebro & Telgarsky 2021: Algorithm 1 on a separable "
          f"{M.shape[0]} x {M.shape[1]} matrix; the max l2 margin lies in [margin, upper]")
    print(f"{'round':>6} {'margin':>10} {'upper':>10} {'gap':>10} {'t^2*gap':>8}")
    for t in checkpoints(len(h["gap"])):
        print(f"{t + 1:>6} {h['margin'][t]:>10.6f} {h['margin_upper_bound'][t]:>10.6f} "
              f"{h['gap'][t]:>10.3e} {(t + 1) ** 2 * h['gap'][t]:>8.2f}")
    print(f"   stop: {booster.stop_reason_}")
    return booster


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rounds", type=int, default=2000, help="rounds of part 1")
    parser.add_argument("--accelerated-rounds", type=int, default=2000, help="of part 2")
    parser.add_argument("--plot", metavar="FILE.png", help="save a figure here")
    parser.add_argument("--show", action="store_true",
                        help="show the figure (plt.show(); in the docs' gallery, its picture)")
    args = parser.parse_args(argv)
    telgarsky = duality_gap(args.rounds)
    print()
    ji = margin_certificate(args.accelerated_rounds)
    if args.plot or args.show:
        plot(telgarsky.history_, ji.history_, args.plot, args.show)
    return {"telgarsky": telgarsky.history_, "ji": ji.history_}


def plot(h1, h2, path=None, show=False) -> None:
    import matplotlib

    if not show:
        matplotlib.use("Agg")  # a file only: no display needed
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    t1 = np.arange(1, len(h1["gap"]) + 1)
    left.loglog(t1, h1["gap"], label="gap = risk − f̄")
    left.loglog(t1, h1["edge"], label="edge γ_t")
    left.loglog(t1, t1[-1] * h1["gap"][-1] / t1, ":", label="C/t")
    left.set_xlabel("round t")
    left.set_title("Telgarsky 2012 (hard core)")
    left.legend()
    t2 = np.arange(1, len(h2["gap"]) + 1)
    right.loglog(t2, h2["gap"], label="upper − margin")
    right.loglog(t2, t2[-1] ** 2 * h2["gap"][-1] / t2**2, ":", label="C/t²")
    right.set_xlabel("round t")
    right.set_title("Ji et al. 2021 (certificate)")
    right.legend()
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
