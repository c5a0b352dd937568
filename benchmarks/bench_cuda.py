"""AdaBoost's stump rounds on one GPU: time a round, and the bandwidth it achieves.

A round of :func:`oracleboost.cuda.adaboost_on_device` reads every row's bin codes once
for the histograms (``d`` bytes a row) and a few per-row arrays (the margins read and
written, the labels, the fixed-point query written and read, one feature's codes for
the step): the model here counts ``(d + 25) · n`` bytes a round, and the achieved
bandwidth is that over the time of a round.  A round's time is the marginal cost
``(t(R2) − t(R1)) / (R2 − R1)`` of two runs of R1 and R2 rounds (the one-off work, the
upload of the labels, the label counts and the kernels' compilation, cancels), the
median of ``--repeats`` pairs.

    python benchmarks/bench_cuda.py                 # 10^7 × 20 and 10^8 × 20, medians of 5
    python benchmarks/bench_cuda.py --sizes 1000000x20 --repeats 3

The codes are random (255 bins a feature) and uploaded once; the labels follow feature 0
with noise, so that no stump is perfect and every run makes all its rounds.  Where there
is no GPU the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's library

SKIP = "skipped: no GPU (numba.cuda.is_available() is False)"


def _gpu_or_skip():
    """``numba.cuda`` if a real GPU runs it; else print why not and exit 0."""
    from numba.core import config

    if config.ENABLE_CUDASIM:
        print("skipped: numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1); "
              "this benchmark times a real GPU")
        sys.exit(0)
    from numba import cuda

    if not cuda.is_available():
        print(SKIP)
        sys.exit(0)
    return cuda


def _problem(n: int, d: int, seed: int = 0):
    from oracleboost.cuda import DeviceStumps

    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 255, size=(d, n), dtype=np.uint8)
    thresholds = [np.arange(254, dtype=np.float64) + 0.5 for _ in range(d)]
    noise = rng.integers(-40, 41, size=n, dtype=np.int16)
    y = np.where(codes[0].astype(np.int16) + noise > 127, 1, -1).astype(np.int8)
    return DeviceStumps.from_codes(codes, thresholds), y


def _seconds(stumps, y, rounds: int, cuda) -> float:
    from oracleboost.cuda import adaboost_on_device

    cuda.synchronize()
    start = time.perf_counter()
    result = adaboost_on_device(stumps, y, rounds)
    cuda.synchronize()
    elapsed = time.perf_counter() - start
    if len(result.steps) != rounds:
        raise RuntimeError(f"the run stopped after {len(result.steps)} of {rounds} rounds "
                           f"({result.stop_reason}): the marginal time would be wrong")
    return elapsed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000000x20,100000000x20",
                        help="comma-separated n x d (default: 10^7 x 20 and 10^8 x 20)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--r1", type=int, default=2)
    parser.add_argument("--r2", type=int, default=12)
    args = parser.parse_args(argv)
    cuda = _gpu_or_skip()
    device = cuda.get_current_device()
    print(f"GPU: {device.name.decode() if isinstance(device.name, bytes) else device.name}")
    warm, y_warm = _problem(10_000, 20)
    _seconds(warm, y_warm, 2, cuda)  # compile the kernels (255 bins, 20 features)
    for size in args.sizes.split(","):
        n, d = (int(float(x)) for x in size.lower().split("x"))
        stumps, y = _problem(n, d)
        per_round = []
        for _ in range(args.repeats):
            t1 = _seconds(stumps, y, args.r1, cuda)
            t2 = _seconds(stumps, y, args.r2, cuda)
            per_round.append((t2 - t1) / (args.r2 - args.r1))
        t = statistics.median(per_round)
        moved = (d + 25) * n
        print(f"n={n:,} d={d}: {t * 1e3:.3f} ms a round (median of {args.repeats}; spread "
              f"{min(per_round) * 1e3:.3f}-{max(per_round) * 1e3:.3f} ms), "
              f"{moved / t / 1e9:.1f} GB/s against (d + 25)·n = {moved / 1e9:.2f} GB a round")
        del stumps


if __name__ == "__main__":
    main()
