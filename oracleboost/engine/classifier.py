"""What the classifiers share: one preamble for ``fit``, one way from scores to labels,
to margins and to probabilities, and a ±1 booster's view of an oracle's answer.

* :func:`classification_data`: validate X and y, check the weights (times
  ``class_weight``'s, where the classifier has one), drop the rows of weight 0
  (normalising the others), set ``classes_`` and check how many there are.
  Every classifier's ``_setup`` starts with it.
* :func:`predicted_index`, :func:`vote_margins`: ``f > 0`` or ``argmax f`` (ties to the
  lowest class), and ``y f`` or ``f_y − max_{k≠y} f_k``.
* :class:`ScoreClassifierMixin`: ``decision_function``, ``predict``,
  ``predict_proba`` and their staged forms for a model that sums scores, with the link
  of the probabilities named by the booster.
* :class:`SignedColumn`: the column ``u = ±y h / norm`` and its edge.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import DTypeLike
from sklearn.metrics import accuracy_score
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets

from oracleboost._numerics import logsumexp
from oracleboost._typing import ArrayLike
from oracleboost._validation import check_sample_weight
from oracleboost.engine.backends import Backend, backend_for
from oracleboost.engine.input import validate_input
from oracleboost.engine.inspection import (
    lightgbm_option,
    lightgbm_options_doc,
    num_iteration_doc,
)
from oracleboost.engine.rounds import StopReason
from oracleboost.losses import MarginLoss
from oracleboost.optim import row_passes
from oracleboost.optim.votes import predicted_index
from oracleboost.oracles.base import Hypothesis
from oracleboost.rows.blocks import RowBlocks

if TYPE_CHECKING:  # pragma: no cover - at run time base is imported lazily (below)
    from oracleboost.engine.base import BaseBooster

__all__ = [
    "ClassificationData",
    "classification_data",
    "check_classes",
    "ScoreClassifierMixin",
    "SignedColumn",
    "margin_record",
    "margin_metrics",
    "weighted_error",
    "weighted_mean_of_logs",
]


@dataclass(frozen=True)
class ClassificationData:
    """A classifier's training data after the preamble: rows of positive weight, the
    weights normalised (see ``BaseBooster._positive_weight_rows``), the class index of
    every row into ``classes_``, and the further per-row arrays cut with the rows."""

    X: np.ndarray
    y_index: np.ndarray
    s: np.ndarray
    rows: tuple
    n_classes: int

    def signs(self, dtype: DTypeLike = np.float64) -> np.ndarray:
        """Binary labels as ±1 (``classes_[1]`` is +1)."""
        return np.where(self.y_index == 1, 1, -1).astype(dtype)


def classification_data(estimator: BaseBooster, X: ArrayLike, y: ArrayLike,
                        sample_weight: ArrayLike | None, *rows: np.ndarray | None,
                        binary: bool = False) -> ClassificationData:
    """The preamble of every classifier's ``fit``; sets ``estimator.classes_``.

    ``rows`` are further per-row arrays (or None) to cut with the rows of weight 0.
    ``binary`` refuses any number of classes but two, with scikit-learn's wording;
    otherwise one class is refused.
    """
    name = type(estimator).__name__
    X, y = validate_input(estimator, X, y)
    check_classification_targets(y)
    s = check_sample_weight(sample_weight, X.shape[0])
    if getattr(estimator, "class_weight", None) is not None:
        # (into the given weights, before the rows of weight 0 go and the rest are
        # normalised: the same bits as those products given as sample_weight)
        s = s * compute_sample_weight(estimator.class_weight, y)
    X, y, s, *rows = estimator._positive_weight_rows(X, y, s, *rows)
    estimator.classes_, y_index = np.unique(y, return_inverse=True)
    check_classes(name, estimator.classes_, binary)
    return ClassificationData(X, y_index, s, tuple(rows), len(estimator.classes_))


def check_classes(name: str, classes: np.ndarray, binary: bool) -> None:
    """Refuse one class, or (``binary``) any number but two, in scikit-learn's words."""
    K = len(classes)
    if binary and K != 2:
        what = "only one class" if K == 1 else f"{K}"
        raise ValueError(
            f"Only binary classification is supported. y must contain exactly two "
            f"classes for {name}; got {what}: {classes[:5]}"
        )
    if K < 2:
        raise ValueError(
            f"y must contain at least two classes for {name}; got only one class: {classes}"
        )


