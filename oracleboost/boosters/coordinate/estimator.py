"""Coordinate-descent boosting (Telgarsky 2012, 2013; Freund & Schapire's AdaBoost).

Telgarsky (2013), Algorithm 1, in this library's sign convention (margins ``y f``
positive when right; the paper's ``A = −y h`` and ``z = Aλ = −margin``):

1. weights ``w_i ∝ s_i · (−φ'(y_i f(x_i)))``, normalised, computed in log space;
2. ask the oracle ``h = correlate(w · y)``; its training column is used as it is when the
   class declares itself ``bounded`` (values in [−1, 1], Telgarsky's matrix A) and is
   rescaled to ``max |h| = 1`` otherwise (scale-free classes such as regressors);
3. edge ``γ_t = |Σ_i w_i y_i h(x_i)|`` (``= ||A^T ∇L||_∞ / ||∇L||_1``), and the sign
   that makes it positive (the class is taken closed under negation);
4. step ``α_t`` by the step rule times the shrinkage ν (``learning_rate``);
5. ``f ← f + α_t · sign · h``, and one record appended to ``history_``.

The round is :func:`.algorithm.coordinate_round`.

Discrete AdaBoost is ``loss="exponential", step="adaboost", learning_rate=1``: the step
``α = ν · ½ ln((1 + γ_t)/(1 − γ_t))`` (Telgarsky 2013, eq. for α^A).  With ±1 stumps
this is scikit-learn's ``AdaBoostClassifier`` (SAMME, two classes), whose estimator
weight is ``2α``.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence
from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions

from oracleboost._typing import ArrayLike, RandomStateLike
from oracleboost.boosters.coordinate.algorithm import (
    CoordinateProblem,
    CoordinateState,
    coordinate_round,
    dual_weights,
)
from oracleboost.engine.backends import equal_weights
from oracleboost.engine.base import BaseBooster, fit_context, loss_constraint
from oracleboost.engine.classifier import (
    ScoreClassifierMixin,
    lightgbm_objective,
    margin_metrics,
)
from oracleboost.engine.eval_sets import documented, eval_parameters_doc
from oracleboost.engine.fit_data import fit_backend
from oracleboost.engine.input import check_offset, data_signature
from oracleboost.engine.rounds import (
    BoostingWarning,
    seed_generator,
)
from oracleboost.export.methods import ExportMixin
from oracleboost.losses import MarginLoss, get_loss
from oracleboost.optim import row_passes
from oracleboost.optim.steps import STEP_RULES, StepRule, get_step
from oracleboost.oracles.base import Oracle
from oracleboost.rows.blocks import DEFAULT_BLOCK_SIZE
from oracleboost.rows.subsample import PARAMETERS_DOC as _STOCHASTIC_PARAMETERS
from oracleboost.rows.subsample import RoundDraws, with_draw_seed

__all__ = ["CoordinateBoostingClassifier"]


@documented(stochastic_parameters=_STOCHASTIC_PARAMETERS)
class CoordinateBoostingClassifier(ExportMixin, ScoreClassifierMixin, ClassifierMixin,
                                   BaseBooster):
    """Binary coordinate-descent boosting on any oracle (Telgarsky 2013, Algorithm 1).

    Round t on the margin loss φ, with margins y_i f(x_i) and sample weights s_i (the
    weights normalised in log space):

    .. math::

        w_i &\\propto s_i \\bigl(-\\phi'(y_i f_{t-1}(x_i))\\bigr), \\qquad
        h_t = \\mathrm{correlate}(w \\circ y), \\\\
        \\gamma_t &= \\Bigl|\\sum_i w_i y_i h_t(x_i)\\Bigr|, \\qquad
        f_t = f_{t-1} + \\alpha_t \\sigma_t h_t,

    σ_t being the sign that makes the edge positive; the default AdaBoost step is
    :math:`\\alpha_t = \\frac{\\nu}{2} \\ln \\frac{1 + \\gamma_t}{1 - \\gamma_t}`.  The user
    guide's page on the boosters gives every step rule.

    Parameters
    ----------
    oracle : Oracle, default=None
        The weak-learner class, asked through ``correlate`` only.  ``None`` means
        ``StumpOracle()`` (±1 decision stumps).
    loss : {"exponential", "logistic"} or MarginLoss, default="exponential"
    step : {"quadratic", "wolfe", "adaboost", "optimal", "closed_form", "constant"} \
            or StepRule, default="adaboost"
        The step rule α_t (see :mod:`oracleboost.optim.steps`): the quadratic-bound
        step ``ν γ_t / C_t^4``, a Wolfe search with ``c1 = 1 − ν/2, c2 = 1 − ν/4``, the
        AdaBoost step ``ν ½ ln((1+γ_t)/(1−γ_t))``, ν times the exact line search, the
        closed-form ``ν ||A^T∇L||_∞/(ηL)``, or the constant ν.  Give an instance such as
        ``WolfeStep(c1=1/3, c2=1/2)`` for other constants, or a schedule such as
        ``InverseSqrtStep()`` (α_t = ν/√t) for a step that shrinks with the rounds.
    n_estimators : int, default=50
        The round budget.
    learning_rate : float, default=1.0
        The shrinkage ν ∈ (0, 1] (Telgarsky 2013): it multiplies the quadratic, AdaBoost,
        optimal and closed-form steps, sets the Wolfe constants, and is the constant step.
    random_state : int, RandomState or None, default=None
        Seeds the oracle's calls (one seed drawn per round).
    verbose : int, default=0
        Print loss, edge and margin every ~10% of the rounds (every round if > 1).
    duality_gap : {"auto", True, False}, default="auto"
        Record ``gap`` = risk − optimal risk each round, for finite classes (oracles with
        the ``correlation_vector`` capability).  The optimal risk f̄ comes from
        :func:`oracleboost.diagnostics.optimal_risk` (hard core by LP, Newton on the core);
        by Telgarsky 2012 (Key identity) the gap equals the Bregman divergence between
        the dual optimum and the dual iterate.  "auto": when the class is finite and the
        computation's estimated peak memory (linear in the matrix, see
        :func:`oracleboost.diagnostics.optimal_risk_cost`) is at most 256 MiB, and X is
        in memory (on a dask array "auto" records no ``gap``, and True is refused: the
        optimal risk is solved over every row in one process).  If the diagnostic fails,
        the fit goes on with a warning and ``gap`` is NaN.
    n_jobs : int or None, default=None
        Threads of the booster's own passes over the rows (the weights, the column's
        sums, the margins), counted as LightGBM counts ``num_threads``: ``None`` is
        ``OMP_NUM_THREADS`` if set, else every CPU the process may use; ``-1`` all CPUs.
        The oracle's queries run on the oracle's own ``n_jobs``.  The fit does not
        depend on it, bit for bit.
    block_size : int, default=65536
        Rows of a block (:mod:`oracleboost.rows.blocks`): sums over the rows are made by
        fixed pieces (blocks, and lanes of at most 4,096 rows within them), each in row
        order, the pieces added in order.  The bits of a fit depend on it (the order of
        the sums); they do not depend on ``n_jobs``.

    warm_start : bool, default=False
        Keep the fitted rounds and add rounds up to ``n_estimators`` on the same data
        (the running scores and the seed generator continue, so a deterministic oracle
        gives exactly one longer fit).  A pickle or skops file of the fitted booster
        keeps the running state a warm start continues from only when it was fitted with
        ``warm_start=True`` (otherwise a warm start after loading fits anew, with a
        ``BoostingWarning``).
    <early stopping parameters>
    <importance parameters>
    <class weight parameters>
    <stochastic parameters>

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (y = +1 inside).
    ensemble_ : Ensemble
    intercept_ : float
        0: the rounds start at λ = 0 (f = Σ_j coef_[j] · estimators_[j]; a ``fit``'s
        ``init_score`` is not part of the model).
    history_ : dict of ndarray
        Per round: ``loss`` (weighted empirical risk), ``log_loss`` (its log, finite when
        the risk underflows), ``edge`` γ_t, ``step`` α_t (with ν), ``margin`` (ℓ1 margin
        ``min_i y_i f(x_i)/||λ||_1``), ``train_error``, ``entropy`` (Shannon entropy of
        the dual iterate, the normalised weights ``w ∝ −φ'(margins)``; Telgarsky 2012,
        Remark 5), ``time`` (seconds); with a rule that reads the line (``"wolfe"``,
        ``"optimal"``, ``"closed_form"``), ``line_evaluations``: how many times it
        evaluated R or R' (a round's cost grows with it, not with the rounds before).
    optimal_loss_ : float or None
        The optimal risk f̄ over the span of a finite class (when ``duality_gap`` is on).
    stop_reason_ : StopReason
        Why fitting ended: the budget, a stop of the algorithm (zero edge, perfect
        hypothesis, infinite or zero step), ``"interrupted"``, ``"non_finite"`` or
        ``"diverged"`` (see :mod:`oracleboost.engine.base`).
    <validation attributes>

    References
    ----------
    Telgarsky, M. (2013). Margins, shrinkage, and boosting. ICML.
    Telgarsky, M. (2012). A primal-dual convergence analysis of boosting. JMLR 13.
    Freund, Y. & Schapire, R. (1997). A decision-theoretic generalization of on-line
    learning and an application to boosting. JCSS 55.

    Examples
    --------
    AdaBoost on ±1 decision stumps, then the logistic loss with Wolfe steps:

    >>> from sklearn.datasets import load_breast_cancer
    >>> from oracleboost.boosters import CoordinateBoostingClassifier
    >>> from oracleboost.oracles import StumpOracle
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> ada = CoordinateBoostingClassifier(StumpOracle(), n_estimators=50).fit(X, y)
    >>> ada.score(X, y), str(ada.stop_reason_)
    (1.0, 'max_rounds')
    >>> bool(ada.history_["margin"][-1] > 0)  # every training point on its side
    True
    >>> wolfe = CoordinateBoostingClassifier(StumpOracle(), loss="logistic", step="wolfe",
    ...                                      n_estimators=50).fit(X, y)
    >>> wolfe.predict_proba(X[:2]).shape
    (2, 2)
    """

    _parameter_constraints: dict = {
        **BaseBooster._parameter_constraints,
        "loss": loss_constraint(MarginLoss),
        "step": [StrOptions(set(STEP_RULES)), StepRule],
        "learning_rate": [Interval(Real, 0, 1, closed="right")],
        "duality_gap": [StrOptions({"auto"}), "boolean"],
        "n_jobs": [Integral, None],
        "block_size": [Interval(Integral, 1, None, closed="left")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "subsample": [Interval(Real, 0, 1, closed="right")],
        "colsample_bytree": [Interval(Real, 0, 1, closed="right")],
    }

    def __init__(
        self,
        oracle: Oracle | None = None,
        loss: str | MarginLoss = "exponential",
        step: str | StepRule = "adaboost",
        n_estimators: int = 50,
        learning_rate: float = 1.0,
        random_state: RandomStateLike = None,
        verbose: int = 0,
        duality_gap: str | bool = "auto",
        n_jobs: int | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        warm_start: bool = False,
        n_iter_no_change: int | None = None,
        validation_fraction: float | None = 0.1,
        tol: float = 1e-4,
        importance_type: str = "weight",
        class_weight: dict | str | None = None,
        subsample: float = 1.0,
        colsample_bytree: float = 1.0,
    ) -> None:
        self.oracle = oracle
        self.loss = loss
        self.step = step
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.verbose = verbose
        self.duality_gap = duality_gap
        self.n_jobs = n_jobs
        self.block_size = block_size
        self.warm_start = warm_start
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.tol = tol
        self.importance_type = importance_type
        self.class_weight = class_weight
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # Telgarsky's analysis is binary
        return tags

    @fit_context
    @eval_parameters_doc
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        init_score: ArrayLike | None = None,
        eval_set: Sequence[tuple[ArrayLike, ArrayLike]] | None = None,
        eval_sample_weight: Sequence[ArrayLike | None] | None = None,
        eval_init_score: Sequence[ArrayLike | None] | None = None,
        eval_metric: str | Callable | Sequence | dict | None = None,
        eval_names: Sequence[str] | None = None,
    ) -> CoordinateBoostingClassifier:
        """Boost for up to ``n_estimators`` rounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            (For ``MatrixOracle``, row indices into its matrix.)
        y : array-like of shape (n_samples,)
            Two classes, any labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative; the risk is ``Σ_i s_i φ(y_i f(x_i)) / Σ_i s_i``.
        init_score : array-like of shape (n_samples,), default=None
            Each row's starting score o_i, the score of ``classes_[1]`` (LightGBM's
            ``init_score``, XGBoost's ``base_margin``): the rounds minimise
            ``Σ_i s_i φ(y_i (o_i + f(x_i)))``, starting from the margins ``y_i o_i``
            instead of 0, so the first weights are ``w_i ∝ s_i (−φ'(y_i o_i))``
            (AdaBoost's ``s_i e^{−y_i o_i}``).  ``predict`` does not add it (as
            LightGBM's): add the new rows' offset to ``decision_function`` yourself.
            The recorded ``loss``, ``train_error`` and ``margin`` are those of the
            scores o + f (the margin divided by the ℓ1 norm of the model's own
            coefficients).  The optimal risk (``duality_gap``) is of the span of the
            class alone: ``duality_gap="auto"`` records no ``gap`` with an offset, and
            ``True`` is refused.  Not with early stopping's held-out rows
            (``validation_fraction``; give an ``eval_set`` with its
            ``eval_init_score``), nor on a dask array.
        eval_set : list of (X, y) pairs, default=None
            Sets whose risk and error are recorded after every round, as
            ``history_["val_loss_0"]``, ``history_["val_error_0"]``, …
            In a ``Pipeline`` (with metadata routing) the sets reach the booster as
            given, not through the steps before it, as LightGBM's do: their curves are
            then those of untransformed rows.  Transform them first, or hold out rows
            with ``validation_fraction`` (split after the steps).
        eval_sample_weight : list of array-like or None, default=None
            The weights of each eval set's risk and error.
        eval_init_score : list of array-like or None, default=None
            Each eval set's own ``init_score`` (one entry, or None, per set), added to
            the model's scores on it for its curves and ``eval_metric`` (LightGBM's
            ``eval_init_score``).
        <eval parameters>
        """
        return self._fit_rounds(
            X, y, sample_weight, eval_set=eval_set, eval_rows=eval_sample_weight,
            eval_metric=eval_metric, eval_names=eval_names, offset=init_score,
            eval_offsets=eval_init_score
        )

    def _setup(self, X, y, sample_weight, offset=None) -> CoordinateProblem:
        backend = fit_backend(X, self._oracle())
        self._refuse_warm_start_on(backend)
        if self.duality_gap is True:
            # the optimal risk is solved (LPs, Newton's method) over every row at once
            backend.refuse("all_rows", "duality_gap=True",
                           "set duality_gap='auto' or False (then no 'gap' is recorded), "
                           "or fit the rows in memory")
        keywords = {} if offset is None else self._offset_keywords(backend, offset)
        # ±1 as int8: the round's compiled passes read the labels every round, and at
        # large n they are bound by memory traffic (1 byte a row, not 8)
        data = backend.classification_data(self, X, y, sample_weight, self.block_size,
                                           **keywords)
        ypm, s = data.ypm, data.s
        offset = getattr(data, "offset", None)  # (a backend without init_score: none)
        if offset is not None:
            offset = check_offset(offset, ypm.shape[0], columns=())
        loss = get_loss(self.loss, MarginLoss)
        bound = self._bind_rows(data.rows, "correlate")
        optimal = signature = None  # "auto": not where every row is not at hand
        if backend.can("all_rows"):
            signature = data_signature(data.rows.X, ypm, s,
                                       *(() if offset is None else (offset,)))
            if offset is not None:
                optimal = None  # (the optimum of the class's span alone: refused above)
            elif self.warm_start and getattr(self, "_signature_", None) == signature \
                    and getattr(self, "_optimal_for_", None) == loss:
                optimal = self.optimal_loss_  # the same data and loss: the same optimum
            else:
                optimal = self._optimal_loss(bound, ypm, loss, s)
        self.optimal_loss_, self._optimal_for_ = optimal, loss
        problem = self._problem(ypm, s, equal_weights(s), loss, get_step(self.step), bound,
                                optimal, signature, data.rows.blocks)
        problem.draws = RoundDraws.of(self.subsample, self.colsample_bytree,
                                      data.rows.X.shape[1])
        if problem.draws is not None:
            problem.draws.check_oracle(self._oracle())
        if offset is not None:  # the rounds start from the margins y_i o_i
            problem.start = ypm * offset
            problem.offset_bound = float(np.max(np.abs(offset), initial=0.0))
        return problem

    def _offset_keywords(self, backend, offset) -> dict:
        """The fit data's keywords for an ``init_score``, refused by name where it
        cannot be taken: on a backend without it, and with ``duality_gap=True``."""
        backend.refuse("init_score", "init_score")
        if self.duality_gap is True:
            raise ValueError(
                "duality_gap=True is not defined with init_score: the optimal risk it "
                "compares with is the least risk over the span of the class alone "
                "(Telgarsky 2012), which an offset moves; set duality_gap='auto' or "
                "False (then no 'gap' is recorded)")
        return {"offset": offset}

    def _problem(self, ypm, s, uniform: bool, loss: MarginLoss, rule: StepRule, bound,
                 optimal: float | None, signature: str | None, blocks) -> CoordinateProblem:
        """The problem from the data (in memory or on a cluster: ``blocks``); equal
        weights cancel (``uniform``): no ``log s``, and the risk's mass is ``n``."""
        s_total = float(blocks.n) if uniform else row_passes.total(blocks, s)
        return CoordinateProblem(
            ypm=ypm,
            s=s,
            s_total=s_total,
            log_s=None if uniform else row_passes.log(blocks, s),
            loss=loss,
            bound=bound,
            rule=rule,
            nu=float(self.learning_rate),
            bounded=bound.capabilities.bounded,
            optimal_loss=optimal,
            signature=signature,
            blocks=blocks,
        )

    def _history_keys(self, problem: CoordinateProblem) -> tuple[str, ...]:
        keys = ("loss", "log_loss", "margin", "train_error", "edge", "step", "entropy", "time")
        keys += ("line_evaluations",) if problem.rule.uses_line else ()
        return keys + (("gap",) if problem.optimal_loss is not None else ())

    def _initial_state(self, problem: CoordinateProblem):
        margins = (problem.blocks.full(0.0) if problem.start is None
                   else problem.start.copy())
        rng = seed_generator(self.random_state)
        state = CoordinateState(margins=margins, dual=dual_weights(problem, margins),
                                rng=rng, loss=problem.loss)
        return self._drawing(problem, state), 0.0

    def _resumed(self, problem: CoordinateProblem, state: CoordinateState
                 ) -> CoordinateState:
        # a warm start with another loss continues from the margins, with the weights
        # of the new loss (the stored ones are the old loss's: -φ' of another φ)
        if state.loss != problem.loss:
            state = dataclasses.replace(state, dual=dual_weights(problem, state.margins),
                                        loss=problem.loss)
        return self._drawing(problem, state)

    def _drawing(self, problem: CoordinateProblem, state: CoordinateState
                 ) -> CoordinateState:
        return with_draw_seed(state, problem.draws, self.random_state)

    # -- one round: Algorithm 1 (algorithm.py) ---------------------------------------------
    def _round(self, problem: CoordinateProblem, state: CoordinateState, ensemble, t: int,
               budget: int):
        return coordinate_round(problem, state, ensemble, t, budget, type(self).__name__)

    def _eval_target(self, problem: CoordinateProblem, y, extra, where: str):
        ypm = np.where(self._class_index(y, where) == 1, 1, -1).astype(np.int8)
        return ypm, self._eval_weight(extra, y.shape[0], where)

    def _eval_metrics(self, problem: CoordinateProblem, target, weight, scores):
        return margin_metrics(problem.loss, target, scores, weight)

    #: duality_gap="auto" tracks the gap when the diagnostics' estimated peak memory
    #: (:func:`oracleboost.diagnostics.optimal_risk_cost`, linear in the matrix) fits this.
    GAP_MEMORY_BUDGET = 256 * 2**20

    def _optimal_loss(self, bound, ypm, loss, s) -> float | None:
        """The optimal risk f̄ for the ``gap`` record, or None when not tracked.

        A diagnostic never breaks a fit: if its LPs or Newton's method fail (or memory
        runs out) the fit goes on with a warning and ``gap`` is NaN.
        """
        caps = bound.capabilities
        if self.duality_gap is False or not caps.correlation_vector:
            return None
        # Imported here: diagnostics needs scipy's LP solver only when a gap is tracked.
        from oracleboost.diagnostics import DiagnosticsError, optimal_risk, optimal_risk_cost

        columns = bound.columns()
        cost = optimal_risk_cost(columns.shape)
        if self.duality_gap == "auto" and cost > self.GAP_MEMORY_BUDGET:
            return None
        try:
            return float(optimal_risk(ypm[:, None] * columns, loss, sample_weight=s).risk)
        except (DiagnosticsError, MemoryError, np.linalg.LinAlgError, ValueError) as exc:
            warnings.warn(
                f"{type(self).__name__}: the optimal risk for the duality gap could not be "
                f"computed ({type(exc).__name__}: {exc}); history_['gap'] is NaN and the "
                "fit goes on",
                BoostingWarning,
                stacklevel=2,
            )
            return math.nan

    # -- prediction (decision_function, predict, predict_proba: the mixin) ---------------
    def _lightgbm_objective(self, n_scores: int) -> str | None:
        return lightgbm_objective(get_loss(self.loss, MarginLoss), n_scores)

    def _proba(self, f: np.ndarray) -> np.ndarray:
        """The loss' link: σ(2f) for the exponential loss (Friedman, Hastie & Tibshirani
        2000), σ(f) for the logistic."""
        p = get_loss(self.loss, MarginLoss).inverse_link(f)
        return np.column_stack([1.0 - p, p])

