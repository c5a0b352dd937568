"""AdaBoost's stump rounds on one GPU: time a round, and the bandwidth it achieves.

The booster is the library's own, on the GPU backend:
``CoordinateBoostingClassifier(StumpOracle(device="cuda"))`` (AdaBoost: the exponential
loss and its step), whose passes run as device twins (:mod:`oracleboost.cuda.stages`)
with the margins and weights kept on the device.  A round reads every row's bin codes
once for the histograms (``d`` bytes a row) and a few per-row arrays (the margins read
and written, the labels, the weights and the query written and read, the stump's
outputs): the model here counts ``(d + 25) · n`` bytes a round, and the achieved
bandwidth is that over the time of a round.  A round's time is the booster's own record
(``history_["time"]``), the median over the rounds after the first ``--warm`` (which
compile the kernels); the fit's one-off work (checking and binning X on the CPU, the
upload of the codes, labels and weights) is outside every round.

    python benchmarks/bench_cuda.py                 # 10^7 × 20 and 10^8 × 20
    python benchmarks/bench_cuda.py --sizes 1000000x20 --rounds 12

X holds integers 0 … 254 (255 bins a feature); the labels follow feature 0 with noise,
so that no stump is perfect and every fit makes all its rounds.  Where there is no GPU
the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
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


def _problem(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """X (float64 integers 0 … 254, made a feature at a time) and labels from feature 0
    with noise."""
    rng = np.random.default_rng(seed)
    X = np.empty((n, d))
    for j in range(d):
        X[:, j] = rng.integers(0, 255, size=n, dtype=np.uint8)
    noise = rng.integers(-40, 41, size=n, dtype=np.int16)
    y = np.where(X[:, 0] + noise > 127, 1, -1).astype(np.int8)
    return X, y


def _round_seconds(X: np.ndarray, y: np.ndarray, rounds: int, warm: int) -> list[float]:
    """Each round's seconds after the first ``warm`` of one fit on the device."""
    from oracleboost.boosters import CoordinateBoostingClassifier
    from oracleboost.oracles import StumpOracle

    model = CoordinateBoostingClassifier(StumpOracle(device="cuda"),
                                         n_estimators=rounds).fit(X, y)
    times = model.history_["time"]
    if len(times) != rounds:
        raise RuntimeError(f"the fit stopped after {len(times)} of {rounds} rounds "
                           f"({model.stop_reason_}): fewer rounds than asked to time")
    return [float(t) for t in times[warm:]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000000x20,100000000x20",
                        help="comma-separated n x d (default: 10^7 x 20 and 10^8 x 20)")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--warm", type=int, default=2,
                        help="rounds left out of the median (the kernels' compilation)")
    args = parser.parse_args(argv)
    cuda = _gpu_or_skip()
    device = cuda.get_current_device()
    print(f"GPU: {device.name.decode() if isinstance(device.name, bytes) else device.name}")
    for size in args.sizes.split(","):
        n, d = (int(float(x)) for x in size.lower().split("x"))
        X, y = _problem(n, d)
        per_round = _round_seconds(X, y, args.rounds, args.warm)
        t = statistics.median(per_round)
        moved = (d + 25) * n
        print(f"n={n:,} d={d}: {t * 1e3:.3f} ms a round (median of {len(per_round)} "
              f"rounds; spread {min(per_round) * 1e3:.3f}-{max(per_round) * 1e3:.3f} ms), "
              f"{moved / t / 1e9:.1f} GB/s against (d + 25)·n = {moved / 1e9:.2f} GB a round")
        del X, y


if __name__ == "__main__":
    main()
