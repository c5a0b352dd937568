"""What a fitted booster shows of its model, as a mixin of every booster.

The model's terms (``estimators_``, ``coef_``, ``intercept_``, ``n_estimators_``), the
input features' importances (``feature_importances_``, by ``importance_type``), and the
model's raw decision on new rows, after every round or after its first
``num_iteration`` rounds, which every prediction method reads
(:class:`~oracleboost.engine.classifier.ScoreClassifierMixin`,
:class:`~oracleboost.engine.base.ScoreRegressorMixin`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from numbers import Integral
from typing import Any, TypeVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from oracleboost.engine.eval_sets import fill_placeholder
from oracleboost.engine.input import validate_input
from oracleboost.engine.model import Ensemble, NonFinitePrediction
from oracleboost.oracles.base import Hypothesis

__all__ = ["InspectionMixin", "check_num_iteration", "num_iteration_doc", "lightgbm_option",
           "lightgbm_options_doc"]


class InspectionMixin:
    """The fitted model of a booster (a :class:`~oracleboost.engine.base.BaseBooster`):
    its terms, the features' importances, and its raw decision on new rows (X checked
    against the fitted data by ``validate_input``)."""

    @property
    def estimators_(self) -> list[Hypothesis]:
        """The distinct hypotheses of the ensemble."""
        check_is_fitted(self, "ensemble_")
        return self.ensemble_.hypotheses

    @property
    def coef_(self) -> np.ndarray:
        """Coefficient of each hypothesis in ``estimators_``."""
        check_is_fitted(self, "ensemble_")
        return np.asarray(self.ensemble_.coef)

    @property
    def intercept_(self) -> float | np.ndarray:
        """The model's constant term f_0, before any weak learner.

        ``decision_function(X)`` (the model's raw scores) is ``intercept_ + Σ_j
        coef_[j] · estimators_[j].predict(X)``, up to the rounding of the sums.  f_0 is
        the booster's starting point: 0 for the margin boosters (AdaBoost, Telgarsky's
        coordinate descent, MABoost: their papers start at λ = 0), the loss' best
        constant for functional gradient boosting with ``init="auto"`` (the weighted
        mean of y for the squared loss, the log-odds of the weighted classes for the
        logistic loss, the log weighted class priors for the softmax), or ``init``.

        Returns
        -------
        float or ndarray of shape (n_classes,)
            A float for a single score (regression, ranking, two classes with one
            score); one entry per class for vector scores (multiclass, and the softmax
            or multiclass hinge on two classes, whose ``decision_function`` is then
            ``f_1 − f_0``).  A copy: changing it does not change the model.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        """
        check_is_fitted(self, "ensemble_")
        intercept = np.asarray(self.ensemble_.intercept, dtype=np.float64)
        return float(intercept) if intercept.ndim == 0 else intercept.copy()

    @property
    def n_estimators_(self) -> int:
        """Rounds actually run (fewer than ``n_estimators`` after an early stop)."""
        check_is_fitted(self, "ensemble_")
        return self.ensemble_.n_rounds

    @property
    def feature_importances_(self) -> np.ndarray:
        """Importances of the input features, by ``importance_type``.

        ``"weight"`` (the default), summing to 1: ``Σ_t |δ_t| · ||h_t||_∞ · imp(h_t)``,
        normalised (a totally corrective round
        counts every coefficient it moved): each round's term weighted by its
        size on the training rows (its coefficient times the hypothesis' largest output)
        times the hypothesis' own importances (a stump: its split feature; a scikit-learn
        tree: its ``feature_importances_``; a LightGBM tree: its split gains; a linear
        coordinate: its feature).  Ensembles of hypotheses that do not know their
        features (columns of a fixed matrix, neural nets) have none: the attribute
        raises ``AttributeError`` saying why, so ``hasattr`` is False.

        ``"split"``: LightGBM's counts of the splits on each feature over the model's
        rounds (a stump one, a tree its internal nodes but those both of whose sides
        give the same output), equal to
        ``to_lightgbm().feature_importance("split")`` for ensembles of trees.

        ``"gain"``: LightGBM's total gain of the splits on each feature,
        ``to_lightgbm().feature_importance("gain")`` (ensembles of trees only).  A
        split's gain is the decrease of the squared deviation of the exported tree's
        output (its leaves times the round's coefficient) over its covers,
        ``W_L W_R / (W_L + W_R) · (m_L − m_R)²`` with ``W`` the sides' covers (the
        trees' training weights or counts) and ``m`` their mean outputs, summed over
        the model's terms as ``"split"`` counts them (LightGBM keeps each gain as a
        float32).  Stumps carry no covers and count 1 a leaf: a stump of leaves
        ``v_L, v_R`` at coefficient δ gains ``δ² (v_L − v_R)² / 2``.
        """
        check_is_fitted(self, "ensemble_")
        ensemble = self.ensemble_
        if not isinstance(ensemble, Ensemble):
            raise AttributeError(
                f"{type(self).__name__} fits a {type(ensemble).__name__}, not an ensemble of "
                "weak learners: it has no feature_importances_ (see coef_)"
            )
        importance_type = getattr(self, "importance_type", "weight")
        if importance_type == "split":
            return self._split_counts(ensemble)
        if importance_type == "gain":
            return self._gain_importances()
        d = int(self.n_features_in_)
        own = [h.feature_importances(d) for h in ensemble.hypotheses]
        unknown = sorted({type(h).__name__ for h, imp in zip(ensemble.hypotheses, own,
                                                              strict=True) if imp is None})
        if unknown:
            raise AttributeError(
                f"{type(self).__name__} has no feature_importances_: its weak learners "
                f"({', '.join(unknown)}) do not say which input features they use"
            )
        total = np.zeros(d)
        for changes in ensemble.round_changes():
            for j, delta in changes.items():
                total += abs(delta) * ensemble.norms[j] * np.asarray(own[j], dtype=np.float64)
        mass = total.sum()
        return total / mass if mass > 0 else total

    def _gain_importances(self) -> np.ndarray:
        """``importance_type="gain"``, read from the exported trees (the export's mixin
        answers it; a booster without one has none)."""
        raise AttributeError(f"{type(self).__name__} has no gain importances: it has no "
                             "export to LightGBM")

    def _tree_prediction(self, X, option: str, num_iteration: int | None = None):
        """``predict(X, pred_leaf=True)`` or ``pred_contrib=True``, answered through the
        export to LightGBM (the export's mixin; a booster without one refuses)."""
        raise ValueError(f"{type(self).__name__}.predict({option}=True) needs the model's "
                         "export to LightGBM, which this booster does not have")

    def _split_counts(self, ensemble: Ensemble) -> np.ndarray:
        """``importance_type="split"``: the splits on each feature over the model's
        terms (from its last totally corrective round on, each hypothesis once; then
        each round), as LightGBM counts them in the exported trees."""
        d = int(self.n_features_in_)
        own: dict[int, np.ndarray] = {}
        for j, h in enumerate(ensemble.hypotheses):
            tree = h.tree_structure()
            if tree is not None:  # the splits that change the function (as exported)
                own[j] = np.bincount(tree.pruned().feature, minlength=d).astype(np.float64)
                continue
            imp = h.feature_importances(d)
            if imp is None:
                raise AttributeError(
                    f"{type(self).__name__} has no split importances: its weak learner "
                    f"{type(h).__name__} does not say which input features it uses"
                )
            own[j] = (np.asarray(imp) != 0).astype(np.float64)  # a coordinate: one use
        last = max(ensemble.refits, default=None)
        rounds = list(range(len(ensemble.refits[last]))) if last is not None else []
        first = 0 if last is None else last + 1
        rounds += ensemble.round_index[first:]
        total = np.zeros(d)
        for j in rounds:
            total += own[j]
        return total

    def _model_at(self, num_iteration: int | None = None):
        """The fitted model after its first ``num_iteration`` rounds (None: all of them).

        The cheapest exact way: a copy cut back by the model's own ``truncate`` (which
        replays the coefficient log, no prediction), whose decision then predicts only the
        kept rounds, summed as ``staged_decision_function`` sums them, so it equals the
        ``num_iteration``-th staged value bit for bit.  All rounds: the model itself.
        """
        check_is_fitted(self, "ensemble_")
        model = self.ensemble_
        k = check_num_iteration(num_iteration, model.n_rounds)
        if k == model.n_rounds:
            return model
        cut = model.copy()
        cut.truncate(k)
        return cut

    def _raw(self, X, num_iteration: int | None = None) -> np.ndarray:
        """The decision on X of the model after ``num_iteration`` rounds (:meth:`_model_at`)."""
        return self._raw_of(self._model_at(num_iteration), X)

    def _raw_of(self, model, X) -> np.ndarray:
        """``model``'s decision on X (validated against the fitted data)."""
        X = validate_input(self, X, reset=False)
        try:
            return model.decision_function(X)
        except NonFinitePrediction as exc:
            raise exc.naming(self) from None

    def _staged_raw(self, X) -> Iterator[np.ndarray]:
        """The decision on X after each round (the model's running sum)."""
        check_is_fitted(self, "ensemble_")
        X = validate_input(self, X, reset=False)
        try:
            yield from self.ensemble_.staged_decision_function(X)
        except NonFinitePrediction as exc:
            raise exc.naming(self) from None


#: The text of every prediction method's ``num_iteration`` parameter (:func:`num_iteration_doc`).
_NUM_ITERATION = """\
The model after its first ``num_iteration`` rounds (LightGBM's name), an int in
[1, ``n_estimators_``]: exactly what the ``staged_`` form of the method (where it
has one) yields at that round, bit for bit, at the cost of predicting only those
rounds.  None
(default): every round the model has.  After early stopping the model is already
cut back to its best round, so None is ``num_iteration=best_iteration_`` (LightGBM
predicts with ``best_iteration_`` by default too, but keeps the later rounds)."""

_Method = TypeVar("_Method", bound=Callable[..., Any])


def num_iteration_doc(method: _Method) -> _Method:
    """Fill the line ``<num_iteration>`` of ``method``'s docstring with the one text of
    the ``num_iteration`` parameter, at that line's indentation."""
    return fill_placeholder(method, "num_iteration", _NUM_ITERATION)


#: The text of the LightGBM options of every ``predict`` (:func:`lightgbm_options_doc`).
_LIGHTGBM_OPTIONS = """\
raw_score : bool, default=False
    The raw score (LightGBM's name): a classifier's ``decision_function``; a
    regressor's or ranker's prediction itself, which is its raw score.
pred_leaf : bool, default=False
    The leaf each row reaches in each tree of the exported model: :meth:`apply`,
    shape (n_samples, n_trees), ``to_lightgbm().predict(X, pred_leaf=True)``.
pred_contrib : bool, default=False
    Each feature's TreeSHAP contribution to the raw score, and last the expected
    value (the bias column), shape (n_samples, n_features + 1), or (n_samples,
    n_classes * (n_features + 1)) for class scores, one block a class, as
    LightGBM's ``predict(X, pred_contrib=True)`` lays them out; each row's block
    sums to its raw score.  Path-dependent TreeSHAP (Lundberg et al. 2020) over the
    trees' own covers: ``to_lightgbm().predict(X, pred_contrib=True)``.  At most one of
    ``raw_score``, ``pred_leaf`` and ``pred_contrib``; the last two only for a model
    of trees (a ``ValueError`` naming the weak learner otherwise)."""


def lightgbm_options_doc(method: _Method) -> _Method:
    """Fill the line ``<lightgbm_options>`` of ``method``'s docstring with the one text
    of ``predict``'s LightGBM options (``raw_score``, ``pred_leaf``, ``pred_contrib``)."""
    return fill_placeholder(method, "lightgbm_options", _LIGHTGBM_OPTIONS)


def lightgbm_option(raw_score: bool, pred_leaf: bool, pred_contrib: bool) -> str | None:
    """Which of ``predict``'s LightGBM options is on (None: none); two at once are
    refused, naming them."""
    on = [name for name, value in (("raw_score", raw_score), ("pred_leaf", pred_leaf),
                                   ("pred_contrib", pred_contrib)) if value]
    if len(on) > 1:
        raise ValueError(f"predict takes one of raw_score, pred_leaf and pred_contrib at "
                         f"a time; got {' and '.join(f'{n}=True' for n in on)}")
    return on[0] if on else None


def check_num_iteration(num_iteration: int | None, n_rounds: int) -> int:
    """``num_iteration`` of a prediction method as a round count in ``[1, n_rounds]``
    (None: ``n_rounds``); anything else raises naming ``num_iteration``.

    Unlike LightGBM, where ``num_iteration <= 0`` silently means every round, a count
    outside the model is an error: after early stopping the model already ends at its
    best round, and asking for more rounds than it has is a mistake worth hearing of.
    """
    if num_iteration is None:
        return n_rounds
    if isinstance(num_iteration, bool) or not isinstance(num_iteration, Integral):
        raise TypeError(
            f"num_iteration must be an int (a number of rounds) or None; got "
            f"{type(num_iteration).__name__} {num_iteration!r}"
        )
    if not 1 <= num_iteration <= n_rounds:
        raise ValueError(
            f"num_iteration={num_iteration} must be in [1, n_estimators_] = [1, {n_rounds}]"
            " (the rounds of the fitted model; None for all of them)"
            if n_rounds else
            f"num_iteration={num_iteration}: the fitted model has no rounds (see "
            "stop_reason_); only num_iteration=None predicts with it"
        )
    return int(num_iteration)

