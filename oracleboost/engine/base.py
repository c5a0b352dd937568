"""The estimator every booster is: scikit-learn's plumbing around the round loop.

A booster file holds what its paper's algorithm box says and nothing else: how to set up
a fit (``_setup``: validate, bind the oracle; the vocabulary is in :mod:`.rounds`), the
initial state (``_initial_state``) and one round (``_round``), which asks the oracle
(``correlate`` or ``project``), chooses a step, computes the new running training scores
(never re-predicting old hypotheses) and returns a
:class:`~oracleboost.engine.rounds.RoundResult`.

:class:`BaseBooster` turns that into a scikit-learn estimator:

* **fit as a transaction**: any exception (from an oracle, a loss, bad input) leaves the
  estimator exactly as it was before ``fit`` (unfitted, or the previous model whole) and
  re-raises; a second ``fit`` of the same estimator while one runs (another thread) is
  refused;
* **the loop** (:mod:`.loop`) with its **monitors** (:mod:`.monitors`): history and
  timing, interrupts that keep the completed rounds, non-finite and diverging losses,
  validation curves and early stopping (:mod:`.eval_sets`, :mod:`.hold_out`),
  ``verbose`` progress, and scikit-learn's callbacks (:mod:`.callbacks`);
* **warm_start**: as in scikit-learn's gradient boosting, raising ``n_estimators`` and
  refitting on the same data continues from the fitted rounds, with the saved state
  (running scores, the seed generator), so a deterministic oracle gives exactly one
  longer fit; a pickle keeps that state only when ``warm_start`` is True (it grows with
  the training rows: :meth:`BaseBooster.__getstate__`);
* **the model** (:mod:`.model`): ``ensemble_``; what the fitted booster shows of it
  (:mod:`.inspection`): its terms, ``feature_importances_``, the decision on new rows and
  its staged form.
"""

from __future__ import annotations

import copy
import functools
import inspect
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from numbers import Integral, Real
from typing import Any, TypeVar, cast

import numpy as np
from sklearn.base import BaseEstimator, _fit_context, is_classifier
from sklearn.metrics import r2_score
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from oracleboost._running_state import from_plain, to_plain
from oracleboost._typing import ArrayLike
from oracleboost._validation import (
    normalise_weights,
)
from oracleboost.engine.backends import backend_for
from oracleboost.engine.callbacks import CALLBACK_ATTRIBUTES, CallbackSupport, callback_monitors
from oracleboost.engine.categories import (
    encode_categories,
    same_categories,
    takes_categorical,
)
from oracleboost.engine.eval_sets import EvalSet, EvalSetsMixin
from oracleboost.engine.history import History
from oracleboost.engine.hold_out import HoldOutMixin
from oracleboost.engine.input import data_signature, validate_input
from oracleboost.engine.inspection import (
    InspectionMixin,
    lightgbm_option,
    lightgbm_options_doc,
    num_iteration_doc,
)
from oracleboost.engine.loop import Run, run_rounds
from oracleboost.engine.model import Ensemble
from oracleboost.engine.monitors import (
    Divergence,
    EarlyStopping,
    EvalCurves,
    NonFiniteLoss,
    Progress,
)
from oracleboost.engine.rounds import BoostingWarning, Problem, RoundResult, StopReason
from oracleboost.losses import Loss, loss_names
from oracleboost.oracles.base import Oracle, OracleCapabilityError
from oracleboost.oracles.defaults import default_oracle

__all__ = ["BaseBooster", "ScoreRegressorMixin", "fit_context", "validate_input",
           "data_signature", "loss_constraint", "num_iteration_doc"]


#: The estimators whose ``fit`` is running: id → the thread running it; and its lock.
_FITTING: dict[int, int] = {}
_FITTING_LOCK = threading.Lock()


