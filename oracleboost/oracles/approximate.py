"""An approximate weak-learning oracle (Telgarsky 2012, Appendix E).

Coordinate descent keeps its guarantees when the oracle returns any hypothesis whose
edge is at least ``c0`` times the best one, ``|<r, h_j>| ≥ c0 · max_k |<r, h_k>|``, at
the price of a factor ``c0²`` in every rate (Prop. 38 becomes a decrease of at least
``c0² ||A^T∇f||²_∞ / (6ηf)``).  A descent direction alone is not enough (Remark 39).
This wrapper turns a finite class into such an oracle, choosing among the admissible
columns the weakest one (the adversarial choice that exhibits the slow-down) or one
at random.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from oracleboost._typing import ArrayLike
from oracleboost.oracles.base import (
    BoundOracle,
    Capabilities,
    Oracle,
    OracleCapabilityError,
    wrapped_categorical_features,
)

__all__ = ["ApproximateOracle"]


class _BoundApproximate(BoundOracle):
    def __init__(self, oracle: ApproximateOracle, inner: BoundOracle):
        super().__init__(oracle, inner.n_samples)
        self.inner = inner
        self.capabilities = replace(self.capabilities, bounded=inner.capabilities.bounded,
                                    allow_nan=inner.capabilities.allow_nan,
                                    categorical=inner.capabilities.categorical)

    def _correlate(self, r, random_state):
        c = self.inner.correlation_vector(r)
        mag = np.abs(c)
        best = float(mag.max())
        # relative slack of a few ulps: c0·h_j must count as admissible when c0 is exact
        admissible = np.flatnonzero(mag >= self.oracle.c0 * best * (1.0 - 1e-12))
        if self.oracle.choice == "worst":
            j = int(admissible[np.argmin(mag[admissible])])  # first index among ties
        else:
            j = int(np.random.RandomState(random_state).choice(admissible))
        return self.inner.column_hypothesis(j, 1.0 if c[j] >= 0 else -1.0)

    def _correlation_vector(self, r):
        return self.inner.correlation_vector(r)

    def _columns(self):
        return self.inner.columns()

    def _combine(self, w):
        return self.inner.combine(w)

    def _column_hypothesis(self, j, scale):
        return self.inner.column_hypothesis(j, scale)


class ApproximateOracle(Oracle):
    """Answer ``correlate`` with a column whose edge is at least ``c0`` times the best.

    Parameters
    ----------
    oracle : Oracle
        A finite class (``capabilities.correlation_vector``), e.g. ``MatrixOracle``.
    c0 : float in (0, 1], default=0.5
        The approximation factor; ``c0 = 1`` is the exact oracle.
    choice : {"worst", "random"}, default="worst"
        Which admissible column to return: the one with the smallest edge, or one
        drawn with the query's seed.

    Examples
    --------
    Edges 4, 2 and 0: the exact oracle answers column 0; with ``c0 = 0.5`` the weakest
    admissible column (edge at least 2) is column 1:

    >>> import numpy as np
    >>> from oracleboost.oracles import ApproximateOracle, MatrixOracle
    >>> H = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, -1.0, 1.0]])
    >>> X, y = np.arange(4).reshape(-1, 1), np.array([1.0, 1.0, 1.0, -1.0])
    >>> MatrixOracle(H).bind(X).correlation_vector(y)
    array([4., 2., 0.])
    >>> ApproximateOracle(MatrixOracle(H), c0=0.5).bind(X).correlate(y)
    MatrixColumn(j=1, scale=1)
    """

    def __init__(self, oracle: Oracle, c0: float = 0.5, choice: str = "worst") -> None:
        self.oracle = oracle
        self.c0 = c0
        self.choice = choice

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            correlate=True,
            project=False,
            correlation_vector=True,
            stochastic=self.choice == "random",
            bounded=self.oracle.capabilities.bounded,
            parallel_queries=self.oracle.capabilities.parallel_queries,
            allow_nan=self.oracle.capabilities.allow_nan,
            categorical=self.oracle.capabilities.categorical,
        )

    def bind(self, X: ArrayLike, *,
             categorical_features: tuple[int, ...] | None = None) -> BoundOracle:
        """Bind the wrapped finite class to X (with ``categorical_features`` where it
        takes them: ``capabilities.categorical``)."""
        categorical = wrapped_categorical_features(self, categorical_features)
        if not (isinstance(self.c0, (int, float)) and 0.0 < self.c0 <= 1.0):
            raise ValueError(f"c0 must be in (0, 1]; got {self.c0!r}")
        if self.choice not in ("worst", "random"):
            raise ValueError(f"choice must be 'worst' or 'random'; got {self.choice!r}")
        if not self.oracle.capabilities.correlation_vector:
            raise OracleCapabilityError(
                f"ApproximateOracle needs a finite class with a correlation vector; "
                f"{type(self.oracle).__name__} is not one"
            )
        kw = {} if categorical is None else {"categorical_features": categorical}
        return _BoundApproximate(self, self.oracle.bind(X, **kw))
