"""A loss given as a function of the labels and the raw scores that returns their
gradient and hessian: LightGBM's and XGBoost's custom objective.

LightGBM's scikit-learn estimators take ``objective=func`` with ``func(y_true, y_pred)
-> (grad, hess)``: ``y_true`` the targets (a classifier's labels encoded ``0..K−1``),
``y_pred`` the raw scores before any link, ``grad`` and ``hess`` the first and second
derivatives of each row's loss in its raw score.  :class:`CallableObjective` wraps such
a function as a :class:`~oracleboost.losses.Loss` of one score a row, for the
functional-gradient boosters (``loss=func``), which use its hessian for Newton's leaf
values as LightGBM does (see the booster's documentation).

A function gives no loss value: the loss recorded after each round is NaN (pass an
``eval_metric`` for a curve), and no best constant is known, so ``init_raw`` is 0 (as
LightGBM starts a custom objective at 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from oracleboost._typing import ArrayLike
from oracleboost.losses.base import Loss

__all__ = ["CallableObjective"]


class CallableObjective(Loss):
    """``func(y_true, y_pred) -> (grad, hess)`` as a loss of one score a row.

    Parameters
    ----------
    func : callable
        Called once a round with the training rows' targets ``y_true`` (shape
        ``(n,)``; for a binary classifier ``0`` and ``1``, ``1`` meaning
        ``classes_[1]``) and their raw scores ``y_pred`` (shape ``(n,)``); returns the
        per-row derivatives ``grad`` and ``hess`` of the unweighted loss (the booster
        applies ``sample_weight`` itself).  ``hess`` must be positive.
    labels : {"values", "signs"}, default="values"
        How the booster holds ``y``: as the targets themselves, or (a binary
        classifier) as ±1, which ``func`` is given as 0 and 1.
    """

    name = ""
    differentiable = True

    def __init__(self, func: Callable, labels: str = "values") -> None:
        if not callable(func) or isinstance(func, Loss):
            raise TypeError(f"func must be a callable (y_true, y_pred) -> (grad, hess); "
                            f"got {func!r}")
        if labels not in ("values", "signs"):
            raise ValueError(f"labels must be 'values' or 'signs'; got {labels!r}")
        self.func = func
        self.labels = labels

    def __repr__(self) -> str:
        return f"CallableObjective({getattr(self.func, '__name__', self.func)!r})"

    def _targets(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y)
        return (y > 0).astype(np.float64) if self.labels == "signs" else y

    def grad_hess(self, y: np.ndarray, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``func``'s gradient and hessian at ``raw``, checked: float64 arrays of
        ``raw``'s shape, finite, the hessian positive.  Errors name ``loss``."""
        raw = np.asarray(raw, dtype=np.float64)
        out = self.func(self._targets(y), raw.copy())  # (a copy: func may write to it)
        if not isinstance(out, tuple | list) or len(out) != 2:
            raise TypeError(f"loss={self!r} must return (grad, hess); got "
                            f"{type(out).__name__}")
        grad, hess = (np.asarray(a, dtype=np.float64) for a in out)
        for what, a in (("grad", grad), ("hess", hess)):
            if a.shape != raw.shape:
                raise ValueError(f"loss={self!r} returned {what} of shape {a.shape}; the "
                                 f"raw scores have shape {raw.shape}")
            if not np.isfinite(a).all():
                raise ValueError(f"loss={self!r} returned a {what} that is NaN or infinite")
        if not (hess > 0).all():
            raise ValueError(
                f"loss={self!r} returned a hessian that is not positive on every row; "
                "Newton's leaf values divide by it (return ones for gradient steps)")
        return grad, hess

    def gradient(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        return self.grad_hess(y, raw)[0]

    def hessian(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """The second derivative of each row's loss in its raw score."""
        return self.grad_hess(y, raw)[1]

    def loss(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """NaN for every row: a function of derivatives gives no loss value."""
        return np.full(np.shape(raw)[:1], math.nan)

    def __call__(self, y: np.ndarray, raw: np.ndarray,
                 sample_weight: ArrayLike | None = None) -> float:
        """NaN: no loss value is known (an ``eval_metric`` gives a curve)."""
        return math.nan

    def init_raw(self, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        """0: the best constant of an unknown loss is not known (LightGBM starts a custom
        objective at 0 too)."""
        return 0.0
