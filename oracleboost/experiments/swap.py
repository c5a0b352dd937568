"""Swap the weak learner: every booster × every hypothesis class on one task — **our
experiment, not in any paper**.

The library's promise is that a booster talks to its weak learners only through the
Oracle protocol, so the hypothesis class is one argument.  :func:`swap_weak_learner`
runs that promise as a grid:

* task: scikit-learn's bundled 8×8 digits as even vs odd (1797 × 64, pixel values
  0–16), one stratified 70/30 split (1257 train / 540 test rows, ``random_state``);
  the same arrays for every cell;
* boosters, each at its unshrunk step (ν = 1, so none is favoured by tuning):
  :class:`~oracleboost.boosters.CoordinateBoostingClassifier` (exponential loss,
  AdaBoost step), :class:`~oracleboost.boosters.MirrorBoostingClassifier` (MABoost,
  entropy map, standard variant), :class:`~oracleboost.boosters.
  FunctionalGradientClassifier` (logistic loss, naive projection, η = 1; it asks
  ``project`` where the class answers it, ``correlate`` otherwise) and
  :class:`~oracleboost.boosters.AcceleratedMarginClassifier` (Algorithm 1 of Ji, Srebro
  & Telgarsky 2021, exponential loss, θ = 1, default ``tol``) and
  :class:`~oracleboost.boosters.TotallyCorrectiveClassifier` (LPBoost: every
  coefficient re-solved each round; no step to shrink, so its one setting is the
  capping ν, a count of rows: :data:`LPBOOST_CAPPING` × the training rows, about
  126: about a tenth of the rows may violate the soft margin);
* hypothesis classes: ±1 decision stumps (:class:`~oracleboost.oracles.StumpOracle`),
  scikit-learn trees of depth 3 (:class:`~oracleboost.oracles.TreeOracle`), LightGBM
  trees with 8 leaves (:class:`~oracleboost.oracles.LightGBMOracle`), ``Ridge(alpha=1)``
  through :class:`~oracleboost.oracles.SklearnOracle`, 5-unit tanh nets
  (:class:`~oracleboost.oracles.MLPOracle`, L-BFGS, 200 iterations), linear coordinates
  (:class:`~oracleboost.oracles.LinearOracle`) and every stump as an explicit column
  (:class:`~oracleboost.oracles.MatrixOracle` of ±1 stumps at the midpoints between
  consecutive distinct training values, evaluated on the train and test rows: the
  stumps' class as a finite matrix, which the accelerated booster can use);
* a cell the booster cannot use is not skipped by us: the booster is fitted and its
  own capability check raises :class:`~oracleboost.oracles.OracleCapabilityError`,
  whose message is recorded as the reason ("not applicable").  Only the accelerated
  booster refuses anything: it needs the whole correlation vector Zᵀq (a finite class,
  ``capabilities.correlation_vector``), which only ``LinearOracle`` and ``MatrixOracle``
  give;
* measured per cell: the training loss ``history_["loss"][-1]`` (each booster's own
  objective, so comparable between classes under one booster only: AdaBoost and the
  accelerated booster the exponential risk, the functional booster the logistic risk,
  MABoost the 0-1 error of its vote with ties counted as errors), the training and test
  error, the ℓ1 margin ``history_["margin"][-1]`` (min_i y_i f(x_i) / Σ_t |α_t| max_i
  |h_t(x_i)|; the accelerated booster records the ℓ2 margin there, so its ℓ1 margin is computed from
  ``coef_`` with each column scaled to max |h| = 1 on the training rows, as the other
  boosters scale unbounded answers), and the time per round
  ``history_["cumulative_time"][-1] / rounds`` with ``rounds`` the rounds actually run;
* every cell runs on one thread (``threadpoolctl`` limits BLAS and OpenMP to 1,
  ``StumpOracle(n_jobs=1)``, LightGBM ``num_threads=1``): on 1257 rows threads do not
  pay, and on a shared 2-core machine two-thread pools made the time per round swing
  by 100× (LightGBM 0.3 → 300 ms, Ridge 1 → 50 ms, the MLP 45 → 700 ms) without changing
  a single result;
* output: :func:`swap_table` gives the cells as dicts; :func:`swap_weak_learner` (the
  registered ``swap-weak-learner``) returns a :class:`SwapCurves` — the test error by
  round of every class under AdaBoost and of each other booster's best class, every
  cell's test error and training loss by round in ``aux``, the whole table as text in
  ``notes`` (:func:`format_table`) and the cells themselves in ``table``.

Measured (``random_state=0``, every cell on one thread of a shared 2-core AMD EPYC;
full size: 300 rounds, 48–57 s and 12 s more for LPBoost; quick: 60 rounds, 10 s and
5 s more), test error at full size:

==================  ======  =====  ========  =====  =====  ======  ============
booster             stumps  trees  LightGBM  Ridge  MLP    linear  stump matrix
==================  ======  =====  ========  =====  =====  ======  ============
AdaBoost            0.087   0.013  0.022     0.106  0.017  0.102   0.087
MABoost             0.078   0.017  0.022     0.106  0.019  0.102   0.078
FunctionalGradient  0.085   0.041  0.033     0.104  0.028  0.106   0.100
AcceleratedMargin   n/a     n/a    n/a       n/a    n/a    0.106   0.069
LPBoost             0.076   0.031  0.030     0.296  0.067  0.504   0.076
==================  ======  =====  ========  =====  =====  ======  ============

Chance (always the majority training class) errs on 0.496 of the test rows.  What
swapping shows:

* the class matters far more than the booster: depth-3 trees, LightGBM trees and the
  nets reach 0.013–0.041 under every booster, the linear classes 0.10–0.11 under every
  booster, stumps 0.078–0.087.  In quick mode on each of seeds 0–9 every tree, LightGBM
  and MLP cell beats every ``StumpOracle`` cell of the same seed (by 0.009 at least);
  stumps against the linear classes changes from seed to seed.  The worst of the 23
  measured cells on any of those seeds errs on 0.170 (FunctionalGradient × linear);
* boosting ``Ridge`` is boosting a linear class — every vote of linear functions is
  linear — so its cells stop improving after about 20 rounds, at the linear classes'
  error (training error 0.069 for AdaBoost and MABoost alike);
* ``StumpOracle`` and the ``MatrixOracle`` of all stumps are the same class, and
  AdaBoost and MABoost give the same fit through either on seeds 0–3 and 5–9 of the
  quick runs.  Not on seed 4: in round 1 two stumps of feature 42 (thresholds 4.5 and
  5.5) have exactly the same edge, 0.5927, and the two oracles compute their inner
  products in different orders (a compiled kernel, a BLAS product), so rounding breaks
  the tie differently and the paths part (training loss 2% apart after 60 rounds).  The
  functional booster asks ``project``, where the two oracles are different classes
  (regression stumps with two free leaves against one scaled ±1 column), so its two
  stump cells differ on every seed (0.085 against 0.100);
* on the stump matrix the accelerated booster has the lowest test error of any stump
  cell (0.069) and separates the training set with ℓ1 margin 0.023, ten times
  AdaBoost's 0.002 after the same 300 rounds: it moves every column's weight each step
  (a dense vote), where the others add one stump a round;
* the time per round spans three orders of magnitude: 0.05–0.2 ms for the finite
  classes and stumps, 0.4–0.7 ms for LightGBM, 0.9–1.5 ms for Ridge, 4–7 ms for depth-3
  trees and 42–57 ms for the nets (each query trains an MLP by L-BFGS);
* every cell of the corrective boosters ran its whole budget (no early stop); LPBoost
  closed its certificate's gap (``gap_closed``: no hypothesis of the class has an edge
  above the restricted LP's value) in every class, after 221 rounds on stumps, 59 on
  trees, 182 on LightGBM trees, 2 on nets, 57 on Ridge fits and 58 on coordinates.  On
  the stumps its vote errs on 0.076 of the test rows, below every other booster's stump
  cell;
* LPBoost's cells on the two linear classes are poor (0.296 Ridge) or at chance (0.504
  linear): there the soft-margin optimum at ν = N/10 is 0, certified over the whole
  class by the closed gap, and a vote whose margins are all 0 (a hypothesis and its
  negation: ``margin`` NaN, the zero vote) is an optimal vertex; which optimal vertex
  HiGHS returns depends on how the LP is written (with its rows written by offsets only,
  Ridge's cell erred on 0.444).  A soft margin that lets half the rows violate (ν = N/2)
  gives them 0.119 and 0.170, but stops the stumps after 29 rounds at 0.213 (quick mode,
  seed 0).  Seeds 0–2 of quick mode give the same picture (the linear classes' LP value
  0, every other LPBoost cell at 0.107 or below);

The MLP's L-BFGS path depends on the BLAS kernels of the CPU: in quick mode on seeds
0–9, OpenBLAS's SkylakeX kernels move the MLP cells' test errors by up to 0.019 from
the Haswell kernels' (used for the numbers above), and the other cells only in the last
digits of their losses.  A fit that meets an exact tie between hypotheses (above) may
also part differently on another machine; everything else is deterministic given
``random_state``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from oracleboost.boosters import BOOSTERS as REGISTRY
from oracleboost.boosters import AcceleratedMarginClassifier
from oracleboost.experiments.base import Curves
from oracleboost.experiments.naghibi2014 import load_binary
from oracleboost.oracles import (
    LightGBMOracle,
    LinearOracle,
    MatrixOracle,
    MLPOracle,
    OracleCapabilityError,
    SklearnOracle,
    StumpOracle,
    TreeOracle,
)

__all__ = [
    "BOOSTERS",
    "CLASSES",
    "MEASURED",
    "NOT_APPLICABLE",
    "SwapCurves",
    "stump_matrix",
    "swap_table",
    "swap_weak_learner",
    "format_table",
]

#: Booster labels, in table order.
BOOSTERS = ("AdaBoost", "MABoost", "FunctionalGradient", "AcceleratedMargin", "LPBoost")

#: Hypothesis-class labels, in table order.
CLASSES = ("stumps", "trees", "LightGBM", "Ridge", "MLP", "linear", "stump matrix")

#: Short booster names of the figure's legend.
_SHORT = {"AdaBoost": "AdaBoost", "MABoost": "MABoost", "FunctionalGradient": "FGB",
          "AcceleratedMargin": "Accel.", "LPBoost": "LPBoost"}

#: ``status`` of a cell.
MEASURED = "measured"
NOT_APPLICABLE = "not applicable"

_ROUNDS = {True: 60, False: 300}  # quick, full

def _booster_text(name: str) -> str:
    """How the summary names a booster: its registry entry, with the experiment's ν = 1
    (LPBoost's capping ν from the training rows)."""
    key, unshrunk = _REGISTRY_NAMES[name]
    spec = REGISTRY[key]
    params = {**spec.params, **unshrunk}
    text = ", ".join(f"{k}={v!r}" for k, v in params.items() if k != "nu" or name != "LPBoost")
    if name == "LPBoost":  # its ν is the capping, set from the training rows
        text += f", nu={LPBOOST_CAPPING:g} × the training rows"
    return f"{spec.estimator.__name__}({text})"


_CLASS_TEXT = {
    "stumps": "StumpOracle(n_jobs=1)",
    "trees": "TreeOracle(max_depth=3)",
    "LightGBM": "LightGBMOracle(num_leaves=8, num_threads=1)",
    "Ridge": "SklearnOracle(Ridge(alpha=1.0))",
    "MLP": "MLPOracle() (5 tanh units, L-BFGS, max_iter=200)",
    "linear": "LinearOracle()",
    "stump matrix": "MatrixOracle(H), H = every ±1 stump at the training midpoints",
}

_LOSS_TEXT = {
    "AdaBoost": "exponential risk",
    "MABoost": "0-1 error of the vote (ties as errors)",
    "FunctionalGradient": "logistic risk",
    "AcceleratedMargin": "exponential risk",
    "LPBoost": "share of rows at vote margin ≤ 0",
}


@dataclass(frozen=True)
class SwapCurves(Curves):
    """:class:`~oracleboost.experiments.base.Curves` with the cells they were drawn from.

    Attributes
    ----------
    table : tuple of dict
        The rows of :func:`swap_table` (one per booster × class cell, booster-major),
        whose scalars do not fit ``aux`` (per-round arrays only); ``notes`` prints them.
    """

    table: tuple[dict, ...] = ()


def stump_matrix(X_train: np.ndarray, X_other: np.ndarray) -> np.ndarray:
    """Every ±1 stump of the training data as a column, on the training rows then the others.

    Column ``(j, θ)`` is ``+1`` where ``x_j > θ`` and ``−1`` elsewhere, for every feature j
    and every midpoint θ between consecutive distinct values of feature j in
    ``X_train`` (constant features give none).  Negations are not listed: a
    :class:`~oracleboost.oracles.MatrixOracle` is closed under negation.

    Parameters
    ----------
    X_train : ndarray of shape (n_train, d)
        Where the thresholds come from (no labels are used).
    X_other : ndarray of shape (n_other, d)
        Further rows (the test set), evaluated on the same stumps.

    Returns
    -------
    H : ndarray of shape (n_train + n_other, n_stumps)
        Rows ``0, …, n_train − 1`` are the training rows; the rest follow in order.
    """
    X_all = np.vstack([X_train, X_other])
    columns = []
    for j in range(X_train.shape[1]):
        values = np.unique(X_train[:, j])
        for theta in (values[:-1] + values[1:]) / 2.0:
            columns.append(np.where(X_all[:, j] > theta, 1.0, -1.0))
    if not columns:
        raise ValueError("every training feature is constant: there is no stump")
    return np.column_stack(columns)


def _classes(X_tr: np.ndarray, X_te: np.ndarray, names: Sequence[str]):
    """label -> (oracle, training X, test X) for the cells' hypothesis classes."""
    from sklearn.linear_model import Ridge

    out = {}
    for name in names:
        if name == "stump matrix":
            rows_tr = np.arange(X_tr.shape[0])[:, None]
            rows_te = np.arange(X_tr.shape[0], X_tr.shape[0] + X_te.shape[0])[:, None]
            out[name] = (MatrixOracle(stump_matrix(X_tr, X_te)), rows_tr, rows_te)
            continue
        oracle = {
            "stumps": lambda: StumpOracle(n_jobs=1),
            "trees": lambda: TreeOracle(max_depth=3),
            "LightGBM": lambda: LightGBMOracle(num_leaves=8, params={"num_threads": 1}),
            "Ridge": lambda: SklearnOracle(Ridge(alpha=1.0)),
            "MLP": lambda: MLPOracle(),
            "linear": lambda: LinearOracle(),
        }[name]()
        out[name] = (oracle, X_tr, X_te)
    return out


#: The experiment's boosters: one per paper, taken from the registry
#: (:data:`oracleboost.boosters.BOOSTERS`), each at its unshrunk step ν = 1.
_REGISTRY_NAMES = {
    "AdaBoost": ("adaboost", {}),
    "MABoost": ("maboost", {}),
    "FunctionalGradient": ("gradient-logistic", {"learning_rate": 1.0}),
    "AcceleratedMargin": ("accelerated", {}),
    "LPBoost": ("lpboost", {}),
}

#: LPBoost's capping, as a share of the training rows (its ``nu`` counts rows): the
#: soft margin lets about this share of the rows violate it.
LPBOOST_CAPPING = 0.1


def _booster(name: str, oracle, n_estimators: int, random_state: int, n_rows: int):
    if name not in _REGISTRY_NAMES:
        raise ValueError(f"booster must be one of {BOOSTERS}; got {name!r}")
    key, unshrunk = _REGISTRY_NAMES[name]
    if name == "LPBoost":
        unshrunk = {**unshrunk, "nu": LPBOOST_CAPPING * n_rows}
    return REGISTRY[key].make(oracle, n_estimators=n_estimators, random_state=random_state,
                              **unshrunk)


def _padded(values, length: int) -> np.ndarray:
    """Per-round values extended to ``length`` with the last one (a fit that stopped early
    keeps its model); NaN throughout when there are none."""
    values = np.asarray(list(values), dtype=float)
    out = np.full(length, np.nan)
    if values.size:
        out[: values.size] = values[:length]
        out[values.size:] = values[-1]
    return out


def _accelerated_l1_margin(clf: AcceleratedMarginClassifier, X_tr, y_tr) -> float:
    """``min_i y_i f(x_i) / Σ_j |c_j| max_i |h_j(x_i)|`` of the accelerated booster's linear
    model (its ``history_["margin"]`` is the ℓ2 margin)."""
    H = np.column_stack([h.predict(X_tr) for h in clf.estimators_])
    weight = float(np.sum(np.abs(clf.coef_) * np.max(np.abs(H), axis=0)))
    if not weight > 0:
        return math.nan
    a = np.where(y_tr == clf.classes_[1], 1.0, -1.0)
    return float(np.min(a * clf.decision_function(X_tr)) / weight)


def _cell(booster: str, cls: str, oracle, A_tr, A_te, y_tr, y_te, T: int,
          random_state: int) -> dict:
    row = {"booster": booster, "hypothesis_class": cls, "oracle": _CLASS_TEXT[cls],
           "loss_name": _LOSS_TEXT[booster]}
    clf = _booster(booster, oracle, T, random_state, len(y_tr))
    start = time.perf_counter()
    try:
        clf.fit(A_tr, y_tr)
    except OracleCapabilityError as exc:  # the library's own check decides
        nan = math.nan
        row.update(status=NOT_APPLICABLE, reason=str(exc), rounds=0, stop_reason="",
                   train_loss=nan, train_error=nan, test_error=nan, margin=nan, lp_value=nan,
                   time_per_round=nan, fit_seconds=time.perf_counter() - start,
                   test_error_by_round=np.full(T, nan), loss_by_round=np.full(T, nan))
        return row
    fit_seconds = time.perf_counter() - start
    h = clf.history_
    rounds = len(h["loss"])
    staged = [float(np.mean(pred != y_te)) for pred in clf.staged_predict(A_te)]
    if booster == "AcceleratedMargin":
        margin = _accelerated_l1_margin(clf, A_tr, y_tr)
    else:
        margin = float(h["margin"][-1]) if rounds else math.nan
    row.update(
        status=MEASURED,
        reason="",
        rounds=rounds,
        stop_reason=str(clf.stop_reason_),
        train_loss=float(h["loss"][-1]),
        train_error=float(np.mean(clf.predict(A_tr) != y_tr)),
        test_error=float(np.mean(clf.predict(A_te) != y_te)),
        margin=margin,
        lp_value=float(h["lp_value"][-1]) if "lp_value" in h else math.nan,
        time_per_round=float(h["cumulative_time"][-1]) / rounds,
        fit_seconds=fit_seconds,
        test_error_by_round=_padded(staged, T),
        loss_by_round=_padded(h["loss"], T),
    )
    return row


def _check_names(given, allowed, what):
    names = tuple(allowed) if given is None else tuple(given)
    bad = [n for n in names if n not in allowed]
    if not names or bad:
        raise ValueError(f"{what} must be a non-empty selection of {allowed}; got {given!r}")
    return names


def swap_table(quick: bool = False, *, random_state: int = 0, dataset: str = "digits_parity",
               n_estimators: int | None = None, boosters: Sequence[str] | None = None,
               classes: Sequence[str] | None = None, verbose: bool = False) -> list[dict]:
    """Fit every booster on every hypothesis class; one dict per cell (booster-major).

    Parameters
    ----------
    quick : bool, default=False
        60 rounds instead of 300 (every class and booster either way).
    random_state : int, default=0
        Seeds the stratified split and every booster (hence every oracle query).
    dataset : {"digits_parity", "breast_cancer"}, default="digits_parity"
        See :func:`oracleboost.experiments.naghibi2014.load_binary`.
    n_estimators : int, optional
        Overrides the round budget of ``quick``.
    boosters, classes : sequence of str, optional
        Subsets of :data:`BOOSTERS` and :data:`CLASSES` (default: all).
    verbose : bool, default=False
        Print one line per cell.

    Returns
    -------
    list of dict
        Keys: ``booster``, ``hypothesis_class``, ``oracle`` (how it was built),
        ``status`` (:data:`MEASURED` or :data:`NOT_APPLICABLE`), ``reason`` (the
        ``OracleCapabilityError`` message; "" when measured), ``rounds`` (run),
        ``stop_reason``, ``loss_name``, ``train_loss`` (``history_["loss"][-1]``),
        ``train_error``, ``test_error``, ``margin`` (ℓ1; NaN for the zero vote, whose
        Σ |α_t| is 0), ``lp_value`` (LPBoost's restricted soft-margin optimum
        ``history_["lp_value"][-1]``; NaN for the others), ``time_per_round`` (seconds),
        ``fit_seconds`` (the whole ``fit``), ``test_error_by_round`` and
        ``loss_by_round`` (arrays of length ``n_estimators``, padded with the last value
        after an early stop).  Numbers are NaN for cells not applicable.
    """
    from threadpoolctl import threadpool_limits

    T = _ROUNDS[bool(quick)] if n_estimators is None else int(n_estimators)
    if T < 1:
        raise ValueError(f"n_estimators must be at least 1; got {n_estimators}")
    boosters = _check_names(boosters, BOOSTERS, "boosters")
    classes = _check_names(classes, CLASSES, "classes")
    X_tr, X_te, y_tr, y_te = load_binary(dataset, random_state=random_state)
    rows = []
    with threadpool_limits(1):
        spec = _classes(X_tr, X_te, classes)
        for b in boosters:
            for c in classes:
                oracle, A_tr, A_te = spec[c]
                row = _cell(b, c, oracle, A_tr, A_te, y_tr, y_te, T, random_state)
                rows.append(row)
                if verbose:
                    print(_row_text(row), flush=True)
    return rows


# -- text ---------------------------------------------------------------------------------

_HEAD = ("booster", "class", "rounds", "stop", "train loss", "train err", "test err",
         "ℓ1 margin", "ms/round")
_WIDTHS = (18, 12, 6, 10, 10, 9, 8, 9, 9)


def _row_text(row: dict) -> str:
    if row["status"] == NOT_APPLICABLE:
        return f"{row['booster']:<18} {row['hypothesis_class']:<12} {'—':>6} " \
               f"{NOT_APPLICABLE} (reason below)"
    cells = (
        f"{row['booster']:<18}", f"{row['hypothesis_class']:<12}", f"{row['rounds']:>6d}",
        f"{row['stop_reason']:<10}", f"{row['train_loss']:>10.4g}",
        f"{row['train_error']:>9.4f}", f"{row['test_error']:>8.4f}",
        f"{row['margin']:>9.4f}", f"{1e3 * row['time_per_round']:>9.3g}",
    )
    return " ".join(cells)


def format_table(rows: Sequence[dict]) -> str:
    """The cells as text: a booster × class grid of test errors, then one line per cell
    (all measurements), then the reason of every cell not applicable."""
    boosters = list(dict.fromkeys(r["booster"] for r in rows))
    classes = list(dict.fromkeys(r["hypothesis_class"] for r in rows))
    by = {(r["booster"], r["hypothesis_class"]): r for r in rows}
    cw = max(8, *(len(c) for c in classes))
    lines = ["test error (booster × class; n/a = not applicable):",
             f"{'':<18} " + " ".join(f"{c:>{cw}}" for c in classes)]
    for b in boosters:
        vals = []
        for c in classes:
            r = by.get((b, c))
            vals.append("" if r is None else "n/a" if r["status"] == NOT_APPLICABLE
                        else f"{r['test_error']:.4f}")
        lines.append(f"{b:<18} " + " ".join(f"{v:>{cw}}" for v in vals))
    lines.append("every cell (train loss = the booster's history_['loss'][-1]: "
                 + "; ".join(f"{b} {_LOSS_TEXT[b]}" for b in boosters) + "):")
    lines.append(" ".join(f"{h:<{w}}" if i < 2 or i == 3 else f"{h:>{w}}"
                          for i, (h, w) in enumerate(zip(_HEAD, _WIDTHS, strict=True))))
    lines.extend(_row_text(r) for r in rows)
    na = [r for r in rows if r["status"] == NOT_APPLICABLE]
    if na:
        lines.append("not applicable (the booster's OracleCapabilityError):")
        lines.extend(f"  {r['booster']} × {r['hypothesis_class']}: {r['reason']}" for r in na)
    return "\n".join(lines)


def _best(rows: Sequence[dict], booster: str) -> dict | None:
    measured = [r for r in rows if r["booster"] == booster and r["status"] == MEASURED]
    return min(measured, key=lambda r: r["test_error"]) if measured else None


def _findings(rows: Sequence[dict], chance: float) -> list[str]:
    """What the table shows, computed from it (not written in advance)."""
    lines = []
    measured = [r for r in rows if r["status"] == MEASURED]
    if not measured:
        return lines
    best = min(measured, key=lambda r: r["test_error"])
    worst = max(measured, key=lambda r: r["test_error"])
    lines.append(f"lowest test error {best['test_error']:.4f} ({best['booster']} × "
                 f"{best['hypothesis_class']}); highest {worst['test_error']:.4f} "
                 f"({worst['booster']} × {worst['hypothesis_class']}); chance "
                 f"(majority training class) {chance:.4f}.")
    per_booster = []
    for b in dict.fromkeys(r["booster"] for r in rows):
        r = _best(rows, b)
        if r is not None:
            per_booster.append(f"{b} {r['hypothesis_class']} ({r['test_error']:.4f})")
    lines.append("best class per booster: " + ", ".join(per_booster) + ".")
    slow = max(measured, key=lambda r: r["time_per_round"])
    fast = min(measured, key=lambda r: r["time_per_round"])
    lines.append(f"time per round from {1e3 * fast['time_per_round']:.3g} ms "
                 f"({fast['booster']} × {fast['hypothesis_class']}) to "
                 f"{1e3 * slow['time_per_round']:.3g} ms ({slow['booster']} × "
                 f"{slow['hypothesis_class']}).")
    by = {(r["booster"], r["hypothesis_class"]): r for r in measured}
    for b in ("AdaBoost", "MABoost", "FunctionalGradient"):
        s, m = by.get((b, "stumps")), by.get((b, "stump matrix"))
        if s is None or m is None:
            continue
        same = math.isclose(s["train_loss"], m["train_loss"], rel_tol=1e-9, abs_tol=1e-12)
        lines.append(
            f"{b}: StumpOracle and MatrixOracle(all stumps) give training loss "
            f"{s['train_loss']:.6g} and {m['train_loss']:.6g}, test error "
            f"{s['test_error']:.4f} and {m['test_error']:.4f}"
            + (" (the same class, the same fit)." if same else
               " (different fits: project asks StumpOracle for a regression stump with two "
               "free leaves, MatrixOracle for one scaled ±1 column)."
               if b == "FunctionalGradient" else
               " (the same class, different fits: where two stumps tie exactly, the oracles' "
               "different summation orders break the tie differently)."))
    early = [r for r in measured if r["stop_reason"] != "max_rounds"]
    if early:
        lines.append("stopped before the budget (curves padded with the last value): "
                     + ", ".join(f"{r['booster']} × {r['hypothesis_class']} after "
                                 f"{r['rounds']} ({r['stop_reason']})" for r in early) + ".")
    return lines


def swap_weak_learner(quick: bool = False, *, random_state: int = 0,
                      dataset: str = "digits_parity", n_estimators: int | None = None,
                      verbose: bool = False) -> SwapCurves:
    """Our "swap the weak learner" experiment (in no paper): every booster × every class.

    See the module docstring for the design and the measured table.  The cells come from
    :func:`swap_table`; the figure shows the test error by round of every class under
    AdaBoost and, for each other booster, of its best class (lowest final test error).

    Parameters
    ----------
    quick : bool, default=False
        60 rounds instead of 300; every booster and every class either way.
    random_state : int, default=0
        Seeds the split and every booster.
    dataset : {"digits_parity", "breast_cancer"}, default="digits_parity"
    n_estimators : int, optional
        Overrides the round budget of ``quick``.
    verbose : bool, default=False
        Print one line per cell as it finishes.

    Returns
    -------
    SwapCurves
        A :class:`Curves` whose ``table`` holds the rows of :func:`swap_table`.
        x = round ``1, …, T``; series ``"AdaBoost <class>"`` for every class (a curve
        identical to one already drawn, such as the stump matrix's to the stumps', is
        left out and named in the notes) and ``"<booster>* <class>"`` for the best class
        of each other booster (short names MABoost, FGB, Accel.), all test error;
        ``reference`` the chance level; ``aux`` ``"test error: <booster> · <class>"`` and ``"train
        loss: <booster> · <class>"`` for every measured cell (per round, padded after
        an early stop); ``notes`` the whole booster × class table
        (:func:`format_table`) and what it shows.
    """
    start = time.perf_counter()
    T = _ROUNDS[bool(quick)] if n_estimators is None else int(n_estimators)
    rows = swap_table(quick, random_state=random_state, dataset=dataset, n_estimators=T,
                      verbose=verbose)
    X_tr, X_te, y_tr, y_te = load_binary(dataset, random_state=random_state)
    majority = np.bincount(y_tr).argmax()
    chance = float(np.mean(y_te != majority))
    series: dict[str, np.ndarray] = {}
    hidden = []
    for r in rows:
        if r["booster"] == "AdaBoost" and r["status"] == MEASURED:
            curve = r["test_error_by_round"]
            twin = next((k for k, v in series.items() if np.array_equal(v, curve)), None)
            if twin is not None:  # e.g. the stump matrix: the stumps' curve exactly
                hidden.append(f"AdaBoost {r['hypothesis_class']} (= {twin})")
                continue
            series[f"AdaBoost {r['hypothesis_class']}"] = curve
    for b in BOOSTERS[1:]:
        r = _best(rows, b)
        if r is not None:
            series[f"{_SHORT[b]}* {r['hypothesis_class']}"] = r["test_error_by_round"]
    aux: dict[str, np.ndarray] = {}
    for r in rows:
        if r["status"] == MEASURED:
            cell = f"{r['booster']} · {r['hypothesis_class']}"
            aux[f"test error: {cell}"] = r["test_error_by_round"]
            aux[f"train loss: {cell}"] = r["loss_by_round"]
    runtime = time.perf_counter() - start
    name = {"digits_parity": "digits even vs odd", "breast_cancer": "breast cancer"}[dataset]
    n_na = sum(r["status"] == NOT_APPLICABLE for r in rows)
    head = [
        f"OUR experiment, not in any paper: swap the weak learner. {name}: "
        f"{len(y_tr)} train / {len(y_te)} test rows (stratified split, "
        f"random_state={random_state}); {T} rounds{' (quick)' if quick else ''}, every "
        f"corrective booster at its unshrunk step ν = 1 (LPBoost, totally corrective, "
        f"has no step: its ν is the capping, {LPBOOST_CAPPING:g} × the training rows), "
        f"every class in both modes, one thread per cell; "
        f"{len(rows) - n_na} cells measured, {n_na} not applicable (the booster's "
        f"OracleCapabilityError).",
        "boosters: " + "; ".join(f"{b} = {_booster_text(b)}" for b in BOOSTERS) + ".",
        "classes: " + "; ".join(f"{c} = {_CLASS_TEXT[c]}" for c in CLASSES) + ".",
        "ℓ1 margin = min_i y_i f(x_i) / Σ_t |α_t| max_i |h_t(x_i)| (history_['margin'][-1]; "
        "for AcceleratedMargin, whose history holds the ℓ2 margin, computed from coef_); "
        "ms/round = history_['cumulative_time'][-1] / rounds run.",
    ]
    if hidden:
        head.append("not drawn, identical to a drawn curve: " + ", ".join(hidden) + ".")
    notes = "\n".join([*head, format_table(rows), *_findings(rows, chance),
                       f"(runtime {runtime:.1f}s)"])
    return SwapCurves(
        title=(f"OUR experiment (in no paper): swap the weak learner — {name}, {T} rounds; "
               f"test error of every class under AdaBoost and of each other booster's "
               f"best class (*; FGB = FunctionalGradient, Accel. = AcceleratedMargin)"),
        xlabel="round",
        ylabel="test error",
        x=np.arange(1, T + 1, dtype=float),
        series=series,
        reference={"chance (majority class)": chance},
        notes=notes,
        yscale="log",
        ylim=(0.005, 0.7),
        aux=aux,
        runtime=runtime,
        table=tuple(rows),
    )
