"""The Dask row: AdaBoost stumps per round on a LocalCluster, ours against lightgbm.dask.

A ``LocalCluster`` of 2 single-threaded worker processes (``OMP_NUM_THREADS=1`` in
them), X of ``--rows`` × 20 float64 made chunk by chunk on the workers and persisted
there, labels from a noisy linear rule.  Both sides fit from the persisted dask
arrays, interleaved (ours, LightGBM, ours, …), ``--repeats`` times for R1 and R2 = 3 R1
rounds; the per-round cost is the marginal ``(fit of R2 − fit of R1) / (R2 − R1)`` of
the medians, so that binding and LightGBM's network set-up cancel.  LightGBM is
``DaskLGBMClassifier(num_leaves=2, max_bin=255, learning_rate=1, num_threads=1)``:
one-split trees on the same bins.  Also reported: the **scheduler's share** of our
round, from one extra fit of R2 rounds under ``distributed.get_task_stream``: the
marginal wall time a round takes, less the marginal time a round's tasks compute on the
busier worker, over the round's wall time (what is left is the scheduler, the network
and this process: the client's share of a round), with the tasks per round.

Run from the repository root with nothing else running::

    python benchmarks/bench_dask.py --write         # 10,000,000 rows, 5 repeats: the record
    python benchmarks/bench_dask.py --rows 2000000 --repeats 3

``--write`` puts the result in ``benchmarks/README.md``, in its own section (between
``DASK_START`` and ``DASK_END``), which ``run.py`` keeps when it rewrites the file.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

BLOCK = 1 << 16
README = Path(__file__).resolve().parent / "README.md"
DASK_START, DASK_END = "<!-- DASK_START -->", "<!-- DASK_END -->"


def _features(block_info=None) -> np.ndarray:
    info = block_info[None]
    rows, cols = info["chunk-shape"]
    return np.random.default_rng(info["chunk-location"][0]).standard_normal((rows, cols))


def _empty_stage(i: int) -> tuple:
    return np.zeros(3), i


def _empty_stat(result: tuple) -> int:
    return result[1]


def _round_trip(client, repeats: int = 30) -> float:
    """Median seconds of the emptiest stage a fit can wait on: a task a worker (as
    ``ClusterBlocks.map`` submits), a task a worker for its stat, and the ``gather`` of
    the stats, the tasks doing nothing."""
    import uuid

    times = []
    for _ in range(repeats):
        name = uuid.uuid4().hex
        start = time.perf_counter()
        results = client.map(_empty_stage, [0, 1], key=[f"empty-{name}-{j}" for j in (0, 1)])
        stats = client.map(_empty_stat, results, key=[f"stat-{name}-{j}" for j in (0, 1)])
        client.gather(stats)
        times.append(time.perf_counter() - start)
        del results, stats
    return statistics.median(times)


def _targets(X: np.ndarray) -> np.ndarray:
    """A regression target of the features (``--trees``)."""
    return X[:, 0] + np.sin(2 * X[:, 1]) - 0.5 * X[:, 2] ** 2 + 0.3 * np.sin(1e3 * X[:, -1])


def _labels(X: np.ndarray) -> np.ndarray:
    noise = np.sin(1e3 * X[:, -1])
    return (X[:, 0] + 0.5 * X[:, 1] - 0.25 * X[:, 2] + 0.5 * noise > 0).astype(np.int8)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=10, help="R1 (R2 = 3 R1)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--trees", type=int, default=0, metavar="LEAVES",
                        help="histogram trees of this many leaves on the squared loss "
                        "(FunctionalGradientRegressor(HistTreeOracle) against "
                        "DaskLGBMRegressor) instead of AdaBoost's stumps")
    parser.add_argument("--write", action="store_true",
                        help="record the result in benchmarks/README.md")
    args = parser.parse_args(argv)
    import dask.array as da
    import distributed
    import lightgbm.dask as lgb_dask

    from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor
    from oracleboost.oracles import HistTreeOracle, StumpOracle

    r1, r2 = args.rounds, 3 * args.rounds
    chunk = 16 * BLOCK
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        X = da.map_blocks(_features, chunks=((chunk,) * -(-args.rows // chunk),
                                             (args.features,)), dtype=np.float64)
        X = X[:args.rows].persist()
        leaves = args.trees
        labels = _targets if leaves else _labels
        y = X.map_blocks(labels, drop_axis=1,
                         dtype=np.float64 if leaves else np.int8).persist()
        distributed.wait([X, y])

        def ours(rounds: int) -> float:
            start = time.perf_counter()
            if leaves:
                FunctionalGradientRegressor(HistTreeOracle(num_leaves=leaves),
                                            n_estimators=rounds, learning_rate=0.1).fit(X, y)
            else:
                CoordinateBoostingClassifier(StumpOracle(), n_estimators=rounds).fit(X, y)
            return time.perf_counter() - start

        def lightgbm(rounds: int) -> float:
            start = time.perf_counter()
            if leaves:
                lgb_dask.DaskLGBMRegressor(
                    n_estimators=rounds, num_leaves=leaves, max_bin=255, learning_rate=0.1,
                    num_threads=1, verbose=-1, client=client).fit(X, y)
            else:
                lgb_dask.DaskLGBMClassifier(
                    n_estimators=rounds, num_leaves=2, max_bin=255, learning_rate=1.0,
                    num_threads=1, min_child_samples=1, min_child_weight=0.0, verbose=-1,
                    client=client).fit(X, y)
            return time.perf_counter() - start

        def busy(rounds: int) -> tuple[float, float, int, int, dict]:
            """(wall, the busier worker's compute seconds, tasks, the client's waits for
            stats, that worker's compute seconds by the tasks' stage) of one fit."""
            from oracleboost.distributed.cluster import ClusterBlocks

            fetch, waits = ClusterBlocks._fetch_pending, [0]

            def counted(blocks) -> None:
                waits[0] += 1
                fetch(blocks)

            ClusterBlocks._fetch_pending = counted
            try:
                with distributed.get_task_stream(client) as stream:
                    wall = ours(rounds)
            finally:
                ClusterBlocks._fetch_pending = fetch
            per_worker: dict[str, float] = {}
            by_stage: dict[str, dict[str, float]] = {}
            for task in stream.data:
                compute = sum(s["stop"] - s["start"] for s in task["startstops"]
                              if s["action"] == "compute")
                per_worker[task["worker"]] = per_worker.get(task["worker"], 0.0) + compute
                key = task["key"] if isinstance(task["key"], str) else str(task["key"][0])
                stage = key.split("-")[0].strip("('_") or key
                kept = by_stage.setdefault(task["worker"], {})
                kept[stage] = kept.get(stage, 0.0) + compute
            busier = max(per_worker, key=per_worker.get)
            return (wall, per_worker[busier], len(stream.data), waits[0],
                    by_stage[busier])

        ours(1), lightgbm(1)  # warm: compiled kernels, imports on the workers
        trip = _round_trip(client)
        times: dict[str, list[float]] = {k: [] for k in ("o1", "o2", "l1", "l2")}
        for _ in range(args.repeats):
            times["o1"].append(ours(r1))
            times["l1"].append(lightgbm(r1))
            times["o2"].append(ours(r2))
            times["l2"].append(lightgbm(r2))
        (w1, c1, n1, k1, s1), (w2, c2, n2, k2, s2) = busy(r1), busy(r2)
    med = {k: statistics.median(v) for k, v in times.items()}
    per_ours = (med["o2"] - med["o1"]) / (r2 - r1)
    per_lgb = (med["l2"] - med["l1"]) / (r2 - r1)
    # each repeat's own marginal ratio, for the spread
    ratios = sorted((o2 - o1) / (l2 - l1) for o1, o2, l1, l2 in zip(
        times["o1"], times["o2"], times["l1"], times["l2"], strict=True))
    wall, compute = (w2 - w1) / (r2 - r1), (c2 - c1) / (r2 - r1)
    share = 1.0 - compute / wall
    lines = [
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
        f"LocalCluster of 2 single-threaded workers; {args.rows:,} × {args.features}",
        *(f"  {k}: median {med[k]:.2f} s (min {min(v):.2f}, max {max(v):.2f})"
          for k, v in times.items()),
        f"per round: ours {per_ours * 1e3:.0f} ms, lightgbm.dask {per_lgb * 1e3:.0f} ms, "
        f"ratio {per_ours / per_lgb:.2f} (each repeat's own: {ratios[0]:.2f}–{ratios[-1]:.2f})",
        f"fixed cost (fit of R1 minus R1 rounds): ours {med['o1'] - r1 * per_ours:.1f} s, "
        f"lightgbm.dask {med['l1'] - r1 * per_lgb:.1f} s",
        f"our round under get_task_stream: {wall * 1e3:.0f} ms wall, the busier worker "
        f"computes {compute * 1e3:.0f} ms of it: scheduler and client share {share:.0%}; "
        f"{(n2 - n1) / (r2 - r1):.0f} tasks and {(k2 - k1) / (r2 - r1):.0f} waits for stats "
        "a round",
        f"an empty stage waited on (a task a worker, a stat task a worker, the gather; "
        f"median of 30): {trip * 1e3:.1f} ms",
        "the busier worker's compute a round, by stage: " + ", ".join(
            f"{stage} {(s2.get(stage, 0.0) - s1.get(stage, 0.0)) / (r2 - r1) * 1e3:.0f} ms"
            for stage in sorted(s2, key=lambda k: s1.get(k, 0.0) - s2[k])
            if (s2[stage] - s1.get(stage, 0.0)) / (r2 - r1) >= 0.002),
    ]
    print("\n".join(lines))
    if args.write and args.trees:
        _write_trees(args, lines, per_ours, per_lgb, ratios)
    elif args.write:
        _write(args, lines, per_ours, per_lgb, ratios, share)
    return {"ours": per_ours, "lightgbm": per_lgb, "times": times, "share": share}


def _write(args, lines: list[str], ours: float, lgb: float, ratios: list[float],
           share: float) -> None:
    """The Dask section of benchmarks/README.md, replaced (or appended)."""
    import dask
    import lightgbm
    from run import _git_commit, machine, write_section  # benchmarks/run.py, beside this

    when = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    items = "\n".join(f"- {k}: {v}" for k, v in machine())
    output = "\n".join(f"    {line}" for line in lines)
    met = "yes" if ours / lgb <= 1.0 else "NO"
    section = f"""{DASK_START}
