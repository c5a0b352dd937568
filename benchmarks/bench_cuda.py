"""The GPU backend on one NVIDIA GPU: boosting rounds, predictions, and the CPU beside it.

One process, four sections (``--sections``, all by default; sized for under 5
minutes on an H200 with 16 cores, not yet measured there):

``rounds``
    A round of the library's boosters on the GPU backend, their passes as device twins
    (:mod:`oracleboost.cuda.stages`), the margins and weights kept on the device: AdaBoost
    (``CoordinateBoostingClassifier(StumpOracle(device="cuda"))``, the exponential loss
    and its step) at 10⁷ × 20 and 10⁸ × 20; MABoost (``MirrorBoostingClassifier``, the
    entropy map) and the functional regressor (``FunctionalGradientRegressor``, the
    squared loss) at 10⁸ × 20.  A round reads every row's bin codes once for the
    histograms (``d`` bytes a row) and a few per-row arrays: the model here counts
    ``(d + 25) · n`` bytes a round, and the achieved bandwidth is that over a round's
    time.  A round's time is the booster's own record (``history_["time"]``), the median
    over the rounds after the first ``--warm`` (which compile the kernels), with the
    spread; the fit's one-off work (checking and binning X on the CPU, the upload of the
    codes, labels and weights) is outside every round.
``kernels``
    Where an AdaBoost round's time goes at 10⁷ × 20, kernel by kernel
    (:func:`oracleboost.cuda.device.profiled`): each kernel's launches, its time on the
    GPU (between two CUDA events) and the host's time in its launch call, and the
    copies back, a round (fits of ``--r2`` and ``--r1`` rounds, the difference).  A
    round whose kernels take far less than its time is bound by launches and copies.
``cpu``
    The same AdaBoost round on this machine's CPU cores against LightGBM's stump round
    (``num_leaves=2``, the same 255 bins), at 1, 4 and 16 threads (the library's
    ``n_jobs`` and LightGBM's ``num_threads``; numba's threads follow ``n_jobs``), at
    10⁷ × 20: each the marginal cost of a round (a fit of ``R₂`` rounds minus one of
    ``R₁``, binning included in both), ``--repeats`` repeats interleaved, medians and
    spreads; the ratio ours / LightGBM, each one's scaling from 1 thread to 16, and the
    GPU's AdaBoost round against the CPU's at 16 threads.
``predict``
    ``decision_function`` of a 100-round AdaBoost model at 10⁷ × 20: from X on the
    device (summed there, :mod:`oracleboost.cuda.predict`; the scores stay there),
    from the same X in NumPy on every core, and from NumPy through the device (X
    uploaded, scored, the scores copied back); medians of ``--repeats``.

    python benchmarks/bench_cuda.py                       # the record
    python benchmarks/bench_cuda.py --sections rounds --sizes 1000000x20
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/bench_cuda.py --smoke   # tiny: the script runs

X holds integers 0 … 254 (255 bins a feature); the labels follow feature 0 with noise,
so that no stump is perfect and every fit makes all its rounds.  Where there is no GPU
(and no ``--smoke``) the script says so and exits 0.  ``--smoke`` runs every section at
a few hundred rows, on numba's simulator where it is on: it checks the script, it
times nothing worth reading.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's library

SKIP = "skipped: no GPU (numba.cuda.is_available() is False)"


def _gpu_or_skip(smoke: bool):
    """``numba.cuda`` if a GPU (or, with ``smoke``, the simulator) runs it; else print
    why not and exit 0."""
    from numba.core import config

    if config.ENABLE_CUDASIM and not smoke:
        print("skipped: numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1); "
              "this benchmark times a real GPU (--smoke checks the script there)")
        sys.exit(0)
    from numba import cuda

    if not cuda.is_available():
        print(SKIP)
        sys.exit(0)
    return cuda


def _problem(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """X (float64 integers 0 … 254, made a feature at a time) and labels ±1 from
    feature 0 with noise."""
    rng = np.random.default_rng(seed)
    X = np.empty((n, d))
    for j in range(d):
        X[:, j] = rng.integers(0, 255, size=n, dtype=np.uint8)
    noise = rng.integers(-40, 41, size=n, dtype=np.int16)
    y = np.where(X[:, 0] + noise > 127, 1, -1).astype(np.int8)
    return X, y


def _spread(values: list[float], scale: float = 1e3) -> str:
    return (f"{statistics.median(values) * scale:.3f} (spread {min(values) * scale:.3f}-"
            f"{max(values) * scale:.3f})")


def _boosters() -> dict[str, Callable[[int], object]]:
    from oracleboost.boosters import (
        CoordinateBoostingClassifier,
        FunctionalGradientRegressor,
        MirrorBoostingClassifier,
    )
    from oracleboost.oracles import StumpOracle

    return {
        "AdaBoost": lambda k: CoordinateBoostingClassifier(StumpOracle(device="cuda"),
                                                           n_estimators=k),
        "MABoost (entropy)": lambda k: MirrorBoostingClassifier(StumpOracle(device="cuda"),
                                                                n_estimators=k),
        "functional regressor (squared)": lambda k: FunctionalGradientRegressor(
            StumpOracle(device="cuda"), n_estimators=k),
    }


def _round_seconds(make: Callable[[int], object], X: np.ndarray, y: np.ndarray,
                   rounds: int, warm: int) -> list[float]:
    """Each round's seconds after the first ``warm`` of one fit on the device."""
    model = make(rounds).fit(X, y)
    times = model.history_["time"]
    if len(times) != rounds:
        raise RuntimeError(f"the fit stopped after {len(times)} of {rounds} rounds "
                           f"({model.stop_reason_}): fewer rounds than asked to time")
    return [float(t) for t in times[warm:]]


