"""Losses: value, (sub)gradient and what boosters need.

One class per loss; estimators also accept the lowercase names of :data:`LOSSES`.
"""

from __future__ import annotations

from .base import Loss
from .margin import Exponential, Logistic, MarginLoss
from .regression import Absolute, Huber, Squared, weighted_median

__all__ = [
    "Loss",
    "MarginLoss",
    "Exponential",
    "Logistic",
    "Squared",
    "Absolute",
    "Huber",
    "LOSSES",
    "get_loss",
    "weighted_median",
]

LOSSES: dict[str, type[Loss]] = {
    cls.name: cls for cls in (Exponential, Logistic, Squared, Absolute, Huber)
}


def get_loss(loss: str | Loss, kind: type[Loss] = Loss, *, param: str = "loss") -> Loss:
    """Resolve a loss given by name or instance, checking it is a ``kind``."""
    if isinstance(loss, str):
        if loss not in LOSSES:
            raise ValueError(f"unknown {param} {loss!r}; choose one of {sorted(LOSSES)}")
        loss = LOSSES[loss]()
    if not isinstance(loss, kind):
        allowed = sorted(n for n, c in LOSSES.items() if issubclass(c, kind))
        raise ValueError(f"{param}={loss!r} is not a {kind.__name__}; choose one of {allowed}")
    return loss
