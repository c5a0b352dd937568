"""One fit a class: an oracle whose answer to an ``(n, K)`` projection is K answers of
the oracle it wraps, each fitted to its own column with its own weights.

Newton's step for vector scores (the functional boosters' ``query="newton"`` with the
softmax loss) asks ``project(−g/H, s H)`` with targets and weights of shape ``(n, K)``:
each class its own hessian ``p_k(1 − p_k)``.  A vector-leaf tree takes one weight a
row, so it cannot fit that query; :class:`PerClassOracle` answers it with one
hypothesis a class, the wrapped oracle's ``project`` of column k with weight column k.
Over :class:`~oracleboost.oracles.HistTreeOracle` that is LightGBM's multiclass
boosting: K trees a round, each with its class's Newton leaves ``−Σ g_k / Σ H_k``
(Friedman, Hastie & Tibshirani 2000, §6; Ke et al. 2017).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from oracleboost._typing import ArrayLike
from oracleboost._validation import check_finite_array, check_query, check_sample_weight
from oracleboost.oracles.base import (
    BoundOracle,
    Capabilities,
    Hypothesis,
    NonFiniteOutput,
    Oracle,
    class_runs,
    predict_validated,
    wrapped_categorical_features,
)

__all__ = ["PerClassOracle", "PerClassHypothesis", "class_seeds"]

#: Seeds of the K sub-queries are drawn below this (the bound of scikit-learn's seeds).
_MAX_SEED = np.iinfo(np.int32).max


def class_seeds(random_state: int | None, n_classes: int) -> list[int | None]:
    """The seeds of one query's ``n_classes`` sub-queries: drawn from ``random_state``
    by :class:`numpy.random.RandomState` (the same seeds for the same seed, a different
    one a class); all ``None`` for ``None`` (fresh randomness, as the query asked)."""
    if random_state is None:
        return [None] * n_classes
    return [int(s) for s in np.random.RandomState(random_state).randint(_MAX_SEED,
                                                                        size=n_classes)]


class PerClassHypothesis(Hypothesis):
    """K hypotheses of one output each, side by side: ``predict(X)`` is the ``(n, K)``
    array whose column k is ``parts[k].predict(X)``.

    Parameters
    ----------
    parts : list of Hypothesis
        One hypothesis of scalar output a class, in class order.
    """

    def __init__(self, parts: Sequence[Hypothesis]) -> None:
        self.parts = list(parts)

    @property
    def n_outputs(self) -> int:
        """K, the number of columns it predicts."""
        return len(self.parts)

    def predict(self, X: ArrayLike) -> np.ndarray:
        return np.column_stack([h.predict(X) for h in self.parts])

    def _predict_validated(self, X: Any) -> np.ndarray:
        return np.column_stack([predict_validated(h, X) for h in self.parts])

    @classmethod
    def predict_sum(cls, hypotheses: Sequence[Hypothesis], coef: np.ndarray, X: np.ndarray,
                    out: np.ndarray) -> None:
        """Add ``coef[r] * hypotheses[r].predict(X)`` to ``out`` for every round: class
        k's column through its parts' own ``predict_sum`` (a compiled pass over the
        rounds' trees), each entry's terms added in round order as the loop adds them,
        so bit for bit the loop of :meth:`Hypothesis.predict_sum`.  A part that
        predicts NaN or ±inf is reported as the loop reports it."""
        coef = np.asarray(coef, dtype=np.float64)
        if not (out.ndim == 2 and coef.shape == (len(hypotheses),) and all(
                type(h) is cls and h.n_outputs == out.shape[1] for h in hypotheses)):
            Hypothesis.predict_sum(hypotheses, coef, X, out)
            return
        acc = out.copy()
        try:
            for k in range(out.shape[1]):
                column = np.ascontiguousarray(out[:, k])
                parts = [h.parts[k] for h in hypotheses]
                for kind, a, b in class_runs(parts):
                    kind.predict_sum(parts[a:b], coef[a:b], X, column)
                acc[:, k] = column
        except NonFiniteOutput:
            # the loop: adds the rounds before the first non-finite one, then raises
            Hypothesis.predict_sum(hypotheses, coef, X, out)
            raise
        out[...] = acc

    def feature_importances(self, n_features: int) -> np.ndarray | None:
        """The parts' importances summed and normalised (None when a part does not
        know its own)."""
        found = [h.feature_importances(n_features) for h in self.parts]
        if any(f is None for f in found):
            return None
        out = np.sum(found, axis=0)
        total = out.sum()
        return out / total if total > 0 else out

    def detach(self) -> Hypothesis:
        h = super().detach()
        h.parts = [p.detach() for p in self.parts]  # type: ignore[attr-defined]
        return h

    def __repr__(self) -> str:
        return f"PerClassHypothesis(n_outputs={self.n_outputs}, parts[0]={self.parts[0]!r})"


class _BoundPerClass(BoundOracle):
    def __init__(self, oracle: PerClassOracle, inner: BoundOracle) -> None:
        super().__init__(oracle, inner.n_samples)
        self.inner = inner
        if hasattr(inner, "n_features"):
            self.n_features = inner.n_features

    def project(self, target: ArrayLike, sample_weight: ArrayLike | None = None, *,
                random_state: int | None = None, features: ArrayLike | None = None
                ) -> Hypothesis:
        """The wrapped oracle's ``project`` of each column of ``target`` (shape
        ``(n, K)``) with its weights: ``sample_weight`` None, of shape ``(n,)`` (every
        class the same) or ``(n, K)`` (column k for class k); the K seeds drawn from
        ``random_state`` (:func:`class_seeds`).  A target of shape ``(n,)`` is the
        wrapped oracle's own query and answer."""
        target = check_query(target, self.n_samples, "target")
        if target.ndim == 1:
            return self.inner.project(target, sample_weight, random_state=random_state,
                                      features=features)
        K = target.shape[1]
        w = self._weights(sample_weight, K)
        only = {} if features is None else {"features": features}
        parts = []
        for k, seed in enumerate(class_seeds(random_state, K)):
            wk = w if w is None or w.ndim == 1 else np.ascontiguousarray(w[:, k])
            parts.append(self.inner.project(np.ascontiguousarray(target[:, k]), wk,
                                            random_state=seed, **only))
        h = PerClassHypothesis([p.detach() for p in parts])
        h.train_output = np.column_stack([p.train_output for p in parts])
        return self._checked(h, target.shape, finite=True)  # (each part checked)

    def correlate(self, r: ArrayLike, *, random_state: int | None = None,
                  features: ArrayLike | None = None) -> Hypothesis:
        """The wrapped oracle's own ``correlate`` of a query of shape ``(n,)`` (its
        answer, as it is); a query of shape ``(n, K)`` is refused (one fit a class
        answers ``project``)."""
        r = check_query(r, self.n_samples, "r", finite=False)
        self._require("correlate", r.ndim)
        return self.inner.correlate(r, random_state=random_state, features=features)

    def _weights(self, sample_weight: ArrayLike | None, K: int) -> np.ndarray | None:
        """``sample_weight`` checked: None, ``(n,)`` or ``(n, K)``, finite, non-negative,
        each class's column with a positive weight."""
        if sample_weight is None:
            return None
        w = np.asarray(sample_weight)
        if w.ndim != 2:
            return check_sample_weight(w, self.n_samples)
        w = check_finite_array(w, "sample_weight", ndim=(2,))
        if w.shape != (self.n_samples, K):
            raise ValueError(f"sample_weight has shape {w.shape}; the target has shape "
                             f"({self.n_samples}, {K})")
        if (w < 0).any():
            raise ValueError("sample_weight contains negative values; weights must be "
                             "non-negative")
        empty = np.flatnonzero(~(w > 0).any(axis=0))
        if empty.size:
            raise ValueError(f"sample_weight's column {int(empty[0])} sums to zero; each "
                             "class needs a positive weight")
        return w