## Dask: AdaBoost stumps on a LocalCluster

Written by `python benchmarks/bench_dask.py --repeats {args.repeats} --rounds {args.rounds} \
--write` (its docstring gives the method):
{args.rows:,} × {args.features} float64 on a `LocalCluster` of 2 single-threaded worker
processes (`OMP_NUM_THREADS=1`), {args.repeats} repeats interleaved, marginal cost a round
(R = {args.rounds}→{3 * args.rounds}) from the medians.  Anchor:
`lightgbm.dask.DaskLGBMClassifier(num_leaves=2, max_bin=255, num_threads=1)` on the same
cluster and persisted arrays.

| row | ours | anchor | ratio | min–max | target | met | scheduler and client share |
|---|---|---|---|---|---|---|---|
| `dask_adaboost_10m` | {ours * 1e3:.0f} ms | {lgb * 1e3:.0f} ms | {ours / lgb:.2f} | \
{ratios[0]:.2f}–{ratios[-1]:.2f} | ≤ 1 | {met} | {share:.0%} |

Where the time goes: a round is 3 stages (the histograms; the column's sums; the new
margins with the weights' exps, shifted by the normaliser AdaBoost's Z_t predicts, and
the query), one task a worker each and one more a worker for each stage's stats: 12
tasks (16 until 2026-11-28, when a fourth stage normalised the weights; 22 before
that).  The client waits on the workers twice a round (the column's sums; the step's
stats, with the next round's histograms, which the stump oracle submits on the step's
query before that wait: 3 waits until 2026-11-29), and each wait costs at least an
empty stage's round trip (the last line of the output: the scheduler, two worker
processes and this one share the machine's 2 cores); the idle time between stages is
what the "scheduler and client share" measures.  On this machine a round varies by
±20% from run to run.  LightGBM's workers reduce their histograms among themselves over
their own sockets and never come back to the scheduler within a round; a smaller share
needs the same: the reductions made by the workers, not by the client.