def rounds_section(sizes: list[tuple[int, int]], rounds: int, warm: int) -> dict:
    """Print each booster's round on the GPU; return AdaBoost's median seconds by size."""
    print("\n## Rounds on the GPU")
    boosters, adaboost = _boosters(), {}
    largest = max(sizes)
    for n, d in sizes:
        X, y = _problem(n, d)
        for name, make in boosters.items():
            if name != "AdaBoost" and (n, d) != largest:
                continue
            target = X[:, 0] + y if name.startswith("functional") else y
            per_round = _round_seconds(make, X, target, rounds, warm)
            t = statistics.median(per_round)
            moved = (d + 25) * n
            print(f"{name}, n={n:,} d={d}: {_spread(per_round)} ms a round (median of "
                  f"{len(per_round)} rounds), {moved / t / 1e9:.1f} GB/s against "
                  f"(d + 25)·n = {moved / 1e9:.2f} GB a round")
            if name == "AdaBoost":
                adaboost[(n, d)] = t
        del X, y
    return adaboost


def kernels_section(n: int, d: int, r1: int, r2: int) -> None:
    """Print where an AdaBoost round's time goes on the GPU, kernel by kernel: the
    marginal launches, device and host milliseconds a round (a profiled fit of ``r2``
    rounds minus one of ``r1``, after a fit that compiles the kernels)."""
    from oracleboost.cuda.device import profiled

    print(f"\n## An AdaBoost round's kernels at n={n:,} d={d} (fits of {r2} and {r1} "
          "rounds, the difference a round)")
    X, y = _problem(n, d)
    make = _boosters()["AdaBoost"]
    make(r1).fit(X, y)  # (compiled)
    seen = {}
    for r in (r1, r2):
        with profiled() as profile:
            model = make(r).fit(X, y)
        seen[r] = (profile.host, profile.device(), profile.fetches,
                   float(np.sum(model.history_["time"])))
    (h1, d1, f1, w1), (h2, d2, f2, w2) = seen[r1], seen[r2]
    per = float(r2 - r1)

    def marginal(a: dict, b: dict, name: str, i: int | None = None) -> float:
        def get(m: dict) -> float:
            v = m.get(name, [0, 0.0] if i is not None else 0.0)
            return float(v[i] if i is not None else v)
        return (get(b) - get(a)) / per

    print(f"{'kernel':24} {'launches':>8} {'device ms':>10} {'host ms':>8}")
    rows = sorted((k for k in set(h1) | set(h2) if marginal(h1, h2, k, 0) > 0),
                  key=lambda k: -marginal(d1, d2, k))  # (the fit's start-up left out)
    for name in rows:
        print(f"{name:24} {marginal(h1, h2, name, 0):8.1f} "
              f"{marginal(d1, d2, name) * 1e3:10.3f} {marginal(h1, h2, name, 1) * 1e3:8.3f}")
    device = sum(marginal(d1, d2, k) for k in rows)
    host = sum(marginal(h1, h2, k, 1) for k in rows)
    fetch = ((f2[1] - f1[1]) / per, (f2[0] - f1[0]) / per)
    print(f"a round: {(w2 - w1) / per * 1e3:.3f} ms (the booster's record, profiled); "
          f"kernels on the GPU {device * 1e3:.3f} ms; launch calls on the host "
          f"{host * 1e3:.3f} ms; {fetch[1]:.1f} copies back {fetch[0] * 1e3:.3f} ms "
          "(each waits for the kernels before it)")