@contextmanager
def _one_fit_at_a_time(estimator):
    """Refuse a second concurrent ``fit`` of one estimator with a ``RuntimeError``.

    Two fits of one estimator on two threads each commit their own attributes, so the
    estimator could end with the ensemble of one fit and the ``classes_`` of the other
    (measured: 6 runs of 10, predicting "yes"/"no" for the first fit's 0/1 data without
    an error).  scikit-learn promises nothing here; a fit that is already a transaction
    can at least refuse.  The running fits are kept in a registry keyed by the
    estimator's id, not on the estimator: a lock is not picklable, and ``clone``,
    ``get_params`` and pickling see the estimator as it is.  Non-blocking: the second
    fit fails at once, before it changes anything.  Re-entrant within the thread that
    holds it (:func:`fit_context` takes it around scikit-learn's ``_fit_context``, and
    ``_fit_rounds`` again, for boosters whose ``fit`` is not decorated).
    """
    key, me = id(estimator), threading.get_ident()
    with _FITTING_LOCK:
        holder = _FITTING.get(key)
        if holder is not None and holder != me:
            raise RuntimeError(
                f"{type(estimator).__name__} (id {key:#x}) is already being fitted in another "
                "thread; one estimator runs one fit at a time. Fit a clone in each thread "
                "(sklearn.base.clone(estimator))"
            )
        _FITTING[key] = me
    try:
        yield
    finally:
        if holder is None:  # the outermost holder releases
            with _FITTING_LOCK:
                _FITTING.pop(key, None)


#: A function that :func:`fit_context` decorates (its signature is kept).
_Fit = TypeVar("_Fit", bound=Callable[..., Any])
_Self = TypeVar("_Self", bound="BaseBooster")


def fit_context(fit: _Fit) -> _Fit:
    """The decorator of every booster's ``fit``: one fit at a time per estimator, then
    scikit-learn's ``_fit_context`` (parameter validation; callbacks set up before and
    torn down after).  The refusal of a concurrent fit comes first, so it touches
    nothing of the running fit, its callbacks included."""
    inner = _fit_context(prefer_skip_nested_validation=False)(fit)
    takes_offset = "init_score" in inspect.signature(fit).parameters

    @functools.wraps(fit)
    def wrapper(estimator, *args, **kwargs):
        if not takes_offset:
            _refuse_offset(estimator, kwargs)
        with _one_fit_at_a_time(estimator):
            return inner(estimator, *args, **kwargs)

    return cast(_Fit, wrapper)  # functools.wraps: the same signature


def _refuse_offset(estimator: Any, kwargs: dict[str, Any]) -> None:
    """A ``fit`` without a per-row starting score refuses ``init_score`` and
    ``eval_init_score`` with the booster's reason (``_no_offset_reason``), where Python
    would only say that the keyword is unexpected."""
    for name in ("init_score", "eval_init_score"):
        if name in kwargs:
            raise TypeError(f"{type(estimator).__name__}.fit() takes no {name}: "
                            f"{estimator._no_offset_reason}")


#: The code of :func:`fit_context`'s wrapper (one for every decorated ``fit``): the frame
#: a warning about a fit points above (:meth:`BaseBooster._warn`).
_FIT_CALL = fit_context(lambda estimator: estimator).__code__


class _RegisteredLosses(StrOptions):
    """The names of the registered losses of a kind, read when ``fit`` validates the
    parameters: a loss registered later (:func:`~oracleboost.losses.register_loss`) is
    accepted by name too."""

    def __init__(self, kind, extra: tuple[str, ...] = ()):
        self._kind, self._extra = kind, frozenset(extra)
        super().__init__(set())

    @property
    def options(self) -> set[str]:
        return set(loss_names(self._kind)) | self._extra

    @options.setter
    def options(self, value) -> None:  # StrOptions.__init__ assigns it; computed here
        pass


def loss_constraint(kind: type[Loss] | tuple[type[Loss], ...], *extra: str) -> list:
    """The ``loss`` parameter's constraint: the name of a registered loss of ``kind`` (a
    class or a tuple of classes), one of ``extra`` (e.g. "auto"), or a ``kind``
    instance.  The accepted names come from the registry, not from a list kept here."""
    return [_RegisteredLosses(kind, extra), kind if not isinstance(kind, tuple) else Loss]


#: The fitted attributes only ``warm_start`` reads, each growing with the training rows:
#: the booster's running state and early stopping's split of the rows.  A pickle leaves
#: them out unless ``warm_start=True``, and then holds them as plain data
#: (:meth:`BaseBooster.__getstate__`).
_RUNNING_STATE = ("_state_", "_held_out_")

