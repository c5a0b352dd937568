"""Fit MABoost on a dask array larger than a worker's memory, then predict on one
==============================================================================

``MirrorBoostingClassifier.fit(X, y)`` (MABoost, Naghibi & Pfister 2014) with ``X`` a
``dask.array.Array`` runs on the cluster of the active ``distributed.Client``: the
workers bin their partitions of X (then hold one byte a feature a row), and each round
only histograms, sums, the projection's few statistics and the chosen stump travel
between them and this process.  The result is the fit in memory, bit for bit
(``tests/test_cluster.py``).  ``--booster adaboost`` fits AdaBoost
(``CoordinateBoostingClassifier``) instead, and ``--mirror euclidean`` MABoost's
Euclidean map, whose projection onto the simplex finds its threshold by a selection
over the partitions.

This script starts a ``LocalCluster`` of two single-threaded worker processes, each
limited to ``--worker-memory`` MiB (or connects to ``--scheduler ADDRESS``), makes X of
``--rows`` × ``--features`` float64 chunk by chunk on the workers (by default 3 times
one worker's memory limit, so no worker could hold it: 3,145,728 × 128, 3 GiB, on two
workers of 1 GiB each), fits, prints the rounds, predicts on a dask array, and reports
each worker's peak memory against its limit
(:func:`oracleboost.worker_memory.watch_worker_memory`).  With ``--check`` it also fits
the same data in this process (it must fit in memory here) and checks that both fits are
equal.  It needs the dask extra: ``pip install "oracleboost[dask]"``.

What a worker needs, measured: about 350 MiB for the Python process with the library and
its compiled kernels; then, for each of its rows, a byte a feature (the rows' bins) and
the booster's state, 8 float64 a row for MABoost (4 for AdaBoost); and, while X is
binned, one partition of X in float64 at a time (16 × ``block_size`` rows: 131,072 ×
128 × 8 bytes = 128 MiB here).  At the defaults, 1,572,864 rows a worker: 350 + 192 +
96 MiB, and the workers peak at 60-65 % of their 1,024 MiB, below distributed's 70 %,
where it starts moving data to disk.  With ``--features 64`` the same 3 GiB of X are
twice the rows: 350 + 192 + 192 MiB, 66-72 % (a worker may hold a few more partitions
than the other); give such data more memory or more workers.

Run ``python examples/fit_on_dask_array.py [--rows N] [--features D] [--rounds T]
[--booster maboost|adaboost] [--mirror entropy|euclidean] [--worker-memory MIB]
[--scheduler ADDRESS] [--check]``; ``--worker-memory 4096`` fits 12 GiB of X.  On a
real cluster, start ``dask scheduler`` on one machine and ``dask worker
tcp://HOST:8786`` on the others (oracleboost installed on each) and pass ``--scheduler
tcp://HOST:8786``.

Dual acceleration and functional gradient boosting do not run on dask arrays yet (they
say so); see the Dask page of the user guide.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from oracleboost.boosters import CoordinateBoostingClassifier, MirrorBoostingClassifier
from oracleboost.oracles import StumpOracle
from oracleboost.worker_memory import watch_worker_memory

BLOCK = 8192  # partitions of 16 blocks: 131,072 rows each


def features(block_info=None) -> np.ndarray:
    """One chunk of X, made on the worker from its chunk's index."""
    info = block_info[None]
    rows, cols = info["chunk-shape"]
    rng = np.random.default_rng(info["chunk-location"][0])
    return rng.standard_normal((rows, cols))


def labels(width: int, block_info=None) -> np.ndarray:
    """The labels of one chunk: a noisy linear rule on its first three features (made
    again from the chunk's seed: y is its own graph, sharing no task with X)."""
    X = features({None: {**block_info[None], "chunk-shape": (
        block_info[None]["chunk-shape"][0], width)}})
    noise = np.sin(1e3 * X[:, -1])  # deterministic "noise" from the chunk itself
    return (X[:, 0] + 0.5 * X[:, 1] - 0.25 * X[:, 2] + 0.5 * noise > 0).astype(np.int8)


def booster(name: str, mirror: str, rounds: int, verbose: int = 0):
    """The booster to fit: the same one on the cluster and (``--check``) here."""
    oracle = StumpOracle(block_size=BLOCK)
    if name == "adaboost":
        return CoordinateBoostingClassifier(oracle, block_size=BLOCK, n_estimators=rounds,
                                            verbose=verbose)
    return MirrorBoostingClassifier(oracle, mirror=mirror, block_size=BLOCK,
                                    n_estimators=rounds, verbose=verbose)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rows", type=int, default=None,
                        help="rows of X (default: 3 × the worker memory limit in float64)")
    parser.add_argument("--features", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--booster", choices=("maboost", "adaboost"), default="maboost")
    parser.add_argument("--mirror", choices=("entropy", "euclidean"), default="entropy")
    parser.add_argument("--worker-memory", type=int, default=1024, metavar="MIB")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS")
    parser.add_argument("--check", action="store_true",
                        help="also fit in this process and check the fits are equal")
    args = parser.parse_args(argv)
    try:
        import dask.array as da
        import distributed
    except ImportError:
        raise SystemExit('this example needs dask: pip install "oracleboost[dask]"') from None

    limit = args.worker_memory * 2**20
    rows = args.rows or -(-3 * limit // (8 * args.features))
    cluster = None
    address = args.scheduler
    if address is None:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                           processes=True, memory_limit=limit,
                                           dashboard_address=None)
        address = cluster.scheduler_address
    try:
        with distributed.Client(address) as client:
            if cluster is not None:  # (its workers start after its scheduler)
                client.wait_for_workers(2)
            workers = len(client.scheduler_info()["workers"])
            chunk = 16 * BLOCK
            row_chunks = (chunk,) * (rows // chunk) + ((rows % chunk,) if rows % chunk else ())
            X = da.map_blocks(features, chunks=(row_chunks, (args.features,)),
                              dtype=np.float64)
            y = da.map_blocks(labels, args.features, chunks=(row_chunks,), dtype=np.int8)
            print(f"X: {rows:,} × {args.features} float64 = {X.nbytes / 2**30:.2f} GiB on "
                  f"{workers} workers of {args.worker_memory} MiB each")
            model = booster(args.booster, args.mirror, args.rounds, verbose=1)
            with watch_worker_memory(client) as memory:
                start = time.perf_counter()
                model.fit(X, y)
                seconds = time.perf_counter() - start
                print(f"fit: {seconds:.1f} s, {len(model.estimators_)} rounds "
                      f"({model.stop_reason_}); first stump {model.estimators_[0]!r}")
                predicted = model.predict(X)  # a dask array, computed chunk by chunk
                error = float((predicted != y).mean().compute())
            print("each worker's memory during the fit and the prediction:")
            print(memory.report())
            print(f"training error from predict on the dask array: {error:.4f} "
                  f"(history_: {model.history_['train_error'][-1]:.4f})")
            same = None
            if args.check:
                X_here, y_here = X.compute(), y.compute()
                here = booster(args.booster, args.mirror, args.rounds).fit(X_here, y_here)
                same = all(np.array_equal(here.history_[k], model.history_[k])
                           for k in here.history_ if "time" not in k)
                print(f"the same fit in this process: {same}")
    finally:
        if cluster is not None:
            cluster.close()
    return {"model": model, "error": error, "rows": rows, "same": same,
            "seconds": seconds, "memory": memory}


if __name__ == "__main__":
    main()
