"""Validation curves and early stopping, shared by every booster.

``fit(..., eval_set=[(X_val, y_val), ...])`` records, after every weak learner, the
booster's own loss (and a classifier's error) on each set as ``history_["val_loss_0"]``,
``history_["val_error_0"]``, …  The scores on a set are kept up to date by the model's
running sums (:class:`~oracleboost.engine.model.RunningScores`): each round predicts
only its new hypothesis on the set, never the whole ensemble again.

Early stopping follows scikit-learn's gradient boosting (``n_iter_no_change``,
``validation_fraction``, ``tol``): when ``n_iter_no_change`` is set, a fraction of the
training rows is held out (stratified by class for classifiers, by query for rankers,
drawn with ``random_state``), its curve is ``history_["heldout_loss"]``, and the fit
stops once ``n_iter_no_change`` rounds in a row have not lowered the held-out loss by
more than ``tol`` below its best.  Unlike scikit-learn (and like LightGBM's
``best_iteration``), the model is then cut back to the round of the smallest held-out
loss, so that what is kept is the best model the fit saw.  The watching is done by the
:class:`~oracleboost.engine.monitors.EarlyStopping` monitor; the held-out rows are
:mod:`.hold_out`'s.  :class:`EvalSetsMixin` gives every booster its checks of the sets
and ``evals_result_``.

LightGBM's habits (its ``LGBMModel.fit``): ``eval_metric`` adds scikit-learn scorers to
the curves (``history_["val_<metric>_<i>"]``, :func:`eval_scorers`), ``eval_names``
names the sets (:func:`eval_names`: ``valid_0``, ``valid_1``, …, and ``training`` for
the training data itself), and ``evals_result_`` shows the curves by name.  A scorer is
given the booster as it stood after each round: a shallow copy whose model answers on
the set from the running scores (:class:`~oracleboost.engine.model.ModelAt`), so a
round costs one scorer call per set and metric, never a prediction of the whole model.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from sklearn.metrics import (
    get_scorer,
    get_scorer_names,
    log_loss,
    make_scorer,
    mean_absolute_error,
    mean_squared_error,
    roc_auc_score,
    root_mean_squared_error,
    zero_one_loss,
)
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import check_is_fitted

from oracleboost._validation import check_sample_weight, normalise_weights
from oracleboost.engine.backends import backend_for
from oracleboost.engine.input import check_offset, validate_input
from oracleboost.engine.rounds import Problem

__all__ = ["EvalSet", "EvalSetsMixin", "documented", "eval_scorers", "eval_names",
           "EVAL_PREFIX", "LIGHTGBM_METRICS", "eval_parameters_doc", "fill_placeholder"]

#: The prefix of the history keys of ``eval_set``'s curves (``val_loss_0``).
EVAL_PREFIX = "val"


@dataclass
class EvalSet:
    """One data set watched during a fit.

    ``target`` and ``weight`` are in the booster's own encoding (``_eval_target``);
    ``scores`` is the model's running decision on ``X``, attached when the loop starts.
    History keys are ``f"{prefix}_{metric}{suffix}"``: ``val_loss_0`` for
    ``eval_set[0]``, ``heldout_loss`` for early stopping's held-out split.
    """

    prefix: str
    suffix: str
    X: Any
    target: Any
    weight: np.ndarray
    scores: Any = field(default=None, repr=False)
    #: ``eval_metric``'s scorers by name, and what they are called with: the set as the
    #: user gave it (X, y) and its metadata (``sample_weight``; the ranker's ``qid``).
    scorers: dict[str, Callable] = field(default_factory=dict, repr=False)
    given: tuple = field(default=(), repr=False)
    metadata: dict = field(default_factory=dict, repr=False)
    name: str = ""
    #: the set's own starting scores (``eval_init_score``), added to the model's
    #: intercept; None for none
    offset: np.ndarray | None = field(default=None, repr=False)

    def key(self, metric: str) -> str:
        return f"{self.prefix}_{metric}{self.suffix}"


#: How errors name early stopping's held-out rows.
_HELD_OUT = "its held-out rows"

#: Metric names taken by the booster's own curves.
_OWN_METRICS = ("loss", "error")


def _scorer_name(metric: Callable) -> str:
    """The name of a callable scorer in history keys: a function's name, or the name of
    the metric a ``make_scorer`` object wraps."""
    name = getattr(metric, "__name__", None) or getattr(
        getattr(metric, "_score_func", None), "__name__", None)
    if not name or name == "<lambda>":
        raise ValueError(
            f"eval_metric: cannot name the scorer {metric!r}; pass a dict "
            "{name: scorer} instead"
        )
    return name


def _check_scorer_signature(name: str, metric: Callable) -> None:
    """Refuse a metric-style callable ``(y_true, y_pred)``, which would otherwise fail
    later inside the fit with a message about its arguments."""
    try:
        params = list(inspect.signature(metric).parameters)
    except (TypeError, ValueError):  # no signature to read (a builtin): let it run
        return
    if params[:1] in (["y_true"], ["y"]):
        raise TypeError(
            f"eval_metric {name!r} takes (y_true, y_pred) like a metric; eval_metric takes "
            "scikit-learn scorers, called as scorer(estimator, X, y, sample_weight=None). "
            f"Wrap it: sklearn.metrics.make_scorer({name}, response_method=...)"
        )


def _ndcg_scorer(estimator: Any, X: Any, y: Any, qid: Any = None) -> float:
    """LightGBM's ``ndcg``: the ranker's own :meth:`score` (NDCG by query, gain
    ``2**y − 1``, the whole list), given the set's ``eval_qid`` as ``qid``."""
    if qid is None:
        raise ValueError("eval_metric 'ndcg' scores a ranking by query: it needs the "
                         "set's query ids (the ranker's eval_qid)")
    return float(estimator.score(X, y, qid))


