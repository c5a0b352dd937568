"""Functional gradient boosting (Grubb & Bagnell 2011; Friedman 2001; Mason et al. 1999):
the public estimators.

:class:`FunctionalGradientRegressor`, :class:`FunctionalGradientClassifier` and
:class:`FunctionalGradientRanker` hold the parameters, check the data and set up the
problem; the rounds are Algorithms 1–3 of the paper (naive, repeated and residual
projection), in :mod:`oracleboost.boosters.functional.algorithm`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from numbers import Integral, Real
from typing import TypeVar

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions

from oracleboost._typing import ArrayLike, RandomStateLike
from oracleboost._validation import check_groups
from oracleboost.boosters.functional.algorithm import (
    PROJECTION_RULES,
    PROJECTIONS,
    _Problem,
    _State,
    functional_round,
    initial_state,
    resumed,
)
from oracleboost.engine.backends import Backend, equal_weights
from oracleboost.engine.base import BaseBooster, ScoreRegressorMixin, fit_context, loss_constraint
from oracleboost.engine.classifier import (
    ScoreClassifierMixin,
    lightgbm_objective,
    weighted_error,
)
from oracleboost.engine.eval_sets import documented, eval_parameters_doc
from oracleboost.engine.fit_data import MEMORY, fit_backend
from oracleboost.engine.input import check_offset, data_signature, validate_input
from oracleboost.engine.inspection import num_iteration_doc
from oracleboost.engine.monitors import Divergence, NonFiniteLoss
from oracleboost.engine.rounds import seed_generator
from oracleboost.export.methods import ExportMixin
from oracleboost.losses import (
    Loss,
    MarginLoss,
    MulticlassLoss,
    RankingLoss,
    RegressionLoss,
    get_loss,
    ndcg,
)
from oracleboost.losses.base import SecondOrder
from oracleboost.losses.callable_objective import CallableObjective
from oracleboost.optim import row_passes
from oracleboost.optim.steps import SCHEDULES, RoundView, Schedule, get_schedule
from oracleboost.optim.votes import predicted_index
from oracleboost.oracles.base import BinaryOnlyOracleError, Oracle
from oracleboost.rows.blocks import DEFAULT_BLOCK_SIZE, RowBlocks
from oracleboost.rows.partitioned import NotDistributedError, Rows
from oracleboost.rows.quantile import weighted_quantile
from oracleboost.rows.subsample import PARAMETERS_DOC as _STOCHASTIC_PARAMETERS
from oracleboost.rows.subsample import RoundDraws, with_draw_seed

__all__ = [
    "FunctionalGradientRegressor",
    "FunctionalGradientClassifier",
    "FunctionalGradientRanker",
    "PROJECTIONS",
    "SCHEDULES",
]

#: The estimator whose ``fit`` runs: ``fit`` returns it (the regressor or the classifier).
_Booster = TypeVar("_Booster", bound="_FunctionalGradientBooster")


class _FunctionalGradientBooster(ExportMixin, BaseBooster):
    """The loop shared by the functional-gradient regressor, classifier and ranker."""

    _default_query = "project"  # TreeOracle(max_depth=3), gradient boosting's usual

    _parameter_constraints: dict = {
        **BaseBooster._parameter_constraints,
        "projection": [StrOptions(set(PROJECTIONS))],
        "schedule": [StrOptions(set(SCHEDULES)), Schedule],
        "strong_convexity": [Interval(Real, 0, None, closed="neither"), None],
        "query": [StrOptions({"auto", "project", "correlate", "newton"})],
        # a finite number: NaN or ±inf would be every prediction (Interval refuses them)
        "init": [StrOptions({"auto"}), Interval(Real, None, None, closed="neither")],
        "n_jobs": [Integral, None],
        "block_size": [Interval(Integral, 1, None, closed="left")],
        "subsample": [Interval(Real, 0, 1, closed="right")],
        "colsample_bytree": [Interval(Real, 0, 1, closed="right")],
    }

    @fit_context
    @eval_parameters_doc
    def fit(
        self: _Booster,
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
    ) -> _Booster:
        """Boost with up to ``n_estimators`` weak learners.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        init_score : array-like of shape (n_samples,) or (n_samples, n_classes), \
