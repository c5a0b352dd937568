"""Stochastic boosting's draws: the rows and features a round's weak learner sees.

Friedman (2002), "Stochastic gradient boosting" (Computational Statistics & Data
Analysis 38(4), 367–378), fits each round's weak learner on a random part of the
training rows; XGBoost and LightGBM add a random part of the features
(``colsample_bytree``, ``feature_fraction``).  Here both are drawn from the fit's seed
and the round alone:

* **Rows.**  Row ``i`` (its index among the fit's training rows) is kept in round ``t``
  when ``u < subsample``, ``u`` the uniform number at position ``i`` of a counter-based
  stream (NumPy's Philox-4×64, its key made from ``(seed, t)`` by a ``SeedSequence``;
  ``u = (x >> 11) · 2**-53`` for the stream's 64-bit word ``x``).  A row's draw is
  found without drawing the rows before it (Philox jumps to any position), so each
  partition of rows held elsewhere draws its own rows, and the kept rows are the same
  for any number of threads, any partitioning and any backend.  Each row is kept on its
  own (a Bernoulli draw, as XGBoost's ``subsample``), so about ``subsample · n`` rows
  are kept, not exactly as many: an exact count would need every partition's draws in
  one place.
* **Features.**  ``max(1, ⌊colsample_bytree · d⌋)`` of the ``d`` features, those with the
  smallest words of a second stream keyed by ``(seed, t)`` (XGBoost's count).

A fit of ``m`` rounds continued by ``k`` more (``warm_start``) makes the draws of a fit
of ``m + k`` rounds: nothing but the seed and the round number goes in.
"""

from __future__ import annotations

import dataclasses
import numbers
import secrets
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from oracleboost.rows.blocks import RowBlocks, outputs_only
from oracleboost.rows.partition_blocks import PartitionBlocks
from oracleboost.rows.partitioned import PerPartition, Rows, shaped_like

_State = TypeVar("_State")

__all__ = ["PARAMETERS_DOC", "RoundDraws", "kept_features", "row_key", "row_uniforms",
           "sampling_seed", "with_draw_seed"]

#: The streams of a round's key: its rows' draws, its features' draws.
_ROWS, _FEATURES = 0, 1

#: Philox-4×64 makes four 64-bit words a step of its counter.
_WORDS_A_STEP = 4


def sampling_seed(random_state: Any) -> int:
    """The seed of a fit's draws, from an estimator's ``random_state``: an int as it is;
    a ``RandomState`` gives one draw of it; ``None`` (or NumPy's global generator) fresh
    entropy, so that the fit is random, as scikit-learn means by ``None``.  Made once a
    fit and kept in its running state, so that a warm start draws on."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    if random_state is None or random_state is np.random.mtrand._rand:
        return secrets.randbits(63)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    raise ValueError(f"random_state must be None, an int or a RandomState; got "
                     f"{random_state!r}")


def with_draw_seed(state: _State, draws: RoundDraws | None, random_state: Any) -> _State:
    """A booster's running ``state`` (a dataclass with a ``draw_seed`` field) with the
    seed of its draws, made once a fit (:func:`sampling_seed`): as it is when the fit
    draws nothing or when a warm start continues a fit that made one."""
    if draws is None or state.draw_seed is not None:
        return state
    return dataclasses.replace(state, draw_seed=sampling_seed(random_state))


def _key(seed: int, round: int, stream: int) -> np.ndarray:
    """Philox's key for ``(seed, round, stream)``: a ``SeedSequence`` hash of the three."""
    return np.random.SeedSequence([int(seed), int(round), stream]).generate_state(2, np.uint64)


def _words(seed: int, round: int, stream: int, start: int, n: int) -> np.ndarray:
    """Words ``start .. start + n − 1`` of the stream ``(seed, round, stream)``."""
    bits = np.random.Philox(key=_key(seed, round, stream))
    steps, skip = divmod(int(start), _WORDS_A_STEP)
    bits.advance(steps)  # (also drops the words made before)
    return bits.random_raw(skip + int(n))[skip:]


def row_key(seed: int, round: int) -> np.ndarray:
    """The Philox-4×64 key (two ``uint64``) of round ``round``'s row draws: a GPU makes
    the same words from it (:mod:`oracleboost.cuda.draws`)."""
    return _key(seed, round, _ROWS)


def row_uniforms(seed: int, round: int, start: int, n: int) -> np.ndarray:
    """The uniform numbers in [0, 1) of rows ``start .. start + n − 1`` in ``round``:
    each row's is its own, whatever ``start`` and ``n`` (a partition's rows)."""
    return (_words(seed, round, _ROWS, start, n) >> np.uint64(11)) * 2.0**-53


def kept_features(seed: int, round: int, n_features: int, fraction: float) -> np.ndarray:
    """The features of ``round``: ``max(1, ⌊fraction · n_features⌋)`` of them, sorted."""
    k = max(1, int(fraction * n_features))
    order = np.argsort(_words(seed, round, _FEATURES, 0, n_features), kind="stable")
    return np.sort(order[:k]).astype(np.intp)


