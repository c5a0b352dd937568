"""Losses: value, (sub)gradient and what boosters need.

One class per loss; estimators also accept the lowercase names of the registry.

* :data:`LOSSES` — pointwise losses of a scalar score (``raw`` of shape ``(n,)``, a
  scalar best constant): margin and regression losses.
* :data:`STRUCTURED_LOSSES` — everything else: multiclass losses of a vector score
  (``raw`` of shape ``(n, K)``) and non-pointwise functionals (the ranking hinge, which
  needs ``groups``).
* :class:`CallableObjective` — a function ``(y_true, y_pred) -> (grad, hess)``
  (LightGBM's custom objective), which the functional boosters take as ``loss=func``;
  it is not registered (it has no name).

:func:`get_loss` resolves names from both.  A new loss is added with
:func:`register_loss`, which files it by its ``raw_ndim`` and ``pointwise`` flags.
"""

from __future__ import annotations

from oracleboost.losses.base import Loss, RankingLoss, RegressionLoss, SecondOrder
from oracleboost.losses.callable_objective import CallableObjective
from oracleboost.losses.margin import Exponential, Logistic, MarginLoss
from oracleboost.losses.multiclass import MulticlassHinge, MulticlassLoss, SoftmaxCrossEntropy
from oracleboost.losses.ranking import PairwiseHinge, ndcg, pairwise_disagreement
from oracleboost.losses.regression import (
    Absolute,
    Huber,
    Quantile,
    Squared,
    weighted_median,
    weighted_quantile,
)

__all__ = [
    "Loss",
    "RegressionLoss",
    "RankingLoss",
    "SecondOrder",
    "MarginLoss",
    "Exponential",
    "Logistic",
    "Squared",
    "Absolute",
    "Huber",
    "Quantile",
    "MulticlassLoss",
    "SoftmaxCrossEntropy",
    "MulticlassHinge",
    "PairwiseHinge",
    "CallableObjective",
    "LOSSES",
    "STRUCTURED_LOSSES",
    "loss_names",
    "get_loss",
    "register_loss",
    "pairwise_disagreement",
    "ndcg",
    "weighted_median",
    "weighted_quantile",
]

#: Pointwise losses of a scalar score, by name.
LOSSES: dict[str, type[Loss]] = {}
#: Multiclass and non-pointwise losses, by name.
STRUCTURED_LOSSES: dict[str, type[Loss]] = {}


def register_loss(cls: type[Loss]) -> type[Loss]:
    """Add ``cls`` to the registry under ``cls.name``; usable as a class decorator.

    Scalar pointwise losses go to :data:`LOSSES`, the others to :data:`STRUCTURED_LOSSES`.
    """
    if not (isinstance(cls, type) and issubclass(cls, Loss)) or not cls.name:
        raise TypeError(f"register_loss needs a Loss subclass with a name; got {cls!r}")
    known = {**LOSSES, **STRUCTURED_LOSSES}
    if known.get(cls.name, cls) is not cls:
        raise ValueError(f"a loss named {cls.name!r} is already registered: {known[cls.name]}")
    scalar = cls.pointwise and cls.raw_ndim == 1
    (LOSSES if scalar else STRUCTURED_LOSSES)[cls.name] = cls
    return cls


for _cls in (
    Exponential,
    Logistic,
    Squared,
    Absolute,
    Huber,
    Quantile,
    SoftmaxCrossEntropy,
    MulticlassHinge,
    PairwiseHinge,
):
    register_loss(_cls)
del _cls


def _kinds(kind: type[Loss] | tuple[type[Loss], ...]) -> tuple[type[Loss], ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def loss_names(kind: type[Loss] | tuple[type[Loss], ...] = Loss) -> list[str]:
    """The names of the registered losses that are a ``kind`` (a class, or a tuple of
    classes any of which will do), sorted: what an estimator taking such a loss accepts
    as a string."""
    return sorted(n for n, c in {**LOSSES, **STRUCTURED_LOSSES}.items()
                  if issubclass(c, _kinds(kind)))


def get_loss(loss: str | Loss, kind: type[Loss] | tuple[type[Loss], ...] = Loss, *,
             param: str = "loss") -> Loss:
    """Resolve a loss given by name or instance, checking it is a ``kind`` (a class, or
    a tuple of classes any of which will do); errors name ``param`` and list the names
    of the registered losses of that kind."""
    registry = {**LOSSES, **STRUCTURED_LOSSES}
    kinds = _kinds(kind)
    allowed = loss_names(kinds)
    if isinstance(loss, str):
        if loss not in registry:
            raise ValueError(f"unknown {param} {loss!r}; choose one of {allowed}")
        loss = registry[loss]()
    if not isinstance(loss, kinds):
        what = " or ".join(k.__name__ for k in kinds)
        raise ValueError(f"{param}={loss!r} is not a {what}; choose one of {allowed}")
    return loss
