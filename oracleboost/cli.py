"""Command-line front end (``oracleboost``, or ``python -m oracleboost``).

``oracleboost demo``                         AdaBoost on stumps, round by round (seconds)
``oracleboost list``                         the registered paper reproductions
``oracleboost reproduce [NAME ... | all]``   run reproductions (all by default); print their
                                             tables and write, per experiment, ``DIR/NAME/``
                                             with ``figure.png``, ``curves.csv`` (``aux.csv``)
                                             and ``summary.md``, and ``DIR/index.md`` when
                                             several ran (``--quick``: CI-sized budgets,
                                             ``--out DIR``: default ``results``, ``--seed N``,
                                             ``--cache DIR``: cache oracle calls on disk,
                                             ``--n-jobs N``, ``--backend B``, ``--scheduler
                                             ADDRESS``: run several experiments at once,
                                             on joblib workers or a Dask cluster)
``oracleboost grid``                         boosters × data sets × seeds through joblib
                                             (or a Dask cluster): :mod:`oracleboost.grid`
``oracleboost --version``                    ``oracleboost <version>``
"""

from __future__ import annotations

import argparse
import inspect
import os
import shlex
import sys
import time
from datetime import datetime
from pathlib import Path

import numpy as np

from . import __version__

__all__ = ["main", "demo", "reproduce", "resolve_names", "UnknownExperimentError"]


def demo(n_rounds: int = 30, every: int = 3, out=sys.stdout) -> dict[str, np.ndarray]:
    """Boost ±1 decision stumps with AdaBoost on scikit-learn's breast-cancer data.

    Prints the round-by-round empirical risk, edge γ_t, step α_t, ℓ1 margin and
    training/test error, then the same booster with shrinkage ν = 0.5 for contrast;
    returns the first run's history.
    """
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    from .boosters import CoordinateBoostingClassifier
    from .oracles import StumpOracle

    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
    print(
        f"AdaBoost on ±1 stumps (StumpOracle), breast cancer: {len(X_tr)} train / "
        f"{len(X_te)} test rows, {X.shape[1]} features",
        file=out,
    )
    histories = {}
    for nu in (1.0, 0.5):
        clf = CoordinateBoostingClassifier(
            StumpOracle(), loss="exponential", step="adaboost",
            n_estimators=n_rounds, learning_rate=nu, random_state=0,
        ).fit(X_tr, y_tr)
        h = clf.history_
        test_err = [float(np.mean(p != y_te)) for p in clf.staged_predict(X_te)]
        print(f"\nshrinkage nu = {nu:g}   (stop: {clf.stop_reason_})", file=out)
        print(f"{'round':>5} {'loss':>10} {'edge':>8} {'step':>8} {'margin':>9} "
              f"{'train err':>9} {'test err':>9}", file=out)
        for t in range(len(h["loss"])):
            if t % every == every - 1 or t == 0 or t == len(h["loss"]) - 1:
                print(
                    f"{t + 1:5d} {h['loss'][t]:10.4g} {h['edge'][t]:8.4f} "
                    f"{h['step'][t]:8.4f} {h['margin'][t]:9.4f} "
                    f"{h['train_error'][t]:9.4f} {test_err[t]:9.4f}",
                    file=out,
                )
        histories[nu] = h
    return histories[1.0]


class UnknownExperimentError(ValueError):
    """Raised by :func:`resolve_names` for names not in the registry.

    Attributes
    ----------
    unknown : list of str
        The names asked for that are not registered.
    valid : list of str
        Every registered name (``all`` is valid too).
    """

    def __init__(self, unknown: list[str], valid: list[str]):
        self.unknown = list(unknown)
        self.valid = list(valid)
        super().__init__(
            f"unknown experiment(s): {', '.join(self.unknown)}\n"
            "valid names ('all' runs every one):\n" + "\n".join(f"  {n}" for n in self.valid)
        )