#: Parameters added after boosters were first stored, each with the value that turns it
#: off (the fit an older file holds): a pickle, ``skops.io`` or JSON file without one
#: reads it as that value, so ``get_params``, ``clone`` and ``repr`` of the loaded booster
#: work and it refits as it was fitted.
ADDED_PARAMETERS: dict[str, Any] = {"class_weight": None, "subsample": 1.0,
                                    "colsample_bytree": 1.0}


def with_added_parameters(cls: type, state: dict[str, Any]) -> dict[str, Any]:
    """``state`` of a booster of class ``cls`` with each of :data:`ADDED_PARAMETERS` that
    ``cls`` takes and ``state`` lacks set to its off value (``state`` itself otherwise)."""
    names = cls._get_param_names() if isinstance(cls, type) and issubclass(cls, BaseBooster) \
        else ()  # (scikit-learn's estimators in a file keep their own parameters)
    missing = {n: ADDED_PARAMETERS[n] for n in names
               if n in ADDED_PARAMETERS and n not in state}
    return {**state, **missing} if missing else state


class BaseBooster(InspectionMixin, HoldOutMixin, EvalSetsMixin, CallbackSupport,
                  BaseEstimator):
    """Estimator plumbing and the round loop shared by every booster.

    Subclasses implement ``_setup`` (validate the data, set ``classes_`` and the like,
    bind the oracle; return a :class:`~oracleboost.engine.rounds.Problem`),
    ``_initial_state`` (the state before round 1 and the model's intercept), ``_round``
    (one round of the algorithm box) and ``_history_keys``, and call
    :meth:`_fit_rounds` from ``fit``; optionally ``_new_model`` (another model than an
    :class:`~oracleboost.engine.model.Ensemble`), ``_growth_allowed``,
    ``_eval_target``/``_eval_metrics`` (validation curves) and ``_monitors``.  After
    ``fit``: ``ensemble_``, ``history_``, ``stop_reason_``.

    The mixins hold the rest: the fitted model's attributes and its decision on new rows
    (:class:`~oracleboost.engine.inspection.InspectionMixin`), early stopping's held-out
    rows (:class:`~oracleboost.engine.hold_out.HoldOutMixin`) and the eval sets
    (:class:`~oracleboost.engine.eval_sets.EvalSetsMixin`).
    """

    _parameter_constraints: dict = {
        "oracle": [HasMethods(["bind"]), None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither"), None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "importance_type": [StrOptions({"weight", "split", "gain"})],
    }

    #: The per-row arguments of ``fit`` after X and y, in order (split with the rows when
    #: early stopping holds some out), and which of them an ``eval_set`` entry takes from
    #: its parallel list (``eval_sample_weight``; the ranker's ``eval_qid``).
    _row_args: tuple[str, ...] = ("sample_weight",)
    _eval_row_arg = "sample_weight"
    #: The per-row arguments of ``fit`` that scikit-learn's callbacks get as ``metadata``
    #: (as ``LogisticRegression`` gives ``sample_weight``).  ``ScoringMonitor`` passes
    #: them on to its scorer: scikit-learn's scorers take ``sample_weight``, a ranking
    #: score needs the ranker's ``qid``.  The others (``MirrorBoostingClassifier``'s
    #: ``sample_group``) only shape the training and would fail every scorer.
    _callback_metadata: tuple[str, ...] = ("sample_weight", "qid")
    #: Why ``fit`` takes no ``init_score`` (a booster whose ``fit`` takes none says
    #: why in its own words; :func:`fit_context` refuses the keyword with it).
    _no_offset_reason = "the booster's rounds have no place for a per-row starting score"

    #: Whether the booster's own arithmetic takes sparse X (False where it needs the
    #: dense matrix, as dual acceleration's products of its whole columns).
    _sparse_capable = True

    def _accepts_sparse(self) -> bool:
        """Whether ``fit`` and the prediction methods take scipy sparse X: when the
        oracle (the default one for ``oracle=None``) declares ``sparse_input``, and the
        booster's own arithmetic can (``_sparse_capable``)."""
        if not self._sparse_capable:
            return False
        try:
            return bool(self._oracle().capabilities.sparse_input)
        except Exception:  # an oracle that cannot say: fit's own checks report it
            return False

    def _sparse_refusal_reason(self) -> str:
        """Who refuses sparse X, for :func:`validate_input`'s error."""
        if not self._sparse_capable:
            return ""
        oracle = self.oracle if self.oracle is not None else "the default oracle"
        if not isinstance(oracle, str):
            oracle = type(oracle).__name__
        return f" with {oracle}"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # honest for the oracle it has (the default one when oracle=None): sparse X, and
        # NaN (missing values; validate_input reads this tag, as check_estimator does)
        tags.input_tags.sparse = self._accepts_sparse()
        tags.input_tags.allow_nan = _takes_nan(self._oracle())
        return tags

    def _sk_visual_block_(self) -> Any:
        """scikit-learn's HTML repr: the oracle drawn nested, with its own parameters
        (the default oracle when ``oracle=None``, marked so)."""
        from oracleboost._html_repr import nested_block

        note = " (default)" if self.oracle is None else ""
        return nested_block(self, [("oracle", self._oracle(), note)])

    # -- persistence -------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        """What a pickle or a ``skops.io`` file of the booster holds: everything, but
        with ``warm_start=False`` not the running state a warm start would continue
        from (the training rows' scores and weights, and early stopping's split of the
        rows: 16 bytes or more per training row, nearly all of a model of a few
        rounds).  Such a stored model predicts bit for bit as the fitted one; loaded
        and fitted with ``warm_start=True``, it fits anew (with a warning).  Fit with
        ``warm_start=True`` to store a model that continues: the running state is then
        stored as plain data (dicts, tuples, numbers, arrays and the library's public
        objects: :mod:`oracleboost._running_state`), and its working objects are made
        again on load, so that a stored model holds only the types of
        :func:`oracleboost.persistence.trusted_types`.  ``copy.copy`` and
        ``copy.deepcopy`` copy everything (:meth:`__copy__`, :meth:`__deepcopy__`)."""
        state = super().__getstate__()
        if not self.warm_start:
            return {k: v for k, v in state.items() if k not in _RUNNING_STATE}
        return {k: to_plain(v) if k in _RUNNING_STATE else v for k, v in state.items()}

    def __copy__(self: _Self) -> _Self:
        """A shallow copy with every attribute, the running state included (an
        in-process copy is not stored, so nothing is left out of it)."""
        new = type(self).__new__(type(self))
        vars(new).update(vars(self))
        return new

    def __deepcopy__(self: _Self, memo: dict[int, Any]) -> _Self:
        """A deep copy with every attribute, the running state included: a copy of a
        fitted booster continues with ``warm_start=True`` as the booster would."""
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        vars(new).update(copy.deepcopy(vars(self), memo))
        return new

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a pickled or ``skops.io``-stored booster.  skops stores a ``str``
        enum as its string, so ``stop_reason_`` comes back as ``"max_rounds"``; it is
        made a :class:`StopReason` again (``warm_start`` asks it ``resumable``).  The
        running state stored as plain data is made into its working objects again, and a
        parameter the file predates reads as off (:data:`ADDED_PARAMETERS`)."""
        reason = state.get("stop_reason_")
        if isinstance(reason, str) and not isinstance(reason, StopReason):
            state = {**state, "stop_reason_": StopReason(reason)}
        state = {k: from_plain(v) if k in _RUNNING_STATE else v for k, v in state.items()}
        super().__setstate__(with_added_parameters(type(self), state))

    # -- hooks ---------------------------------------------------------------------------
    def _setup(self, *args, **kwargs) -> Problem:
        raise NotImplementedError

    def _initial_state(self, problem: Problem) -> tuple[Any, float | np.ndarray]:
        raise NotImplementedError

    def _resumed(self, problem: Problem, state: Any) -> Any:
        """The state a warm start continues from, for this fit's ``problem``: the stored
        one, unless part of it was made from a parameter the warm start changed (a
        booster whose state depends on such a parameter remakes that part here)."""
        return state

    def _round(
        self, problem: Problem, state: Any, ensemble: Ensemble, t: int, budget: int
    ) -> RoundResult:
        """Round ``t + 1`` (``t`` weak learners used so far, ``budget`` left)."""
        raise NotImplementedError

    def _history_keys(self, problem: Problem) -> tuple[str, ...]:
        raise NotImplementedError

    def _new_model(self, problem: Problem, intercept):
        """The model the rounds add to: an :class:`Ensemble` of hypotheses (a linear
        model for the margin classifier).  It needs ``add(*term)``, ``copy``,
        ``n_rounds``, ``l1_norm`` where margins use it, and the decision functions."""
        return Ensemble(intercept=intercept)

    #: Whether the loop watches ``loss`` for divergence (False for boosters whose recorded
    #: loss is bounded, e.g. a training error).
    _watch_divergence = True

    def _growth_allowed(self, problem: Problem) -> bool:
        """Whether the loss may legitimately rise above its best (then growth past
        :data:`DIVERGENCE_FACTOR` warns instead of stopping)."""
        return False

    # -- the loop ------------------------------------------------------------------------
    def _fit_rounds(self, X, y, *rows, eval_set=None, eval_rows=None, eval_metric=None,
                    eval_names=None, offset=None, eval_offsets=None):
        """``fit``: validate → initial state → repeated round → finish, as one transaction.

        ``rows`` are the per-row arguments named by ``_row_args``; ``eval_set`` is a list
        of ``(X, y)`` pairs and ``eval_rows`` the parallel list of their
        ``_eval_row_arg`` (or None); ``eval_metric`` and ``eval_names`` are ``fit``'s
        (:func:`~oracleboost.engine.eval_sets.eval_scorers`,
        :func:`~oracleboost.engine.eval_sets.eval_names`).  ``offset`` (``fit``'s
        ``init_score``, where a booster takes one) goes to ``_setup`` as ``offset=``,
        only when given (refused with early stopping's held-out rows, which would need
        offsets of their own); ``eval_offsets`` is the parallel list of the eval sets' own
        (``eval_init_score``).  Any exception but a
        ``KeyboardInterrupt`` after a completed round restores the estimator as it was
        before the call and re-raises.
        A second ``fit`` of the same estimator while one runs (another thread) raises a
        ``RuntimeError`` before touching anything (see :func:`_one_fit_at_a_time`).
        """
        with _one_fit_at_a_time(self):
            before = dict(vars(self))
            try:
                if offset is not None and self._early_stopping_on() \
                        and self.validation_fraction is not None:
                    raise ValueError(
                        "init_score with early stopping's held-out rows "
                        "(validation_fraction) is not supported: set "
                        "validation_fraction=None and pass eval_set=[(X_val, y_val)] with "
                        "eval_init_score=[its offsets]")
                if isinstance(eval_set, Iterator):  # (read once: counted here, used below)
                    eval_set = list(eval_set)
                self._check_watched(eval_set)
                given = (X, y)
                X = self._encode_categories(X)
                X, y, rows, held = self._hold_out(X, y, rows)
                problem = (self._setup(X, y, *rows) if offset is None
                           else self._setup(X, y, *rows, offset=offset))
                evals = self._eval_sets(problem, eval_set, eval_rows, held,
                                        metric=eval_metric, names=eval_names, given=given,
                                        offsets=eval_offsets)
                metadata = {k: v for k, v in zip(self._row_args, rows, strict=True)
                            if v is not None and k in self._callback_metadata}
                # callbacks score the data as fit was given it (a DataFrame's categories,
                # not their codes, which predict would refuse), or the training rows
                # (codes in an array, as predict reads them) after a hold-out
                fit_X = given[0] if held is None else X
                self._boost(problem, evals, {"X": fit_X, "y": y,
                                             "metadata": metadata or None})
            except BaseException:
                # scikit-learn's callback bookkeeping stays: _fit_context tears the
                # callbacks down after fit, failed or not
                kept = {k: v for k, v in vars(self).items() if k in CALLBACK_ATTRIBUTES}
                vars(self).clear()
                vars(self).update(before)
                vars(self).update(kept)
                raise
        return self

    def _resuming(self) -> bool:
        """Whether this fit continues the fitted model (``warm_start`` with the running
        state of the fit it continues)."""
        return self.warm_start and getattr(self, "_state_", None) is not None

    def _encode_categories(self, X):
        """``fit``'s X with a DataFrame's categorical columns as codes, where the oracle
        takes them (:mod:`.categories`); sets ``categories_`` (empty otherwise: the
        columns are then read as scikit-learn reads them).  A warm start continues only
        with the categories of the fit it continues (the same codes must mean the same
        values)."""
        categories: dict[int, np.ndarray] = {}
        if takes_categorical(self._oracle()) and backend_for(X) is None:
            X, categories = encode_categories(X)
        resume = self._resuming()
        if resume and not same_categories(categories, getattr(self, "categories_", {})):
            raise ValueError(
                "warm_start=True continues a fit on the same data, but X's categorical "
                "columns or their categories differ from those of the fitted model "
                "(categories_); set warm_start=False to fit anew"
            )
        self.categories_ = categories
        return X

    def _boost(self, problem: Problem, evals: Sequence[EvalSet] = (),
               fit_data: dict | None = None) -> None:
        """Run the rounds (:func:`~oracleboost.engine.loop.run_rounds`) from the start,
        or from the fitted model with ``warm_start``; then set the fitted attributes."""
        resume = self._resuming()
        stop = None
        if resume:
            if self._signature_ != problem.signature:
                raise ValueError(
                    "warm_start=True continues a fit on the same data, but X, y or "
                    "sample_weight differ from those of the fitted model, or the starting "
                    "score (that loss and init make, and init_score); set "
                    "warm_start=False to fit anew"
                )
            history = History.from_dict(self.history_)
            if self.n_estimators < len(history):
                raise ValueError(
                    f"n_estimators={self.n_estimators} must be at least the number of "
                    f"rounds already fitted ({len(history)}) when warm_start=True"
                )
            # Copies: a failed continuation must leave the fitted model as it was.
            state = self._resumed(problem, copy.deepcopy(self._state_))
            model = self.ensemble_.copy()
            stop = None if self.stop_reason_.resumable else self.stop_reason_
            if stop is not None and self.n_estimators > len(history):
                self._warn(
                    f"warm_start=True: the fitted model stopped with stop_reason_="
                    f"'{stop}', which more rounds do not continue, so n_estimators="
                    f"{self.n_estimators} added no rounds to its {len(history)}; set "
                    "warm_start=False to fit anew")
        else:
            if self.warm_start and hasattr(self, "ensemble_"):
                self._warn(
                    "warm_start=True, but this fitted model holds no running state to "
                    "continue from (it was stored with warm_start=False, or saved as "
                    "JSON, or fitted on a dask array), so this fit starts again from "
                    "round 0; to store a model that continues, fit it with "
                    "warm_start=True before pickling it or storing it with skops")
            state, intercept = self._initial_state(problem)
            model = self._new_model(problem, intercept)
            history = History(self._history_keys(problem) + ("cumulative_time",))
        named = self._named_sets(evals, resume)  # (a clash refused before any round)
        run = Run(self, problem, model, history, state,
                  monitors=self._monitors(problem, evals, resume), fit_data=fit_data or {})
        # the run holds the state from here on, and lets each round's go: a name kept
        # here would hold the state before round 1 for the whole fit (on a cluster, a
        # few float64 arrays a row on every worker)
        del state
        blocks = getattr(problem, "blocks", None)
        try:
            run_rounds(run, self.n_estimators, stop)
        except BaseException:
            # the workers' pooled buffers are the fit's: a fit that raises lets them go
            # as one that ends does (settle, below)
            if blocks is not None:
                blocks.abandon()
            raise
        stopping = next((m for m in run.monitors if isinstance(m, EarlyStopping)), None)
        self.validation_loss_ = np.asarray(stopping.curve if stopping else [], dtype=float)
        self.best_iteration_ = len(run.history) if stopping else None
        self.ensemble_ = run.model
        self.history_ = run.history.as_dict()
        self._eval_names_ = named
        self.stop_reason_ = run.stop
        # a fit on a cluster keeps no running state: it lives on the workers (futures
        # that a pickle could not carry, and that would hold the workers' memory)
        if blocks is not None:
            blocks.settle()
        self._state_ = run.state if blocks is None or blocks.keeps_state else None
        self._signature_ = problem.signature

    def _warn(self, message: str) -> None:
        """A :class:`BoostingWarning` about this fit, pointing at the code that called
        ``fit`` (however many of the booster's own frames lie between: the frame above
        :func:`fit_context`'s wrapper; without one, the caller of this method's caller)."""
        frame, level = sys._getframe(), 1
        while frame is not None and frame.f_code is not _FIT_CALL:
            frame, level = frame.f_back, level + 1
        warnings.warn(f"{type(self).__name__}: {message}", BoostingWarning,
                      stacklevel=level + 1 if frame is not None else 3)

    def _fitted_attributes(self, run: Run) -> dict:
        """The fitted attributes of the model as it stands in ``run`` (copies): what a
        shallow copy of this booster needs to predict as if the fit had stopped there
        (scikit-learn's callbacks ask for such a ``fitted_estimator``)."""
        return {"ensemble_": run.model.copy(), "history_": run.history.as_dict(),
                "stop_reason_": run.stop or StopReason.MAX_ROUNDS}

    def _monitors(self, problem: Problem, evals: Sequence[EvalSet], resume: bool) -> list:
        """The monitors of this fit, in the order they see each round
        (:mod:`~oracleboost.engine.monitors`); a booster may add its own."""
        metrics = ("loss", "error") if is_classifier(self) else ("loss",)
        monitors = [NonFiniteLoss(), EvalCurves(evals, metrics)]
        if self.verbose:
            monitors.append(Progress(self.verbose, self.n_estimators))
        if self._watch_divergence:
            monitors.append(Divergence(self._growth_allowed(problem),
                                       self._divergence_hint(problem)))
        if self._early_stopping_on():
            earlier = getattr(self, "validation_loss_", ()) if resume else ()
            monitors.append(EarlyStopping(
                evals[0].key("loss") if evals else "loss", self.n_iter_no_change,
                self._early_stopping_tol(), earlier))
        monitors.extend(callback_monitors(self))
        return monitors

    def _divergence_hint(self, problem: Problem) -> str:
        return "A smaller learning_rate may help."

    # -- helpers for fit ------------------------------------------------------------------
    #: Whether the booster's risk is a weighted mean of its rows' losses, so that the
    #: weights' scale is normalised away at ``fit`` (see ``_positive_weight_rows``).
    #: False where the weights' scale is part of the problem (a risk that sums them).
    _scale_free_weights = True

    def _positive_weight_rows(self, X, y, s, *rows):
        """Keep the rows with positive weight, and normalise their weights.

        Rows of weight 0 add nothing to any risk, and binding them would still move
        data-dependent choices such as stump thresholds (fitting with weight 0 must
        equal fitting without the row).  Every risk is a weighted mean, so the fit does
        not depend on the weights' scale; with the weights scaled here, once, by a power
        of two to a mean in [1, 2), neither does its arithmetic (see
        :func:`~oracleboost._validation.normalise_weights`: weights 1e300 or 1e-300
        times the given ones fit as they do, and a power of two times them bit for
        bit), unless ``_scale_free_weights`` is False.  ``rows`` are further per-row
        arrays (or None) cut with them.
        """
        keep = s > 0
        if not keep.all():
            X, y, s = X[keep], y[keep], s[keep]
            rows = tuple(None if a is None else a[keep] for a in rows)
        return (X, y, normalise_weights(s) if self._scale_free_weights else s, *rows)

    #: The query whose default oracle (:func:`~oracleboost.oracles.default_oracle`) the
    #: booster uses when ``oracle`` is None.
    _default_query = "correlate"

    def _oracle(self) -> Oracle:
        """``oracle``, or the default oracle for :attr:`_default_query`."""
        return default_oracle(self._default_query) if self.oracle is None else self.oracle

    def _refuse_warm_start_on(self, backend) -> None:
        """A warm start of a fitted model where ``backend`` cannot keep the running state:
        refused from its table (a no-op in memory)."""
        if self.warm_start and hasattr(self, "ensemble_"):
            backend.refuse("warm_start", "warm_start")

    def _bind_rows(self, rows, need: str):
        """:meth:`_bind` to a fit's rows, wherever they are: ``rows.backend`` binds the
        oracle (:meth:`~oracleboost.engine.backends.Backend.bind`)."""
        oracle = self._oracle()
        return self._answering(rows.backend.bind(oracle, rows, **self._bind_keywords()),
                               oracle, need)

    def _answering(self, bound, oracle: Oracle, need: str):
        """``bound``, refused, naming ``need``, when it cannot answer that."""
        if not getattr(bound.capabilities, need):
            raise OracleCapabilityError(
                f"{type(self).__name__} needs an oracle that answers {need}; "
                f"{type(oracle).__name__} does not (capabilities: {bound.capabilities})"
            )
        return bound

    def _bind_keywords(self) -> dict[str, Any]:
        """``bind``'s keywords beyond X: the fit's categorical columns, only where there
        are some (then the oracle declared that it takes them; every other oracle is
        bound as ``bind(X)``)."""
        categories = getattr(self, "categories_", None)
        return {"categorical_features": tuple(sorted(categories))} if categories else {}

    def _bind(self, X, need: str):
        """Bind the oracle to X; refuse it, naming ``need``, when it cannot answer that."""
        oracle = self._oracle()
        return self._answering(oracle.bind(X, **self._bind_keywords()), oracle, need)


def _takes_nan(oracle: Any) -> bool:
    """Whether ``oracle`` declares that X may hold NaN (``Capabilities.allow_nan``).

    False when its capabilities cannot be read: a wrapper around something that is no
    oracle raises ``TypeError`` there, and an object that only has ``bind`` declares
    none; ``fit`` then refuses it with its own message (and NaN with today's)."""
    try:
        capabilities = oracle.capabilities
    except (AttributeError, TypeError):
        return False
    return bool(getattr(capabilities, "allow_nan", False))


class ScoreRegressorMixin:
    """Prediction for boosters whose model's sum is the prediction itself (regression,
    ranking scores): ``predict`` and ``staged_predict``."""

    @staticmethod
    def _lightgbm_objective(n_scores: int) -> str:
        """An exported model's objective: LightGBM's ``predict`` is the raw sum."""
        return "regression"

    @lightgbm_options_doc
    @num_iteration_doc
    def predict(self, X: ArrayLike, *, num_iteration: int | None = None,
                raw_score: bool = False, pred_leaf: bool = False,
                pred_contrib: bool = False) -> np.ndarray:
        """The model's sum ``f(x)`` (the ensemble's intercept plus its weighted terms);
        or, as LightGBM's ``predict`` takes them, the leaves or the contributions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        num_iteration : int or None, default=None
            <num_iteration>
        <lightgbm_options>

        Returns
        -------
        ndarray of shape (n_samples,)
            (A dask array when X is one.)  With ``pred_leaf`` or ``pred_contrib``, what
            it says.
        """
        option = lightgbm_option(raw_score, pred_leaf, pred_contrib)
        if option is not None and option != "raw_score":
            return self._tree_prediction(X, option, num_iteration)
        if (backend := backend_for(X)) is not None:
            return backend.predict(
                self, functools.partial(self.predict, num_iteration=num_iteration), X)
        return self._raw(X, num_iteration)

    @num_iteration_doc
    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
              num_iteration: int | None = None) -> float:
        """The coefficient of determination R² of :meth:`predict` (scikit-learn's
        ``RegressorMixin.score``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        num_iteration : int or None, default=None
            <num_iteration>

        Returns
        -------
        float
        """
        return float(r2_score(y, self.predict(X, num_iteration=num_iteration),
                              sample_weight=sample_weight))

    def staged_predict(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """:meth:`predict` after each weak learner (one term added to a running array per
        weak learner; the last equals :meth:`predict` bit for bit).

        Yields
        ------
        ndarray of shape (n_samples,)
        """
        if (backend := backend_for(X)) is not None:
            yield from backend.predict(self, self.staged_predict, X, staged=True)
            return
        yield from self._staged_raw(X)