def _marginal(fit: Callable[[int], None], r1: int, r2: int) -> float:
    """Seconds a round: a fit of ``r2`` rounds minus one of ``r1``."""
    t0 = time.perf_counter()
    fit(r1)
    t1 = time.perf_counter()
    fit(r2)
    t2 = time.perf_counter()
    return ((t2 - t1) - (t1 - t0)) / (r2 - r1)


def cpu_section(n: int, d: int, threads: list[int], r1: int, r2: int, repeats: int,
                gpu_round: float | None) -> None:
    """Print the library's CPU round against LightGBM's, by threads."""
    import lightgbm as lgb

    from oracleboost.boosters import CoordinateBoostingClassifier
    from oracleboost.oracles import StumpOracle

    print(f"\n## The CPU round at n={n:,} d={d} (marginal of {r2} - {r1} rounds, "
          f"{repeats} repeats interleaved)")
    X, y = _problem(n, d)
    labels = (y > 0).astype(np.float64)
    data = lgb.Dataset(X, labels, params={"max_bin": 255, "min_data_in_leaf": 1,
                                          "feature_pre_filter": False, "verbose": -1},
                       free_raw_data=False).construct()

    def ours(k: int) -> Callable[[int], None]:
        return lambda r: CoordinateBoostingClassifier(
            StumpOracle(n_jobs=k), n_estimators=r, n_jobs=k).fit(X, y)

    def lightgbm(k: int) -> Callable[[int], None]:
        params = {"objective": "binary", "num_leaves": 2, "max_depth": 1,
                  "min_data_in_leaf": 1, "learning_rate": 1.0, "num_threads": k,
                  "force_col_wise": True, "deterministic": True, "verbose": -1}
        return lambda r: lgb.train(params, data, num_boost_round=r)

    per: dict[int, tuple[list[float], list[float]]] = {}
    for k in threads:
        ours(k)(r1)  # (compiled and warm before the first timed fit)
        lightgbm(k)(r1)
        a, b = [], []
        for _ in range(repeats):
            a.append(_marginal(ours(k), r1, r2))
            b.append(_marginal(lightgbm(k), r1, r2))
        per[k] = (a, b)
        ratios = [x / z for x, z in zip(a, b, strict=True)]
        print(f"{k} threads: ours {_spread(a)} ms, LightGBM {_spread(b)} ms a round; "
              f"ratio {statistics.median(ratios):.2f} (spread {min(ratios):.2f}-"
              f"{max(ratios):.2f})")
    lo, hi = min(threads), max(threads)
    if lo != hi:
        ours_scale = statistics.median(per[lo][0]) / statistics.median(per[hi][0])
        lgb_scale = statistics.median(per[lo][1]) / statistics.median(per[hi][1])
        print(f"scaling {lo} -> {hi} threads: ours {ours_scale:.2f}x, LightGBM "
              f"{lgb_scale:.2f}x")
    if gpu_round:
        print(f"the GPU's AdaBoost round against the CPU's at {hi} threads: "
              f"{statistics.median(per[hi][0]) / gpu_round:.1f}x faster")