#: LightGBM's (and XGBoost's) metric names as scikit-learn scorers: ``name -> (metric,
#: response_method)``, the value recorded as LightGBM reports it (a loss positive, lower
#: is better; not scikit-learn's negated ``neg_*`` scorers).  A name that is also a
#: scikit-learn scorer name keeps scikit-learn's meaning (none of these is one today).
LIGHTGBM_METRICS: dict[str, tuple[Callable, Any]] = {
    "auc": (roc_auc_score, ("decision_function", "predict_proba")),
    "binary_logloss": (log_loss, "predict_proba"),
    "multi_logloss": (log_loss, "predict_proba"),
    "binary_error": (zero_one_loss, "predict"),
    "multi_error": (zero_one_loss, "predict"),
    "l2": (mean_squared_error, "predict"),
    "mse": (mean_squared_error, "predict"),
    "l1": (mean_absolute_error, "predict"),
    "mae": (mean_absolute_error, "predict"),
    "rmse": (root_mean_squared_error, "predict"),
}


def _named_scorer(metric: str) -> Callable:
    """The scorer of a name: scikit-learn's (:func:`~sklearn.metrics.get_scorer`) first,
    else one of LightGBM's names (:data:`LIGHTGBM_METRICS`, and ``"ndcg"``); errors
    name ``eval_metric`` and list LightGBM's names."""
    if metric in get_scorer_names():
        return get_scorer(metric)
    if metric == "ndcg":
        return _ndcg_scorer
    if metric in LIGHTGBM_METRICS:
        func, response = LIGHTGBM_METRICS[metric]
        return make_scorer(func, response_method=response)
    raise ValueError(
        f"eval_metric: {metric!r} is not a valid scoring value: neither a scikit-learn "
        "scorer name (sklearn.metrics.get_scorer_names()) nor one of LightGBM's metric "
        f"names {sorted([*LIGHTGBM_METRICS, 'ndcg'])}"
    )


