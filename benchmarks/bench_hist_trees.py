"""Histogram trees: ``HistTreeOracle`` against a LightGBM round, per tree and per fit.

Rows (``benchmarks/run.py``'s method: ours and the anchor interleaved in one process,
``--repeats`` times, the median of the per-repeat ratios and their spread; threads
pinned and stated):

``tree_<size>_<t>t_L<leaves>``
    one tree of ``num_leaves`` leaves on the squared loss, by the marginal protocol on
    both sides.  Ours: from one bound oracle (bins made outside the timing), a loop of
    ``R`` least-squares trees, each fitted to the residual the previous ones leave
    (``t ← t − 0.1·h``: the squared loss's descent, as a booster would ask), timed for
    ``R1`` and ``R2 = 3 R1`` trees; LightGBM: ``lightgbm.train`` of ``R1`` and ``R2``
    rounds from one prebuilt ``Dataset`` (``objective="regression"``,
    ``learning_rate=0.1``, the same ``num_leaves``, ``min_data_in_leaf``, bins).
    ``(time of R2 − time of R1) / (R2 − R1)`` on each side.
``regressor_<size>_<t>t``
    ``FunctionalGradientRegressor(HistTreeOracle(num_leaves=31))`` (squared loss,
    ``learning_rate=0.1``), whole ``fit`` by the marginal protocol, against the same
    LightGBM training.
``peak_memory_1m``
    peak resident memory above X of a fit of 200 trees of 31 leaves on 1,000,000 × 20,
    each side in a fresh process (``VmHWM − VmRSS`` after X is made).

Run from the repository root with nothing else running::

    python benchmarks/bench_hist_trees.py --write        # every row: the record
    python benchmarks/bench_hist_trees.py --quick        # a smoke test

``--write`` puts the table in ``benchmarks/README.md`` between ``HIST_TREES_START`` and
``HIST_TREES_END`` (``run.py`` keeps the section when it rewrites the file).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# Pin the BLAS / OpenMP pools before NumPy loads (as run.py does; it is imported below).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import run  # noqa: E402

START, END = "<!-- HIST_TREES_START -->", "<!-- HIST_TREES_END -->"

#: What the record says of the targets it misses (kept with the table: update it with
#: the figures of a new record).
WHY = """
How the trees meet their targets (measured on 2026-12-06 on a 2-core Intel Xeon virtual
machine with AVX-512, whose timings drift between runs minutes apart: the ratios, ours
and LightGBM interleaved, are what to read).  A tree is grown by one compiled loop of
its steps, with no Python between its kernels.  At 1,000,000 × 20 on one thread, a tree
of 31 leaves went from 76 to 58 ms (medians of 10 trees) by three changes:

- splits read the split feature's codes from a column-major copy, with unsigned
  indices (6,100,000 rows split a tree: 21 → 11 ms; one row 2.9 → 1.0 ns);
- the training rows' outputs go through a map of each row's leaf, a byte a row (6.3 →
  2.0 ms);
- a leaf's histogram reads each row's channels beside its codes, with no pass copying
  them into the leaf's order first (LightGBM's ordered gradients: 66 → 58 ms).