def lightgbm_objective(loss, n_scores: int) -> str | None:
    """LightGBM's objective whose transform of raw scores is ``loss``'s link to
    probabilities, for a model of ``n_scores`` scores a row (1: a binary margin), or None
    when no LightGBM objective has that link (a model exported then keeps raw scores)."""
    scale = getattr(loss, "sigmoid_scale", None)
    if n_scores == 1 and scale is not None:
        return f"binary sigmoid:{scale:g}"
    if getattr(loss, "name", None) == "softmax":  # softmax(f_0, f_1)_1 = σ(f_1 − f_0)
        return "binary sigmoid:1" if n_scores == 1 else f"multiclass num_class:{n_scores}"
    return None


def margin_record(margins: np.ndarray, l1_norm: float) -> float:
    """The ℓ1 margin ``min_i y_i f(x_i) / ||λ||_1`` from the running margins (NaN before
    any weight is placed)."""
    if not l1_norm > 0.0:
        return math.nan
    return float(margins.min() / l1_norm)


def weighted_mean_of_logs(log_values: np.ndarray, weight: np.ndarray) -> float:
    """``Σ_i s_i e^{v_i} / Σ_i s_i`` from ``v = log`` of each row's loss, in log space (the
    exponential risk of a large margin underflows term by term)."""
    with np.errstate(divide="ignore"):  # a zero weight is a row that does not count
        log_s = np.log(weight)
    return math.exp(float(logsumexp(log_s + log_values)) - math.log(float(weight.sum())))


def weighted_error(wrong: np.ndarray, weight: np.ndarray) -> float:
    """``Σ_i s_i [wrong_i] / Σ_i s_i`` (unit weights: the fraction, exactly as
    ``np.mean(predict(X) != y)``)."""
    return float(weight[wrong].sum() / weight.sum())


def margin_metrics(loss: MarginLoss, ypm: np.ndarray, f: np.ndarray,
                   weight: np.ndarray) -> dict[str, float]:
    """A binary margin classifier's loss ``Σ s φ(y f) / Σ s`` and error (``predict``
    says ``classes_[1]`` when ``f > 0``, so a tie is wrong on a positive row only)."""
    return {
        "loss": weighted_mean_of_logs(loss.log_phi(ypm * f), weight),
        "error": weighted_error(predicted_index(f) != (ypm > 0), weight),
    }


def _on_backend(backend: Backend, estimator: Any, method: Callable, X: Any, *,
                staged: bool = False, num_iteration: int | None = None) -> Any:
    """``backend.predict``; a ``num_iteration`` is bound into ``method``."""
    if num_iteration is not None:
        method = functools.partial(method, num_iteration=num_iteration)
    return backend.predict(estimator, method, X, staged=staged)