def eval_scorers(eval_metric: Any) -> dict[str, Callable]:
    """``fit``'s ``eval_metric`` as scorers by name.

    A scikit-learn scorer name (``"accuracy"``, ``"neg_log_loss"``, ``"roc_auc"``,
    ``"r2"``, …: :func:`sklearn.metrics.get_scorer_names`), one of LightGBM's metric
    names (:data:`LIGHTGBM_METRICS`: ``"auc"``, ``"binary_logloss"``, ``"l2"``,
    ``"rmse"``, …, and ``"ndcg"`` for the ranker), a callable with a scorer's
    signature ``scorer(estimator, X, y, sample_weight=None)`` (named by its
    ``__name__``), a list or tuple of these, or a dict ``{name: scorer}``.  Errors name
    ``eval_metric``.  Scorers, not metrics ``(y_true, y_pred)``: a scorer knows which
    prediction it needs (labels, probabilities or decision values), as ``cross_validate``,
    ``GridSearchCV`` and ``ScoringMonitor`` use them; ``make_scorer`` wraps a metric.
    """
    if eval_metric is None:
        return {}
    if isinstance(eval_metric, Mapping):
        items = list(eval_metric.items())
    elif isinstance(eval_metric, str) or callable(eval_metric):
        items = [(None, eval_metric)]
    elif isinstance(eval_metric, Sequence):
        items = [(None, m) for m in eval_metric]
    else:
        raise TypeError(
            "eval_metric must be a scorer name, a scorer, a list of them or a dict "
            f"{{name: scorer}}; got {type(eval_metric).__name__}"
        )
    scorers: dict[str, Callable] = {}
    for name, metric in items:
        if isinstance(metric, str):
            scorer = _named_scorer(metric)
            name = metric if name is None else name
        elif callable(metric):
            name = _scorer_name(metric) if name is None else name
            _check_scorer_signature(name, metric)
            scorer = metric
        else:
            raise TypeError(
                f"eval_metric entries must be scorer names or callables; got "
                f"{type(metric).__name__} {metric!r}"
            )
        if not isinstance(name, str) or not name:
            raise TypeError(f"eval_metric: a metric's name must be a non-empty str; got {name!r}")
        if name in _OWN_METRICS:
            raise ValueError(
                f"eval_metric: {name!r} is the booster's own curve (history_['val_{name}_0'] "
                "is recorded anyway; a classifier's 'error' is LightGBM's binary_error and "
                "multi_error); give the scorer another name"
            )
        if name in scorers:
            raise ValueError(f"eval_metric names {name!r} twice")
        scorers[name] = scorer
    return scorers