Peak memory.  At its peak (the booster's step) a fit holds the codes twice (row-major for
the histograms, column-major for the splits: 2 × 19.1 MiB, as LightGBM keeps both for
its row-wise histograms), four per-row float64 arrays (the scores and the descent
before the step, the descent after it, and the tree's outputs, over which the step
writes the new scores: 4 × 7.6 MiB) and the histograms (2.5 MiB for the leaves, and
two for a leaf's runs on one thread): about 71.5 MiB, measured with every large array
mapped on its own (``MALLOC_MMAP_THRESHOLD_=1000000``).  A round that a monitor vetoes
leaves the fit's state as it was, so the step cannot update the scores in place, as
LightGBM does (whose gradients are float32, too).  The allocator's heap may grow by
one more 7.6 MiB array late in a fit, where small allocations have split its free
space (seen in some processes after about 150 rounds): the spread of the row.

Two threads.  A leaf's histogram is summed in runs of 32,768 of its rows (the unit of
the sums' order, so that the bits do not depend on the threads); the cells of a leaf
(its runs' rows times the features) are cut into equal shares for the threads at the
nearest feature, so a thread reads the rows of its own runs but for the run at each
cut.  Until this record a leaf of fewer than 16 runs was cut by features alone, both
threads reading every row's codes: 1,000,000 × 20 on two threads then measured 0.95,
0.97 and 1.04 in three full records of the same day; its tree scales 1.5–1.6 times
from one thread to two now (1.4–1.5 before), LightGBM's round 1.7–2.2 times.  A leaf of
one run (fewer than 32,768 rows) is still cut by features; a shorter run would share
its rows too, but would change every tree's bits.
"""
LEARNING_RATE = 0.1


def lgb_tree_params(threads: int, leaves: int) -> dict:
    return {"objective": "regression", "num_leaves": leaves, "num_threads": threads,
            "learning_rate": LEARNING_RATE, "verbosity": -1, "max_bin": 255,
            "min_data_in_leaf": 20, "min_sum_hessian_in_leaf": 1e-3, "lambda_l2": 0.0}


def our_trees_side(X, y, threads: int, leaves: int, rounds: int) -> run.Side:
    from oracleboost.oracles import HistTreeOracle

    bound = HistTreeOracle(num_leaves=leaves, n_jobs=threads).bind(X)
    r1, r2 = run.marginal_rounds(rounds)

    def trees(R: int) -> float:
        t = y - y.mean()
        t0 = time.perf_counter()
        for _ in range(R):
            h = bound.project(t)
            t = t - LEARNING_RATE * h.train_output
        return time.perf_counter() - t0, float(np.mean(t * t))

    def side():
        t1, _ = trees(r1)
        t2, mse = trees(r2)
        return (t2 - t1) / (r2 - r1), {"ours_metric": mse}

    return side


def row_tree(cfg: run.Config, size: str, threads: int, leaves: int, rounds: int) -> dict:
    X, y = data(cfg, size)
    params = lgb_tree_params(threads, leaves)
    trials = run.interleave(our_trees_side(X, y, threads, leaves, rounds),
                            run.lgb_marginal_side(X, y, params, rounds, run.mse),
                            cfg.repeats)
    return run.result(
        f"tree_{size}_{threads}t_L{leaves}", trials, unit="s",
        anchor_command=run.marginal_command(params, rounds),
        target=1.0 if threads > 1 else 0.8,
        notes=(f"{run.size_note(len(y), X.shape[1])}, marginal R={rounds}→{3 * rounds}; "
               f"train MSE ours {run.median_of(trials, 'ours_metric'):.4g}, LightGBM "
               f"{run.median_of(trials, 'anchor_metric'):.4g}"))


def row_regressor(cfg: run.Config, size: str, threads: int, rounds: int) -> dict:
    from oracleboost import FunctionalGradientRegressor
    from oracleboost.oracles import HistTreeOracle

    X, y = data(cfg, size)
    params = lgb_tree_params(threads, 31)

    def make(R: int):
        return FunctionalGradientRegressor(HistTreeOracle(num_leaves=31, n_jobs=threads),
                                           n_estimators=R, learning_rate=LEARNING_RATE)

    trials = run.interleave(run.ours_marginal_side(make, X, y, rounds, run.mse),
                            run.lgb_marginal_side(X, y, params, rounds, run.mse),
                            cfg.repeats)
    return run.result(
        f"regressor_{size}_{threads}t", trials, unit="s",
        anchor_command=run.marginal_command(params, rounds), target=1.0,
        notes=(f"{run.size_note(len(y), X.shape[1])}, marginal R={rounds}→{3 * rounds}; "
               f"FunctionalGradientRegressor(HistTreeOracle(num_leaves=31)); train MSE ours "
               f"{run.median_of(trials, 'ours_metric'):.4g}, LightGBM "
               f"{run.median_of(trials, 'anchor_metric'):.4g}"))


def data(cfg: run.Config, size: str):
    n, d = {"100k": (cfg.n_100k, 50), "1m": (cfg.n_1m, 20)}[size]
    return run.regression(n, d)


# -- peak memory (fresh processes) ----------------------------------------------------------
def memory_child(spec: dict) -> None:
    """In a fresh process: the peak resident memory of a fit above the memory before it,
    by ``run.memory_child``'s protocol: a tiny fit first loads each side's code (the
    compiled kernels, LightGBM's library), so that the peak counts the data's memory,
    not the code's; X is made, then the peak is reset and the fit made."""
    import lightgbm as lgb

    from oracleboost import FunctionalGradientRegressor
    from oracleboost.oracles import HistTreeOracle

    def fit(X, y, rounds):
        if spec["side"] == "ours":
            FunctionalGradientRegressor(HistTreeOracle(num_leaves=31, n_jobs=1),
                                        n_estimators=rounds,
                                        learning_rate=LEARNING_RATE).fit(X, y)
        else:
            ds = lgb.Dataset(X, y, params=run.lgb_dataset_params(1))
            lgb.train(lgb_tree_params(1, 31), ds, rounds)

    Xw, yw = run.regression(2000, 20)
    fit(Xw, yw, 3)
    X, y = run.regression(spec["n"], 20)
    gc.collect()
    base = run._status_kib("VmRSS")
    run._reset_peak()
    fit(X, y, spec["rounds"])
    print(json.dumps({"peak_mib": (run._status_kib("VmHWM") - base) / 1024}))


def peak(side: str, n: int, rounds: int) -> float:
    spec = json.dumps({"side": side, "n": n, "rounds": rounds})
    out = subprocess.run([sys.executable, __file__, "--memory-child", spec],
                         capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["peak_mib"])


def row_peak_memory(cfg: run.Config) -> dict:
    n, rounds = cfg.n_1m, 200 if not cfg.quick else 20
    trials = []
    for _ in range(min(cfg.repeats, 3)):
        trials.append((peak("ours", n, rounds), peak("lightgbm", n, rounds), {}))
    trials = [(a * 2**20, b * 2**20, e) for a, b, e in trials]
    return run.result("peak_memory_1m", trials, unit="B",
                      anchor_command="lightgbm.train(31 leaves, 200 rounds) from lgb.Dataset(X, "
                      "y), one thread, a fresh process", target=1.0,
                      notes=f"{n:,} × 20, 200 trees of 31 leaves, one thread; VmHWM − VmRSS "
                            "after a tiny fit (the code loaded) and X made, fresh processes")


ROWS = {
    **{f"tree_100k_{t}t_L{L}": (lambda cfg, t=t, L=L: row_tree(cfg, "100k", t, L, 20))
       for t in (1, 2) for L in (8, 31, 255)},
    **{f"tree_1m_{t}t_L31": (lambda cfg, t=t: row_tree(cfg, "1m", t, 31, 10)) for t in (1, 2)},
    **{f"regressor_100k_{t}t": (lambda cfg, t=t: row_regressor(cfg, "100k", t, 20))
       for t in (1, 2)},
    "peak_memory_1m": row_peak_memory,
}


def table(rows: list[dict]) -> str:
    lines = ["| row | ours | anchor | ratio | min–max | target | met | notes |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        unit = r["unit"]
        fmt = ((lambda x: f"{x / 2**20:.1f} MiB") if unit == "B"
               else (lambda x: f"{x * 1e3:.3g} ms"))
        lines.append(
            f"| `{r['name']}` | {fmt(r['ours'])} | "
            f"{fmt(r['anchor']) if r['anchor'] is not None else '—'} | {r['ratio']:.3g} | "
            f"{r['ratio_min']:.3g}–{r['ratio_max']:.3g} | {r['target']} | "
            f"{'yes' if r['met'] else 'NO'} | {r['notes']} |")
    return "\n".join(lines)


def section(rows: list[dict], cfg: run.Config, argv: list[str], seconds: float) -> str:
    import lightgbm
    import numba

    import oracleboost

    when = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    cpu = run._cpu_model()
    return f"""{START}
## Histogram trees: `HistTreeOracle` against LightGBM

Written by `python benchmarks/bench_hist_trees.py {' '.join(argv)}` (its docstring gives
the method), {cfg.repeats} repeats interleaved, on {when}, in {seconds:.0f} s.
Machine: {cpu}, {os.cpu_count()} CPUs; Python {platform.python_version()}, NumPy
{np.__version__}, numba {numba.__version__}, LightGBM {lightgbm.__version__}, oracleboost
{oracleboost.__version__}; `OMP_NUM_THREADS=1` for the process, each side given its
threads explicitly (`n_jobs` / `num_threads`).  Targets: per tree ≤ 0.8 × LightGBM's round
on one thread, ≤ 1.0 on two; a whole fit ≤ 1.0; peak memory ≤ LightGBM's.

{table(rows)}
{WHY}
{END}
"""


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="shrunken sizes: a smoke test")
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--only", default="", help="comma-separated rows")
    p.add_argument("--write", action="store_true", help="record in benchmarks/README.md")
    p.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.memory_child:
        memory_child(json.loads(a.memory_child))
        return
    cfg = run.QUICK if a.quick else run.FULL
    if a.repeats:
        cfg = run.Config(**{**cfg.__dict__, "repeats": a.repeats})
    names = [n for n in a.only.split(",") if n] or list(ROWS)
    run.warm_up()
    from oracleboost.oracles import HistTreeOracle

    HistTreeOracle(min_data_in_leaf=1).bind(np.arange(8.0).reshape(4, 2)).project(
        np.arange(4.0))  # compile (or load) the kernels outside every row
    t0 = time.perf_counter()
    rows = []
    for name in names:
        r = ROWS[name](cfg)
        print(table([r]).splitlines()[-1], flush=True)
        rows.append(r)
    text = section(rows, cfg, argv, time.perf_counter() - t0)
    print(text)
    if a.write:
        run.write_section(START, END, text)


if __name__ == "__main__":
    main()
