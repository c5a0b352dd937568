"""Cache oracle calls on disk with joblib: a second identical fit makes no weak-learner fit
========================================================================================

``CachedOracle(oracle, memory)`` wraps any hypothesis class.  ``bind(X)`` fingerprints
X once; every query (``project(target, sample_weight)`` or ``correlate(r)``) is then
keyed on that fingerprint, the query's arrays, the wrapped oracle's parameters and the
library version, and its answer (the fitted weak learner with its training outputs) is
stored by ``joblib.Memory``.  Because the booster draws each query's seed from its own
``random_state`` (the per-query seeds of the Oracle protocol, as scikit-learn's
``_set_random_states`` does), a query is a pure function of its inputs and the cache is
exact: the cached run's predictions equal the uncached run's bit for bit.

The script boosts ``Ridge`` with ``FunctionalGradientRegressor`` (Grubb & Bagnell 2011,
Algorithm 1 with squared loss: Friedman's L2 boosting) on a synthetic regression
problem, three times with one cache: a first fit (every round a miss), the same fit again
(every round a hit: zero Ridge fits, and faster), and a longer fit (only the new rounds
are fitted).  It counts Ridge fits with a small subclass.  The cache lives in a
temporary directory removed at the end, or in ``--cache DIR`` (kept: run the script
twice and even the first fit is served from disk).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from joblib import Memory
from sklearn.datasets import make_regression
from sklearn.linear_model import Ridge
from threadpoolctl import threadpool_limits

from oracleboost import CachedOracle, FunctionalGradientRegressor, SklearnOracle


class CountingRidge(Ridge):
    """``Ridge`` that counts its fits (on the class: the oracle fits clones)."""

    fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        return super().fit(X, y, sample_weight=sample_weight)


def timed_fit(memory, X, y, rounds: int):
    """Fit once through the cache; return the model, the seconds and the Ridge fits."""
    booster = FunctionalGradientRegressor(
        CachedOracle(SklearnOracle(CountingRidge(alpha=10.0)), memory),
        n_estimators=rounds,
        learning_rate=0.5,
        random_state=0,  # fixed seeds: the same queries, so the same cache keys
    )
    before = CountingRidge.fits
    start = time.perf_counter()
    booster.fit(X, y)
    return booster, time.perf_counter() - start, CountingRidge.fits - before


def run(cachedir: str, rounds: int, n_samples: int, n_features: int) -> dict:
    X, y = make_regression(
        n_samples=n_samples, n_features=n_features, noise=10.0, random_state=0
    )
    memory = Memory(cachedir, verbose=0)
    # One BLAS thread: Ridge on a few thousand rows gains little from more, and threads
    # that spin for cores on a busy machine can make each fit many times slower.
    with threadpool_limits(limits=1):
        first, t1, fits1 = timed_fit(memory, X, y, rounds)
        second, t2, fits2 = timed_fit(memory, X, y, rounds)
        longer, t3, fits3 = timed_fit(memory, X, y, rounds + rounds // 2)
    same = np.array_equal(first.predict(X), second.predict(X))
    files = [p for p in Path(cachedir).rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files) / 2**20

    print("FunctionalGradientRegressor(CachedOracle(SklearnOracle(Ridge(alpha=10)), memory))")
    print(f"on make_regression ({n_samples} rows x {n_features} features), cache in {cachedir}")
    print(f"first fit,  {rounds} rounds: {t1:6.2f} s, {fits1:3d} Ridge fits")
    print(f"second fit, {rounds} rounds: {t2:6.2f} s, {fits2:3d} Ridge fits "
          f"({t1 / t2:.1f}x faster), identical predictions: {same}")
    print(f"longer fit, {rounds + rounds // 2} rounds: {t3:6.2f} s, {fits3:3d} Ridge fits "
          f"(the first {rounds} rounds come from the cache)")
    print(f"cache: {len(files)} files, {size:.1f} MiB")
    return {
        "seconds": (t1, t2, t3),
        "fits": (fits1, fits2, fits3),
        "identical": same,
        "rounds": rounds,
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--cache", metavar="DIR", help="cache here (kept); default: a temp dir")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--samples", type=int, default=4000)
    parser.add_argument("--features", type=int, default=200)
    args = parser.parse_args(argv)
    if args.cache:
        return run(args.cache, args.rounds, args.samples, args.features)
    with tempfile.TemporaryDirectory(prefix="oracleboost-cache-") as cachedir:
        return run(cachedir, args.rounds, args.samples, args.features)


if __name__ == "__main__":
    main()
