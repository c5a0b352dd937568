"""Command-line front end (``oracleboost``, or ``python -m oracleboost``).

``oracleboost demo``                         AdaBoost on stumps, round by round (seconds)
``oracleboost list``                         the registered paper reproductions
``oracleboost reproduce NAME ... | all``     run reproductions (a bare ``reproduce``
                                             prints its usage):
                                             :func:`oracleboost.experiments.runner.reproduce`
``oracleboost grid``                         boosters × data sets × seeds through joblib
                                             (or a Dask cluster): :mod:`oracleboost.grid`
``oracleboost --version``                    ``oracleboost <version>``

Conventions of command-line tools: results (tables, the paths written) go to stdout,
progress and log lines to stderr; ``-q`` prints only the paths, ``-v`` adds detail.  Exit
status: 0 when everything was done, 1 when some work failed (each failure named in one
line on stderr, its traceback in the output folder's log; or an optional package is
missing, named in one line with the extra that installs it), 2 for a usage error (a bad
option, an unknown name, an ``--out`` that is a file or cannot be written), 130 after
Ctrl-C, 143 after SIGTERM (taken as Ctrl-C: the same clean-up runs), 141 when the reader
of the output went away (``oracleboost list | head -1``).

Imports are lazy: ``oracleboost --help`` loads argparse and this module, and each
command imports what it needs (numpy, scikit-learn, the boosters, the experiments)
when it runs.  ``benchmarks/cli_help.py`` measures the time of ``--help``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import textwrap
from typing import TYPE_CHECKING, TextIO

from oracleboost._cli_support import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    did_you_mean,
    extra_line,
    guarded_output,
    leave_after_termination,
    missing_modules,
    sigterm_as_interrupt,
    unknown_names_message,
)
from oracleboost._version import __version__

if TYPE_CHECKING:
    import numpy as np

    from oracleboost.experiments.runner import UnknownExperimentError, reproduce, resolve_names

__all__ = ["main", "demo", "reproduce", "resolve_names", "UnknownExperimentError",
           "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED", "EXIT_TERMINATED"]

#: Re-exported from the experiments' runner on first use (PEP 562), so that importing
#: this module for ``--help`` does not import the experiments.
_LAZY = {"reproduce", "resolve_names", "UnknownExperimentError"}


def __getattr__(name: str):
    if name in _LAZY:
        from oracleboost.experiments import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def demo(n_rounds: int = 30, every: int = 3, out: TextIO | None = None) -> dict[str, np.ndarray]:
    """Boost ±1 decision stumps with AdaBoost on scikit-learn's breast-cancer data.

    Prints the round-by-round empirical risk, edge γ_t, step α_t, ℓ1 margin and
    training/test error, then the same booster with shrinkage ν = 0.5 for contrast;
    returns the first run's history.  ``out`` defaults to ``sys.stdout``.
    """
    import numpy as np
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    from oracleboost.boosters import CoordinateBoostingClassifier
    from oracleboost.oracles import StumpOracle

    out = sys.stdout if out is None else out
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


_REPRODUCE_EPILOG = """\
NAME is one of the names `oracleboost list` prints, or `all` for every one.
Each experiment writes DIR/NAME/figure.png (and .pdf, .svg with --format), DIR/NAME/
curves.csv (x and one column per curve), DIR/NAME/aux.csv (further arrays, when it has
any) and DIR/NAME/summary.md (the figure and its caption, the paper's claim, the
measured result, the run's settings), each folder complete or not at all; a run of
several experiments also writes DIR/index.md linking the completed ones.

An experiment that fails does not stop the others: at the end one line per failure
names it (the traceback is in DIR/reproduce.log) and the exit status is 1.  Ctrl-C
stops the run (status 130) and says which experiments finished; SIGTERM does the same
(status 143).  One run at a time writes into a DIR: a second one is refused.  The
experiments need the extra: pip install "oracleboost[experiments]"."""


def _grid_epilog() -> str:
    """``oracleboost grid --help``'s epilog, naming the boosters and data sets from their
    registries (built when the help is shown: it imports the boosters)."""
    from oracleboost.grid import DATASETS, default_boosters

    def listed(label: str, names, after: str) -> str:
        # wrapped within 100 columns, continued lines indented by two spaces
        return textwrap.fill(f"{label}: {', '.join(names)} {after}", 100,
                             subsequent_indent="  ", break_on_hyphens=False)

    return (listed("boosters", default_boosters(), "(on stumps);") + "\n"
            + listed("data sets", DATASETS, "(built in, no download).") + "\n"
            + _GRID_EPILOG_REST)


_GRID_EPILOG_REST = """\
The numbers depend on the seeds only, not on --n-jobs or the backend.

On a Dask cluster: run `dask scheduler` on one machine and `dask worker tcp://HOST:8786`
on each machine (every one with oracleboost installed), then
  oracleboost grid --backend dask --scheduler tcp://HOST:8786
or set ORACLEBOOST_DASK_SCHEDULER=tcp://HOST:8786 and pass --backend dask.  With
--backend dask and no address, a local cluster of --n-jobs workers is started.
The dask backend needs the extra: pip install "oracleboost[dask]"."""


def _add_parallel_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--n-jobs``, ``--backend``, ``--scheduler`` and ``--timeout`` (:mod:`oracleboost.grid`)."""
    parser.add_argument("--n-jobs", type=int, default=None, metavar="N",
                        help=f"run N {what} at once through joblib (-1: one per CPU; "
                             "default: one at a time in this process)")
    parser.add_argument("--backend", choices=("loky", "threading", "dask"), default=None,
                        help="joblib backend: loky worker processes (the default), threads, "
                             "or dask: a Dask cluster (needs oracleboost[dask])")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="with --backend dask: the scheduler, e.g. tcp://host:8786 "
                             "(default: $ORACLEBOOST_DASK_SCHEDULER, else a local cluster)")
    parser.add_argument("--timeout", type=_positive_seconds, default=10.0, metavar="SECONDS",
                        help="with a Dask scheduler: seconds to wait for it (default 10; a "
                             "port that refuses fails at once)")


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    loud = parser.add_mutually_exclusive_group()
    loud.add_argument("-q", "--quiet", action="store_true",
                      help="print only the paths written (and errors)")
    loud.add_argument("-v", "--verbose", action="store_true",
                      help="also print the files written and each failure's traceback")


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _formats(text: str) -> tuple[str, ...]:
    from oracleboost.experiments.runner import check_formats

    try:
        return check_formats(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _check_parallel_options(args, parser: argparse.ArgumentParser) -> None:
    if args.n_jobs == 0:
        parser.error("--n-jobs must be a non-zero integer (-1: one per CPU)")
    if args.scheduler is not None and args.backend != "dask":
        parser.error("--scheduler is a Dask scheduler's address: use it with --backend dask")
    if args.backend == "dask":
        _require(parser, ("dask", "distributed"), "dask", "--backend dask runs on a Dask cluster")


def _require(parser: argparse.ArgumentParser, modules, extra: str, purpose: str) -> None:
    """Exit before any work, in one line naming the extra, when a module is missing.

    Status 1, not 2: the command line was right (its help has nothing to add), the
    installation lacks a package; the status of work that could not be done."""
    missing = missing_modules(modules)
    if missing:
        parser.exit(EXIT_FAILED, f"{parser.prog}: error: "
                                 f"{extra_line(missing, extra, purpose)}\n")


def _verbosity(args) -> int:
    return 0 if args.quiet else 2 if args.verbose else 1


def _error(command: str, message: str) -> None:
    """One line on stderr, as argparse words its own errors."""
    print(f"oracleboost {command}: error: {message}", file=sys.stderr, flush=True)


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error said in one line (and where to read more) instead of
    the whole usage text above it."""

    def error(self, message: str):
        # a message may carry its own second line (where to find the valid names)
        first, _, hint = message.partition("\n")
        hint = hint or f"Try '{self.prog} --help' for more."
        self.exit(EXIT_USAGE, f"{self.prog}: error: {first}\n{hint}\n")


class _SubParser(_Parser):
    """A subcommand's parser: it reports the arguments it does not know itself, so that
    ``oracleboost reproduce --quik`` is blamed on ``oracleboost reproduce`` (argparse
    hands a subparser's leftovers to the top-level parser, which names only itself),
    with the options it has that come closest."""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            options = [o for o in self._option_string_actions if o.startswith("--")]
            close = {o: did_you_mean(o.split("=", 1)[0], options, n=2)
                     for o in extras if o.startswith("--")}
            hint = "; ".join(f"did you mean {' or '.join(c)}?" for c in close.values() if c)
            self.error(f"unrecognized arguments: {' '.join(extras)}"
                       + (f" ({hint})" if hint else ""))
        return namespace, extras

    def format_help(self) -> str:
        epilog = getattr(self, "epilog_from", None)
        if epilog is not None:  # an epilog computed only when the help is shown
            self.epilog = epilog()
        return super().format_help()


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = _Parser(
        prog="oracleboost",
        description="Boosting through an Oracle protocol: demos and paper reproductions.",
    )
    parser.add_argument("--version", action="version", version=f"oracleboost {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_SubParser)
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
                       help="experiments to run, or 'all' for every one")
    p_rep.add_argument("--quick", action="store_true", help="CI-sized round budgets")
    p_rep.add_argument("--out", default="results", metavar="DIR",
                       help="folder for the results (default: results)")
    p_rep.add_argument("--seed", type=int, default=None, metavar="N",
                       help="random_state for the experiments that take one "
                            "(default: each experiment's own)")
    p_rep.add_argument("--cache", default=None, metavar="DIR",
                       help="cache the oracle calls on disk in DIR: a second run with the "
                            "same DIR reads them back (default: no cache)")
    p_rep.add_argument("--format", type=_formats, default=("png",), metavar="F[,F...]",
                       dest="formats",
                       help="figure formats among png, pdf, svg (default: png)")
    _add_parallel_options(p_rep, "experiments")
    _add_output_options(p_rep)
    p_grid = sub.add_parser(
        "grid", help="boosters × data sets × seeds, in parallel (joblib, or a Dask cluster)",
        description="Fit every booster on every data set for every seed (train/test split "
                    "by the seed) and record test error, training loss, l1 margin, rounds "
                    "and seconds; print the table over the seeds and write DIR/grid.csv "
                    "and DIR/grid.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_grid.epilog_from = _grid_epilog
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
    _add_output_options(p_grid)
    return parser, {"demo": p_demo, "reproduce": p_rep, "grid": p_grid}


def _reproduce(args, argv: list[str], parser: argparse.ArgumentParser) -> int:
    if not args.names:
        # a bare `reproduce` would start every experiment at full size (many minutes):
        # running them all is asked for by name, `reproduce all`
        parser.exit(EXIT_USAGE, parser.format_usage()
                    + f"{parser.prog}: error: name the experiments to run, or 'all' for "
                      "every one\n`oracleboost list` prints the names; "
                      "`oracleboost reproduce all --quick` runs them all at a CI size\n")
    if args.seed is not None and not 0 <= args.seed < 2**32:
        parser.error("--seed must be an integer in [0, 2**32)")
    from oracleboost._files import OutputFolderError
    from oracleboost.experiments.runner import (
        EXTRA_MODULES,
        OutputFolderBusy,
        ReproductionFailed,
        ReproductionInterrupted,
        UnknownExperimentError,
        reproduce,
        resolve_names,
    )

    try:
        names = resolve_names(args.names)
    except UnknownExperimentError as exc:
        parser.error(str(exc))
    _require(parser, EXTRA_MODULES, "experiments",
             "the reproductions draw figures and solve LPs")
    try:
        reproduce(names, quick=args.quick, out_dir=args.out, seed=args.seed,
                  command=shlex.join(["oracleboost", *argv]), cache=args.cache,
                  n_jobs=args.n_jobs, backend=args.backend, scheduler=args.scheduler,
                  timeout=args.timeout, formats=args.formats, verbosity=_verbosity(args))
    except OutputFolderBusy as exc:  # not a usage error: the same command works later
        _error("reproduce", str(exc))
        return EXIT_FAILED
    except OutputFolderError as exc:
        parser.error(str(exc))
    except BrokenPipeError:  # a ConnectionError too, but the output's: guarded_output's
        raise
    except ConnectionError as exc:  # the Dask scheduler cannot be reached
        _error("reproduce", str(exc))
        return EXIT_FAILED
    except ReproductionFailed as exc:
        for failure in exc.failures:
            _error("reproduce", f"{failure.name} failed: {failure.error}")
        _error("reproduce", f"{len(exc.failures)} of {len(names)} experiments failed; "
                            f"the others were written; tracebacks in {exc.log}")
        return EXIT_FAILED
    except ReproductionInterrupted as exc:
        import textwrap

        from oracleboost.experiments.runner import stopped_by_signal

        how = stopped_by_signal(exc.signum)  # worded as in the log and the index
        during = f" during {exc.during}" if exc.during else ""
        lines = [f"oracleboost reproduce: {how}{during}",
                 f"  finished: {', '.join(exc.finished) or 'none'}"]
        if exc.not_run:
            lines.append(f"  not run: {', '.join(exc.not_run)}")
        # long lists of names wrap within the terminal's 100 columns
        text = "\n".join(textwrap.fill(line, 100, subsequent_indent="    ",
                                       break_on_hyphens=False) for line in lines)
        print(text, file=sys.stderr, flush=True)
        return 128 + exc.signum
    return 0


def _grid(args, parser: argparse.ArgumentParser) -> int:
    from oracleboost._files import OutputFolderError
    from oracleboost.boosters import BOOSTERS, TotallyCorrectiveClassifier
    from oracleboost.grid import (
        DATASETS,
        DaskNotInstalledError,
        GridArgumentError,
        default_boosters,
        grid_command,
    )

    def split(text):
        return [n.strip() for n in text.split(",") if n.strip()] if text else None

    # names checked here, with suggestions, before the grid starts
    boosters = list(default_boosters())
    for given, valid, what in ((split(args.boosters), boosters, "booster"),
                               (split(args.datasets), list(DATASETS), "data set")):
        unknown = [n for n in dict.fromkeys(given or []) if n not in valid]
        if unknown:
            parser.error(unknown_names_message(
                what, unknown, valid, "Try 'oracleboost grid --help' for every name."))
    lp = [n for n in split(args.boosters) or boosters
          if n in BOOSTERS and issubclass(BOOSTERS[n].estimator, TotallyCorrectiveClassifier)]
    if lp:  # the totally corrective boosters solve LPs (HiGHS) and entropy problems
        _require(parser, ("highspy", "clarabel"), "lp",
                 f"{', '.join(lp)} solve{'s' if len(lp) == 1 else ''} LPs; "
                 "or leave them out with --boosters")
    try:
        grid_command(split(args.boosters), split(args.datasets), args.seeds,
                     quick=args.quick, rounds=args.rounds, out_dir=args.out,
                     n_jobs=args.n_jobs, backend=args.backend, scheduler=args.scheduler,
                     timeout=args.timeout, verbosity=_verbosity(args))
    except (GridArgumentError, DaskNotInstalledError, OutputFolderError) as exc:
        parser.error(str(exc))
    except BrokenPipeError:  # a ConnectionError too, but the output's: guarded_output's
        raise
    except ConnectionError as exc:  # the Dask scheduler cannot be reached
        _error("grid", str(exc))
        return EXIT_FAILED
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; ``argv`` defaults to ``sys.argv[1:]``; return the exit status.

    Usage errors exit through argparse (``SystemExit`` with status 2), and so does a
    missing optional package (status 1, one line naming the extra).  Ctrl-C anywhere
    returns 130 after one line on stderr; SIGTERM is taken as Ctrl-C and returns 143.
    Output to a closed pipe ends quietly with 141, to a full device with one line and 1.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser, parsers = _parser()
    args = parser.parse_args(argv)
    try:
        with sigterm_as_interrupt():
            status = guarded_output(args.command, lambda: _run(args, argv, parsers))
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated), outside reproduce
        terminated = getattr(exc, "signum", None) is not None
        print(f"oracleboost: {'terminated' if terminated else 'interrupted'}",
              file=sys.stderr, flush=True)
        status = EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    if status == EXIT_TERMINATED:
        leave_after_termination()
    return status


def _run(args, argv: list[str], parsers: dict[str, argparse.ArgumentParser]) -> int:
    """The command ``args.command``, its arguments parsed; its exit status."""
    if args.command in ("reproduce", "grid"):
        _check_parallel_options(args, parsers[args.command])
    if args.command == "demo":
        if args.rounds < 1 or args.every < 1:
            parsers["demo"].error("--rounds and --every must be positive")
        from oracleboost.boosters import reraise_interrupts

        with reraise_interrupts():
            demo(args.rounds, args.every)
    elif args.command == "list":
        import textwrap

        from oracleboost.experiments import EXPERIMENTS

        col = max(len(n) for n in EXPERIMENTS) + 2
        for name, fn in EXPERIMENTS.items():
            doc = (fn.__doc__ or "").strip().splitlines()
            # the description wrapped under its column, within 100 columns
            text = textwrap.wrap(doc[0].strip() if doc else "", 100 - col) or [""]
            print(f"{name:{col}s}{text[0]}".rstrip())
            for more in text[1:]:
                print(" " * col + more)
    elif args.command == "reproduce":
        return _reproduce(args, argv, parsers["reproduce"])
    elif args.command == "grid":
        return _grid(args, parsers["grid"])
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