def resolve_names(names: list[str] | None, registry: dict | None = None) -> list[str]:
    """The experiments to run, in order, without repeats.

    No names, or ``all`` among them, means every registered experiment (registry order);
    otherwise the names as given.  Raises :class:`UnknownExperimentError` (a
    ``ValueError``) listing the valid names when any name is not registered.
    """
    if registry is None:
        from .experiments import EXPERIMENTS as registry
    names = list(names or [])
    unknown = [n for n in names if n != "all" and n not in registry]
    if unknown:
        raise UnknownExperimentError(list(dict.fromkeys(unknown)), list(registry))
    if not names or "all" in names:
        return list(registry)
    return list(dict.fromkeys(names))


def _takes_seed(fn) -> bool:
    """Whether an experiment function has a ``random_state`` parameter."""
    try:
        return "random_state" in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return False


def _seed_text(fn, seed: int | None) -> str:
    """The summary's line on the seed: given or not, used or not."""
    if _takes_seed(fn):
        if seed is not None:
            return f"{seed} (passed to the experiment as random_state={seed})"
        default = inspect.signature(fn).parameters["random_state"].default
        shown = "" if default is inspect.Parameter.empty else f"={default!r}"
        return f"not given: the experiment's default random_state{shown} was used"
    if seed is not None:
        return (f"{seed} given but not used: this experiment takes no random_state "
                "(it is deterministic or fixes its own seeds)")
    return ("not used: this experiment takes no random_state "
            "(it is deterministic or fixes its own seeds)")


def _equivalent_command(names: list[str], quick: bool, out_dir, seed: int | None,
                        cache=None) -> str:
    parts = ["oracleboost", "reproduce", *names]
    if quick:
        parts.append("--quick")
    parts += ["--out", str(out_dir)]
    if seed is not None:
        parts += ["--seed", str(seed)]
    if cache is not None:
        parts += ["--cache", str(cache)]
    return shlex.join(parts)


def _progress_bar(total: int, enabled: bool | None):
    """A tqdm bar on stderr over the experiments, or None (tqdm missing or bar off).

    ``enabled=None``: a bar only for several experiments and only on a terminal
    (tqdm's ``disable=None``); ``True`` / ``False`` force it on / off.
    """
    if enabled is False or (enabled is None and total < 2):
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the experiments extra
        return None
    bar = tqdm(total=total, desc="reproduce", unit="experiment", file=sys.stderr,
               disable=None if enabled is None else False, dynamic_ncols=True)
    if bar.disable:
        bar.close()
        return None
    return bar


def _emit(text: str, out, bar) -> None:
    """Print ``text`` to ``out`` without breaking the progress bar."""
    if bar is None:
        print(text, file=out, flush=True)
    else:
        bar.write(text, file=out)
        out.flush()


