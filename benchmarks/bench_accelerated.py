"""Dual acceleration: time per step against its floor, two matrix-vector products.

One step of Algorithm 1 (Ji, Srebro & Telgarsky 2021) costs the products ``Zᵀ q`` and
``Z w`` plus O(n) work (the softmax in log space, the margin, the certificate, the
history record).  The floor is those two products in NumPy on the same matrix with the
same thread count.  Per-step time is measured as (fit of 1 + T steps − fit of 1 step)/T,
so that the one-off work (validation, binding, the scale) is left out; the floor as
the median time of the two products.  Both are interleaved in one process, repeated,
and the median of the per-repeat ratios is reported with its spread.

    python benchmarks/bench_accelerated.py              # 100,000 × 100, 5 repeats, 1 thread
    python benchmarks/bench_accelerated.py --threads 2
    python benchmarks/bench_accelerated.py --quick      # a smoke check

Threads are pinned: the floor's with threadpoolctl (OpenBLAS's count), the booster's
and ``LinearOracle``'s by their ``n_jobs`` (their passes and products are their own
kernels, summed by lanes, not BLAS); nothing else should be running.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _data(n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(0)
    X = rng.randn(n, d)
    u = rng.randn(d)
    y = np.where(X @ u > 0, 1, 0)
    return X, y


def _fit_seconds(X, y, steps: int, threads: int = 1) -> float:
    """One fit's wall time, the booster's passes and the oracle's products on
    ``threads`` threads (their own ``n_jobs``: they do not go through BLAS)."""
    from oracleboost.boosters import AcceleratedMarginClassifier
    from oracleboost.oracles import LinearOracle

    t0 = time.perf_counter()
    AcceleratedMarginClassifier(LinearOracle(n_jobs=threads), n_estimators=steps, tol=0.0,
                                n_jobs=threads).fit(X, y)
    return time.perf_counter() - t0


def _floor_seconds(X, reps: int) -> float:
    w = np.random.RandomState(1).randn(X.shape[1])
    q = np.full(X.shape[0], 1.0 / X.shape[0])
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        X.T @ q
        X @ w
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.steps, args.repeats = 5_000, 50, 2

    from threadpoolctl import threadpool_limits

    X, y = _data(args.n, args.d)
    with threadpool_limits(args.threads):
        _fit_seconds(X, y, 5, args.threads)  # warm-up: imports, page faults
        ratios, per_step, floors = [], [], []
        for _ in range(args.repeats):
            floor = _floor_seconds(X, 20)
            one = _fit_seconds(X, y, 1, args.threads)
            many = _fit_seconds(X, y, 1 + args.steps, args.threads)
            step = (many - one) / args.steps
            floors.append(floor)
            per_step.append(step)
            ratios.append(step / floor)
    print(
        f"dual acceleration, Algorithm 1, {args.n:,} × {args.d}, {args.steps} steps, "
        f"{args.threads} thread(s), {args.repeats} repeats"
    )
    print(f"  time per step       median {1e3 * statistics.median(per_step):8.3f} ms "
          f"(min {1e3 * min(per_step):.3f}, max {1e3 * max(per_step):.3f})")
    print(f"  two products floor  median {1e3 * statistics.median(floors):8.3f} ms "
          f"(min {1e3 * min(floors):.3f}, max {1e3 * max(floors):.3f})")
    print(f"  ratio step / floor  median {statistics.median(ratios):8.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f}); goal ≤ 1.5")


if __name__ == "__main__":
    main()