class PerClassOracle(Oracle):
    """Answer an ``(n, K)`` projection with one hypothesis a class: the wrapped
    oracle's ``project`` of each target column, each with its own weight column.

    ``project(target (n, K), sample_weight)`` takes weights of shape ``(n,)`` or
    ``(n, K)`` (``Capabilities.per_class_weights``) and returns a
    :class:`PerClassHypothesis` whose ``predict`` is the K answers side by side.  Its
    sub-queries' seeds are drawn from the query's one ``random_state``
    (:func:`class_seeds`).  Under ``FunctionalGradientClassifier(...,
    query="newton")`` with the softmax loss, each class's answer fits its Newton target
    ``−g_k/H_k`` with the weights ``s H_k``: over ``HistTreeOracle`` that is LightGBM's
    multiclass boosting, K trees a round with Newton leaves.

    Parameters
    ----------
    oracle : Oracle
        The wrapped hypothesis class; it must answer ``project`` of one output.

    Notes
    -----
    A query of one output (``project`` of a target of shape ``(n,)``, ``correlate`` of
    ``r`` of shape ``(n,)``) is handed to the wrapped oracle as it is, so the wrapper
    serves every booster on two classes; ``correlate`` of shape ``(n, K)`` is refused.
    It binds in memory (not on a cluster), and a model of its hypotheses is not exported
    to LightGBM (a hypothesis a class is not one tree).  It costs K fits of the wrapped
    oracle a query, against one vector-leaf fit.

    Examples
    --------
    >>> import numpy as np
    >>> from oracleboost.oracles import PerClassOracle, TreeOracle
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> target = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 0.0], [4.0, 0.0]])
    >>> weights = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [3.0, 1.0]])
    >>> h = PerClassOracle(TreeOracle(max_depth=1)).bind(X).project(target, weights)
    >>> h.train_output  # class 0 weighs its last row 3 times: its stump splits it off
    array([[0.66666667, 1.        ],
           [0.66666667, 1.        ],
           [0.66666667, 0.        ],
           [4.        , 0.        ]])
    """

    def __init__(self, oracle: Oracle | None = None) -> None:
        self.oracle = oracle

    def _wrapped(self) -> Oracle:
        if not isinstance(self.oracle, Oracle):
            raise TypeError("PerClassOracle's `oracle` argument must be an Oracle (a "
                            "hypothesis class such as HistTreeOracle()); got "
                            f"{type(self.oracle).__name__}")
        return self.oracle

    @property
    def capabilities(self) -> Capabilities:
        inner = self._wrapped().capabilities
        return dataclasses.replace(
            inner, multiclass_correlate=False, correlation_vector=False,
            multiclass_project=inner.project, per_class_weights=inner.project)

    def bind(self, X: ArrayLike, *,
             categorical_features: Sequence[int] | None = None) -> BoundOracle:
        """Bind the wrapped oracle to X (with ``categorical_features`` where there are
        such columns, which it must take)."""
        categorical = wrapped_categorical_features(self, categorical_features)
        kw = {} if categorical is None else {"categorical_features": categorical}
        return _BoundPerClass(self, self._wrapped().bind(X, **kw))