def predict_section(cuda, n: int, d: int, rounds: int, repeats: int) -> None:
    """Print decision_function's time from X on the device, in NumPy, and through the
    device."""
    from oracleboost.boosters import CoordinateBoostingClassifier
    from oracleboost.oracles import StumpOracle

    print(f"\n## Predictions: decision_function of {rounds} rounds at n={n:,} d={d}")
    X, y = _problem(n, d)
    model = CoordinateBoostingClassifier(StumpOracle(device="cuda"),
                                         n_estimators=rounds).fit(X, y)
    dev = cuda.to_device(X)
    expected = model.decision_function(X)
    got = model.decision_function(dev).copy_to_host()
    if not np.array_equal(got, expected):
        raise RuntimeError("the device's scores differ from the CPU's")

    def on_device() -> None:
        model.decision_function(dev)
        cuda.synchronize()

    def through_device() -> None:
        model.decision_function(cuda.to_device(X)).copy_to_host()

    for _ in range(2):  # (compiled and warm)
        on_device()
        through_device()
    jobs = {"X on the device": on_device,
            "X in NumPy (CPU, every core)": lambda: model.decision_function(X),
            "X in NumPy through the device": through_device}
    times: dict[str, list[float]] = {k: [] for k in jobs}
    for _ in range(repeats):
        for name, job in jobs.items():
            t0 = time.perf_counter()
            job()
            times[name].append(time.perf_counter() - t0)
    for name, values in times.items():
        print(f"{name}: {_spread(values)} ms")
    cpu = statistics.median(times["X in NumPy (CPU, every core)"])
    device = statistics.median(times["X on the device"])
    through = statistics.median(times["X in NumPy through the device"])
    print(f"on the device against the CPU: {cpu / device:.1f}x; through the device: "
          f"{cpu / through:.1f}x")


def _sizes(text: str) -> list[tuple[int, int]]:
    return [tuple(int(float(x)) for x in size.lower().split("x"))  # type: ignore[misc]
            for size in text.split(",")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="rounds,kernels,cpu,predict",
                        help="comma-separated: rounds, kernels, cpu, predict")
    parser.add_argument("--sizes", default="10000000x20,100000000x20",
                        help="the rounds' n x d, comma-separated (default: 10^7 x 20 and "
                             "10^8 x 20; the largest for MABoost and the regressor)")
    parser.add_argument("--cpu-size", default="10000000x20")
    parser.add_argument("--threads", default="1,4,16")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--warm", type=int, default=2,
                        help="rounds left out of the median (the kernels' compilation)")
    parser.add_argument("--r1", type=int, default=2)
    parser.add_argument("--r2", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes (on the simulator where it is on): the script runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.cpu_size, args.threads = "300x3,400x3", "300x3", "1,2"
        args.rounds, args.warm, args.r1, args.r2, args.repeats = 3, 1, 1, 2, 1
    cuda = _gpu_or_skip(args.smoke)
    if hasattr(cuda, "get_current_device"):
        device = cuda.get_current_device()
        name = device.name.decode() if isinstance(device.name, bytes) else device.name
    else:
        name = "numba's CUDA simulator"
    print(f"GPU: {name}")
    sections = set(args.sections.split(","))
    gpu_round = None
    cpu_n, cpu_d = _sizes(args.cpu_size)[0]
    if "rounds" in sections:
        adaboost = rounds_section(_sizes(args.sizes), args.rounds, args.warm)
        gpu_round = adaboost.get((cpu_n, cpu_d))
    if "kernels" in sections:
        kernels_section(cpu_n, cpu_d, args.r1, args.r2)
    if "cpu" in sections:
        cpu_section(cpu_n, cpu_d, [int(k) for k in args.threads.split(",")], args.r1,
                    args.r2, args.repeats, gpu_round)
    if "predict" in sections:
        predict_section(cuda, cpu_n, cpu_d, 100 if not args.smoke else 3, args.repeats)


if __name__ == "__main__":
    main()