Output:

{output}

- date: {when}; oracleboost {_git_commit()}, dask {dask.__version__}, lightgbm \
{lightgbm.__version__}
{items}
{DASK_END}
"""
    write_section(DASK_START, DASK_END, section)
    print(f"wrote {README}")


TREES_START, TREES_END = "<!-- DASK_TREES_START -->", "<!-- DASK_TREES_END -->"


def _write_trees(args, lines: list[str], ours: float, lgb: float, ratios: list[float]) -> None:
    """The Dask histogram trees' section of benchmarks/README.md, replaced (or appended)."""
    import dask
    import lightgbm
    from run import _git_commit, machine, write_section  # benchmarks/run.py, beside this

    when = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    items = "\n".join(f"- {k}: {v}" for k, v in machine())
    output = "\n".join(f"    {line}" for line in lines)
    met = "yes" if ours / lgb <= 1.0 else "NO"
    section = f"""{TREES_START}
## Dask: histogram trees on a LocalCluster

Written by `python benchmarks/bench_dask.py --trees {args.trees} --repeats {args.repeats} \
--rounds {args.rounds} --write`:
{args.rows:,} × {args.features} float64 on a `LocalCluster` of 2 single-threaded worker
processes, {args.repeats} repeats interleaved, marginal cost a round
(R = {args.rounds}→{3 * args.rounds}) from the medians.  Ours:
`FunctionalGradientRegressor(HistTreeOracle(num_leaves={args.trees}), learning_rate=0.1)`;
anchor: `lightgbm.dask.DaskLGBMRegressor(num_leaves={args.trees}, max_bin=255,
learning_rate=0.1, num_threads=1)` on the same cluster and persisted arrays.

| row | ours | anchor | ratio | min–max | target | met |
|---|---|---|---|---|---|---|
| `dask_trees_{args.trees}` | {ours * 1e3:.0f} ms | {lgb * 1e3:.0f} ms | {ours / lgb:.2f} | \
{ratios[0]:.2f}–{ratios[-1]:.2f} | ≤ 1 | {met} |

The workers grow each tree together, as LightGBM's do: every worker sums its
partitions' histograms of a leaf, the workers exchange them over TCP connections of
their own, and each makes the same split (a collective call: one task a worker, one
wait for the client a tree, whatever its leaves).  Until 2026-12-05 the client grew the
tree from the histograms, a round trip to the workers for every split (2.40×, 32 waits
of about 17 ms a round).  On 2026-12-06 a split came to read its feature's codes from
a column-major copy, a histogram each row's channels beside its codes, and the outputs
went through a byte-a-row map of the rows' leaves (1.32× → 1.06×); then a partition's
outputs kernel ran on one of numba's threads (its parallel region's default team had
waited for a thread of the core the other worker holds: 40 → 20 ms a round on the busier
worker), and the next tree was submitted with the booster's step (the oracle's
``_prefetch``), so the workers grow it while the client waits for the step's stats (a
round trip fewer a round: the scheduler and client share 12% → 9%).  In one process
alone, a tree of the busier worker's 5,242,880 rows takes about 390 ms on one thread
against LightGBM's 520 ms round (0.75); a member's tree takes about as long (400–410 ms
in one process, exchanging with itself).  What a round adds to the tree is the stages
LightGBM makes inside its round (the booster's step and its sums, the tree's outputs:
about 60 ms on the busier worker) and the client's share (two round trips a round:
the tree's report, the coefficient's sums).  On this machine LightGBM's own round
varies by about ±25% from run to run, and the whole machine's timings drift by 15%
within the hour: the ratio, both sides interleaved, is what to read.

Output:

{output}

- date: {when}; oracleboost {_git_commit()}, dask {dask.__version__}, lightgbm \
{lightgbm.__version__}
{items}
{TREES_END}
"""
    write_section(TREES_START, TREES_END, section)
    print(f"wrote {README}")


if __name__ == "__main__":
    main()
