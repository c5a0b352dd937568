"""Predictions from X on the GPU: a stump ensemble's scores summed where X is.

A fitted booster's model is the CPU's (its stumps and coefficients, whatever device it
was fitted on).  Given X on the device (a CuPy or numba device array), its scores are
summed there, by one kernel over the rows (:func:`~oracleboost.cuda.row_kernels.
row_kernels`' ``stump_scores``): each row adds its rounds' terms in round order from the
intercept, with the comparison of the stumps' ``predict`` and the products ``coef_r ·
leaf`` rounded as the CPU rounds them (:func:`oracleboost.oracles.stumps.leaf_table`),
so the scores equal the CPU's ``decision_function`` bit for bit.  Only the rounds' table
is uploaded (a few numbers a round); X never crosses the bus.

What comes back:

* the scores themselves (``decision_function``, a regressor's ``predict``, and their
  staged versions) stay on the device, as an array of X's kind (CuPy for CuPy, a numba
  device array otherwise);
* labels and probabilities (a classifier's ``predict``, ``predict_proba``, and a
  booster whose ``decision_function`` maps its scores) are made on the host by the
  estimator's own code from the scores copied back: ``n`` floats, not ``n × d``.

A multiclass model's scores (one a class, shape (n, K)) are summed the same way, a row's
classes in turn.  Anything else is scored on the host from a copy of X, as before:
models that are not stumps of the library's classes (trees, other oracles), a fit with
categorical features; and X that the host's checks refuse (an infinity, a NaN
where the fit took none), which they then do with their messages.  A NaN where the
booster takes missing values goes to the side its stump learned, as on the host.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from oracleboost.cuda.class_kernels import class_kernels
from oracleboost.cuda.device import cuda_module, fetch, upload
from oracleboost.cuda.row_kernels import row_kernels
from oracleboost.engine.base import ScoreRegressorMixin
from oracleboost.engine.classifier import ScoreClassifierMixin
from oracleboost.engine.model import Ensemble
from oracleboost.optim.votes import predicted_index
from oracleboost.oracles.stumps import leaf_table

__all__ = ["DeviceScores", "device_prediction"]

#: ``finish`` that keeps the scores themselves on the device (:func:`_finisher`).
_SCORES = None


def _labels(estimator: Any, f: np.ndarray) -> np.ndarray:
    return estimator.classes_.take(predicted_index(f))


def _probabilities(estimator: Any, f: np.ndarray) -> np.ndarray:
    return estimator._proba(f)


def _decision(estimator: Any, f: np.ndarray) -> np.ndarray:
    return estimator._decision(f)


#: The prediction methods made here from the scores, by the mixin whose own method
#: (not an estimator's override) makes its answer so: ``finish(estimator, f)`` on the
#: host, or :data:`_SCORES`.
_FINISH: dict[type, dict[str, Callable | None]] = {
    ScoreClassifierMixin: {"decision_function": _decision, "predict": _labels,
                           "predict_proba": _probabilities},
    ScoreRegressorMixin: {"predict": _SCORES},
}


@dataclass(frozen=True)
class DeviceScores:
    """An ensemble's rounds as the device sums them: the intercept and, a round each,
    the stump's feature, threshold, the products ``coef · left`` and ``coef · right``
    and where a NaN goes (device arrays).  One score a row (``lo`` and ``hi`` of shape
    (R,), ``intercept`` a float), or one a class (shape (R, K), ``intercept`` a device
    row (K,); ``width`` K)."""

    intercept: Any
    feature: Any
    threshold: Any
    lo: Any
    hi: Any
    nan_left: Any
    n_rounds: int
    width: int | None = None

    @classmethod
    def of(cls, model: Any, n_features: int) -> DeviceScores | None:
        """The table of ``model`` (an :class:`~oracleboost.engine.model.Ensemble` of
        one score a row or one a class, no refit, its rounds stumps of the library's
        classes), or None where the device cannot sum it."""
        if type(model) is not Ensemble or model.refits or np.ndim(model.intercept) > 1:
            return None
        width = int(np.size(model.intercept)) if np.ndim(model.intercept) else None
        K = 1 if width is None else width
        hypotheses = [model.hypotheses[j] for j in model.round_index]
        if not hypotheses:
            table = (np.zeros(0, np.intp), np.zeros(0), np.zeros((0, K)), np.zeros((0, K)),
                     np.zeros(0, bool))
        else:
            table = leaf_table(hypotheses, np.asarray(model.round_delta, dtype=np.float64),
                               n_features, () if width is None else (width,))
            if table is None:
                return None
        feature, threshold, lo, hi, nan_left = table
        if width is None:  # (the kernels of one score a row read (R,) leaves)
            lo, hi = lo[:, 0], hi[:, 0]
        intercept = float(model.intercept) if width is None else \
            upload(np.ascontiguousarray(model.intercept, dtype=np.float64))
        return cls(intercept, upload(feature.astype(np.int64)), upload(threshold),
                   upload(np.ascontiguousarray(lo)), upload(np.ascontiguousarray(hi)),
                   upload(nan_left.astype(np.uint8)), len(hypotheses), width)

    def _kernels(self) -> Any:
        return row_kernels() if self.width is None else class_kernels()

    def _empty(self, X: Any) -> Any:
        shape = X.shape[0] if self.width is None else (X.shape[0], self.width)
        return cuda_module().device_array(shape, dtype=np.float64)

    def scores(self, X: Any, grid: tuple[int, int]) -> Any:
        """The scores on the device rows ``X`` (a device array of shape (n,), or (n, K)
        a class)."""
        out = self._empty(X)
        self._kernels().stump_scores[grid](X, self.feature, self.threshold, self.lo,
                                           self.hi, self.nan_left, self.intercept, out)
        return out

    def staged(self, X: Any, grid: tuple[int, int]) -> Iterator[Any]:
        """The scores after each round (each a new device array; the last equals
        :meth:`scores` bit for bit: the same additions in the same order)."""
        rows, kernels = row_kernels(), self._kernels()
        running = self._empty(X)
        if self.width is None:
            rows.fill[grid](running, self.intercept)
        else:
            class_kernels().fill_rows[grid](running, self.intercept)
        for r in range(self.n_rounds):
            kernels.stump_round[grid](X, self.feature, self.threshold, self.lo, self.hi,
                                      self.nan_left, r, running)
            copy = self._empty(X)
            rows.scaled[grid](running.reshape(running.size), 1.0, copy.reshape(copy.size))
            yield copy


def _finisher(estimator: Any, name: str) -> Callable | None | bool:
    """How ``name``'s answer is made from the scores: None (the scores themselves, on
    the device), a function on the host, or False (not from the scores here: a method
    the estimator's class makes its own way, such as MABoost's vote shares)."""
    plain = name.removeprefix("staged_")
    for mixin, finishes in _FINISH.items():
        if isinstance(estimator, mixin) and plain in finishes and \
                getattr(type(estimator), name, None) is getattr(mixin, name, False):
            finish = finishes[plain]
            if finish is _decision and \
                    type(estimator)._decision is ScoreClassifierMixin._decision:
                return _SCORES  # (the scores as they are: they stay on the device)
            return finish
    return False


def device_prediction(estimator: Any, method: Callable, X: Any, grid: tuple[int, int],
                      wrap: Callable[[Any], Any], staged: bool) -> Any:
    """``method`` of ``estimator`` on the device rows ``X`` from scores summed there, or
    NotImplemented where they are not (:mod:`this module <oracleboost.cuda.predict>`
    says when); ``wrap`` turns a device array into X's kind."""
    func = method.func if isinstance(method, functools.partial) else method
    keywords = method.keywords if isinstance(method, functools.partial) else {}
    name = getattr(func, "__name__", "")
    finish = _finisher(estimator, name)
    if finish is False or set(keywords) - {"num_iteration"} or \
            getattr(func, "__self__", estimator) is not estimator:
        return NotImplemented
    if getattr(X, "ndim", 0) != 2 or X.shape[1] != getattr(estimator, "n_features_in_", -1) \
            or getattr(estimator, "categories_", None) or X.shape[0] == 0:
        return NotImplemented  # (the host's checks say what is wrong)
    model = estimator._model_at(keywords.get("num_iteration")) if not staged \
        else estimator.ensemble_
    table = DeviceScores.of(model, X.shape[1])
    if table is None:
        return NotImplemented
    count = upload(np.zeros(2, dtype=np.int64))
    row_kernels().non_finite[grid](X, count)
    nan, inf = fetch(count).tolist()
    if inf or (nan and not estimator.__sklearn_tags__().input_tags.allow_nan):
        return NotImplemented  # the host's checks refuse it, with their message

    def answer(f: Any) -> Any:
        return wrap(f) if finish is _SCORES else finish(estimator, fetch(f))

    if staged:
        return (answer(f) for f in table.staged(X, grid))
    return answer(table.scores(X, grid))
