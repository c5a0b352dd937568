"""What every booster shares: the ensemble, the per-round history, stop reasons, seeds.

A booster's round reads like its paper's algorithm box: ask the oracle (``correlate`` or
``project``), choose a step, update the running training scores (never re-predicting
old hypotheses), append one record to the history.  This module holds the parts that
are the same for every box.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Hashable, Iterator
from enum import Enum
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from ..oracles.base import Hypothesis, Oracle, OracleCapabilityError

__all__ = ["StopReason", "Ensemble", "History", "BaseBooster", "draw_seed"]

_MAX_SEED = np.iinfo(np.int32).max


class StopReason(str, Enum):
    """Why fitting ended; kept as ``stop_reason_`` on every fitted booster."""

    MAX_ROUNDS = "max_rounds"  # the round budget n_estimators was used up
    ZERO_EDGE = "zero_edge"  # the oracle's best hypothesis has no correlation: stationary point
    PERFECT_HYPOTHESIS = "perfect_hypothesis"  # a hypothesis classifies every example right
    ZERO_HYPOTHESIS = "zero_hypothesis"  # the oracle returned h = 0 on the training points
    ZERO_GRADIENT = "zero_gradient"  # the loss is at its minimum on the training points
    INFINITE_STEP = "infinite_step"  # no example is hurt by h: the exact step is unbounded
    ZERO_STEP = "zero_step"  # the step rule gave 0 (e.g. the quadratic step, C_t^4 overflowing)

    def __str__(self) -> str:
        return self.value


def draw_seed(rng: np.random.RandomState) -> int:
    """One seed per oracle call, drawn as ``sklearn.ensemble._base._set_random_states`` does."""
    return int(rng.randint(_MAX_SEED))


class Ensemble:
    """``f(x) = intercept + Σ_j coef_j h_j(x)`` built round by round.

    Hypotheses with the same ``key`` (the same function up to ``scale``) share one
    coefficient, so ``l1_norm`` is ``||λ||_1`` over distinct functions, as in the ℓ1
    margin of Telgarsky (2013, §1).  ``norms[j]`` is ``max_i |h_j(x_i)|`` on the training
    points: λ is measured on columns scaled into [−1, 1].
    """

    def __init__(self, intercept: float | np.ndarray = 0.0):
        self.intercept = intercept
        self.hypotheses: list[Hypothesis] = []
        self.coef: list[float] = []
        self.norms: list[float] = []
        self.round_index: list[int] = []  # which hypothesis each round touched
        self.round_delta: list[float] = []  # and by how much its coefficient moved
        self._by_key: dict[Hashable, int] = {}

    def add(self, h: Hypothesis, coef: float, norm: float) -> int:
        """Add ``coef · h`` (``h`` already detached); return the hypothesis' index."""
        j = self._by_key.get(h.key) if h.key is not None else None
        if j is None:
            j = len(self.hypotheses)
            self.hypotheses.append(h)
            self.coef.append(0.0)
            self.norms.append(float(norm))
            if h.key is not None:
                self._by_key[h.key] = j
        else:
            # h = (h.scale / first.scale) · first: fold the ratio into the coefficient.
            coef = coef * h.scale / self.hypotheses[j].scale
        self.coef[j] += coef
        self.round_index.append(j)
        self.round_delta.append(coef)
        return j

    @property
    def n_rounds(self) -> int:
        return len(self.round_index)

    def l1_norm(self) -> float:
        return float((np.abs(self.coef) * np.asarray(self.norms)).sum())

    def decision_function(self, X) -> np.ndarray:
        out = None
        for h, c in zip(self.hypotheses, self.coef, strict=True):
            if c != 0.0:
                term = c * h.predict(X)
                out = term if out is None else out + term
        if out is None:
            return np.zeros((len(X),) + np.shape(self.intercept)) + self.intercept
        return out + self.intercept

    def staged_decision_function(self, X) -> Iterator[np.ndarray]:
        """Yield the decision after each round, adding one term to a running array."""
        cached: dict[int, np.ndarray] = {}
        out = None
        for j, delta in zip(self.round_index, self.round_delta, strict=True):
            h = self.hypotheses[j]
            pred = cached.get(j)
            if pred is None:
                pred = h.predict(X)
                if h.key is not None:  # only hypotheses that can recur are worth keeping
                    cached[j] = pred
            out = delta * pred + self.intercept if out is None else out + delta * pred
            yield out.copy()


class History:
    """Per-round records gathered as lists, exposed as a dict of equal-length arrays."""

    def __init__(self, keys: tuple[str, ...] = ()):
        # Declared keys exist (empty) even when no round ran, e.g. a stop at round 1.
        self._rows: dict[str, list[float]] = {k: [] for k in keys}

    def append(self, **record: float) -> None:
        for k, v in record.items():
            self._rows.setdefault(k, []).append(float(v))

    def __len__(self) -> int:
        return len(next(iter(self._rows.values()), []))

    def as_dict(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v, dtype=np.float64) for k, v in self._rows.items()}


class BaseBooster(BaseEstimator):
    """Estimator plumbing shared by every booster (parameters, validation, staging).

    Subclasses set ``self.ensemble_``, ``self.history_``, ``self.stop_reason_`` in ``fit``.
    """

    _parameter_constraints: dict = {
        "oracle": [HasMethods(["bind"]), None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # -- fitted model ------------------------------------------------------------------
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
    def n_estimators_(self) -> int:
        """Rounds actually run (fewer than ``n_estimators`` after an early stop)."""
        check_is_fitted(self, "ensemble_")
        return self.ensemble_.n_rounds

    def _raw(self, X) -> np.ndarray:
        check_is_fitted(self, "ensemble_")
        X = validate_data(self, X, reset=False, ensure_all_finite=True)
        return self.ensemble_.decision_function(X)

    def _staged_raw(self, X) -> Iterator[np.ndarray]:
        check_is_fitted(self, "ensemble_")
        X = validate_data(self, X, reset=False, ensure_all_finite=True)
        yield from self.ensemble_.staged_decision_function(X)

    # -- helpers for fit ------------------------------------------------------------------
    @staticmethod
    def _positive_weight_rows(X, y, s):
        """Keep the rows with positive weight: the others add nothing to any risk, and
        binding them would still move data-dependent choices such as stump thresholds
        (fitting with weight 0 must equal fitting without the row)."""
        keep = s > 0
        if keep.all():
            return X, y, s
        return X[keep], y[keep], s[keep]

    def _bind(self, X, default: Oracle, need: str):
        oracle = default if self.oracle is None else self.oracle
        bound = oracle.bind(X)
        if not getattr(bound.capabilities, need):
            raise OracleCapabilityError(
                f"{type(self).__name__} needs an oracle that answers {need}; "
                f"{type(oracle).__name__} does not (capabilities: {bound.capabilities})"
            )
        return bound

    def _report(self, t: int, record: dict[str, float], start: float) -> None:
        """Progress on long runs: a line every ~10% of the budget (every round if verbose > 1)."""
        if not self.verbose:
            return
        every = 1 if self.verbose > 1 else max(1, self.n_estimators // 10)
        if t == 0:
            print(f"{'round':>7} " + " ".join(f"{k:>12}" for k in record), file=sys.stdout)
        if t % every == 0 or t == self.n_estimators - 1:
            cols = " ".join(f"{v:12.6g}" for v in record.values())
            print(f"{t + 1:7d} {cols}   ({time.perf_counter() - start:.1f}s)", file=sys.stdout)
