"""Run registered reproductions and write their folders: what ``oracleboost reproduce`` does.

Three promises, each tested:

* **One failing experiment never takes the others down.**  Each experiment runs in
  :func:`run_experiment`, which turns any ``Exception`` into a failed :class:`Outcome`
  (the error's last line, and the traceback for the log).  :func:`reproduce` writes
  every experiment that succeeded, writes the tracebacks to ``DIR/reproduce.log`` and
  then raises :class:`ReproductionFailed` naming the ones that failed.
* **Nothing half-written.**  An experiment's files are written into a hidden temporary
  folder and renamed to ``DIR/NAME/`` once complete (:func:`oracleboost._files.
  atomic_folder`), and ``index.md`` is renamed into place too: after an interrupt or a
  crash every experiment folder is complete or absent, and the index lists exactly the
  experiments whose folders this run completed.
* **Ctrl-C stops the run.**  Experiments run inside :func:`~oracleboost.boosters.
  reraise_interrupts`, so a booster interrupted mid-fit does not keep its rounds (its
  policy for a user's own ``fit``) and the experiment does not carry on with a partly
  fitted model: the interrupt reaches :func:`reproduce`, which writes the index of what
  finished and raises :class:`ReproductionInterrupted` (a ``KeyboardInterrupt``).
  The command line takes SIGTERM as Ctrl-C (:func:`oracleboost._cli_support.
  sigterm_as_interrupt`), so the same clean-up runs when ``timeout``, Docker, systemd or
  Slurm stop a run.

One run at a time writes into a folder: :func:`reproduce` holds a lock on
``DIR/.reproduce.lock`` while it runs, and a second run into the same folder is refused
at once (:class:`OutputFolderBusy`) rather than interleaving its log, its folders and
its index with the first one's.

Before any work, :func:`reproduce` checks that the experiments extra is installed
(:data:`EXTRA_MODULES`; :class:`MissingExtraError` names it), rather than failing at the
first figure after minutes of computing.

Output follows the conventions of command-line tools: results (each experiment's table,
the paths written) go to ``out``, progress and log lines to ``err``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import os
import shlex
import signal
import sys
import textwrap
import time
import traceback
import warnings
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TextIO

import joblib

from oracleboost._cli_support import (
    TERMINAL_WIDTH,
    extra_line,
    missing_modules,
    unknown_names_message,
)
from oracleboost._files import (
    OutputFolderError,
    atomic_folder,
    atomic_path,
    remove_stale_staging,
    writable_folder,
)
from oracleboost._markdown import cell
from oracleboost._markdown import table as md_table
from oracleboost._version import __version__
from oracleboost.experiments.base import (
    FIGURE_FORMATS,
    Curves,
    oracle_cache,
    save_figure,
    write_summary,
)

__all__ = [
    "reproduce",
    "run_experiment",
    "resolve_names",
    "Outcome",
    "UnknownExperimentError",
    "OutputFolderError",
    "ReproductionFailed",
    "ReproductionInterrupted",
    "OutputFolderBusy",
    "MissingExtraError",
    "check_extra",
    "terminal_text",
    "LOG_NAME",
    "LOCK_NAME",
    "EXTRA_MODULES",
]

#: The run's log in the output folder: one line per experiment, and the traceback of
#: every failure.
LOG_NAME = "reproduce.log"

#: The lock a run holds on its output folder (hidden; left in place: removing a lock file
#: that another process may have just opened would let two runs hold "the" lock).
LOCK_NAME = ".reproduce.lock"

#: What the experiments import beyond the core dependencies: the ``experiments`` extra
#: (matplotlib draws every figure, tqdm the progress bar, highspy and clarabel solve
#: the totally corrective boosters' problems in lpboost-margins and swap-weak-learner).
EXTRA_MODULES = ("matplotlib", "tqdm", "highspy", "clarabel")


class MissingExtraError(ImportError):
    """The experiments extra is not (wholly) installed; the message names the missing
    modules and the line that installs them.  ``missing``: the module names."""

    def __init__(self, missing: list[str]):
        self.missing = list(missing)
        super().__init__(extra_line(self.missing, "experiments",
                                    "the reproductions draw figures and solve LPs"))


def check_extra() -> None:
    """Raise :class:`MissingExtraError` unless every module of :data:`EXTRA_MODULES` can
    be imported (found without importing them: this takes milliseconds)."""
    missing = missing_modules(EXTRA_MODULES)
    if missing:
        raise MissingExtraError(missing)


class OutputFolderBusy(OutputFolderError):
    """Another ``reproduce`` run is writing into the same output folder.

    Attributes
    ----------
    folder : pathlib.Path
    pid : int or None
        The other run's process id, when it could be read.
    """

    def __init__(self, folder: Path, pid: int | None):
        self.folder, self.pid = folder, pid
        who = f" (process {pid})" if pid else ""
        super().__init__(f"--out {folder}: another oracleboost reproduce{who} is writing "
                         "there; wait for it to end, or choose another --out")


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
        # one line, with the close names: the whole list is what `oracleboost list` is for
        super().__init__(unknown_names_message(
            "experiment", self.unknown, [*self.valid, "all"],
            "Try 'oracleboost list' for every name; 'all' runs every one."))


class ReproductionFailed(RuntimeError):
    """Some experiments raised; every other one was written.

    Attributes
    ----------
    failures : list of Outcome
        The failed experiments, in run order (``name``, ``error``: the error's last line).
    results : dict of str to Curves
        The experiments that succeeded.
    log : pathlib.Path
        The log holding each failure's traceback.
    """

    def __init__(self, failures: list[Outcome], results: dict, log: Path):
        self.failures, self.results, self.log = failures, results, log
        lines = [f"{f.name}: {f.error}" for f in failures]
        super().__init__(f"{len(failures)} experiment(s) failed (tracebacks in {log}): "
                         + "; ".join(lines))


class ReproductionInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, on the command line) stopped the run.

    Attributes
    ----------
    during : str or None
        The experiment that was running or being written, if any.
    finished : list of str
        The experiments whose folders this run completed.
    not_run : list of str
        The experiments that never started.
    signum : int
        The signal that stopped it: ``signal.SIGINT`` (Ctrl-C) or ``signal.SIGTERM``.
    """

    def __init__(self, during: str | None, finished: list[str], not_run: list[str],
                 signum: int = 2):
        self.during, self.finished, self.not_run = during, finished, not_run
        self.signum = signum
        super().__init__(f"interrupted{f' during {during}' if during else ''}")


@dataclass(frozen=True)
class Outcome:
    """What one experiment gave: its result, or its error.

    Attributes
    ----------
    name : str
    result : Curves or None
        None when the experiment raised.
    seconds : float
    error : str or None
        The error's last line (``"RuntimeError: ..."``), when it raised.
    traceback : str or None
        The whole traceback, for the log.
    warnings : tuple of str
        The warnings the experiment raised, each once, as ``"Category: message"``.
    """

    name: str
    result: Curves | None
    seconds: float
    error: str | None = None
    traceback: str | None = None
    warnings: tuple[str, ...] = ()


def resolve_names(names: list[str] | None, registry: dict | None = None) -> list[str]:
    """The experiments to run, in order, without repeats.

    No names, or ``all`` among them, means every registered experiment (registry order);
    otherwise the names as given.  Raises :class:`UnknownExperimentError` (a
    ``ValueError``) listing the valid names when any name is not registered.
    """
    if registry is None:
        from oracleboost.experiments import EXPERIMENTS as registry
    names = list(names or [])
    unknown = [n for n in names if n != "all" and n not in registry]
    if unknown:
        raise UnknownExperimentError(list(dict.fromkeys(unknown)), list(registry))
    if not names or "all" in names:
        return list(registry)
    return list(dict.fromkeys(names))


def run_experiment(
    name: str, kwargs: dict, cache: str | os.PathLike | joblib.Memory | None = None
) -> Outcome:
    """Run one registered experiment, timed: the task :func:`reproduce` hands to a worker
    (this process, a loky process, a thread or a Dask worker).

    Boosters inside re-raise interrupts (:func:`~oracleboost.boosters.reraise_interrupts`)
    and oracle calls are cached in ``cache`` when given.  Any ``Exception`` is returned
    as a failed :class:`Outcome`, so one experiment never stops the others;
    ``KeyboardInterrupt`` propagates.  Warnings are collected into the outcome (for the
    log) rather than printed; ``catch_warnings`` is process-wide, so experiments that
    run on threads at once may see each other's warnings.
    """
    from oracleboost.boosters import reraise_interrupts
    from oracleboost.experiments import EXPERIMENTS

    start = time.perf_counter()
    error = trace = None
    result = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with reraise_interrupts(), oracle_cache(cache):
                result = EXPERIMENTS[name](**kwargs)
        except Exception as exc:
            error = traceback.format_exception_only(type(exc), exc)[-1].strip().splitlines()[-1]
            trace = traceback.format_exc()
    seen = tuple(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    return Outcome(name, result, time.perf_counter() - start, error, trace, seen)


# -- arguments -----------------------------------------------------------------------------


def check_formats(formats: Sequence[str] | str) -> tuple[str, ...]:
    """The figure formats as a tuple without repeats; ``ValueError`` for unknown ones."""
    if isinstance(formats, str):
        formats = [f.strip().lower() for f in formats.split(",") if f.strip()]
    formats = tuple(dict.fromkeys(formats))
    unknown = [f for f in formats if f not in FIGURE_FORMATS]
    if unknown or not formats:
        raise ValueError(f"figure formats must be among {', '.join(FIGURE_FORMATS)} "
                         f"(comma-separated); got {', '.join(unknown) or 'none'}")
    return formats


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


def _experiment_kwargs(fn, quick: bool, seed: int | None) -> dict:
    """The keyword arguments of one experiment's function."""
    kwargs = {"quick": quick}
    if seed is not None and _takes_seed(fn):
        kwargs["random_state"] = seed
    return kwargs


def _equivalent_command(names: list[str], quick: bool, out_dir, seed: int | None,
                        cache=None, formats: Sequence[str] = ("png",)) -> str:
    parts = ["oracleboost", "reproduce", *names]
    if quick:
        parts.append("--quick")
    parts += ["--out", str(out_dir)]
    if seed is not None:
        parts += ["--seed", str(seed)]
    if cache is not None:
        parts += ["--cache", str(cache)]
    if tuple(formats) != ("png",):
        parts += ["--format", ",".join(formats)]
    return shlex.join(parts)


# -- output --------------------------------------------------------------------------------


class _Console:
    """Where the run's text goes: results to ``out``, progress and log lines to ``err``.

    ``verbosity`` 0 (``-q``) prints only the paths written and the errors; 1 (default)
    adds the tables and the progress lines; 2 (``-v``) adds the files and the failures'
    tracebacks.  A tqdm bar on ``err`` (several experiments, on a terminal) is kept
    intact by writing through it.
    """

    def __init__(self, out, err, verbosity: int, total: int, progress: bool | None):
        self.out, self.err, self.verbosity = out, err, verbosity
        self.bar = self._progress_bar(total, progress if verbosity > 0 else False)

    def _progress_bar(self, total: int, enabled: bool | None):
        if enabled is False or (enabled is None and total < 2):
            return None
        try:
            from tqdm import tqdm
        except ImportError:  # pragma: no cover - tqdm is in the experiments extra
            return None
        bar = tqdm(total=total, desc="reproduce", unit="experiment", file=self.err,
                   disable=None if enabled is None else False, dynamic_ncols=True)
        if bar.disable:
            bar.close()
            return None
        return bar

    def _write(self, text: str, stream) -> None:
        if self.bar is None:
            print(text, file=stream, flush=True)
        else:
            self.bar.write(text, file=stream)
            stream.flush()

    def result(self, text: str, level: int = 1) -> None:
        if self.verbosity >= level:
            self._write(text, self.out)

    def progress(self, text: str, level: int = 1) -> None:
        if self.verbosity >= level:
            self._write(text, self.err)

    def step(self, name: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(name)

    def done(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class _Log:
    """``DIR/reproduce.log``: a header, one line per experiment, every failure's
    traceback.  Appended and flushed as the run goes, so it tells how far a run got."""

    def __init__(self, path: Path, command: str):
        self.path = path
        self._fh = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.line(f"oracleboost {__version__} · {_now()} · `{command}`")

    def line(self, text: str) -> None:
        self._fh.write(text + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def write_experiment(folder: Path, name: str, result: Curves, settings: dict,
                     formats: Sequence[str]) -> list[str]:
    """Write ``folder`` (``figure.<format>`` for each format, ``curves.csv``, ``aux.csv``
    when there are aux arrays, ``summary.md``) as one unit: complete or absent."""
    from oracleboost.experiments.claims import claim

    files = [f"figure.{fmt}" for fmt in formats]
    with atomic_folder(folder) as staging:
        for f in files:
            # drawn afresh for each format: a figure saved once keeps the layout that
            # format's renderer computed, so the next format's bytes would depend on the
            # order of --format
            save_figure(result.plot(), staging / f)
        result.to_csv(staging / "curves.csv")
        files.append("curves.csv")
        if result.aux:
            result.to_csv(staging / "aux.csv", which="aux")
            files.append("aux.csv")
        write_summary(staging / "summary.md", name, result, claim(name), settings, files)
    return files


def _write_index(path: Path, rows: list[tuple[str, float]], failed: list[Outcome],
                 not_run: list[str], run_line: str, figure: str) -> Path:
    """``index.md``: one table row per experiment this run completed, linking its
    summary and figure; then, without links, the ones that failed or never ran."""
    from oracleboost.experiments.claims import claim, first_sentence

    cells = [(f"[{name}]({name}/summary.md)",
              cell(first_sentence(claim(name)) or "(no claim recorded)"), f"{seconds:.1f} s",
              f"[{figure}]({name}/{figure})") for name, seconds in rows]
    lines = ["# Reproductions", "", run_line, "",
             *md_table(["experiment", "the paper's claim (first sentence)", "runtime",
                        "figure"], cells)]
    if failed:
        lines += ["", f"Failed (tracebacks in {LOG_NAME}):", ""]
        lines += [f"- {f.name}: {cell(f.error)}" for f in failed]
    if not_run:
        lines += ["", "Not run (the run was interrupted):", ""]
        lines += [f"- {n}" for n in not_run]
    with atomic_path(path) as tmp:
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def terminal_text(result: Curves, width: int = TERMINAL_WIDTH) -> str:
    """:meth:`Curves.to_text` fitted to ``width`` columns, for the terminal.

    The table keeps, in order, the series that fit in ``width`` columns and are not NaN
    at every row shown; a line names the ones left out (every one is in ``curves.csv``
    and the summary).  Other lines longer than ``width`` are wrapped at spaces, keeping
    their indentation (a single word longer than ``width``, such as a path, stays whole).
    """
    import numpy as np

    rows = result.rows()
    names = list(result.series)
    xw = max(8, len(result.xlabel))
    digits = 5  # to_text's default, which sets its column width below

    def table_width(chosen: list[str]) -> int:
        col = max([12, digits + 7] + [len(n) for n in chosen])
        return xw + len(chosen) * (col + 1)

    nan = [n for n in names
           if np.all(np.isnan(np.asarray(result.series[n], dtype=float)[rows]))]
    chosen: list[str] = []
    for name in names:
        if name not in nan and table_width([*chosen, name]) <= width:
            chosen.append(name)
    if not chosen and names:  # one column, however wide, rather than an empty table
        chosen = [next((n for n in names if n not in nan), names[0])]
    left_out = [n for n in names if n not in chosen]
    # mathtext is dropped with the columns: it may name series this copy no longer has
    shown = dataclasses.replace(result, series={n: result.series[n] for n in chosen},
                                mathtext={})
    lines = shown.to_text(rows=rows, digits=digits).splitlines()
    if left_out:
        why = ("NaN at every row shown" if set(left_out) <= set(nan)
               else f"wider than {width} columns" if not set(left_out) & set(nan)
               else f"NaN at every row shown, or wider than {width} columns")
        lines.insert(2 + len(rows), f"not shown ({why}; in curves.csv): "
                                    + ", ".join(left_out))
    wrapped: list[str] = []
    for line in lines:
        if len(line) <= width:
            wrapped.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        wrapped += textwrap.wrap(line, width, initial_indent="", subsequent_indent=indent
                                 + "  ", break_long_words=False, break_on_hyphens=False)
    return "\n".join(wrapped)


try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder/.reproduce.lock`` for the block, or raise
    :class:`OutputFolderBusy` at once when another process holds it.

    A lock rather than one log per run: two runs into one folder would still race on
    its experiment folders and its index, so the second run is refused and says why.
    The lock is the operating system's (``flock``; ``msvcrt.locking`` on Windows), not a
    file's existence: it is freed when its process ends, however it ends (SIGKILL, a
    crash), so no stale lock is ever left to remove by hand.  The file holds the
    holder's process id, for the second run's message.
    """
    path = folder / LOCK_NAME
    fh = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        try:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:  # pragma: no cover - Windows
                import msvcrt

                fh.seek(0)
                msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            pid = None
            with contextlib.suppress(OSError, ValueError):
                fh.seek(0)
                pid = int(fh.read().strip() or 0) or None
            raise OutputFolderBusy(folder, pid) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        yield
    finally:
        fh.close()  # closing the file frees the lock


# -- the run -------------------------------------------------------------------------------


def reproduce(
    names: list[str] | None = None,
    quick: bool = False,
    out_dir: str | os.PathLike = "results",
    out: TextIO | None = None,
    *,
    seed: int | None = None,
    command: str | None = None,
    progress: bool | None = None,
    cache: str | os.PathLike | None = None,
    n_jobs: int | None = None,
    backend: str | None = None,
    scheduler: str | None = None,
    timeout: float = 10.0,
    formats: Sequence[str] | str = ("png",),
    err: TextIO | None = None,
    verbosity: int = 1,
) -> dict[str, Curves]:
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
        Created if missing; a file, or a folder that cannot be written, raises
        :class:`OutputFolderError` before anything runs.  Each experiment writes
        ``out_dir/NAME/``, complete or not at all: ``figure.png`` (one figure per
        format), ``curves.csv`` (:meth:`Curves.to_csv`: x and the curves), ``aux.csv``
        (x and the ``aux`` arrays, when there are any) and ``summary.md``
        (:func:`~oracleboost.experiments.base.write_summary`: the figure and its caption,
        the paper's claim from :data:`~oracleboost.experiments.claims.CLAIMS`, the
        measured result, the settings).  When more than one experiment was asked for,
        ``out_dir/index.md`` links the completed ones.  ``out_dir/reproduce.log`` logs
        the run, with the traceback of every failure.  The run holds a lock on
        ``out_dir/.reproduce.lock`` (freed when it ends, however it ends): a second run
        into the same folder meanwhile raises :class:`OutputFolderBusy`.
    out : text stream, default ``sys.stdout``
        Where the results go: the tables and the paths written.
    seed : int, optional
        Passed as ``random_state`` to every experiment whose function takes one; the
        others ignore it (their summaries say so).
    command : str, optional
        The command line recorded in the summaries (default: the equivalent
        ``oracleboost reproduce …`` command).
    progress : bool, optional
        A tqdm bar on ``err`` over the experiments; by default only for several
        experiments on a terminal.
    cache : str or path-like, optional
        A directory where every experiment's oracle calls are cached on disk
        (:class:`~oracleboost.oracles.CachedOracle`, through
        :func:`~oracleboost.experiments.base.oracle_cache`): a second run with the same
        cache answers the cached queries from disk and gives the same numbers.  Recorded
        in each summary's settings.  Default: no cache.
    n_jobs, backend, scheduler, timeout : optional
        Run the experiments in parallel through :func:`oracleboost.grid.parallel_map`
        (``joblib.Parallel``): ``n_jobs`` loky workers by default,
        ``backend="threading"``, or ``backend="dask"`` on the Dask scheduler at
        ``scheduler`` (default ``$ORACLEBOOST_DASK_SCHEDULER``, else a local cluster),
        waiting at most ``timeout`` seconds to connect.  The results come back in the
        order of ``names``, and the tables and files are printed and written here as a
        sequential run would (the same numbers; only the timings differ).  Default: one
        after the other in this process.
    formats : sequence of str or str, default=("png",)
        The figure's formats, among ``"png"``, ``"pdf"`` and ``"svg"`` (or one
        comma-separated string): one ``figure.<format>`` each.
    err : text stream, default ``sys.stderr``
        Where progress and log lines go.
    verbosity : {0, 1, 2}, default=1
        0 prints only the paths written (``-q``); 2 adds the files and the failures'
        tracebacks (``-v``).

    Returns
    -------
    dict of str to Curves
        The results, in the order run.

    Raises
    ------
    ReproductionFailed
        After the run, when some experiments raised: the others were written.
    ReproductionInterrupted
        On Ctrl-C (a ``KeyboardInterrupt``), after the index of what finished is written.
    ConnectionError
        ``backend="dask"`` when the scheduler cannot be reached.
    MissingExtraError
        Before anything runs, when the experiments extra is not installed (an
        ``ImportError`` naming the missing modules and the extra).
    OutputFolderBusy
        Before anything runs, when another run is writing into ``out_dir`` (an
        :class:`OutputFolderError`).
    """
    from oracleboost.experiments import EXPERIMENTS

    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    names = resolve_names(names, EXPERIMENTS)
    formats = check_formats(formats)
    check_extra()
    out_dir = writable_folder(out_dir, "--out")
    if cache is not None:
        writable_folder(cache, "--cache")
    with _folder_lock(out_dir):
        return _reproduce_locked(names, quick, out_dir, out, err, seed, command, progress,
                                 cache, n_jobs, backend, scheduler, timeout, formats,
                                 verbosity)


def _reproduce_locked(names, quick, out_dir, out, err, seed, command, progress, cache,
                      n_jobs, backend, scheduler, timeout, formats, verbosity):
    """:func:`reproduce`'s run, its arguments checked and its folder locked."""
    from oracleboost.experiments import EXPERIMENTS

    remove_stale_staging(out_dir)
    if command is None:
        command = _equivalent_command(names, quick, out_dir, seed, cache, formats)
    mode = "quick (CI-sized budgets, --quick)" if quick else "full size"
    kwargs = {n: _experiment_kwargs(EXPERIMENTS[n], quick, seed) for n in names}

    # a parallel run's outcomes, in the order of names
    runs: Generator[Outcome, None, None] | None = None
    if (n_jobs is not None and n_jobs != 1) or backend is not None or scheduler is not None:
        from oracleboost.grid import parallel_map

        runs = parallel_map(run_experiment, [(n, kwargs[n], cache) for n in names],
                            n_jobs=n_jobs, backend=backend, scheduler=scheduler,
                            timeout=timeout)

    results: dict[str, Curves] = {}
    rows: list[tuple[str, float]] = []
    failures: list[Outcome] = []
    current: str | None = None
    interrupted = False
    signum = signal.SIGINT
    log = _Log(out_dir / LOG_NAME, command)
    console = _Console(out, err, verbosity, len(names), progress)
    total_start = time.perf_counter()
    try:
        for name in names:
            current = name
            console.step(name)
            console.progress(f"== {name} ({'quick' if quick else 'full size'}) ...")
            started = _now()
            outcome = next(runs) if runs is not None else run_experiment(
                name, kwargs[name], cache)
            for text in outcome.warnings:
                log.line(f"{name}: {text}")
                console.progress(f"   {text}", level=2)
            if outcome.warnings:
                console.progress(f"   {len(outcome.warnings)} warning(s), in {log.path}")
            if outcome.error is not None:
                failures.append(outcome)
                log.line(f"{name}: FAILED after {outcome.seconds:.1f} s: {outcome.error}")
                log.line(outcome.traceback.rstrip())
                console.progress(textwrap.fill(f"   failed: {outcome.error}", TERMINAL_WIDTH,
                                               subsequent_indent="     ",
                                               break_long_words=False))
                console.progress(outcome.traceback.rstrip(), level=2)
                console.done()
                continue
            settings = {
                "mode": mode,
                "seed": _seed_text(EXPERIMENTS[name], seed),
                "oracleboost version": __version__,
                "date": started,
                "seconds": f"{outcome.seconds:.1f}",
                **({"oracle cache": f"`{os.fspath(cache)}` (oracle calls cached on disk, "
                    "CachedOracle)"} if cache is not None else {}),
                "command": f"`{command}`",
            }
            folder = out_dir / name
            files = write_experiment(folder, name, outcome.result, settings, formats)
            log.line(f"{name}: ok, {outcome.seconds:.1f} s, {folder}/")
            results[name] = outcome.result
            rows.append((name, outcome.seconds))
            current = None
            console.result(terminal_text(outcome.result))
            where = f"   files: {folder}/"
            what = f"({', '.join(files + ['summary.md'])})"
            took = f"   ({outcome.seconds:.1f}s)"
            # one line when it fits the terminal's 100 columns, else the folder and the
            # time first (the line of names is then the same in every run)
            console.result(f"{where} {what}{took}\n"
                           if len(where) + 1 + len(what) + len(took) <= TERMINAL_WIDTH
                           else f"{where}{took}\n          {what}\n")
            if verbosity == 0:
                console.result(f"{folder}/", level=0)
            console.done()
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM on the command line
        interrupted = True
        signum = getattr(exc, "signum", signal.SIGINT)
    except BrokenPipeError:
        # the reader of the output went away (`| head`): stop as a tool killed by SIGPIPE
        # would, but with the index of what finished written (then the BrokenPipeError
        # of printing its path, or ReproductionInterrupted, ends the command)
        interrupted = True
        signum = _SIGPIPE
    finally:
        console.close()
        if runs is not None:
            runs.close()  # stops the workers' pending experiments
        if interrupted:
            during = f" during {current}" if current else ""
            log.line(f"{stopped_by_signal(signum)}{during}; finished: "
                     f"{', '.join(n for n, _ in rows) or 'none'}")
        log.close()
    done = {n for n, _ in rows} | {f.name for f in failures}
    not_run = [n for n in names if n not in done and n != current]
    if len(names) > 1:
        total = time.perf_counter() - total_start
        seed_part = f"seed {seed}" if seed is not None else "no --seed (experiments' defaults)"
        state = f" · {stopped_by_signal(signum)}" if interrupted else ""
        run_line = (f"{mode} · {seed_part} · oracleboost {__version__} · {_now()} · "
                    f"{total:.1f} s in all{state} · `{command}`")
        index = _write_index(out_dir / "index.md", rows, failures,
                             ([current] if interrupted and current else []) + not_run,
                             run_line, f"figure.{formats[0]}")
        if verbosity == 0:
            print(index, file=out, flush=True)
        else:
            print(f"index: {index}", file=out, flush=True)
    if interrupted:
        raise ReproductionInterrupted(current, [n for n, _ in rows], not_run, signum)
    if failures:
        raise ReproductionFailed(failures, results, out_dir / LOG_NAME)
    return results


#: SIGPIPE's number (13 on every POSIX system; Windows has none, and no such stop)
_SIGPIPE = 13


def stopped_by_signal(signum: int) -> str:
    """How a stop by ``signum`` is said in the log and the index."""
    if signum == signal.SIGINT:
        return "interrupted"
    if signum == _SIGPIPE:
        return "stopped: the output was closed"
    return f"stopped by {signal.Signals(signum).name}"
