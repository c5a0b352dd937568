"""Telgarsky (2012), "A Primal-Dual Convergence Analysis of Boosting" (JMLR): Theorem 28.

The O(1/ε) rate of the general (neither weakly learnable nor attainable) case is tight:
on Schapire's 3×2 matrix, logistic boosting with exact line search has a gap of at
least 1/(8t) after t rounds.
"""

from __future__ import annotations

import math
import time

import numpy as np

from oracleboost.boosters.coordinate.estimator import CoordinateBoostingClassifier
from oracleboost.datasets import matrix_problem, schapire_matrix
from oracleboost.experiments.base import Curves, cached
from oracleboost.oracles.matrix import MatrixOracle

__all__ = ["lower_bound", "schapire_weights"]

_ROUNDS = {True: 1_000, False: 10_000}  # quick, full


def schapire_weights(clf: CoordinateBoostingClassifier, n_columns: int = 2) -> np.ndarray:
    """The weights λ_t after every round of a booster fitted through a ``MatrixOracle``.

    ``λ_j`` is the coefficient of column j in the margin convention (``y_i f(x_i) =
    Σ_j λ_j M[i, j]``), which is also Telgarsky's λ for ``A = −M``.

    Returns
    -------
    ndarray of shape (n_rounds, n_columns)
    """
    ens = clf.ensemble_
    steps = np.zeros((ens.n_rounds, n_columns))
    for t, (k, delta) in enumerate(zip(ens.round_index, ens.round_delta, strict=True)):
        h = ens.hypotheses[k]
        steps[t, h.j] = delta * h.scale  # round_delta is in units of the stored h
    return np.cumsum(steps, axis=0)


def lower_bound(quick: bool = False, n_rounds: int | None = None, verbose: bool = False) -> Curves:
    """Telgarsky 2012, Theorem 28: logistic boosting's gap on Schapire's matrix is ≥ 1/(8t).

    Paper (§6.3, Thm 28; proof in App. G.6): with the logistic loss ``g(x) = ln(1 + e^x)``,
    exact line search and λ_0 = 0 on ``S = [[−1, 1], [1, −1], [−1, −1]]`` (``A = −y h``;
    here its margin form ``M = −S``), ``f(Sλ_t) − f̄_S ≥ 1/(8t)`` for every t ≥ 1, where
    ``f(z) = Σ_i g(z_i)`` is the **summed** risk and ``f̄_S = 2 ln 2`` (rows 1 and 2 form
    the hard core; row 3 is pushed to margin ∞).  The proof: the line search alternates
    coordinates, the updated one u_t obeys ``e^{2u_t} = e^{2v_t} + 2e^{v_t − u_t} + 2``
    (Eq. 35) with u_1 = ln 2, so ``v_t ≤ u_t ≤ ½ ln(4t)`` and
    ``gap_t ≥ ln(1 + 1/(4t)) ≥ 1/(8t)``; hence ``||λ_t||_1 ≤ ln(4t)`` (weights grow only
    like ln t).  The paper gives the bound, not measured values.

    Here: ``CoordinateBoostingClassifier(loss="logistic", step="optimal", learning_rate=1)``.
    Its ``history_["loss"]`` is the **mean** over the 3 rows, so
    ``gap_t = 3 · loss_t − 2 ln 2`` (sum convention, as in the paper).

    Measured: λ_1 = (ln 2, 0), gap_1 = ln 6.75 − 2 ln 2 = 0.5232481; t · gap_t = 0.5232,
    0.3846, 0.2818, 0.2544, 0.2506, 0.2503 at t = 1, 2, 10, 100, 1000, 2000, so
    gap_t ≈ 1/(4t): twice the bound, never below it; max_j λ_t,j = 4.49314 ≤ ½ ln 8000 =
    4.49360 at t = 2000; t · gap_t = 0.25007 at t = 10,000.  About 1 ms per round.

    Parameters
    ----------
    quick : bool, default=False
        1,000 rounds (about 1 s) instead of 10,000 (about 11 s).
    n_rounds : int, optional
        Overrides the budget of ``quick``.
    verbose : bool, default=False
        Print a line when done.

    Returns
    -------
    Curves
        Series ``"gap_t"``, ``"t * gap_t"``, ``"1/(8t) (Thm 28)"`` against t (log–log),
        reference 1/4; ``aux`` holds ``"lambda_1"``, ``"lambda_2"`` (λ_t) and
        ``"0.5 ln(4t)"``.
    """
    start = time.perf_counter()
    n_rounds = _ROUNDS[bool(quick)] if n_rounds is None else int(n_rounds)
    M = schapire_matrix()
    X, y, H = matrix_problem(M)
    clf = CoordinateBoostingClassifier(
        cached(MatrixOracle(H)), loss="logistic", step="optimal", n_estimators=n_rounds,
        learning_rate=1.0,
    ).fit(X, y)
    loss = clf.history_["loss"]
    if len(loss) != n_rounds:
        raise RuntimeError(f"stopped after {len(loss)} of {n_rounds} rounds ({clf.stop_reason_})")
    t = np.arange(1, n_rounds + 1)
    gap = M.shape[0] * loss - 2.0 * math.log(2.0)
    lam = schapire_weights(clf, M.shape[1])
    if verbose:
        print(
            f"telgarsky2012-lower-bound: {n_rounds} rounds, t·gap_t = {t[-1] * gap[-1]:.5f}, "
            f"min 8t·gap_t = {np.min(8 * t * gap):.4f}  ({time.perf_counter() - start:.1f}s)",
            flush=True,
        )
    return Curves(
        title="Telgarsky (2012) Thm 28: logistic loss, exact line search, Schapire's S",
        xlabel="round t",
        ylabel="f(Sλ_t) − 2 ln 2 (summed risk)",
        x=t,
        series={"gap_t": gap, "t * gap_t": t * gap, "1/(8t) (Thm 28)": 1.0 / (8.0 * t)},
        reference={"1/4": 0.25},
        notes="gap_t ≥ 1/(8t) (Thm 28); observed t·gap_t → 1/4, i.e. gap_t ≈ 1/(4t).",
        xscale="log",
        yscale="log",
        aux={"lambda_1": lam[:, 0], "lambda_2": lam[:, 1], "0.5 ln(4t)": 0.5 * np.log(4.0 * t)},
        runtime=time.perf_counter() - start,
        mathtext={"round t": r"round $t$",
                  "f(Sλ_t) − 2 ln 2 (summed risk)": r"$f(S\lambda_t) - 2\ln 2$ (summed risk)",
                  "gap_t": r"$\mathrm{gap}_t$", "t * gap_t": r"$t \cdot \mathrm{gap}_t$",
                  "1/(8t) (Thm 28)": r"$1/(8t)$ (Thm 28)", "1/4": r"$1/4$"},
    )