def eval_names(names: Any, eval_set: Sequence, X: Any, y: Any) -> list[str]:
    """The names of the eval sets (``fit``'s ``eval_names``), as LightGBM gives them:
    by default ``valid_<i>``, or ``training`` for an entry that is the training data
    itself (``eval_set[i][0] is X and eval_set[i][1] is y``).  Errors name
    ``eval_names``."""
    if names is None:
        return ["training" if pair[0] is X and pair[1] is y else f"valid_{i}"
                for i, pair in enumerate(eval_set)]
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise TypeError(
            f"eval_names must be a list of str, one per eval_set entry; got "
            f"{type(names).__name__}"
        )
    names = list(names)
    if len(names) != len(eval_set):
        raise ValueError(
            f"eval_names has {len(names)} names but eval_set has {len(eval_set)} entries"
        )
    for name in names:
        if not isinstance(name, str) or not name:
            raise TypeError(f"eval_names must hold non-empty str; got {name!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"eval_names must be unique; got {names}")
    return names


class EvalSetsMixin:
    """The eval sets of a booster's fit (a :class:`~oracleboost.engine.base.BaseBooster`):
    ``eval_set`` and early stopping's held-out rows checked and put in the booster's own
    encoding (X checked against the fitted data by ``validate_input``; a
    booster gives ``_eval_target`` and ``_eval_metrics``), their names, and
    ``evals_result_``."""

    def _eval_target(self, problem: Problem, y: np.ndarray, extra, where: str):
        """An eval set's ``(target, weight)`` in the booster's own encoding; ``extra`` is
        its entry of ``eval_sample_weight`` (the ranker: ``eval_qid``)."""
        raise NotImplementedError

    def _eval_metrics(self, problem: Problem, target, weight: np.ndarray,
                      scores: np.ndarray) -> dict[str, float]:
        """``{"loss": …}`` (and ``"error"`` for classifiers) of the running ``scores``
        (what ``decision_function`` would return before any class mapping)."""
        raise NotImplementedError

    def _eval_sets(self, problem: Problem, eval_set, eval_rows, held, *, metric=None,
                   names=None, given=(None, None), offsets=None) -> list[EvalSet]:
        """Check the watched sets against the fitted data (features, classes) and put
        them in the booster's encoding; errors name ``eval_set[i]``.  ``metric`` and
        ``names`` are ``fit``'s ``eval_metric`` and ``eval_names``; ``given`` is the
        ``(X, y)`` given to ``fit`` (an eval set that is it is named ``training``);
        ``offsets`` the sets' ``eval_init_score`` (one entry, or None, per set)."""
        evals = []
        if held is not None:
            Xh, yh, extra = held
            if getattr(self, "class_weight", None) is not None:
                # the held-out rows' part of the products the training rows are weighted
                # by (scikit-learn's gradient boosting splits the class-weighted weights)
                extra = check_sample_weight(extra, yh.shape[0], name="sample_weight") * \
                    compute_sample_weight(self.class_weight, yh)
            target, weight = self._eval_target(problem, yh, extra, _HELD_OUT)
            evals.append(EvalSet("heldout", "", Xh, target, weight))
        if eval_set is None:
            for arg, value in ((f"eval_{self._eval_row_arg}", eval_rows),
                               ("eval_metric", metric), ("eval_names", names),
                               ("eval_init_score", offsets)):
                if value is not None:
                    raise ValueError(f"{arg} is given but eval_set is not")
            return evals
        if isinstance(eval_set, tuple) or not isinstance(eval_set, Sequence | Iterator):
            raise TypeError(
                "eval_set must be a list of (X, y) pairs, e.g. eval_set=[(X_val, y_val)]; "
                f"got {type(eval_set).__name__}"
            )
        eval_set = list(eval_set)
        scorers = eval_scorers(metric)
        set_names = eval_names(names, eval_set, *given)
        extras = [None] * len(eval_set) if eval_rows is None else list(eval_rows)
        if len(extras) != len(eval_set):
            raise ValueError(
                f"eval_{self._eval_row_arg} has {len(extras)} entries but eval_set has "
                f"{len(eval_set)}; give one per set (None for none)"
            )
        starts = [None] * len(eval_set) if offsets is None else list(offsets)
        if len(starts) != len(eval_set):
            raise ValueError(
                f"eval_init_score has {len(starts)} entries but eval_set has "
                f"{len(eval_set)}; give one per set (None for none)"
            )
        for i, (pair, extra) in enumerate(zip(eval_set, extras, strict=True)):
            where = f"eval_set[{i}]"
            if not isinstance(pair, Sequence) or len(pair) != 2:
                raise TypeError(f"{where} must be an (X, y) pair; got {type(pair).__name__}")
            for a in pair:
                if (backend := backend_for(a)) is not None:
                    backend.refuse("eval_rows", where)
            try:
                Xv = validate_input(self, pair[0], reset=False)
            except (TypeError, ValueError) as exc:  # named as the set's X, either type
                kind = ValueError if isinstance(exc, ValueError) else TypeError
                raise kind(f"{where}: X: {exc}") from exc
            yv = np.asarray(pair[1])
            if yv.shape != (Xv.shape[0],):
                raise ValueError(
                    f"{where}: y has shape {yv.shape}; its X has {Xv.shape[0]} rows"
                )
            target, weight = self._eval_target(problem, yv, extra, where)
            # a scorer gets the set as given, with the metadata scikit-learn's scorers
            # (or the ranker's) take, as ScoringMonitor passes them on
            metadata = ({self._eval_row_arg: extra} if extra is not None
                        and self._eval_row_arg in self._callback_metadata else {})
            start = None if starts[i] is None else check_offset(
                starts[i], Xv.shape[0], f"eval_init_score ({where})",
                tuple(getattr(problem, "shape", (0,))[1:]))
            evals.append(EvalSet(EVAL_PREFIX, f"_{i}", Xv, target, weight, scorers=scorers,
                                 given=(pair[0], pair[1]), metadata=metadata,
                                 name=set_names[i], offset=start))
        return evals

    def _eval_weight(self, extra, n: int, where: str) -> np.ndarray:
        """An eval set's weights, named in errors by the argument they came from, and
        normalised as the training weights are."""
        name = f"sample_weight ({where})" if where == _HELD_OUT else (
            f"eval_sample_weight ({where})"
        )
        w = check_sample_weight(extra, n, name=name)
        return normalise_weights(w) if self._scale_free_weights else w

    def _class_index(self, y: np.ndarray, where: str) -> np.ndarray:
        """Indices of ``y``'s labels in ``classes_``; labels unseen in training raise."""
        try:
            index = np.searchsorted(self.classes_, y)
            known = (index < len(self.classes_)) & (
                self.classes_.take(np.minimum(index, len(self.classes_) - 1)) == y
            )
        except TypeError as exc:
            raise ValueError(f"{where}: y's labels cannot be compared with classes_") from exc
        if not known.all():
            raise ValueError(
                f"{where}: y has labels not seen in training: {np.unique(y[~known])[:5]} "
                f"(classes_ = {self.classes_})"
            )
        return index

    @staticmethod
    def _numeric_target(y: np.ndarray, where: str) -> np.ndarray:
        """A numeric target (regression, ranking) as float64 and finite; errors name
        ``where``."""
        try:
            yv = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: y must be numeric; got {y.dtype}") from exc
        if not np.isfinite(yv).all():
            raise ValueError(f"{where}: y contains NaN or inf")
        return yv

    def _named_sets(self, evals: Sequence[EvalSet], resume: bool) -> dict[int, str]:
        """The names of the eval sets by index (``evals_result_``'s keys): this fit's,
        and for the indices it does not watch, those of the fit it continues."""
        names = {i: ev.name for i, ev in enumerate(e for e in evals if e.prefix == EVAL_PREFIX)}
        kept = getattr(self, "_eval_names_", {}) if resume else {}
        clash = {name for i, name in kept.items() if i not in names} & set(names.values())
        if clash:
            raise ValueError(
                f"eval_names: {sorted(clash)} already names another eval set of the fit "
                "this warm start continues; choose other names"
            )
        return {**{i: n for i, n in kept.items() if i not in names}, **names}

    @property
    def evals_result_(self) -> dict[str, dict[str, list[float]]]:
        """The eval sets' curves in LightGBM's shape: ``{name: {metric: [value after
        each round, ...]}}``, keyed by ``eval_names`` (default ``valid_0``, ``valid_1``,
        …, or ``training`` for the training data itself), with ``"loss"`` (the booster's
        own), ``"error"`` (classifiers) and each ``eval_metric``: the columns
        ``history_["val_<metric>_<i>"]`` as lists of floats.  Empty without an
        ``eval_set`` (as LightGBM's).  As long as ``history_``: a warm start continues
        it, and after early stopping it ends at the kept round (LightGBM keeps the
        rounds after its best; here they are cut from the model; the watched curve
        past the best round is ``validation_loss_``).  Early stopping's held-out rows
        are not an eval set: their curve is ``history_["heldout_loss"]``."""
        check_is_fitted(self, "history_")
        names = getattr(self, "_eval_names_", {})
        found: dict[int, dict[str, list[float]]] = {}
        for key, values in self.history_.items():
            match = re.fullmatch(rf"{EVAL_PREFIX}_(.+)_(\d+)", key)
            if match:
                found.setdefault(int(match[2]), {})[match[1]] = [float(v) for v in values]
        return {names.get(i, f"valid_{i}"): found[i] for i in sorted(found)}


#: The class :func:`documented` decorates (returned as it is, its docstring filled).
_Class = TypeVar("_Class")
_Func = TypeVar("_Func", bound=Callable[..., Any])

_PARAMETERS = """\
    n_iter_no_change : int or None, default=None
        Early stopping, as in scikit-learn's gradient boosting: hold out
        ``validation_fraction`` of the training rows (stratified by class; whole queries
        for the ranker; drawn with ``random_state``), stop once this many rounds in a row
        have not lowered the held-out loss by more than ``{tol}`` below its best, and keep
        the best round's model (``stop_reason_ = "early_stopping"``; see
        :mod:`oracleboost.engine.eval_sets`).  None (default): off.
    validation_fraction : float in (0, 1) or None, default=0.1
        The held-out fraction.  None: early stopping watches ``eval_set[0]`` (without
        one, ``fit`` refuses ``n_iter_no_change``: pass ``eval_set=[(X, y)]`` to watch
        the training loss).
    {tol} : float, default=1e-4
        The least decrease of the watched loss that counts as progress{tol_note}."""

_IMPORTANCE = """\
    importance_type : {"weight", "split", "gain"}, default="weight"
        What ``feature_importances_`` measures (LightGBM's parameter): ``"weight"``, the
        share of the ensemble's weight on each feature (each round's coefficient times
        its hypothesis' largest training output times the hypothesis' own importances,
        normalised to sum to 1); ``"split"``, LightGBM's count of the splits on each
        feature over the model's rounds (a stump: one; a tree: its internal nodes,
        but those both of whose sides give the same output; a linear coordinate: one),
        as ``to_lightgbm().feature_importance("split")`` counts them; ``"gain"``, the
        total gain of those splits, as ``to_lightgbm().feature_importance("gain")``
        sums them (ensembles of trees; the definition is ``feature_importances_``'s)."""

_CLASS_WEIGHT = """\
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, as scikit-learn's classifiers take them: ``{label:
        weight}`` (a label left out weighs 1), ``"balanced"`` (``n_samples / (n_classes
        * count of the class)``), or None.  Each row's weight is multiplied into
        ``sample_weight`` (:func:`sklearn.utils.class_weight.compute_sample_weight`), so
        the fit equals one given those products as ``sample_weight``, bit for bit.  Eval
        sets keep their own ``eval_sample_weight``; early stopping's held-out rows are
        weighted as the training rows are.  Not on a dask array (pass the products as
        ``sample_weight``)."""

_ATTRIBUTES = """\
    validation_loss_ : ndarray
        Early stopping's watched loss after each round, the rounds after the best one
        (which were cut) included; empty when early stopping is off.
    best_iteration_ : int or None
        The weak learners kept by early stopping (the length of ``history_``); None
        when it is off."""


_EVAL_PARAMETERS = """\
eval_metric : str, callable, list or dict, default=None
    scikit-learn scorers recorded on each eval set after every weak learner, as
    ``history_["val_<metric>_<i>"]`` and ``evals_result_[name][metric]``: a scorer name
    (``"accuracy"``, ``"neg_log_loss"``, ``"roc_auc"``, ``"r2"``,
    ``"neg_mean_squared_error"``, …), a callable ``scorer(estimator, X, y,
    sample_weight=None)`` (named by its ``__name__``), a list of these, or a dict
    ``{name: scorer}``.  LightGBM's metric names are taken too, their values as
    LightGBM reports them (a loss positive: lower is better), under their own name
    (``history_["val_binary_logloss_0"]``): ``"auc"`` (ROC AUC of the decision
    function), ``"binary_logloss"`` and ``"multi_logloss"`` (log loss of
    ``predict_proba``), ``"binary_error"`` and ``"multi_error"`` (the weighted share of
    wrong labels), ``"l2"`` or ``"mse"``, ``"l1"`` or ``"mae"``, ``"rmse"`` (of
    ``predict``: regression metrics), and
    ``"ndcg"`` (the ranker's NDCG by query, as its ``score``).  A scikit-learn scorer
    name keeps scikit-learn's meaning.  (A classifier's ``"error"`` curve is recorded
    anyway, as ``val_error_<i>``.)  Scorers, not LightGBM's metric functions ``(y_true,
    y_pred)``: a scorer knows which prediction it needs (labels, probabilities or
    decision values) and is what ``cross_validate`` and ``GridSearchCV`` take; wrap a
    metric with :func:`~sklearn.metrics.make_scorer`.  A scorer gets the set as given,
    its ``eval_sample_weight`` as ``sample_weight`` (the ranker: its ``eval_qid`` as
    ``qid``) and the booster as it stood after that round: the value equals the
    scorer applied to the fitted booster with ``num_iteration`` at that round.  Cost:
    one scorer call per round, eval set and metric; the scorer's predictions come from
    the running scores on the set, not from the whole model again.  Early stopping's
    held-out rows are not scored.
eval_names : list of str, default=None
    The eval sets' names in ``evals_result_`` (LightGBM's parameter); default
    ``valid_0``, ``valid_1``, …, and ``training`` for an entry that is the training
    ``(X, y)`` itself, as LightGBM names them."""


def fill_placeholder(func: _Func, placeholder: str, text: str) -> _Func:
    """Replace the line ``<placeholder>`` of ``func``'s docstring by ``text``, indented as
    that line is (the one way methods share docstring text; :func:`documented` does it
    for classes)."""
    lines = []
    for line in (func.__doc__ or "").splitlines():
        if line.strip() == f"<{placeholder}>":
            indent = line[: len(line) - len(line.lstrip())]
            lines.extend(indent + t if t else t for t in text.splitlines())
        else:
            lines.append(line)
    func.__doc__ = "\n".join(lines)
    return func


def eval_parameters_doc(fit: _Func) -> _Func:
    """Fill the line ``<eval parameters>`` of a ``fit`` docstring: the text of
    ``eval_metric`` and ``eval_names``, one for every booster."""
    return fill_placeholder(fit, "eval parameters", _EVAL_PARAMETERS)


def documented(
    tol: str = "tol", tol_note: str = "", **snippets: str
) -> Callable[[type[_Class]], type[_Class]]:
    """Class decorator: the one way a booster's docstring shares text with others.

    Each line ``    <name>`` of the docstring is replaced by the snippet of that name:
    ``<early stopping parameters>`` and ``<validation attributes>`` (one text for every
    booster; ``tol`` names the early-stopping tolerance), and any snippet given as a
    keyword (``functional_parameters=...`` fills ``<functional parameters>``; a snippet
    may itself hold the built-in placeholders).  A placeholder left unfilled is an error.
    """
    fills = {name.replace("_", " "): text for name, text in snippets.items()}
    fills["early stopping parameters"] = _PARAMETERS.format(tol=tol, tol_note=tol_note)
    fills["validation attributes"] = _ATTRIBUTES
    fills["importance parameters"] = _IMPORTANCE
    fills["class weight parameters"] = _CLASS_WEIGHT

    def fill(cls):
        doc = cls.__doc__
        for name, text in fills.items():  # the given snippets first: they may hold more
            doc = doc.replace(f"    <{name}>", text.rstrip("\n"))
        left = re.findall(r"^    <([a-z ]+)>$", doc, flags=re.M)
        if left:
            raise ValueError(f"{cls.__name__}'s docstring has no snippet for {left}")
        cls.__doc__ = doc
        return cls

    return fill
