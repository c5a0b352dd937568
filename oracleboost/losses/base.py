"""The loss interface shared by every booster.

Conventions (fixed once, as scikit-learn's ``BaseLoss`` does): ``y`` has shape
``(n_samples,)``; ``raw`` (the ensemble's raw output f(x)) has shape ``(n_samples,)``
for scalar losses.  ``loss`` and ``gradient`` are per example and carry no 1/n: in
Grubb & Bagnell's (2011) function space L2(P̂) the 1/n lives in the inner product
``<f, g> = (1/n) Σ_i f(x_i) g(x_i)``, so the functional gradient at x_i is just the
pointwise derivative ∂l/∂f(x_i).  Step sizes built from ``smoothness`` and
``strong_convexity`` are constants in that same norm.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from .._validation import check_sample_weight

__all__ = ["Loss"]


class Loss(ABC):
    """A pointwise convex loss ``l(f(x), y)``.

    Attributes
    ----------
    name : str
        The registry name estimators accept as a string.
    differentiable : bool
        False for losses whose ``gradient`` is a subgradient (absolute).
    smoothness : float or None
        Λ with ``l`` Λ-strongly smooth in its first argument (Grubb & Bagnell §3), or None.
    strong_convexity : float or None
        λ with ``l`` λ-strongly convex in its first argument, or None.
    """

    name: str = ""
    differentiable: bool = True
    smoothness: float | None = None
    strong_convexity: float | None = None

    @abstractmethod
    def loss(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """Per-example loss, shape ``(n_samples,)``."""

    @abstractmethod
    def gradient(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """Per-example (sub)gradient ∂l/∂raw, the shape of ``raw``."""

    @abstractmethod
    def init_raw(self, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        """The constant minimising the weighted empirical loss (the usual f_0)."""

    def __call__(self, y, raw, sample_weight=None) -> float:
        """Weighted mean loss ``Σ w_i l(raw_i, y_i) / Σ w_i``."""
        w = check_sample_weight(sample_weight, len(y))
        return float(np.average(self.loss(y, raw), weights=w))

    def __repr__(self) -> str:
        params = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        args = ", ".join(f"{k}={v!r}" for k, v in params.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(vars(self).items()))))