@outputs_only(1)
def _kept(blocks: RowBlocks, start: int, *a: np.ndarray, seed: int, round: int,
          fraction: float) -> tuple[tuple, None]:
    """A partition's 0/1 row mask (its first row ``start`` of the fit), or ``a`` times it
    (rows of shape (n,) or (n, K)): a kept row's values as they are, the others 0."""
    keep = row_uniforms(seed, round, start, blocks.n) < fraction
    if not a:
        return (keep.astype(np.float64),), None
    (a,) = a
    return (np.where(keep if a.ndim == 1 else keep[:, None], a, 0.0),), None


@dataclass(frozen=True)
class RoundDraws:
    """What a stochastic fit draws (Friedman 2002): the fraction of rows and of
    features a round's weak learner sees, of the fit's ``n_features``.  The fit's seed
    (:func:`sampling_seed`) is kept in its running state and given to each draw.

    Parameters
    ----------
    subsample : float
        The chance that a row is in a round's sample, in (0, 1]; 1 keeps every row.
    colsample_bytree : float
        The fraction of features a round's weak learner may split on, in (0, 1].
    n_features : int
        The fit's features.
    """

    subsample: float
    colsample_bytree: float
    n_features: int

    @classmethod
    def of(cls, subsample: float, colsample_bytree: float, n_features: int
           ) -> RoundDraws | None:
        """The draws of an estimator's parameters, or None when both fractions are 1: no
        draws at all, the fit of the booster without them."""
        if subsample >= 1.0 and colsample_bytree >= 1.0:
            return None
        return cls(float(subsample), float(colsample_bytree), int(n_features))

    def check_oracle(self, oracle: Any) -> None:
        """Refuse row samples (``subsample < 1``) with a class not closed under negation
        (``capabilities.closed_under_negation``: monotone constraints).  A round's answer
        has an edge ≥ 0 on its sample, but the booster's step along it is taken on every
        row, where its edge, and so the step, may be negative: a negative coefficient
        would reverse the constraint."""
        if self.subsample < 1.0 and not oracle.capabilities.closed_under_negation:
            raise ValueError(
                f"subsample={self.subsample:g} cannot be used with "
                f"{type(oracle).__name__}'s monotone_constraints: the step along a weak "
                "learner fitted on a sample of the rows is taken on every row and may be "
                "negative, which reverses the constraint; use subsample=1.0 "
                "(colsample_bytree keeps the constraints)")

    def rows(self, blocks: RowBlocks, seed: int, round: int, a: Rows | None = None
             ) -> Rows | None:
        """Round ``round``'s rows: ``a`` with the rows out of its sample set to 0, or with
        ``a`` None the 0/1 mask itself (as weights); ``a`` as it is when every row is
        kept (``subsample = 1``)."""
        if self.subsample >= 1.0:
            return a
        start: Any = 0  # (rows in memory: one partition)
        if isinstance(blocks, PartitionBlocks):  # each partition's first row
            start = PerPartition(tuple(np.cumsum((0,) + blocks.sizes[:-1]).tolist()))
        rows = () if a is None else (a,)
        (out,), _ = blocks.map(_kept, start, *rows, seed=int(seed), round=int(round),
                               fraction=self.subsample)
        return out if a is None else shaped_like(out, a)

    def query(self, blocks: RowBlocks, seed: int, round: int, a: Rows | None
              ) -> tuple[Rows | None, dict[str, np.ndarray]]:
        """Round ``round``'s query from the one of every row: :meth:`rows` of ``a`` (a
        ``correlate`` query, or ``project``'s weights), and the oracle's keywords (its
        ``features``, when not every one is kept)."""
        features = self.features(seed, round)
        return self.rows(blocks, seed, round, a), (
            {} if features is None else {"features": features})

    def features(self, seed: int, round: int) -> np.ndarray | None:
        """Round ``round``'s features (sorted indices), or None when every one is kept."""
        if self.colsample_bytree >= 1.0:
            return None
        return kept_features(seed, round, self.n_features, self.colsample_bytree)


#: The estimators' documentation of the two parameters (one text for every booster
#: that takes them).
PARAMETERS_DOC = """\
    subsample : float, default=1.0
        Stochastic boosting (Friedman 2002): the chance that a training row is in a
        round's sample, in (0, 1].  The weak learner of round t is fitted on its sample
        alone (the other rows' weights are 0 in its query); the booster's step along it,
        the loss and the history use every row.  Rows are drawn one by one, each from
        ``(random_state, t)`` and its index alone, so about ``subsample · n`` rows are in
        a sample, the same ones for any ``n_jobs``, backend or warm start.  1.0 (the
        default) draws nothing: the fit without subsampling, bit for bit.
    colsample_bytree : float, default=1.0
        The fraction of features the weak learner of round t may use, in (0, 1]:
        ``max(1, ⌊colsample_bytree · n_features⌋)`` of them, drawn from
        ``(random_state, t)``, as XGBoost's and LightGBM's (``feature_fraction``).  Needs
        an oracle that answers on a subset of the features
        (``Capabilities.feature_subsets``: ``StumpOracle``); others are refused.
"""