def _write_index(path: Path, rows: list[tuple[str, float]], run_line: str) -> Path:
    """``index.md``: one table row per experiment, linking its summary and figure."""
    from .experiments.base import _cell
    from .experiments.claims import claim, first_sentence

    lines = ["# Reproductions", "", run_line, "",
             "| experiment | the paper's claim (first sentence) | runtime | figure |",
             "|---|---|---|---|"]
    for name, seconds in rows:
        sentence = first_sentence(claim(name)) or "(no claim recorded)"
        lines.append(f"| [{name}]({name}/summary.md) | {_cell(sentence)} | {seconds:.1f} s "
                     f"| [figure.png]({name}/figure.png) |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _experiment_kwargs(fn, quick: bool, seed: int | None) -> dict:
    """The keyword arguments of one experiment's function."""
    kwargs = {"quick": quick}
    if seed is not None and _takes_seed(fn):
        kwargs["random_state"] = seed
    return kwargs


def _run_experiment(name: str, kwargs: dict, cache=None):
    """Run one registered experiment, timed: the task ``reproduce`` hands to a joblib
    worker (a loky process, a thread or a Dask worker); returns ``(result, seconds)``."""
    from .experiments import EXPERIMENTS
    from .experiments.base import oracle_cache

    start = time.perf_counter()
    with oracle_cache(cache):
        result = EXPERIMENTS[name](**kwargs)
    return result, time.perf_counter() - start


def reproduce(
    names: list[str] | None = None,
    quick: bool = False,
    out_dir: str = "results",
    out=None,
    *,
    seed: int | None = None,
    command: str | None = None,
    progress: bool | None = None,
    cache: str | os.PathLike | None = None,
    n_jobs: int | None = None,
    backend: str | None = None,
    scheduler: str | None = None,
) -> dict:
    """Run registered reproductions, print each one's table and write its files.

    Parameters
    ----------
    names : list of str, optional
        Registry names; none, or ``"all"`` among them, runs every experiment.  Unknown
        names raise :class:`UnknownExperimentError` (a ``ValueError``) before anything
        runs.
    quick : bool, default=False
        CI-sized budgets (each experiment's ``quick=True``).
    out_dir : str or path-like, default="results"
        Created if missing.  Each experiment writes ``out_dir/NAME/figure.png``,
        ``curves.csv`` (:meth:`Curves.to_csv`: x and the curves), ``aux.csv`` (x and the
        ``aux`` arrays, when there are any) and ``summary.md``
        (:func:`~oracleboost.experiments.base.write_summary`: the paper's claim from
        :data:`~oracleboost.experiments.claims.CLAIMS`, the measured result, the
        settings); when more than one experiment ran, ``out_dir/index.md`` links them.
    out : text stream, default ``sys.stdout``
        Where the tables go.
    seed : int, optional
        Passed as ``random_state`` to every experiment whose function takes one; the
        others ignore it (their summaries say so).
    command : str, optional
        The command line recorded in the summaries (default: the equivalent
        ``oracleboost reproduce …`` command).
    progress : bool, optional
        A tqdm bar on stderr over the experiments; by default only for several
        experiments on a terminal.
    cache : str or path-like, optional
        A directory where every experiment's oracle calls are cached on disk
        (:class:`~oracleboost.oracles.CachedOracle`, through
        :func:`~oracleboost.experiments.base.oracle_cache`): a second run with the same
        cache answers the cached queries from disk and gives the same numbers.  Recorded
        in each summary's settings.  Default: no cache.
    n_jobs, backend, scheduler : optional
        Run the experiments in parallel through
        :func:`oracleboost.grid.parallel_map` (``joblib.Parallel``): ``n_jobs`` loky
        workers by default, ``backend="threading"``, or ``backend="dask"`` on the Dask
        scheduler at ``scheduler`` (default ``$ORACLEBOOST_DASK_SCHEDULER``, else a local
        cluster).  The results come back in the order of ``names``, and the tables and
        files are printed and written here as a sequential run would (the same numbers;
        only the timings differ).  Default: one after the other in this process.

    Returns
    -------
    dict of str to Curves
        The results, in the order run.
    """
    from .experiments import EXPERIMENTS
    from .experiments.base import oracle_cache, write_summary
    from .experiments.claims import claim

    out = sys.stdout if out is None else out
    names = resolve_names(names, EXPERIMENTS)
    runs = None  # results of a parallel run (--n-jobs / --backend), in the order of names
    if (n_jobs is not None and n_jobs != 1) or backend is not None or scheduler is not None:
        from .grid import parallel_map

        tasks = [(n, _experiment_kwargs(EXPERIMENTS[n], quick, seed), cache) for n in names]
        runs = parallel_map(_run_experiment, tasks, n_jobs=n_jobs, backend=backend,
                            scheduler=scheduler)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if command is None:
        command = _equivalent_command(names, quick, out_dir, seed, cache)
    mode = "quick (CI-sized budgets, --quick)" if quick else "full size"
    results, rows = {}, []
    total_start = time.perf_counter()
    bar = _progress_bar(len(names), progress)
    try:
        for name in names:
            fn = EXPERIMENTS[name]
            kwargs = _experiment_kwargs(fn, quick, seed)
            if bar is not None:
                bar.set_postfix_str(name)
            _emit(f"== {name} ({'quick' if quick else 'full size'}) ...", out, bar)
            started = datetime.now().astimezone()
            start = time.perf_counter()
            if runs is not None:  # ran on a worker: collected in order
                result, seconds = next(runs)
            else:
                with oracle_cache(cache):
                    result = fn(**kwargs)
                seconds = time.perf_counter() - start
            folder = out_dir / name
            folder.mkdir(parents=True, exist_ok=True)
            files = ["figure.png", "curves.csv"]
            result.save(folder / "figure.png")
            result.to_csv(folder / "curves.csv")
            if result.aux:
                result.to_csv(folder / "aux.csv", which="aux")
                files.append("aux.csv")
            settings = {
                "mode": mode,
                "seed": _seed_text(fn, seed),
                "oracleboost version": __version__,
                "date": started.isoformat(timespec="seconds"),
                "seconds": f"{seconds:.1f}",
                **({"oracle cache": f"`{os.fspath(cache)}` (oracle calls cached on disk, "
                    "CachedOracle)"} if cache is not None else {}),
                "command": f"`{command}`",
            }
            write_summary(folder / "summary.md", name, result, claim(name), settings, files)
            where = f"   files: {folder}/ ({', '.join(files + ['summary.md'])})"
            _emit(result.to_text(), out, bar)
            _emit(f"{where}   ({seconds:.1f}s)\n", out, bar)
            results[name] = result
            rows.append((name, seconds))
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        if runs is not None:
            runs.close()  # stops the workers' pending experiments on an error
    if len(names) > 1:
        total = time.perf_counter() - total_start
        seed_part = f"seed {seed}" if seed is not None else "no --seed (experiments' defaults)"
        run_line = (f"{mode} · {seed_part} · oracleboost {__version__} · "
                    f"{datetime.now().astimezone().isoformat(timespec='seconds')} · "
                    f"{total:.1f} s in all · `{command}`")
        index = _write_index(out_dir / "index.md", rows, run_line)
        _emit(f"index: {index}", out, None)
    return results


_REPRODUCE_EPILOG = """\
NAME is one of the names `oracleboost list` prints, or `all` (the default: every one).
Each experiment writes DIR/NAME/figure.png, DIR/NAME/curves.csv (x and one column per
curve), DIR/NAME/aux.csv (further arrays, when it has any) and DIR/NAME/summary.md (the
paper's claim, the measured result, the run's settings); a run of several experiments
also writes DIR/index.md linking them."""


_GRID_EPILOG = """\
boosters: adaboost, logistic-wolfe, maboost, madaboost, gradient-logistic (on stumps);
data sets: breast_cancer, digits_0v1, digits_3v5, hastie_10_2 (built in, no download).
The numbers depend on the seeds only, not on --n-jobs or the backend.

On a Dask cluster: run `dask scheduler` on one machine and `dask worker tcp://HOST:8786`
on each machine (every one with oracleboost installed), then
  oracleboost grid --backend dask --scheduler tcp://HOST:8786
or set ORACLEBOOST_DASK_SCHEDULER=tcp://HOST:8786 and pass --backend dask.  With
--backend dask and no address, a local cluster of --n-jobs workers is started.
The dask backend needs the extra: pip install "oracleboost[dask]"."""


def _add_parallel_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--n-jobs``, ``--backend`` and ``--scheduler`` (:mod:`oracleboost.grid`)."""
    parser.add_argument("--n-jobs", type=int, default=None, metavar="N",
                        help=f"run N {what} at once through joblib (-1: one per CPU; "
                             "default: one at a time in this process)")
    parser.add_argument("--backend", choices=("loky", "threading", "dask"), default=None,
                        help="joblib backend: loky worker processes (the default), threads, "
                             "or dask: a Dask cluster (needs oracleboost[dask])")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="with --backend dask: the scheduler, e.g. tcp://host:8786 "
                             "(default: $ORACLEBOOST_DASK_SCHEDULER, else a local cluster)")


def _check_parallel_options(args, parser: argparse.ArgumentParser) -> None:
    if args.n_jobs == 0:
        parser.error("--n-jobs must be a non-zero integer (-1: one per CPU)")
    if args.scheduler is not None and args.backend != "dask":
        parser.error("--scheduler is a Dask scheduler's address: use it with --backend dask")
    if args.backend == "dask":
        from .grid import DaskNotInstalledError, _import_distributed

        try:
            _import_distributed()
        except DaskNotInstalledError as exc:
            parser.error(str(exc))


def main(argv: list[str] | None = None) -> int:
    """Run the command line; ``argv`` defaults to ``sys.argv[1:]``; return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(
        prog="oracleboost",
        description="Boosting through an Oracle protocol: demos and paper reproductions.",
    )
    parser.add_argument("--version", action="version", version=f"oracleboost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="AdaBoost on stumps, round by round (built-in data)")
    p_demo.add_argument("--rounds", type=int, default=30, help="boosting rounds (default 30)")
    p_demo.add_argument("--every", type=int, default=3, help="print every k-th round")
    sub.add_parser("list", help="list the registered paper reproductions")
    p_rep = sub.add_parser(
        "reproduce", help="reproduce the papers' figures on built-in data",
        description="Run paper reproductions: print each one's table and write its figure, "
                    "numbers and summary.",
        epilog=_REPRODUCE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_rep.add_argument("names", nargs="*", metavar="NAME",
                       help="experiments to run, or 'all' (default: all)")
    p_rep.add_argument("--quick", action="store_true", help="CI-sized round budgets")
    p_rep.add_argument("--out", default="results", metavar="DIR",
                       help="folder for the results (default: results)")
    p_rep.add_argument("--seed", type=int, default=None, metavar="N",
                       help="random_state for the experiments that take one "
                            "(default: each experiment's own)")
    p_rep.add_argument("--cache", default=None, metavar="DIR",
                       help="cache the oracle calls on disk in DIR: a second run with the "
                            "same DIR reads them back (default: no cache)")
    _add_parallel_options(p_rep, "experiments")
    p_grid = sub.add_parser(
        "grid", help="boosters × data sets × seeds, in parallel (joblib, or a Dask cluster)",
        description="Fit every booster on every data set for every seed (train/test split "
                    "by the seed) and record test error, training loss, l1 margin, rounds "
                    "and seconds; print the table over the seeds and write DIR/grid.csv "
                    "and DIR/grid.md.",
        epilog=_GRID_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_grid.add_argument("--boosters", default=None, metavar="A,B",
                        help="comma-separated booster names (default: all)")
    p_grid.add_argument("--datasets", default=None, metavar="X,Y",
                        help="comma-separated data set names (default: all)")
    p_grid.add_argument("--seeds", type=int, default=None, metavar="N",
                        help="seeds 0..N-1 (default 5; --quick: 2)")
    p_grid.add_argument("--rounds", type=int, default=None, metavar="N",
                        help="weak learners per fit (default 200; --quick: 30)")
    p_grid.add_argument("--quick", action="store_true", help="a CI-sized grid")
    p_grid.add_argument("--out", default="results/grid", metavar="DIR",
                        help="folder for grid.csv and grid.md (default: results/grid)")
    _add_parallel_options(p_grid, "cells")
    args = parser.parse_args(argv)
    if args.command in ("reproduce", "grid"):
        _check_parallel_options(args, p_rep if args.command == "reproduce" else p_grid)
    if args.command == "demo":
        if args.rounds < 1 or args.every < 1:
            p_demo.error("--rounds and --every must be positive")
        demo(args.rounds, args.every)
    elif args.command == "list":
        from .experiments import EXPERIMENTS

        for name, fn in EXPERIMENTS.items():
            doc = (fn.__doc__ or "").strip().splitlines()
            print(f"{name:32s} {doc[0] if doc else ''}")
    elif args.command == "reproduce":
        if args.seed is not None and not 0 <= args.seed < 2**32:
            p_rep.error("--seed must be an integer in [0, 2**32)")
        try:
            names = resolve_names(args.names)
        except UnknownExperimentError as exc:
            p_rep.error(str(exc))
        reproduce(names, quick=args.quick, out_dir=args.out, seed=args.seed,
                  command=shlex.join(["oracleboost", *argv]), cache=args.cache,
                  n_jobs=args.n_jobs, backend=args.backend, scheduler=args.scheduler)
    elif args.command == "grid":
        from .grid import DaskNotInstalledError, GridArgumentError, grid_command

        def split(text):
            return [n.strip() for n in text.split(",") if n.strip()] if text else None

        try:
            grid_command(split(args.boosters), split(args.datasets), args.seeds,
                         quick=args.quick, rounds=args.rounds, out_dir=args.out,
                         n_jobs=args.n_jobs, backend=args.backend, scheduler=args.scheduler)
        except (GridArgumentError, DaskNotInstalledError) as exc:
            p_grid.error(str(exc))
        except ConnectionError as exc:  # the Dask scheduler cannot be reached
            p_grid.exit(1, f"oracleboost grid: error: {exc}\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
