"""Telgarsky (2013), "Margins, Shrinkage, and Boosting" (ICML): Figures 2 and 3, and the 0.92.

The paper's only experiments are two "sanity check" plots on the 8×8 ±1 matrix of
Rudin, Daubechies & Schapire (2004, Theorem 7), whose maximum ℓ1 margin is γ = 3/8 while
AdaBoost (ν = 1) is stuck at margin 1/3:

* Figure 2, "shrinkage leads to margin maximization": exponential loss, AdaBoost step
  ``α^A(ν) = ν ½ ln((1+γ_t)/(1−γ_t))`` (equal to ν times the exact line search for ±1
  columns), ν = 1, 1/2 and "smaller".  ν = 1 misses the maximum margin, ν ≤ 1/2 reaches
  it, and "experimentation reveals the threshold to be roughly 0.92".
* Figure 3, "the Wolfe search effectively maximizes margins": the same with a Wolfe line
  search whose constants are ``c1 = 1 − ν/2``, ``c2 = 1 − ν/4``; smaller ν means better
  margin guarantees (Lemma 3.2 (W)) but slower progress.

The paper prints no numbers besides the 0.92, no round budget and no axes; the images
are not in the text we have.  Everything here starts from λ_0 = 0 (uniform weights, the
paper's Algorithm 1) and uses the library's deterministic first-index tie rule; see
:func:`shrinkage_threshold` for why the tie rule matters.

The matrix comes from :func:`oracleboost.datasets.rudin_matrix` (margin convention
``M = y h``; Telgarsky's ``A = −M``), fed to
:class:`~oracleboost.boosters.CoordinateBoostingClassifier` through a
:class:`~oracleboost.oracles.MatrixOracle` (Gauss–Southwell oracle ``argmax_j |edge_j|``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from oracleboost.boosters.coordinate.estimator import CoordinateBoostingClassifier
from oracleboost.datasets import matrix_problem, rudin_matrix
from oracleboost.diagnostics import max_margin
from oracleboost.experiments.base import Curves, ThresholdCurves, cached
from oracleboost.optim.steps import StepRule, get_step
from oracleboost.oracles.matrix import MatrixOracle

__all__ = [
    "ADABOOST_LIMIT",
    "rudin_margins",
    "rudin_margin_curves",
    "figure2",
    "figure3",
    "shrinkage_threshold",
]

#: AdaBoost's limiting ℓ1 margin on the Rudin matrix (its cycle; Rudin et al. 2004).
ADABOOST_LIMIT = 1.0 / 3.0

_FIGURE_NUS = (1.0, 0.5, 0.25, 0.1)
_FIGURE_ROUNDS = {True: 2_000, False: 20_000}  # quick, full
_THRESHOLD_ROUNDS = {True: 1_000, False: 20_000}


def _threshold_grid(quick: bool) -> tuple[float, ...]:
    lo, hi = (0.90, 0.94) if quick else (0.85, 0.95)
    return tuple(float(v) for v in np.round(np.arange(lo, hi + 1e-9, 0.005), 3))


def _rudin(column_order: Sequence[int] | None) -> np.ndarray:
    M = rudin_matrix()
    if column_order is not None:
        order = np.asarray(column_order, dtype=int)
        if sorted(order.tolist()) != list(range(M.shape[1])):
            raise ValueError(f"column_order must be a permutation of 0..7; got {column_order!r}")
        M = M[:, order]
    return M


def rudin_margins(
    nu: float,
    n_rounds: int,
    step: str | StepRule = "adaboost",
    loss: str = "exponential",
    column_order: Sequence[int] | None = None,
) -> tuple[np.ndarray, CoordinateBoostingClassifier]:
    """Boost on the Rudin matrix from λ_0 = 0; return the ℓ1 margin per round and the booster.

    Parameters
    ----------
    nu : float
        Shrinkage ν ∈ (0, 1] (the booster's ``learning_rate``).
    n_rounds : int
    step : str or StepRule, default="adaboost"
        Any step rule of :class:`~oracleboost.boosters.CoordinateBoostingClassifier`.
    loss : {"exponential", "logistic"}, default="exponential"
    column_order : sequence of int, optional
        A permutation of the 8 columns.  The oracle breaks ties by the lowest index, and
        round 1 has a 4-way tie (columns 0, 2, 3, 6), so the order decides which of
        them AdaBoost takes first.

    Returns
    -------
    margins : ndarray of shape (n_rounds,)
        ``min_i y_i f(x_i) / ||λ_t||_1`` after rounds ``1, …, n_rounds`` (``history_["margin"]``).
    booster : CoordinateBoostingClassifier
        The fitted booster.
    """
    X, y, H = matrix_problem(_rudin(column_order))
    clf = CoordinateBoostingClassifier(
        cached(MatrixOracle(H)), loss=loss, step=step, n_estimators=int(n_rounds),
        learning_rate=nu,
    ).fit(X, y)
    return clf.history_["margin"], clf


def _step_label(step: str | StepRule) -> str:
    rule = get_step(step)
    return repr(rule) if isinstance(step, StepRule) else rule.name


def rudin_margin_curves(
    step: str | StepRule = "adaboost",
    nus: Sequence[float] = _FIGURE_NUS,
    n_rounds: int = 2_000,
    loss: str = "exponential",
    verbose: bool = False,
    title: str | None = None,
    notes: str = "",
) -> Curves:
    """ℓ1 margin against round on the Rudin matrix, one curve per shrinkage ν.

    The common engine of :func:`figure2` and :func:`figure3`; any step rule and loss of
    :class:`~oracleboost.boosters.CoordinateBoostingClassifier` (e.g. ``"quadratic"``).
    Series are keyed ``"ν = <nu>"``; references are γ from the LP
    (:func:`oracleboost.diagnostics.max_margin`, 3/8) and AdaBoost's limit 1/3.
    """
    start = time.perf_counter()
    M = rudin_matrix()
    gamma = max_margin(M).gamma
    series, mathtext = {}, {}
    for nu in nus:
        t0 = time.perf_counter()
        margins, clf = rudin_margins(nu, n_rounds, step=step, loss=loss)
        if len(margins) != n_rounds:
            raise RuntimeError(
                f"ν = {nu}: the booster stopped after {len(margins)} of {n_rounds} rounds "
                f"({clf.stop_reason_})"
            )
        series[f"ν = {nu:g}"] = margins
        mathtext[f"ν = {nu:g}"] = rf"$\nu = {nu:g}$"
        if verbose:
            print(
                f"  {_step_label(step)}, ν = {nu:g}: {n_rounds} rounds, margin {margins[-1]:.5f} "
                f"(γ − margin = {gamma - margins[-1]:.2e})  {time.perf_counter() - t0:.1f}s",
                flush=True,
            )
    return Curves(
        title=title or f"Rudin matrix, {loss} loss, {_step_label(step)} step: ℓ1 margin",
        xlabel="round t",
        ylabel="ℓ1 margin  min_i y_i f(x_i) / ‖λ‖₁",
        x=np.arange(1, n_rounds + 1),
        series=series,
        reference={f"γ = {gamma:.4g} (LP max margin)": gamma, "1/3 (AdaBoost's limit)": 1 / 3},
        notes=notes,
        xscale="log",
        ylim=(0.25, 0.39),
        runtime=time.perf_counter() - start,
        mathtext={**mathtext, **_margin_mathtext(gamma),
                  "round t": r"round $t$",
                  "ℓ1 margin  min_i y_i f(x_i) / ‖λ‖₁":
                      r"$\ell_1$ margin  $\min_i\, y_i f(x_i) / \|\lambda\|_1$"},
    )


def _margin_mathtext(gamma: float) -> dict[str, str]:
    """Mathtext of the two reference lines every Rudin-matrix figure draws."""
    return {f"γ = {gamma:.4g} (LP max margin)": rf"$\gamma = {gamma:.4g}$ (LP max margin)",
            "1/3 (AdaBoost's limit)": r"$1/3$ (AdaBoost's limit)"}


def figure2(
    quick: bool = False,
    nus: Sequence[float] = _FIGURE_NUS,
    n_rounds: int | None = None,
    verbose: bool = False,
) -> Curves:
    """Telgarsky 2013, Figure 2: AdaBoost with shrinkage ν on the Rudin matrix (ℓ1 margin).

    Paper (§3.2, Figure 2, "Sanity check: shrinkage leads to margin maximization"):
    exponential loss, the AdaBoost step ``α^A(ν) = ν ½ ln((1+γ_t)/(1−γ_t))`` (= ``α^O(ν)``,
    ν times the exact line search, for a ±1 matrix), on the 8×8 matrix of Rudin,
    Daubechies & Schapire (2004, Thm 7) with maximum margin γ = 3/8.  It reports that
    ν = 1 does not reach the maximum margin while ν = 1/2 and smaller do.  It gives no
    round budget, no numbers and no tie rule.

    Here: λ_0 = 0, first-index ties, ν ∈ ``nus`` (default 1, 1/2, 1/4, 1/10), one curve
    per ν against the round on a log axis, references γ (LP) and 1/3.

    Measured (this library): margin at t = 10 / 100 / 1000 / 10000 is 0.2500 / 0.3248 /
    0.3325 / 0.3332 for ν = 1 (→ 1/3, within 1e-3 from t = 854 on), and 0.1813 / 0.3557
    / 0.3735 / 0.3749 for ν = 1/2.  Within 1e-3 of 3/8 from t = 2267 (ν = 1/2), 3940
    (1/4) and 9098 (1/10) on: smaller ν gets there, but later.

    Parameters
    ----------
    quick : bool, default=False
        2,000 rounds per curve (about 2 s) instead of 20,000 (about 20 s; every curve
        is then within 1e-3 of its limit).
    nus : sequence of float
    n_rounds : int, optional
        Overrides the budget of ``quick``.
    verbose : bool, default=False
        Print a line per curve.
    """
    n_rounds = _FIGURE_ROUNDS[bool(quick)] if n_rounds is None else int(n_rounds)
    if verbose:
        print(f"telgarsky2013-figure2: AdaBoost step, {n_rounds} rounds per ν", flush=True)
    return rudin_margin_curves(
        "adaboost", nus, n_rounds, verbose=verbose,
        title="Telgarsky (2013) Fig. 2: AdaBoost step α^A(ν), exp loss, Rudin matrix",
        notes="ν = 1 stays at 1/3; shrinkage ν ≤ 1/2 reaches the maximum margin γ = 3/8.",
    )


def figure3(
    quick: bool = False,
    nus: Sequence[float] = _FIGURE_NUS,
    n_rounds: int | None = None,
    verbose: bool = False,
) -> Curves:
    """Telgarsky 2013, Figure 3: Wolfe line search with shrinkage ν on the Rudin matrix.

    Paper (§3.2, Figure 3, "Sanity check: the Wolfe search effectively maximizes
    margins"): exponential loss, any step satisfying the Wolfe conditions (2.1)–(2.2)
    with ``c1 = 1 − ν/2``, ``c2 = 1 − ν/4``, found by the bracketing-and-bisection
    routine of Telgarsky (2012, App. D.1) that starts at α = 1; several ν.  Lemma 3.2 (W)
    guarantees margin ≥ γ(1 − ν/2) − 4 ln m/(tνγ); the paper's point is that the search
    works but "demanding higher accuracy comes at a price".  No numbers are given.

    Here: ``step="wolfe"`` (the library's Routine WOLFE with the 2013 constants), λ_0 = 0,
    ν ∈ ``nus`` (default 1, 1/2, 1/4, 1/10).

    Measured (this library): margin at t = 10 / 100 / 1000 / 10000 is 0.2632 / 0.3668 /
    0.3737 / 0.3749 for ν = 1 and 0.0000 / 0.2800 / 0.3640 / 0.3738 for ν = 1/10; every
    ν reaches 3/8 (within 1e-3 from t = 1551, 3982, 6867 and 12247 on for ν = 1, 1/2,
    1/4, 1/10), and smaller ν is slower.  About 0.3 ms per round.  At t = 10 the
    implementer's note has 0.1579 (= 3/19) for ν = 1: round 4 is an exact four-way tie
    and the note's run took column 2 where the lowest-index rule takes column 0 (5/19);
    the steps are the same and the runs agree from t = 100 on (a test pins the path).

    Parameters
    ----------
    quick : bool, default=False
        2,000 rounds per curve (about 2.5 s) instead of 20,000 (about 26 s).
    nus : sequence of float
    n_rounds : int, optional
        Overrides the budget of ``quick``.
    verbose : bool, default=False
        Print a line per curve.
    """
    n_rounds = _FIGURE_ROUNDS[bool(quick)] if n_rounds is None else int(n_rounds)
    if verbose:
        print(f"telgarsky2013-figure3: Wolfe step, {n_rounds} rounds per ν", flush=True)
    return rudin_margin_curves(
        "wolfe", nus, n_rounds, verbose=verbose,
        title="Telgarsky (2013) Fig. 3: Wolfe step (c1 = 1−ν/2, c2 = 1−ν/4), exp loss, Rudin",
        notes="Every ν reaches γ = 3/8 (ν = 1 included); smaller ν gets there later.",
    )


def shrinkage_threshold(
    quick: bool = False,
    nus: Sequence[float] | None = None,
    n_rounds: int | None = None,
    verbose: bool = False,
    column_order: Sequence[int] | None = None,
) -> ThresholdCurves:
    """Telgarsky 2013, §3.2: the shrinkage above which AdaBoost misses the max margin (≈ 0.92).

    Paper: "experimentation reveals the threshold to be roughly 0.92" (for the AdaBoost
    step on the Rudin matrix, exponential loss) — no grid, budget or tie rule is given.

    Here: for each ν of the grid, AdaBoost with shrinkage ν runs ``n_rounds`` rounds from
    λ_0 = 0; its final ℓ1 margin is classified by the nearer of the two limits, γ = 3/8
    (LP) and 1/3 (AdaBoost's cycle).  The switch is the midpoint between the largest ν
    that reached 3/8 and the next grid ν (every ν above that one stayed at 1/3).
    ``exceptions`` lists the grid ν below the switch that stayed at 1/3.

    Measured (this library, first-index ties):

    * The last switch is sharp, at ν ≈ 0.91963 (bisection at 20,000 rounds: 0.9196299
      reaches 0.37494, 0.9196301 stays at 0.33352); every ν on a 0.005 grid from 0.92 to
      1 stays at 1/3.  So "roughly 0.92" reproduces.
    * Below it the picture is not monotone: the windows ν ∈ [0.869, 0.873],
      [0.883, 0.890] and ν = 0.912 (0.001 grid, 3,000 rounds; checked at 20,000) also
      converge to 1/3, while every ν on a 0.005 grid from 0.30 to 0.865 reaches 3/8.
      Which limit a run takes is decided by its discrete sequence of chosen columns
      (margins are identical across plateaus of ν).  These are not floating-point
      accidents: on 0.85 to 1 by 0.005, the only later near-tie (within 1e-9) is an exact
      one at round 15 for ν = 0.89, and either resolution of it converges to 1/3.
    * The threshold depends on the tie rule at round 1, an exact 4-way tie between
      columns 0, 2, 3 and 6.  Forcing the first column to be 0 / 2 / 3 / 6 (lowest index
      afterwards) puts the last switch (0.005 grid, 3,000 rounds) at ≈ 0.9175 / 0.9125 /
      0.9175 / 0.9625.  The paper's 0.92 matches the lowest-index rule (what MATLAB's
      ``max`` and NumPy's ``argmax`` do); the paper does not say which rule it used.
      ``column_order`` reorders the columns, which changes every
      tie-break: ``(6, 0, 1, 2, 3, 4, 5, 7)`` gives a switch ≈ 0.9875 with exceptions
      0.91, 0.92, 0.955–0.98, but those runs meet a second, floating-point-level near-tie
      (original columns 1 and 4 at round 10 or 13), so such orders are fragile.
    * Budget: on the quick grid (0.90 to 0.94 by 0.005) the classification at every round
      from t = 500 on already equals the one at t = 40,000 (ν = 0.92, the slowest, has
      margin 0.3502 at t = 500, 0.3422 at 1,000, 0.3351 at 5,000, 0.3336 at 40,000).
      Quick mode uses 1,000 rounds (twice that) — about 2 s; full mode 20,000 rounds on
      0.85 to 0.95 by 0.005 (21 runs, about 100 s), which shows the
      windows 0.87, 0.885 and 0.89.

    Parameters
    ----------
    quick : bool, default=False
    nus : sequence of float, optional
        The grid (sorted here); default as described for ``quick``.
    n_rounds : int, optional
        Overrides the budget of ``quick``.
    verbose : bool, default=False
        Print a line per ν.
    column_order : sequence of int, optional
        A permutation of the matrix's columns (see :func:`rudin_margins`).

    Returns
    -------
    ThresholdCurves
        ``x`` is the grid; series ``"final margin"`` (after ``n_rounds``) and the margin
        after ``n_rounds // 10`` rounds; ``switch``, ``last_high``, ``first_low``,
        ``exceptions``.
    """
    start = time.perf_counter()
    n_rounds = _THRESHOLD_ROUNDS[bool(quick)] if n_rounds is None else int(n_rounds)
    grid = np.sort(np.asarray(_threshold_grid(bool(quick)) if nus is None else nus, float))
    gamma = max_margin(_rudin(column_order)).gamma
    early_t = max(1, n_rounds // 10)
    final, early = np.empty(len(grid)), np.empty(len(grid))
    if verbose:
        print(f"telgarsky2013-threshold: AdaBoost step, {n_rounds} rounds per ν", flush=True)
    for k, nu in enumerate(grid):
        t0 = time.perf_counter()
        margins, clf = rudin_margins(float(nu), n_rounds, column_order=column_order)
        if len(margins) != n_rounds:
            raise RuntimeError(f"ν = {nu}: stopped early ({clf.stop_reason_})")
        final[k], early[k] = margins[-1], margins[early_t - 1]
        if verbose:
            print(f"  ν = {nu:.4g}: margin {final[k]:.5f}  {time.perf_counter() - t0:.1f}s",
                  flush=True)
    high = np.abs(final - gamma) < np.abs(final - ADABOOST_LIMIT)
    last_high = first_low = switch = math.nan
    exceptions: tuple[float, ...] = ()
    if high.any() and not high[-1]:
        i = int(np.flatnonzero(high)[-1])
        last_high, first_low = float(grid[i]), float(grid[i + 1])
        switch = 0.5 * (last_high + first_low)
        exceptions = tuple(float(v) for v in grid[: i + 1][~high[: i + 1]])
    return ThresholdCurves(
        title=f"Telgarsky (2013): AdaBoost-step shrinkage threshold, Rudin matrix, "
              f"{n_rounds} rounds",
        xlabel="shrinkage ν",
        ylabel="ℓ1 margin",
        x=grid,
        series={f"margin at t = {early_t}": early, "final margin": final},
        reference={f"γ = {gamma:.4g} (LP max margin)": gamma, "1/3 (AdaBoost's limit)": 1 / 3},
        notes="The paper: 'experimentation reveals the threshold to be roughly 0.92'.",
        runtime=time.perf_counter() - start,
        mathtext={**_margin_mathtext(gamma), "shrinkage ν": r"shrinkage $\nu$",
                  "ℓ1 margin": r"$\ell_1$ margin",
                  f"margin at t = {early_t}": rf"margin at $t = {early_t}$"},
        switch=switch,
        last_high=last_high,
        first_low=first_low,
        exceptions=exceptions,
    )
