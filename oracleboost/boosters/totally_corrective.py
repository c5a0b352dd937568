"""Totally corrective boosting: column generation over any oracle (LPBoost).

Corrective boosters add one hypothesis a round and never revisit earlier
coefficients.  Totally corrective ones re-solve every coefficient each round over the
hypotheses chosen so far: column generation, whose pricing step is the oracle's
``correlate``.  This module has LPBoost (Demiriz, Bennett & Shawe-Taylor, *Linear
programming boosting via column generation*, Machine Learning 46, 2002).

Notation: N rows, labels ±1, sample weights ``s`` (``c_i = s_i / s̄``), the column of a
hypothesis ``u_j = y ∘ h_j(X) / ‖h_j‖`` in [−1, 1] (the class taken closed under
negation: the sign that makes its edge positive), its edge under a distribution d,
``d · u_j``, and the capping ``ν ∈ [1, N]``: ``d_i ≤ c_i / ν``.  LPBoost, one round::

    h_t = the oracle's answer to correlate(d_{t−1} ∘ y)          (pricing)
    edge_t = d_{t−1} · u_t
    if edge_t ≤ γ_{t−1} + tol: stop ("gap_closed")
    add the column u_t;  solve the restricted LP (soft_margin_lp):
        (w_t, ρ_t) = argmax ρ − (1/ν) Σ_i c_i ξ_i  s.t.  Σ_j w_j u_ij ≥ ρ − ξ_i,
                     w on the simplex, ξ ≥ 0
        (d_t, γ_t) = its dual: min γ s.t. d · u_j ≤ γ ∀ j, d on the capped simplex
    f_t = Σ_j w_tj · sign_j h_j / ‖h_j‖

with ``d_0 = c / Σ c`` (uniform for unweighted rows) and ``γ_0 = −∞``.

**Certificate.**  Over the whole class, the soft-margin optimum ``P*`` satisfies
``γ_{t−1} ≤ P* ≤ edge_t``: the restricted LP's optimum can only grow with more columns
(lower bound), and ``d_{t−1}`` is feasible for the full dual, whose value there is the
best edge of any hypothesis (upper bound; exact when the oracle answers exactly, as
``StumpOracle`` and ``MatrixOracle`` do).  ``history_["lp_value"]`` is γ_t (after the
round's solve; γ_t ≥ γ_{t−1} is a lower bound too), ``history_["upper_bound"]`` the
least edge_s so far and ``history_["gap"]`` their difference.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions

from .._blocks import DEFAULT_BLOCK_SIZE, RowBlocks
from .._cluster import NotDistributedError, is_dask_collection
from .._typing import ArrayLike, RandomStateLike
from ..oracles.base import Oracle
from . import row_passes
from .base import BaseBooster, data_signature, fit_context
from .classifier import (
    ScoreClassifierMixin,
    SignedColumn,
    classification_data,
    predicted_index,
    weighted_error,
)
from .model import Refit
from .monitors import Divergence
from .rounds import Problem, RoundResult, StopReason, draw_seed, seed_generator
from .soft_margin_lp import LPSolveError, SoftMarginLP
from .validation import documented, eval_parameters_doc

__all__ = ["TotallyCorrectiveClassifier", "METHODS"]

METHODS = ("lpboost",)


@dataclass
class _Problem(Problem):
    y: np.ndarray  # ±1
    s: np.ndarray  # the rows' weights (normalised: mean in [1, 2))
    s_total: float
    cost: np.ndarray  # c_i = s_i / s̄
    bound: object
    bounded: bool
    blocks: RowBlocks


@dataclass(frozen=True)
class _State:
    """Between rounds: the restricted LP (its columns, and HiGHS's model), the current
    dual distribution and value, the columns' signs and norms, and the seeds."""

    lp: SoftMarginLP
    d: np.ndarray  # d_{t−1}
    gamma: float  # γ_{t−1} (−inf before the first solve)
    upper: float  # the least best edge seen: an upper bound on the full LP's optimum
    held: tuple  # the ensemble's hypotheses' training outputs and max |h|, in its order
    factors: tuple  # each column's coefficient per unit weight, on its ensemble hypothesis
    slots: tuple  # each column's hypothesis' index in the ensemble
    seen: frozenset  # (key, orientation) of the columns: a column is added once
    rng: np.random.RandomState

    def lp_as_left(self) -> SoftMarginLP:
        """The LP with this state's columns only.  The LP is shared by the states of
        one fit, so a round that added a column and then did not become the state (the
        loop discarded it, an interrupt, a solver failure, early stopping's return to
        an earlier round) left a column too many: taken out here."""
        self.lp.truncate(len(self.factors))
        return self.lp


@documented(
    "validation_tol", " (scikit-learn's ``tol``; here ``tol`` is the certificate's gap)"
)
class TotallyCorrectiveClassifier(ScoreClassifierMixin, ClassifierMixin, BaseBooster):
    """Totally corrective boosting by column generation (LPBoost; Demiriz, Bennett &
    Shawe-Taylor 2002), over any oracle that answers ``correlate``.

    Each round the oracle prices a new hypothesis under the dual distribution, and the
    soft-margin LP over every hypothesis so far is solved again (HiGHS, warm-started
    from the last basis): every coefficient changes each round.  Stops when no
    hypothesis has an edge above the restricted LP's value (the certificate's gap
    below ``tol``).  See the module docstring for the algorithm box and the
    certificate.  Binary labels.

    Parameters
    ----------
    oracle : Oracle, default=None
        Any class that answers ``correlate`` (``None``: ``StumpOracle()``).  The
        certificate's upper bound is exact when the oracle's answer is the best
        hypothesis of its class.
    method : {"lpboost"}, default="lpboost"
        The algorithm (ERLPBoost, SoftBoost and TotalBoost are to come).
    nu : float, default=1.0
        The capping ``ν``, as a count in ``[1, N]`` (N the rows of positive weight):
        ``d_i ≤ c_i / ν``, so at most about ν rows may violate the soft margin.  1 is
        the hard margin.
    tol : float, default=1e-6
        Stop (``"gap_closed"``) when the best edge exceeds the restricted LP's value by
        at most this much.
    n_estimators : int, default=100
        The round budget (each round adds at most one hypothesis).
    random_state : int, RandomState instance or None, default=None
        Seeds the oracle's queries.
    verbose : int, default=0
    n_jobs : int or None, default=None
        Threads of the passes over the rows (the answer does not depend on it).
    block_size : int, default=65536
    warm_start : bool, default=False
        Continue column generation from the fitted model (the LP is built again from
        its columns, then warm-started as before).
    <early stopping parameters>
    <importance parameters>

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    ensemble_ : Ensemble
        The hypotheses and their coefficients, set anew each round (``Refit``).
    history_ : dict of ndarray
        Per round: ``loss`` (the weighted mean of ``(1 − y f) / 2`` on the training
        rows: the error of the randomized vote that draws column j with probability
        ``w_j``; LPBoost does not minimise it, and it may rise), ``lp_value``
        (γ_t, a lower bound on the full LP's optimum P*), ``edge`` (the new hypothesis'
        edge under d_{t−1}), ``upper_bound`` (the least such edge so far: P* is at most
        it when the oracle is exact), ``gap`` (upper_bound − lp_value), ``margin`` (the
        ℓ1 margin of f_t), ``train_error``, ``step`` (the new column's weight),
        ``n_nonzero`` (columns with positive weight), ``solver_time`` and
        ``solver_iterations``, ``time``.  An eval set's ``val_loss_i`` is the same
        randomized vote's error on it.
    lp_value_, upper_bound_ : float
        The certificate as the fit ends: ``lp_value_ ≤ P* ≤ upper_bound_``, the upper
        bound including the stopping round's pricing (whose hypothesis did not enter).
    stop_reason_ : StopReason
        ``"gap_closed"``, ``"max_rounds"``, ``"solver_failed"`` (the last good model
        kept), ``"zero_hypothesis"``, or the early-stopping and interruption reasons.
    <validation attributes>

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from oracleboost.boosters import TotallyCorrectiveClassifier
    >>> X, y = make_classification(200, 5, random_state=0)
    >>> model = TotallyCorrectiveClassifier(nu=10, n_estimators=200).fit(X, y)
    >>> str(model.stop_reason_)
    'gap_closed'
    >>> bool(model.upper_bound_ - model.lp_value_ <= model.tol)
    True
    """

    _parameter_constraints: dict = {
        **BaseBooster._parameter_constraints,
        "method": [StrOptions(set(METHODS))],
        "nu": [Interval(Real, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_jobs": [Integral, None],
        "block_size": [Interval(Integral, 1, None, closed="left")],
        "validation_tol": [Interval(Real, 0, None, closed="left")],
    }
    _parameter_constraints.pop("learning_rate", None)

    def __init__(
        self,
        oracle: Oracle | None = None,
        method: str = "lpboost",
        nu: float = 1.0,
        tol: float = 1e-6,
        n_estimators: int = 100,
        random_state: RandomStateLike = None,
        verbose: int = 0,
        n_jobs: int | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        warm_start: bool = False,
        n_iter_no_change: int | None = None,
        validation_fraction: float | None = 0.1,
        validation_tol: float = 1e-4,
        importance_type: str = "weight",
    ) -> None:
        self.oracle = oracle
        self.method = method
        self.nu = nu
        self.tol = tol
        self.n_estimators = n_estimators
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.block_size = block_size
        self.warm_start = warm_start
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.validation_tol = validation_tol
        self.importance_type = importance_type

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary labels (multiclass: to come)
        return tags

    @fit_context
    @eval_parameters_doc
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        eval_set: Sequence[tuple[ArrayLike, ArrayLike]] | None = None,
        eval_sample_weight: Sequence[ArrayLike | None] | None = None,
        eval_metric: str | Callable | Sequence | dict | None = None,
        eval_names: Sequence[str] | None = None,
    ) -> TotallyCorrectiveClassifier:
        """Fit by column generation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Each row's weight in the soft margin's slack cost (``c_i = s_i / s̄``).
        eval_set : list of (X, y) pairs, default=None
            Sets whose loss and error are recorded after every round, as
            ``history_["val_loss_0"]``, ``history_["val_error_0"]``, …
            In a ``Pipeline`` (with metadata routing) the sets reach the booster as
            given, not through the steps before it, as LightGBM's do: their curves are
            then those of untransformed rows.  Transform them first, or hold out rows
            with ``validation_fraction`` (split after the steps).
        eval_sample_weight : list of array-like or None, default=None
            The weights of each eval set's loss and error.
        <eval parameters>
        """
        self._fit_rounds(X, y, sample_weight, eval_set=eval_set,
                         eval_rows=eval_sample_weight, eval_metric=eval_metric,
                         eval_names=eval_names)
        # the certificate as the fit ends: the last LP's value, and the least best edge
        # of every pricing (the stopping one's included)
        self._state_.lp_as_left()
        self.lp_value_ = float(self._state_.gamma)
        self.upper_bound_ = float(self._state_.upper)
        return self

    def _early_stopping_tol(self) -> float:
        return float(self.validation_tol)

    # -- the problem ---------------------------------------------------------------------
    def _setup(self, X, y, sample_weight) -> _Problem:
        if is_dask_collection(X):
            raise NotDistributedError(
                "TotallyCorrectiveClassifier solves its LP over every row in one process: "
                "fit it on a NumPy array"
            )
        data = classification_data(self, X, y, sample_weight, binary=True)
        ypm = data.signs()
        n = ypm.shape[0]
        if self.nu > n:
            raise ValueError(
                f"nu={self.nu!r} exceeds the {n} rows of positive weight: the capped "
                "simplex d_i <= c_i/nu is then empty"
            )
        blocks = RowBlocks(n, self.block_size, self.n_jobs)
        s = data.s
        s_total = row_passes.total(blocks, s)
        cost = s / (s_total / n)
        bound = self._bind(data.X, "correlate")
        return _Problem(signature=data_signature(data.X, ypm, s), y=ypm, s=s,
                        s_total=s_total, cost=cost, bound=bound,
                        bounded=bound.capabilities.bounded, blocks=blocks)

    def _history_keys(self, problem: _Problem) -> tuple[str, ...]:
        return ("loss", "lp_value", "edge", "upper_bound", "gap", "margin", "train_error", "step",
                "n_nonzero", "solver_time", "solver_iterations", "time")

    def _initial_state(self, problem: _Problem):
        p = problem
        d0 = p.cost / math.fsum(p.cost)
        lp = SoftMarginLP(p.cost, float(self.nu))
        return _State(lp=lp, d=d0, gamma=-math.inf, upper=math.inf, held=(), factors=(),
                      slots=(),
                      seen=frozenset(), rng=seed_generator(self.random_state)), 0.0

    def _monitors(self, problem: _Problem, evals, resume: bool) -> list:
        # ``loss`` is the randomized vote's error, which LPBoost does not minimise (its
        # LP value never falls: ``lp_value``): its rising is no divergence
        return [m for m in super()._monitors(problem, evals, resume)
                if not isinstance(m, Divergence)]

    # -- one round of LPBoost -----------------------------------------------------------
    def _round(self, problem: _Problem, state: _State, ensemble, t: int, budget: int):
        p = problem
        start = time.perf_counter()
        # 1. pricing: the oracle's best hypothesis under d_{t−1}
        query = row_passes.scaled(p.blocks, p.y, state.d)
        h = p.bound.correlate(query, random_state=draw_seed(state.rng))
        column = SignedColumn.of(h, p.y, state.d, p.bounded, p.blocks)
        if isinstance(column, StopReason):
            stop = StopReason.GAP_CLOSED if column is StopReason.ZERO_EDGE else column
            return RoundResult(state, stop=stop)
        edge, gap = column.edge, column.edge - state.gamma
        upper = min(state.upper, edge)  # every pricing's best edge bounds P* above
        # A column is a hypothesis with its orientation (w ≥ 0: h and −h are two
        # columns, though the ensemble keeps one coefficient for both).
        name = None if h.key is None else (h.key, column.sign * h.scale)
        # 2. no hypothesis improves on the restricted LP: the certificate closes (a
        #    column it holds has an edge of at most γ: it can only be one by rounding)
        if gap <= self.tol or name in state.seen:
            return RoundResult(replace(state, upper=upper), stop=StopReason.GAP_CLOSED)
        # 3. the new column, and the LP over every column, from the last basis
        u = row_passes.oriented(p.blocks, column.a, column.y, column.norm, column.sign)
        lp = state.lp_as_left()
        lp.add_column(u)
        try:
            solution = lp.solve()
        except LPSolveError:
            state.lp_as_left()  # (the model is built again from the good columns)
            return RoundResult(state, stop=StopReason.SOLVER_FAILED)
        # the column on the ensemble's hypothesis: w · sign · h / ‖h‖, and h is
        # (h.scale / first.scale) times the first hypothesis of its key there
        slot = ensemble.index_of(h)
        joining, held = (), state.held
        if slot is None:
            slot = len(ensemble.hypotheses)
            top = float(row_passes.peak(p.blocks, h.train_output))
            joining = ((h.detach(), top),)
            held = (*held, (h.train_output, top))
            held_scale = h.scale
        else:
            held_scale = ensemble.hypotheses[slot].scale
        factor = column.sign * (h.scale / held_scale) / column.norm
        factors, slots = (*state.factors, factor), (*state.slots, slot)
        coef = np.zeros(len(held))
        for w, c, j in zip(solution.w.tolist(), factors, slots, strict=True):
            coef[j] += w * c
        # 4. the model on the training rows, Σ_j coef_j h_j summed in the ensemble's
        #    order (as its decision_function sums a refit: the same bits)
        f = row_passes.combined(p.blocks, p.blocks.full(0.0), [
            (c, a) for c, (a, _) in zip(coef.tolist(), held, strict=True)])
        error, low = row_passes.error_and_margin(p.blocks, p.y, f, p.s, p.s_total)
        gibbs = self._eval_metrics(p, p.y, p.s, f)["loss"]
        l1 = math.fsum(abs(c) * top for c, (_, top) in zip(coef.tolist(), held, strict=True))
        record = {
            "loss": gibbs,
            "lp_value": solution.value,
            "edge": edge,
            "upper_bound": upper,
            "gap": upper - solution.value,
            "margin": low / l1 if l1 > 0 else math.nan,
            "train_error": error,
            "step": float(solution.w[-1]),
            "n_nonzero": float(np.count_nonzero(solution.w)),
            "solver_time": solution.seconds,
            "solver_iterations": float(solution.iterations),
            "time": time.perf_counter() - start,
        }
        refit = Refit(coef, joining)
        new = _State(lp=lp, d=solution.d, gamma=solution.value, upper=upper, held=held,
                     factors=factors, slots=slots, seen=state.seen | {name} - {None},
                     rng=state.rng)
        return RoundResult(new, records=(record,), refit=refit)

    # -- eval sets ------------------------------------------------------------------------
    def _eval_target(self, problem: _Problem, y, extra, where: str):
        ypm = np.where(self._class_index(y, where) == 1, 1.0, -1.0)
        return ypm, self._eval_weight(extra, y.shape[0], where)

    def _eval_metrics(self, problem: _Problem, target, weight, scores):
        """An eval set's ``loss``: the weighted mean of ``(1 − y f) / 2``, the error of
        the randomized vote that draws column j with probability ``w_j`` (f is the LP's
        convex combination of columns in [−1, 1]); and the error of ``predict``."""
        gibbs = np.clip((1.0 - target * scores) / 2.0, 0.0, 1.0)
        return {
            "loss": math.fsum((weight * gibbs).tolist()) / math.fsum(weight.tolist()),
            "error": weighted_error(predicted_index(scores) != (target > 0), weight),
        }

    def _proba(self, f: np.ndarray) -> np.ndarray:
        """No link to probabilities: the LP's combination is a vote with weights on the
        simplex; ``predict_proba`` maps its score f ∈ [−1, 1] to ``(1 + f) / 2``."""
        p = np.clip((1.0 + f) / 2.0, 0.0, 1.0)
        return np.column_stack([1.0 - p, p])