class ScoreClassifierMixin:
    """Prediction for classifiers whose model sums scores.

    ``decision_function`` is the model's f — shape (n,) for two classes, positive
    meaning ``classes_[1]``, or (n, K) class scores — and ``predict`` its sign or argmax
    (ties to the lowest class).  ``predict_proba`` maps the scores through the
    booster's link (:meth:`_proba`), named in each booster's docstring.
    """

    @num_iteration_doc
    def decision_function(self, X: ArrayLike, *, num_iteration: int | None = None
                          ) -> np.ndarray:
        """The summed scores f(x).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        num_iteration : int or None, default=None
            <num_iteration>

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes, one score per row, positive meaning ``classes_[1]``; else
            one score per class.  (A dask array when X is one.)
        """
        if (backend := backend_for(X)) is not None:
            return _on_backend(backend, self, self.decision_function, X,
                               num_iteration=num_iteration)
        return self._decision(self._raw(X, num_iteration))

    def staged_decision_function(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """The decision function after each round (one term added to a running array
        per round; the last equals :meth:`decision_function` bit for bit).

        Yields
        ------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        if (backend := backend_for(X)) is not None:
            yield from _on_backend(backend, self, self.staged_decision_function, X, staged=True)
            return
        for f in self._staged_raw(X):
            yield self._decision(f)

    @lightgbm_options_doc
    @num_iteration_doc
    def predict(self, X: ArrayLike, *, num_iteration: int | None = None,
                raw_score: bool = False, pred_leaf: bool = False,
                pred_contrib: bool = False) -> np.ndarray:
        """The class of each row: ``classes_[1]`` where the score is positive (two
        classes), else the class of the largest score (ties to the lowest class); or,
        as LightGBM's ``predict`` takes them, the raw scores, the leaves or the
        contributions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        num_iteration : int or None, default=None
            <num_iteration>
        <lightgbm_options>

        Returns
        -------
        ndarray of shape (n_samples,)
            (A dask array when X is one.)  With one of the LightGBM options, what it
            says.
        """
        if (option := lightgbm_option(raw_score, pred_leaf, pred_contrib)) is not None:
            if option == "raw_score":
                return self.decision_function(X, num_iteration=num_iteration)
            return self._tree_prediction(X, option, num_iteration)
        if (backend := backend_for(X)) is not None:
            return _on_backend(backend, self, self.predict, X, num_iteration=num_iteration)
        index = predicted_index(self._raw(X, num_iteration))  # raises NotFittedError first
        return self.classes_.take(index)

    def staged_predict(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """:meth:`predict` after each round.

        Yields
        ------
        ndarray of shape (n_samples,)
        """
        if (backend := backend_for(X)) is not None:
            yield from _on_backend(backend, self, self.staged_predict, X, staged=True)
            return
        for f in self._staged_raw(X):
            yield self.classes_.take(predicted_index(f))

    @num_iteration_doc
    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None, *,
              num_iteration: int | None = None) -> float:
        """The (weighted) accuracy of :meth:`predict` (scikit-learn's
        ``ClassifierMixin.score``).

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
        return float(accuracy_score(y, self.predict(X, num_iteration=num_iteration),
                                    sample_weight=sample_weight))

    def _has_proba(self) -> bool:
        """Whether the booster's scores have a link to probabilities (default: yes)."""
        return True

    @available_if(lambda self: self._has_proba())
    @num_iteration_doc
    def predict_proba(self, X: ArrayLike, *, num_iteration: int | None = None) -> np.ndarray:
        """Class probabilities through the booster's link (see the class docstring).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        num_iteration : int or None, default=None
            <num_iteration>

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to 1; columns follow ``classes_``.  (A dask array when X is one.)
        """
        if (backend := backend_for(X)) is not None:
            return _on_backend(backend, self, self.predict_proba, X, num_iteration=num_iteration)
        return self._proba(self._raw(X, num_iteration))

    @available_if(lambda self: self._has_proba())
    def staged_predict_proba(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """:meth:`predict_proba` after each round.

        Yields
        ------
        ndarray of shape (n_samples, n_classes)
        """
        if (backend := backend_for(X)) is not None:
            yield from _on_backend(backend, self, self.staged_predict_proba, X, staged=True)
            return
        for f in self._staged_raw(X):
            yield self._proba(f)

    @staticmethod
    def _decision(f: np.ndarray) -> np.ndarray:
        """The model's raw scores as ``decision_function`` shows them (default: as they
        are)."""
        return f

    def _proba(self, f: np.ndarray) -> np.ndarray:
        raise NotImplementedError


@dataclass(frozen=True)
class SignedColumn:
    """A ±1-label booster's view of an oracle answer ``h`` on distribution ``w``: the
    column ``u_i = sign · y_i h(x_i) / norm`` in [−1, 1], its edge ``γ = Σ_i w_i u_i ≥ 0``
    and the sign that makes it non-negative (the class is taken closed under negation).

    ``norm`` is ``max |h|`` for scale-free classes (regressors: rescaled to ``max |h| = 1``)
    and ``max(max |h|, 1)`` for ``bounded`` ones (values in [−1, 1] used as they are:
    Telgarsky's A, MABoost's h ∈ [−1, 1]).

    The reductions come from two compiled passes over the rows
    (:mod:`.row_passes`); the column ``u`` itself is built only when a step rule
    reads it (:func:`.row_passes.oriented`).  ``agreement`` and ``disagreement`` are
    ``Σ_i w_i (1 ± u_i)`` (the AdaBoost step's sums, of non-negative terms),
    ``u_min`` and ``u_max`` are ``min_i u_i`` (1 when the column is right on every row
    with full confidence) and ``max_i u_i``.
    """

    a: np.ndarray
    y: np.ndarray
    edge: float
    sign: float
    norm: float
    agreement: float
    disagreement: float
    u_min: float
    u_max: float
    blocks: RowBlocks

    @classmethod
    def of(cls, h: Hypothesis, y: np.ndarray, w: np.ndarray | None, bounded: bool,
           blocks: RowBlocks | None = None, query: np.ndarray | None = None
           ) -> SignedColumn | StopReason:
        """The signed column, or a stop reason: ``ZERO_HYPOTHESIS`` (h = 0 on the
        training points) or ``ZERO_EDGE``.  The passes run by ``blocks``
        (:mod:`.row_passes`; default: one block of every row, one thread).  With
        ``query = w · y`` in place of ``w`` (None), they read it alone (its magnitudes
        are the weights, its signs the labels: the same sums)."""
        a = h.train_output
        labels, w = (None, query) if w is None else (y, w)
        if blocks is None:
            blocks = RowBlocks(a.shape[0], max(1, a.shape[0]), n_jobs=1)
        # A bounded class's norm is 1 unless it overshoots: one pass finds out.
        sums = row_passes.signed_sums(blocks, a, labels, w, 1.0) if bounded else None
        top = float(sums[-1] if bounded else row_passes.peak(blocks, a))
        if top == 0.0:
            return StopReason.ZERO_HYPOTHESIS
        norm = max(top, 1.0) if bounded else top
        if sums is None or norm != 1.0:
            sums = row_passes.signed_sums(blocks, a, labels, w, norm)
        corr, plus, minus, lo, hi, _ = sums
        if corr == 0.0:
            return StopReason.ZERO_EDGE
        if corr > 0:
            return cls(a, y, corr, 1.0, norm, plus, minus, lo, hi, blocks)
        return cls(a, y, -corr, -1.0, norm, minus, plus, -hi, -lo, blocks)

    def log_exp_mass(self, alpha: float) -> float | None:
        """``log Σ_i w_i e^(−α u_i)`` if ``u`` takes only its extreme values (a ±1
        stump's column: ``u = ±1``; a stump of other leaves gives ``u`` four values),
        else a number of no meaning, or None: the exponential loss's
        normaliser after the step α (Schapire & Singer 1999's ``Z_t``, whose log the
        step adds to the log-risk), from the masses at ``u_min`` and ``u_max``, which
        ``agreement = Σ w (1 + u)`` and ``disagreement = Σ w (1 − u)`` determine for such
        a column (for u = ±1, half of each, exactly).  No pass over the rows: the step
        uses it to predict its weights' normaliser
        (:func:`.row_passes.step_and_weights` checks the prediction)."""
        lo, hi = self.u_min, self.u_max
        plus, minus = self.agreement, self.disagreement
        if not alpha >= 0.0 or not math.isfinite(alpha):
            return None
        if hi == lo:
            mass_lo, mass_hi = 0.5 * (plus + minus), 0.0
        else:
            mass_hi = (plus * (1.0 - lo) - minus * (1.0 + lo)) / (2.0 * (hi - lo))
            mass_lo = (minus * (1.0 + hi) - plus * (1.0 - hi)) / (2.0 * (hi - lo))
        if not (mass_lo >= 0.0 and mass_hi >= 0.0):
            return None
        # −α lo + log(m_lo + m_hi e^(−α (hi − lo))): α ≥ 0 and hi ≥ lo, no overflow
        inner = mass_lo + mass_hi * math.exp(-alpha * (hi - lo)) if hi != lo else mass_lo
        return -alpha * lo + math.log(inner) if inner > 0.0 else None
