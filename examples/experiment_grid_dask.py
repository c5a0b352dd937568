"""Run a grid of experiments (boosters × data sets × seeds) on a Dask cluster
==========================================================================

:func:`oracleboost.grid.run_grid` fits every booster on every data set for every seed
(the seed splits the data and seeds the booster) and records test error, training loss,
ℓ1 margin, rounds and seconds.  It runs the cells through ``joblib.Parallel``; with
``backend="dask"`` the same call runs them on a Dask cluster through joblib's dask
backend, with no other change to the code.

This script starts a ``distributed.LocalCluster`` of two single-threaded worker
processes (or connects to ``--scheduler ADDRESS``, e.g. a cluster started with
``dask scheduler`` and ``dask worker tcp://HOST:8786`` on machines where oracleboost is
installed), runs ``CoordinateBoostingClassifier`` (AdaBoost), ``MirrorBoostingClassifier``
(MABoost) and ``FunctionalGradientClassifier`` (logistic loss), all on decision stumps,
on breast cancer and digits 3 vs 5 for three seeds, prints the table over the seeds and
checks that the cluster's numbers equal a run of the same grid in this process, float
for float.  It needs the dask extra: ``pip install "oracleboost[dask]"``.  Run
``python examples/experiment_grid_dask.py [--scheduler ADDRESS] [--seeds N] [--rounds
N] [--out DIR]`` (``--out``: write ``grid.csv`` and ``grid.md`` there).
"""

from __future__ import annotations

import argparse
import time

from oracleboost.grid import (
    DATASETS,
    FIELDS,
    default_boosters,
    run_grid,
    summary_table,
    write_grid,
)

BOOSTERS = ("adaboost", "maboost", "gradient-logistic")
SETS = ("breast_cancer", "digits_3v5")


def same_numbers(a: list[dict], b: list[dict]) -> bool:
    """Whether two grids agree on every field but the seconds, exactly."""
    keys = [k for k in FIELDS if k != "seconds"]
    return [[repr(r[k]) for k in keys] for r in a] == [[repr(r[k]) for k in keys] for r in b]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="a running Dask scheduler, e.g. tcp://host:8786 (default: start "
                             "a local cluster of --workers processes)")
    parser.add_argument("--workers", type=int, default=2, help="local workers (default 2)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (default 3)")
    parser.add_argument("--rounds", type=int, default=50, help="weak learners per fit")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="write grid.csv and grid.md to DIR (default: no file)")
    args = parser.parse_args(argv)
    try:
        import distributed
    except ImportError:
        raise SystemExit('this example needs dask: pip install "oracleboost[dask]"') from None

    boosters = {name: default_boosters(args.rounds)[name] for name in BOOSTERS}
    datasets = {name: DATASETS[name] for name in SETS}
    seeds = range(args.seeds)

    cluster = None
    address = args.scheduler
    if address is None:
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        address = cluster.scheduler_address
    try:
        with distributed.Client(address) as client:
            workers = len(client.scheduler_info()["workers"])
        print(f"Dask scheduler {address} ({'local cluster' if cluster else 'given'}), "
              f"{workers} workers; {len(boosters)} boosters × {len(datasets)} data sets × "
              f"{len(seeds)} seeds, {args.rounds} rounds")
        start = time.perf_counter()
        rows = run_grid(boosters, datasets, seeds, backend="dask", scheduler=address)
        seconds = time.perf_counter() - start
    finally:
        if cluster is not None:
            cluster.close()
    print(summary_table(rows))
    print(f"on the cluster: {seconds:.1f} s for {len(rows)} cells")

    local = run_grid(boosters, datasets, seeds)  # the same grid, in this process
    same = same_numbers(rows, local)
    print(f"same numbers as in this process: {same}")
    if args.out is not None:
        csv_path, md_path = write_grid(rows, args.out)
        print(f"files: {csv_path}, {md_path}")
    return {"rows": rows, "local": local, "same": same, "address": address,
            "workers": workers}


if __name__ == "__main__":
    main()