default=None
            Each row's starting score, an offset the model learns on top of (LightGBM's
            ``init_score``, XGBoost's ``base_margin``): the rounds start from
            ``f_0 + init_score`` instead of ``f_0``.  ``predict`` does not add it (as
            LightGBM's): add the new rows' offset to ``predict`` (regression) or to
            ``decision_function`` (classification) yourself.  With an ``init_score``,
            ``init="auto"`` computes no best constant (as LightGBM skips
            ``boost_from_average``): f_0 = 0, and ``intercept_`` is 0; a number ``init``
            is added on top of the offset.  A classifier takes one score per row (two
            classes and a margin loss) or one per class (``"softmax"``, more than two
            classes), in the order of ``classes_``.  Not with early stopping's
            held-out rows (``validation_fraction``; give an ``eval_set`` with its
            ``eval_init_score``), nor on a dask array.  A constant ``init_score`` c
            gives the same terms as ``init=c``, bit for bit.  (A classifier's recorded
            ``margin`` divides scores that hold the offset by the norm of the model's
            own terms.)
            Sets whose loss (and a classifier's error) is recorded after every weak
            learner, as ``history_["val_loss_0"]`` (``history_["val_error_0"]``), …
            In a ``Pipeline`` (with metadata routing) the sets reach the booster as
            given, not through the steps before it, as LightGBM's do: their curves are
            then those of untransformed rows.  Transform them first, or hold out rows
            with ``validation_fraction`` (split after the steps).
        eval_sample_weight : list of array-like or None, default=None
            The weights of each eval set's loss (and error).
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

    def _data_keywords(self, backend: Backend, offset) -> dict:
        """The fit data's keywords for an ``init_score`` (none without one); refused
        by name where the backend cannot take it."""
        if offset is None:
            return {}
        backend.refuse("init_score", "init_score")
        return {"offset": offset}

    def _init_raw(self, loss: Loss, y, s):
        """f_0: the loss' best constant ("auto"), or the given number."""
        return loss.init_raw(y, s) if self.init == "auto" else float(self.init)

    def _fit_record(self, p: _Problem, f: Rows, l1_norm: float) -> dict[str, float]:
        """The round's ``margin`` and estimator-specific entries (the classifier adds its
        training error); the margin is not defined for regression and ranking (NaN)."""
        return {"margin": math.nan}

    def _eval_target(self, problem: _Problem, y, extra, where: str):
        return (self._numeric_target(y, where), {}), self._eval_weight(extra, y.shape[0], where)

    def _eval_metrics(self, problem: _Problem, target, weight, scores):
        y, ctx = target
        out = {"loss": problem.loss(y, scores, weight, **ctx)}
        if "train_error" in self._extra_keys():
            truth = y if scores.ndim == 2 else (y > 0)
            out["error"] = weighted_error(predicted_index(scores) != truth, weight)
        return out

    # -- the loop's hooks ------------------------------------------------------------------
    def _problem(self, rows, y, s, loss: Loss, f0, ctx: dict | None = None,
                 offset: np.ndarray | None = None) -> _Problem:
        """Bind the oracle to the fit's ``rows`` (wherever they are); what every round
        reads.  ``s``: the weights as the backend gives them (None, or all equal: they
        cancel, and the query and the loss's mean are unweighted)."""
        ctx = {} if ctx is None else ctx
        if isinstance(loss, CallableObjective):
            self._check_callable_loss()
        elif self.query == "newton":
            self._check_newton(loss, self._raw_shape(rows.blocks.n, y))
        need = self._need()
        bound = self._bind_rows(rows, need)
        blocks = rows.blocks
        f0 = np.asarray(f0, dtype=np.float64)
        weighted = not equal_weights(s)
        query_weight = s if weighted else None
        draws = RoundDraws.of(self.subsample, self.colsample_bytree, rows.X.shape[1])
        if draws is not None:
            draws.check_oracle(self._oracle())
        return _Problem(
            y=y,
            s=s,
            sw=query_weight,  # (the correlate query s · v; v itself when they cancel)
            # by lanes, as on any backend
            total=float(blocks.n) if s is None else row_passes.total(blocks, s),
            query_weight=query_weight,
            weighted=weighted,
            loss=loss,
            f0=f0,
            shape=self._raw_shape(blocks.n, y),
            ctx=ctx,
            bound=bound,
            need=need,
            projection=PROJECTION_RULES[self.projection],
            schedule=get_schedule(self.schedule),
            view=self._view(loss),
            signature=(data_signature(rows.X, y, s, query_weight, f0, *ctx.values(),
                                      *(() if offset is None else (offset,)))
                       if rows.backend.can("all_rows") else None),
            blocks=blocks,
            blockwise_loss=loss.pointwise and not ctx and type(loss).__call__ is Loss.__call__,
            record=self._fit_record,
            booster=type(self).__name__,
            offset=offset,
            draws=draws,
            newton=self.query == "newton",
        )

    def _callable_loss(self) -> bool:
        """Whether ``loss`` is a function ``(y_true, y_pred) -> (grad, hess)`` (a
        :class:`~oracleboost.losses.Loss` is callable too, and is not one)."""
        return callable(self.loss) and not isinstance(self.loss, str | Loss)

    def _check_callable_loss(self) -> None:
        """What a function's loss cannot do, refused by name: early stopping watches a
        loss value, which it does not give; the repeated and residual projections fit
        several weak learners to one target, Newton's needs one a step."""
        if self.projection != "naive":
            raise ValueError(
                f"loss=<function> takes projection='naive' (Newton's step per weak "
                f"learner); got projection={self.projection!r}")
        if self._early_stopping_on():
            raise ValueError(
                "loss=<function> gives no loss value for early stopping to watch "
                "(n_iter_no_change); use a Loss subclass, or stop by n_estimators")

    def _check_newton(self, loss: Loss, shape: tuple[int, ...]) -> None:
        """What ``query="newton"`` needs, refused by name: the loss's hessian
        (:class:`~oracleboost.losses.base.SecondOrder`), an oracle that answers
        ``project`` with weights, and for vector scores one that takes a weight column
        a class (``Capabilities.per_class_weights``: one tree a class)."""
        if not isinstance(loss, SecondOrder):
            raise ValueError(
                f"query='newton' fits Newton's target -g/H, which needs the loss's "
                f"hessian H; loss={loss.name or loss!r} has none (the squared, logistic, "
                "exponential and softmax losses have one): use query='project'")
        oracle = self._oracle()
        caps, name = oracle.capabilities, type(oracle).__name__
        if not caps.project:
            raise ValueError(
                f"query='newton' asks the oracle's project (a weighted least-squares fit "
                f"to -g/H), which {name} does not answer: use query='correlate'")
        if len(shape) == 2 and not caps.per_class_weights:
            raise ValueError(
                f"query='newton' with loss={loss.name or loss!r} weights each class by its "
                f"own hessian (weights of shape (n, {shape[1]})), which {name} does not "
                f"take (capabilities.per_class_weights): wrap it as PerClassOracle({name}"
                "(...)) for one tree a class, or use query='project'")

    def _refuse_newton_on(self, backend: Backend) -> None:
        """``query="newton"`` makes the gradient and the hessian of every row in this
        process."""
        if self.query == "newton":
            backend.refuse("all_rows", "query='newton'", "fit a NumPy array")

    def _objective(self, labels: str) -> CallableObjective:
        """``loss`` (a function) as a loss; refused on a backend that cannot run it."""
        return CallableObjective(self.loss, labels=labels)

    def _monitors(self, problem: _Problem, evals, resume: bool) -> list:
        monitors = super()._monitors(problem, evals, resume)
        if isinstance(problem.loss, CallableObjective):
            # no loss value (NaN is recorded): nothing to watch for finiteness or growth
            monitors = [m for m in monitors if not isinstance(m, NonFiniteLoss | Divergence)]
        return monitors

    def _need(self) -> str:
        """The query the rounds ask: ``query`` (``project`` for "newton"), or with "auto"
        ``project`` when the oracle answers it, else ``correlate``."""
        if self.query == "newton":
            return "project"
        if self.query == "auto":
            return "project" if self._oracle().capabilities.project else "correlate"
        return self.query

    def _view(self, loss: Loss) -> RoundView:
        """What the schedule sees: the learning rate c, λ and Λ."""
        lam = self.strong_convexity
        return RoundView(nu=float(self.learning_rate),
                         strong_convexity=loss.strong_convexity if lam is None else lam,
                         smoothness=loss.smoothness)

    def _history_keys(self, problem: _Problem) -> tuple[str, ...]:
        keys = ("loss", "edge", "step", "margin", "grad_norm", "residual_norm", "outer", "time")
        return keys + self._extra_keys()

    def _extra_keys(self) -> tuple[str, ...]:
        return ()

    def _initial_state(self, problem: _Problem):
        state = initial_state(problem, seed_generator(self.random_state))
        return self._drawing(problem, state), problem.f0

    def _resumed(self, problem: _Problem, state: _State) -> _State:
        return self._drawing(problem, resumed(problem, state))

    def _drawing(self, problem: _Problem, state: _State) -> _State:
        return with_draw_seed(state, problem.draws, self.random_state)

    def _growth_allowed(self, problem: _Problem) -> bool:
        # Subgradient steps (non-smooth losses) and the decreasing schedules of Theorems
        # 4–7 bound the average gap over iterates, not each step: the loss may rise.
        return problem.loss.smoothness is None or problem.schedule.decreasing

    def _divergence_hint(self, problem: _Problem) -> str:
        if problem.projection.decreasing_step and not problem.schedule.decreasing:
            return (
                f"Grubb & Bagnell's guarantees for projection={self.projection!r} need a "
                "decreasing step (schedule='inv_sqrt', Thms 5 and 7, or 'inv_t', Thms 4 "
                "and 6); a constant step is not covered."
            )
        return "A smaller learning_rate may help."

    def _round(self, problem: _Problem, state: _State, ensemble, t: int, budget: int):
        """One outer iteration of Algorithm 1, 2 or 3 (:func:`.algorithm.functional_round`)."""
        return functional_round(problem, state, ensemble, budget, t)

    def _raw_shape(self, n: int, y) -> tuple[int, ...]:
        return (n,)


#: The parameters the three functional-gradient estimators share (``documented`` fills
#: ``<functional parameters>`` with it).
_FUNCTIONAL_PARAMETERS = """\
    projection : {"naive", "repeated", "residual"}, default="naive"
        Algorithm 1, 2 or 3 of Grubb & Bagnell (2011) (see
        :mod:`oracleboost.boosters.functional.algorithm`).
    schedule : {"constant", "inv_sqrt", "inv_t", "smoothness"} or Schedule, \
            default="constant"
        η_t = c, c/√t, c/(λt) or c/Λ with c = ``learning_rate`` (t = outer iteration),
        or a Schedule of :mod:`oracleboost.optim.steps` (``InverseSqrtStep()``, …).
    n_estimators : int, default=100
        The budget in weak learners.
    learning_rate : float, default=0.1
        The constant c of the schedule (the shrinkage for ``constant``).  With squared
        loss, ``schedule="smoothness"`` and c = 1 is Theorem 3's η = 1/Λ.
    strong_convexity : float or None, default=None
        λ for ``schedule="inv_t"``; defaults to the loss' own (1 for squared; the margin,
        multiclass and ranking losses have none).  An ``InverseTimeStep`` with its own λ
        takes that one.
    query : {"auto", "project", "correlate", "newton"}, default="auto"
        How PROJ asks the oracle: least squares (eq. 4) or the inner product (eq. 3);
        "auto" projects when the oracle can.  "newton" projects Newton's target
        ``−g/H`` with the weights ``sample_weight · H`` (g and H the loss's gradient and
        hessian in the raw score: the least-squares form of its second-order expansion,
        Friedman, Hastie & Tibshirani 2000; Chen & Guestrin 2016): a tree's leaves are
        LightGBM's ``−Σ g / Σ H`` and each step is Newton's along the weak learner.  It
        takes a loss with a hessian (squared, where it equals "project" bit for bit;
        logistic; exponential; softmax, whose diagonal ``p_k(1 − p_k)`` weights each
        class: wrap the oracle as ``PerClassOracle(oracle)`` for one tree a class, as
        LightGBM's multiclass boosting grows) and an oracle that projects, on rows in
        memory.  A loss given as a function is always fitted this way.
    init : "auto" or float, default="auto"
        f_0: the loss' best constant, or the given constant (the paper starts at 0).
    random_state : int, RandomState or None, default=None
        Seeds the oracle's calls (one seed per weak learner).
    n_jobs : int or None, default=None
        Threads of the booster's own passes over the rows (the gradient, the inner
        products, f's step, the loss), as LightGBM counts ``num_threads``: ``None`` is
        ``OMP_NUM_THREADS`` if set, else every CPU; ``-1`` all CPUs.  The oracle's
        queries run on the oracle's own ``n_jobs``.  The fit does not depend on it.
    block_size : int, default=65536
        Rows of a block (:mod:`oracleboost.rows.blocks`): sums over the rows are made by
        fixed pieces (blocks, and lanes of at most 4,096 rows within them), each in row
        order, the pieces added in order; the bits depend on it, not on ``n_jobs``.
    verbose : int, default=0
    warm_start : bool, default=False
        Keep the fitted weak learners and add more up to ``n_estimators`` on the same
        data (f, Δ, the outer count t and the seed generator continue: a deterministic
        oracle gives exactly one longer fit).  A pickle or skops file of the fitted
        booster keeps the running state a warm start continues from only when it was
        fitted with ``warm_start=True`` (otherwise a warm start after loading fits anew,
        with a ``BoostingWarning``).
    <early stopping parameters>
    <importance parameters>
""" + _STOCHASTIC_PARAMETERS


@documented(functional_parameters=_FUNCTIONAL_PARAMETERS)
class FunctionalGradientRegressor(ScoreRegressorMixin, RegressorMixin,
                                  _FunctionalGradientBooster):
    """Gradient boosting of any oracle on a convex regression loss (Grubb & Bagnell 2011).

    Parameters
    ----------
    oracle : Oracle, default=None
        The weak-learner class; ``None`` means ``TreeOracle(max_depth=3)``.
    loss : {"squared", "absolute", "huber", "quantile"}, Loss or callable, \
default="squared"
        ``Quantile(alpha)`` for other quantiles than the median; any scalar-output
        ``Loss`` instance, e.g. ``PlanningLoss(worlds)`` (maximum margin planning, with
        ``X = worlds.X`` and any ``y`` of the same length); or a function
        ``func(y_true, y_pred) -> (grad, hess)`` as LightGBM's custom objective: the
        per-row first and second derivatives of the (unweighted) loss in the raw score,
        the hessian positive
        (:class:`~oracleboost.losses.CallableObjective`).  The
        oracle is then asked ``−grad/hess`` with the weights ``sample_weight · hess``,
        so a tree's leaves are LightGBM's ``−Σ grad / Σ hess`` and each step is
        Newton's along the weak learner (with ``hess = 1``, the gradient step of the
        built-in losses, bit for bit).  A function gives no loss value:
        ``history_["loss"]`` is NaN (pass ``eval_metric`` for a curve), ``init="auto"``
        starts at 0, and it takes ``projection="naive"`` and no early stopping.
    <functional parameters>

    Attributes
    ----------
    ensemble_ : Ensemble
        ``intercept`` is f_0.
    intercept_ : float
        f_0: the loss' best constant (``init="auto"``; the weighted mean of y for the
        squared loss) or ``init``.
    history_ : dict of ndarray
        One entry per weak learner: ``loss`` (weighted risk of the current f; constant
        within an outer iteration of repeated projection, where f moves only at its
        end), ``edge`` (cosine of h with the vector it projected, Definition 1),
        ``step`` (its coefficient η_t a), ``grad_norm`` ||∇_t||, ``residual_norm`` (what
        is left to project after it: ||v − Σ a_k h_k|| for repeated, ||Δ|| for residual,
        ||v − a h|| for naive), ``outer`` (outer iteration), ``time`` (seconds),
        ``margin`` (NaN: no margin is defined for regression).
    stop_reason_ : StopReason
        The budget, ``"zero_gradient"``, ``"zero_hypothesis"``, ``"interrupted"``,
        ``"non_finite"``, or ``"diverged"``: with a smooth loss and a constant step (the
        setting of Theorem 3, which guarantees descent for naive projection) a loss above
        twice its best value stops the fit; with subgradients or the decreasing
        schedules of Theorems 4–7 (which bound the average gap, not each step) it warns
        once and goes on.
    <validation attributes>

    Notes
    -----
    Which schedules the theory covers (Grubb & Bagnell 2011, §4): naive projection,
    λ-strongly convex and Λ-smooth losses, η = 1/Λ (``schedule="smoothness"``,
    ``learning_rate=1``): linear rate (Thm 3).  Repeated projection: η_t = 2/(λt)
    (``"inv_t"``, c = 2; Thm 4) or 1/√t (``"inv_sqrt"``, Thm 5).  Residual projection:
    η_t = 1/(λt) (``"inv_t"``, Thm 6) or 1/√t (Thm 7).  A constant step with repeated or
    residual projection, or with naive projection on a non-smooth loss, is outside the
    theorems (residual projection with a constant step can drift away from its best loss).

    References
    ----------
    Grubb, A. & Bagnell, J. A. (2011). Generalized boosting algorithms for convex
    optimization. ICML.  Friedman, J. (2001). Greedy function approximation: a
    gradient boosting machine. Annals of Statistics 29(5).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from oracleboost.boosters import FunctionalGradientRegressor
    >>> from oracleboost.oracles import StumpOracle
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = FunctionalGradientRegressor(StumpOracle(), n_estimators=100).fit(X, y)
    >>> round(reg.score(X, y), 2)
    0.57
    >>> last = list(reg.staged_predict(X[:3]))[-1]  # equal to predict, bit for bit
    >>> bool((last == reg.predict(X[:3])).all())
    True
    """

    _parameter_constraints: dict = {
        **_FunctionalGradientBooster._parameter_constraints,
        "loss": [*loss_constraint(RegressionLoss), Loss, callable],
    }

    def __init__(
        self,
        oracle: Oracle | None = None,
        loss: str | Loss = "squared",
        projection: str = "naive",
        schedule: str | Schedule = "constant",
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        strong_convexity: float | None = None,
        query: str = "auto",
        init: str | float = "auto",
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        verbose: int = 0,
        warm_start: bool = False,
        n_iter_no_change: int | None = None,
        validation_fraction: float | None = 0.1,
        tol: float = 1e-4,
        importance_type: str = "weight",
        subsample: float = 1.0,
        colsample_bytree: float = 1.0,
    ) -> None:
        self.oracle = oracle
        self.loss = loss
        self.projection = projection
        self.schedule = schedule
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.strong_convexity = strong_convexity
        self.query = query
        self.init = init
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.block_size = block_size
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.tol = tol
        self.importance_type = importance_type
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree

    def _setup(self, X, y, sample_weight, offset=None) -> _Problem:
        backend = fit_backend(X, self._oracle())
        if self._callable_loss():
            backend.refuse("callable_objective", "loss=<function>")
        self._refuse_newton_on(backend)
        loss = self._regression_loss()
        if not isinstance(loss, RegressionLoss) and not backend.can("all_rows"):
            raise NotDistributedError(
                f"{type(self).__name__} on {backend.collection} takes the pointwise "
                f"regression losses (squared, absolute, huber, quantile); got {loss!r}: "
                "fit a NumPy array"
            )
        self._refuse_warm_start_on(backend)
        data = backend.regression_data(self, X, y, sample_weight, self.block_size,
                                       **self._data_keywords(backend, offset))
        offset = getattr(data, "offset", None)  # (a backend without init_score: none)
        if offset is not None:
            check_offset(offset, data.y.shape[0], columns=())
            # no best constant over an offset (LightGBM skips boost_from_average): f_0 is
            # init, or zero
            f0 = 0.0 if self.init == "auto" else float(self.init)
            return self._problem(data.rows, data.y, data.s, loss, f0, offset=offset)
        # equal weights cancel: f_0 unweighted
        s = None if equal_weights(data.s) else data.s
        f0 = self._regression_init(loss, data.rows.blocks, data.y, s)
        if f0 is None:  # (another loss: every row is at hand, refused above else)
            f0 = self._init_raw(loss, data.y, data.s)
        return self._problem(data.rows, data.y, data.s, loss, f0)

    def _regression_loss(self) -> Loss:
        # Named losses are the regression ones; any other scalar-output Loss instance is
        # taken as given (e.g. PlanningLoss, whose structure lives in the instance).
        if self._callable_loss():
            return self._objective("values")
        loss = get_loss(self.loss, RegressionLoss if isinstance(self.loss, str) else Loss)
        if isinstance(loss, MarginLoss) or loss.raw_ndim != 1:
            raise ValueError(
                f"loss={loss!r} is not a regression loss: use FunctionalGradientClassifier "
                "for margin and multiclass losses, FunctionalGradientRanker for ranking"
            )
        if getattr(loss, "context_keys", ()):
            raise ValueError(f"loss={loss!r} needs {loss.context_keys}: use the ranker")
        return loss

    def _regression_init(self, loss: Loss, blocks: RowBlocks, y, s) -> float | None:
        """f_0 by passes over the row blocks (the same bits on threads and on a
        cluster): ``init`` itself, the weighted mean (``init_is_mean``) or the weighted
        quantile (``init_quantile``) of y (``s`` None: equal weights); None for a loss
        that is neither."""
        if self.init != "auto":
            return float(self.init)
        if getattr(loss, "init_is_mean", False):
            return row_passes.weighted_mean(blocks, y, s)
        q = getattr(loss, "init_quantile", None)
        return None if q is None else weighted_quantile(blocks, y, s, q)


@documented(functional_parameters=_FUNCTIONAL_PARAMETERS)
class FunctionalGradientClassifier(ScoreClassifierMixin, ClassifierMixin,
                                   _FunctionalGradientBooster):
    """Functional gradient boosting for classification (Grubb & Bagnell 2011).

    Binary problems with ``loss="logistic"`` boost a scalar score (y = ±1 inside);
    ``"softmax"`` (cross-entropy) and ``"multiclass_hinge"`` (Crammer & Singer 2002)
    boost a vector score f(x) ∈ R^K through vector-valued hypotheses: with
    ``StumpOracle`` ``project`` gives vector-leaf stumps (least squares, the (R)
    reading of the paper's "multiclass decision stumps") and ``correlate`` label-coded
    stumps (1 / −1/(K−1), Theorem 2's embedding, the (C) reading).

    Parameters
    ----------
    oracle : Oracle, default=None
        ``None`` means ``TreeOracle(max_depth=3)``.
    loss : "auto", a margin loss ("logistic", "exponential") or a multiclass loss
        ("softmax", "multiclass_hinge"), or a Loss instance, default="auto"
        "auto" is "logistic" for two classes and "softmax" for more, as scikit-learn's
        gradient boosting does; a margin loss (a scalar score) needs two classes.
        ``predict_proba`` exists for losses with a link: σ(f) for the logistic loss,
        σ(2f) for the exponential, the softmax of the scores for cross-entropy; the
        multiclass hinge has none.  A function ``func(y_true, y_pred) -> (grad, hess)``
        (two classes; ``y_true`` is 0 or 1, 1 for ``classes_[1]``; ``y_pred`` the
        margin) is taken as by :class:`FunctionalGradientRegressor`, with no
        ``predict_proba`` (its link is not known).
    <functional parameters>
    <class weight parameters>

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    ensemble_, intercept_, history_, stop_reason_, validation_loss_, best_iteration_
        As for :class:`FunctionalGradientRegressor`; the history also has
        ``train_error`` (weighted training error of the current f), and ``margin`` is the
        ℓ1 margin ``min_i y_i f(x_i)`` (vector scores: ``f_{y_i} − max_{k≠y_i} f_k``)
        over ``||λ||_1 + max|f_0|`` (the intercept counted as a constant hypothesis).
        ``intercept_`` has one entry per class for vector scores (softmax, multiclass
        hinge).

    Examples
    --------
    Three classes, softmax cross-entropy (``loss="auto"``), vector-leaf stumps:

    >>> from sklearn.datasets import load_iris
    >>> from oracleboost.boosters import FunctionalGradientClassifier
    >>> from oracleboost.oracles import StumpOracle
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = FunctionalGradientClassifier(StumpOracle(), n_estimators=50).fit(X, y)
    >>> round(clf.score(X, y), 2)
    0.95
    >>> clf.predict_proba(X[:1]).round(2)
    array([[0.75, 0.16, 0.09]])
    """

    _parameter_constraints: dict = {
        **_FunctionalGradientBooster._parameter_constraints,
        "loss": [*loss_constraint((MarginLoss, MulticlassLoss), "auto"), callable],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    #: Its rounds on the GPU take scores of one column a class (its passes have device
    #: twins for (n, K) rows: :mod:`oracleboost.cuda.class_stages`).
    _scores_by_class_on_device = True

    def __init__(
        self,
        oracle: Oracle | None = None,
        loss: str | MarginLoss | MulticlassLoss = "auto",
        projection: str = "naive",
        schedule: str | Schedule = "constant",
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        strong_convexity: float | None = None,
        query: str = "auto",
        init: str | float = "auto",
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        verbose: int = 0,
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
        self.projection = projection
        self.schedule = schedule
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.strong_convexity = strong_convexity
        self.query = query
        self.init = init
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.block_size = block_size
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.tol = tol
        self.importance_type = importance_type
        self.class_weight = class_weight
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree

    def _vector(self) -> bool:
        """Whether the loss scores each class (f(x) ∈ R^K) rather than one margin."""
        return self._loss_.raw_ndim == 2

    def _raw_shape(self, n, y):
        return (n, len(self.classes_)) if self._vector() else (n,)

    def _labels_inside(self, y_idx):
        return y_idx if self._vector() else np.where(y_idx == 1, 1.0, -1.0)

    def _extra_keys(self):
        return ("train_error",)

    def _fit_record(self, p: _Problem, f: Rows, l1_norm: float) -> dict[str, float]:
        """The weighted training error and the ℓ1 margin of the scores, the intercept f_0
        counted as a constant hypothesis: ``min_i y_i f(x_i)`` (binary) or
        ``min_i f_{y_i}(x_i) − max_{k≠y_i} f_k(x_i)`` (vector scores), over
        ``||λ||_1 + max_k |f_0,k|``.  Binary: one pass by lanes (as on a cluster)."""
        norm = l1_norm + float(np.max(np.abs(p.f0)))
        s = p.s if p.weighted else None
        passes = row_passes.vote_error_and_margin if self._vector() else \
            row_passes.error_and_margin
        error, low = passes(p.blocks, p.y, f, s, p.total if p.weighted else float(p.blocks.n))
        return {"margin": low / norm if norm > 0.0 else math.nan, "train_error": error}

    def _eval_target(self, problem: _Problem, y, extra, where: str):
        yi = self._labels_inside(self._class_index(y, where))
        return (yi, {}), self._eval_weight(extra, y.shape[0], where)

    def _setup(self, X, y, sample_weight, offset=None) -> _Problem:
        backend = fit_backend(X, self._oracle())
        if self._callable_loss():
            backend.refuse("callable_objective", "loss=<function>")
        self._refuse_newton_on(backend)
        given = None if self.loss == "auto" else self._classification_loss(2)
        if given is not None:  # (refused before any data moves)
            self._check_start(backend, given)
        self._refuse_warm_start_on(backend)
        # 'auto' labels: ±1 for two classes, else class indices; a vector loss's always
        # indices
        vector = given is not None and given.raw_ndim == 2
        data = backend.classification_data(self, X, y, sample_weight, self.block_size,
                                           labels="index" if vector else "auto",
                                           **self._data_keywords(backend, offset))
        K = len(self.classes_)
        self._loss_ = self._classification_loss(K)
        if not self._vector() and K != 2:
            raise ValueError(
                "Only binary classification is supported: loss="
                f"{self._loss_.name or self._loss_!r} scores one margin (binary) but y has "
                f"{K} classes; use loss='softmax' or 'multiclass_hinge'"
            )
        if K > 2 and not self._multiclass_answered():
            oracle = type(self._oracle()).__name__
            raise BinaryOnlyOracleError(
                f"Only binary classification is supported by {type(self).__name__} with "
                f"{oracle}: y has {K} classes, and "
                f"loss={self._loss_.name or self._loss_!r} asks the oracle's "
                f"{self._need()} for an answer of (n, K) scores "
                f"(multiclass_{self._need()}), which {oracle} does not give; use an "
                "oracle that does (StumpOracle, for one)"
            )
        yi, s = data.ypm, data.s
        offset = getattr(data, "offset", None)  # (a backend without init_score: none)
        if offset is not None:
            columns = (K,) if self._vector() else ()
            check_offset(offset, yi.shape[0], columns=columns)
            # (as the regressor's: init, or zero)
            f0 = np.zeros(columns) if self.init == "auto" else float(self.init)
            return self._problem(data.rows, yi, s, self._loss_, f0, offset=offset)
        self._check_start(backend, self._loss_)
        if self.init == "auto" and getattr(self._loss_, "init_from_class_masses", False):
            # equal weights cancel: the masses unweighted
            f0 = self._init_from_masses(self._class_masses(
                data.rows.blocks, yi, None if equal_weights(s) else s))
        else:  # a number, or the loss' best constant over every row (refused above else)
            f0 = self._init_raw(self._loss_, yi, s)
        return self._problem(data.rows, yi, s, self._loss_, f0)

    def _multiclass_answered(self) -> bool:
        """Whether the oracle answers the (n, K) form of the rounds' query."""
        return bool(getattr(self._oracle().capabilities, f"multiclass_{self._need()}"))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # K > 2 scores every class: with a loss that scores each class ('auto' is softmax
        # there; a margin loss is binary) and an oracle whose answers do
        try:
            scores_classes = self.loss == "auto" or \
                self._classification_loss(3).raw_ndim == 2
        except (TypeError, ValueError):  # a loss that fit refuses: tags never raise
            scores_classes = not self._callable_loss()  # (a function: binary only)
        tags.classifier_tags.multi_class = scores_classes and self._multiclass_answered()
        return tags

    def _classification_loss(self, n_classes: int) -> Loss:
        if self._callable_loss():
            if n_classes != 2:
                raise ValueError(
                    f"loss=<function> scores one margin a row (two classes); y has "
                    f"{n_classes} classes: use loss='softmax' or a MulticlassLoss")
            return self._objective("signs")
        name = self.loss
        if name == "auto":
            name = "logistic" if n_classes == 2 else "softmax"
        return get_loss(name, (MarginLoss, MulticlassLoss))

    def _class_masses(self, blocks: RowBlocks, y: Rows, s: Rows | None):
        """The classes' weight masses by lanes: ``(Σ s [y > 0], Σ s [y < 0])`` for ±1
        labels, ``Σ s [y = k]`` per class index for vector scores."""
        if self._vector():
            return row_passes.index_masses(blocks, y, s, len(self.classes_))
        return row_passes.class_masses(blocks, y, s)

    def _init_from_masses(self, masses) -> float | np.ndarray:
        """f_0 of a loss whose ``init_raw`` reads only the class masses: ``init_raw`` of
        one row of each class, weighted by the masses (exactly its answer)."""
        if self._vector():
            K = len(masses)
            return self._loss_.init_raw(np.arange(K), np.asarray(masses), n_classes=K)
        return self._loss_.init_raw(np.array([1.0, -1.0]), np.array(masses))

    def _check_start(self, backend: Backend, loss: Loss) -> None:
        """The optimal constant start of a loss that takes no class masses needs every
        row: refused where they are not at hand."""
        if self.init == "auto" and not getattr(loss, "init_from_class_masses", False) \
                and not backend.can("all_rows"):
            raise NotDistributedError(
                f"init='auto' with {loss!r} is not distributed; on {backend.collection} "
                "pass init=<a number>"
            )

    @staticmethod
    def _decision(f):
        """scikit-learn's binary convention: one column, positive meaning ``classes_[1]``
        (for vector scores, f_1 − f_0); else the (n, K) class scores."""
        return f[:, 1] - f[:, 0] if f.ndim == 2 and f.shape[1] == 2 else f

    def _lightgbm_objective(self, n_scores: int) -> str | None:
        return lightgbm_objective(self._loss_, n_scores)

    def _has_proba(self) -> bool:
        if self._callable_loss():  # no link to probabilities is known
            return False
        loss = self.loss if self.loss != "auto" else "softmax"
        return hasattr(get_loss(loss, (MarginLoss, MulticlassLoss)), "inverse_link")

    def _proba(self, f):
        p = self._loss_.inverse_link(f)
        return np.column_stack([1.0 - p, p]) if f.ndim == 1 else p


@documented(functional_parameters=_FUNCTIONAL_PARAMETERS)
class FunctionalGradientRanker(ScoreRegressorMixin, _FunctionalGradientBooster):
    """Functional gradient boosting for ranking by query (Grubb & Bagnell 2011, §5).

    The pairwise ranking hinge over the pairs of documents of each query with different
    relevance; its function-space gradient is N·∂R/∂f(x_n) (§2).  ``predict``
    returns scores: sort each query's documents by decreasing score.

    Parameters
    ----------
    oracle : Oracle, default=None
        ``None`` means ``TreeOracle(max_depth=3)``.
    loss : {"pairwise_hinge"} or Loss, default="pairwise_hinge"
    <functional parameters>

    Attributes
    ----------
    ensemble_, intercept_, history_, stop_reason_, validation_loss_, best_iteration_
        As for :class:`FunctionalGradientRegressor` (``loss`` is the ranking loss).

    Examples
    --------
    >>> from oracleboost.boosters import FunctionalGradientRanker
    >>> from oracleboost.datasets import make_ranking
    >>> from oracleboost.oracles import StumpOracle
    >>> X, relevance, qid = make_ranking(n_queries=50, random_state=0)
    >>> ranker = FunctionalGradientRanker(StumpOracle(), n_estimators=50)
    >>> h = ranker.fit(X, relevance, qid).history_
    >>> round(float(h["loss"][0]), 2), round(float(h["loss"][-1]), 2)  # the hinge falls
    (0.97, 0.52)
    """

    _parameter_constraints: dict = {
        **_FunctionalGradientBooster._parameter_constraints,
        "loss": [*loss_constraint(RankingLoss), Loss],
    }

    def __init__(
        self,
        oracle: Oracle | None = None,
        loss: str | Loss = "pairwise_hinge",
        projection: str = "naive",
        schedule: str | Schedule = "constant",
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        strong_convexity: float | None = None,
        query: str = "auto",
        init: str | float = "auto",
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        verbose: int = 0,
        warm_start: bool = False,
        n_iter_no_change: int | None = None,
        validation_fraction: float | None = 0.1,
        tol: float = 1e-4,
        importance_type: str = "weight",
        subsample: float = 1.0,
        colsample_bytree: float = 1.0,
    ) -> None:
        self.oracle = oracle
        self.loss = loss
        self.projection = projection
        self.schedule = schedule
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.strong_convexity = strong_convexity
        self.query = query
        self.init = init
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.block_size = block_size
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.tol = tol
        self.importance_type = importance_type
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree

    @fit_context
    @eval_parameters_doc
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        qid: ArrayLike,
        *,
        init_score: ArrayLike | None = None,
        eval_set: Sequence[tuple[ArrayLike, ArrayLike]] | None = None,
        eval_qid: Sequence[ArrayLike] | None = None,
        eval_init_score: Sequence[ArrayLike | None] | None = None,
        eval_metric: str | Callable | Sequence | dict | None = None,
        eval_names: Sequence[str] | None = None,
    ) -> FunctionalGradientRanker:
        """Boost with up to ``n_estimators`` weak learners.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Graded relevance (larger is better).
        qid : array-like of shape (n_samples,)
            The query of each row; pairs are formed within a query only.
        init_score : array-like of shape (n_samples,), default=None
            Each row's starting score o_i (LightGBM's ``init_score``, XGBoost's
            ``base_margin``), for instance another ranker's scores: the rounds start
            from ``f_0 + o``, and the pairwise loss reads the differences
            ``o_i + f(x_i) − o_j − f(x_j)``.  ``predict`` does not add it (as
            LightGBM's): add the new rows' offset to ``predict`` yourself.  With an
            ``init_score``, ``init="auto"`` is 0 (as without one: a constant cancels
            from every difference); a number ``init`` is added on top of the offset.
            An offset that is constant within each query leaves every difference, and
            so the fit, as it is (to rounding).  Not with early stopping's held-out
            rows (``validation_fraction``; give an ``eval_set`` with its
            ``eval_init_score``).
        eval_set : list of (X, y) pairs, default=None
            Sets whose ranking loss is recorded after every weak learner, as
            ``history_["val_loss_0"]``, …; each needs its ``eval_qid``.
            In a ``Pipeline`` (with metadata routing) the sets reach the booster as
            given, not through the steps before it, as LightGBM's do: their curves are
            then those of untransformed rows.  Transform them first, or hold out rows
            with ``validation_fraction`` (split after the steps).
        eval_qid : list of array-like, default=None
            The query of each row of each eval set (XGBoost's name).
        eval_init_score : list of array-like or None, default=None
            Each eval set's own ``init_score`` (one entry, or None, per set), added to
            the model's scores on it for its curves and ``eval_metric`` (LightGBM's
            ``eval_init_score``).
        <eval parameters>
        """
        return self._fit_rounds(X, y, qid, eval_set=eval_set, eval_rows=eval_qid,
                                eval_metric=eval_metric, eval_names=eval_names,
                                offset=init_score, eval_offsets=eval_init_score)

    @num_iteration_doc
    def score(self, X: ArrayLike, y: ArrayLike, qid: ArrayLike, *,
              num_iteration: int | None = None) -> float:
        """NDCG of :meth:`predict`'s ranking within each query, averaged over the queries,
        as LightGBM's ``ndcg`` metric computes it (:func:`oracleboost.losses.ndcg`: gain
        ``2**y − 1``, discount ``1/log2(1 + rank)``, the whole list of each query, a
        query with no relevant document counting 1).  Larger is better, 1 at best.
        Any finite grade is scored: the gains of a query are computed divided by one
        power of two, which leaves its NDCG as it is and keeps ``2**y`` within float64.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Graded relevance, non-negative.
        qid : array-like of shape (n_samples,)
            The query of each row, as in :meth:`fit`.  (``cross_validate`` and
            ``GridSearchCV`` pass it to this default score only through scikit-learn's
            metadata routing: ``set_score_request(qid=True)``.)
        num_iteration : int or None, default=None
            <num_iteration>

        Returns
        -------
        float
        """
        pred = self.predict(X, num_iteration=num_iteration)
        y = self._numeric_target(np.asarray(y), "score")
        if y.shape != pred.shape:
            raise ValueError(f"y must have shape {pred.shape}, one grade for each row of X; "
                             f"got shape {y.shape}")
        return ndcg(y, pred, check_groups(qid, y.shape[0], "qid"))

    _row_args = ("qid",)
    _eval_row_arg = "qid"
    _split_groups_arg = "qid"  # a held-out split keeps each query whole

    def _eval_target(self, problem: _Problem, y, extra, where: str):
        y = self._numeric_target(y, where)
        if extra is None:
            raise ValueError(f"{where} needs its query ids: pass eval_qid=[qid, ...]")
        qid = check_groups(extra, y.shape[0], f"eval_qid ({where})")
        return (y, {"groups": qid}), np.ones(y.shape[0])

    def _row_array(self, name: str, a, n: int) -> np.ndarray:
        return check_groups(a, n, name)  # the only per-row argument: qid

    def _setup(self, X, y, qid, offset=None) -> _Problem:
        X, y = validate_input(self, X, y, y_numeric=True)
        qid = check_groups(qid, X.shape[0], "qid")
        loss = get_loss(self.loss, RankingLoss if isinstance(self.loss, str) else Loss)
        s = np.ones(X.shape[0])
        # (in memory: validate_input refuses another backend's collections)
        rows = MEMORY.rows(self, X, self.block_size)
        if offset is not None:
            offset = check_offset(offset, X.shape[0], columns=())
            # (as the regressor's: init, or zero)
            f0 = 0.0 if self.init == "auto" else float(self.init)
            return self._problem(rows, y, s, loss, f0, {"groups": qid}, offset=offset)
        return self._problem(rows, y, s, loss, self._init_raw(loss, y, s), {"groups": qid})
