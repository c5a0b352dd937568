"""What the command line needs before it imports anything heavy: suggestions for
mistyped names, the check for optional packages, SIGTERM taken as Ctrl-C, and output
to a closed pipe or a full device ended in one line.

Standard library only: ``oracleboost --help`` imports this module and nothing of numpy,
scikit-learn or the boosters.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import importlib.util
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

__all__ = [
    "EXIT_FAILED",
    "EXIT_USAGE",
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "EXIT_BROKEN_PIPE",
    "Terminated",
    "did_you_mean",
    "unknown_names_message",
    "missing_modules",
    "extra_line",
    "sigterm_as_interrupt",
    "leave_after_termination",
    "guarded_output",
    "TERMINAL_WIDTH",
]

#: Exit statuses.  1: some work failed, or the installation lacks an optional package;
#: 2: a usage error (argparse's own); 128 + the signal, as shells report a command a
#: signal stopped: 130 after Ctrl-C (SIGINT), 143 after SIGTERM, 141 when the reader of
#: the output went away (SIGPIPE: what ``cat`` or ``grep`` give under ``| head``).
EXIT_FAILED, EXIT_USAGE = 1, 2
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_BROKEN_PIPE = 128 + 13  # SIGPIPE (13 on every POSIX system; Windows has no SIGPIPE)

#: The width the command line's own lines keep to (wide tables go to the files).
TERMINAL_WIDTH = 100


class Terminated(KeyboardInterrupt):
    """SIGTERM received: raised where the program is, so that the clean-up written for
    Ctrl-C runs (a ``KeyboardInterrupt``).  ``signum`` is the signal's number."""

    def __init__(self, signum: int = signal.SIGTERM):
        self.signum = signum
        super().__init__(f"terminated by {signal.Signals(signum).name}")


# -- names ---------------------------------------------------------------------------------


def did_you_mean(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """The registered names closest to a mistyped ``word``, best first: difflib's
    matches (ratio >= 0.6) that score nearly as well as the best one (a clear winner is
    named alone); failing those, the names that contain ``word`` (``swap`` for
    ``swap-weak-learner``), when ``word`` has at least three letters."""
    choices = list(choices)
    close = difflib.get_close_matches(word, choices, n=n, cutoff=0.6)
    if close:
        def score(c: str) -> float:
            return difflib.SequenceMatcher(None, word, c).ratio()

        best = score(close[0])
        return [c for c in close if score(c) >= best - 0.05]
    lowered = word.lower()
    if len(lowered) < 3:
        return []
    return [c for c in choices if lowered in c.lower()][:n]


def unknown_names_message(what: str, unknown: Sequence[str], valid: Sequence[str],
                          where: str) -> str:
    """Two lines: the unknown names, each with the closest valid names when some are
    close, then where to read the valid names (``where``, e.g. "Try 'oracleboost list'
    for every name.").  The command line prints the second line where argparse would
    print its pointer to ``--help``."""
    parts = []
    for name in unknown:
        close = did_you_mean(name, valid, n=2)
        parts.append(name + (f" (did you mean {' or '.join(close)}?)" if close else ""))
    # "(s)", as the grid's and the experiments' own checks word it
    return f"unknown {what}(s): {', '.join(parts)}\n{where}"


# -- optional packages ---------------------------------------------------------------------


def missing_modules(modules: Iterable[str]) -> list[str]:
    """The modules among ``modules`` that cannot be imported, found without importing
    them (``importlib.util.find_spec``; a module set to None in ``sys.modules`` counts as
    missing, as ``import`` treats it)."""
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a finder that refuses it; a broken entry
            found = False
        if not found:
            missing.append(name)
    return missing


def extra_line(missing: Sequence[str], extra: str, purpose: str) -> str:
    """The one line that says what is missing, what for, and which extra installs it."""
    names = " and ".join([", ".join(missing[:-1]), missing[-1]] if len(missing) > 1
                         else list(missing))
    verb = "is" if len(missing) == 1 else "are"
    return f'{names} {verb} not installed ({purpose}): pip install "oracleboost[{extra}]"'


# -- signals and output --------------------------------------------------------------------


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM (what ``timeout``, ``kill``, Docker, systemd and Slurm
    send) raises :class:`Terminated`, a ``KeyboardInterrupt``: the same clean-up as
    Ctrl-C runs.  A second SIGTERM while that clean-up runs is ignored, so that the
    index of what finished is still written (SIGKILL remains for a forced stop).  Only
    the main thread receives signals; elsewhere the block changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = []

    def handler(signum, frame):
        if not raised:
            raised.append(signum)
            raise Terminated(signum)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # no signal support here (an embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def leave_after_termination(grace: float = 5.0) -> None:
    """After SIGTERM's clean-up: make sure the process ends even if a thread never will.

    An exception raised at an arbitrary point (Ctrl-C's, and so SIGTERM's) can land
    between a thread pool starting a worker thread and registering it for shutdown
    (``concurrent.futures``' ``_adjust_thread_count``): the worker then waits forever
    and Python's exit, which joins every non-daemon thread, hangs (seen: 1 run in about
    30 of ``demo`` stopped by SIGTERM).  A second Ctrl-C breaks such a join; a process
    manager sends one SIGTERM.  So when non-daemon threads are still alive, a daemon
    watchdog ends the process with status 143 after ``grace`` seconds, the output
    flushed; an exit that goes through earlier is not delayed."""
    others = [t for t in threading.enumerate()
              if t is not threading.current_thread() and not t.daemon and t.is_alive()]
    if not others:
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()

    def leave() -> None:
        time.sleep(grace)
        os._exit(EXIT_TERMINATED)

    threading.Thread(target=leave, name="oracleboost-exit-after-sigterm", daemon=True).start()


# errors of writing to a stream that the program cannot mend: the disk or the device is
# full, a file grew past its limit, the device failed
_FULL = {errno.ENOSPC, errno.EFBIG, errno.EIO, getattr(errno, "EDQUOT", errno.ENOSPC)}


def _silence_stdout() -> None:
    """Point standard output at the null device, so that Python's final flush of what
    is left in its buffer does not fail a second time (with an 'Exception ignored'
    message) after the error was reported."""
    with contextlib.suppress(Exception):
        fd = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


def _say(line: str) -> None:
    with contextlib.suppress(Exception):  # stderr may be gone too
        print(line, file=sys.stderr, flush=True)


def guarded_output(command: str, run: Callable[[], int]) -> int:
    """Run ``run`` (a command) and flush standard output; turn the failures of writing
    the output into an exit status without a traceback.

    * The reader went away (``oracleboost list | head -1``): nothing more is said (the
      reader does not want it) and the status is 141, as for ``cat`` killed by SIGPIPE.
    * The device is full (``oracleboost list > /dev/full``): one line on stderr naming
      the error, status 1.

    Every subcommand runs through this one helper (``grid`` included), so they all
    behave alike.
    """
    try:
        status = run()
        sys.stdout.flush()  # inside the guard: a full device fails here, not at exit
        return status
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:
        if exc.errno not in _FULL:
            raise
        _silence_stdout()
        where = f"{exc.filename}" if exc.filename else "the output"
        _say(f"oracleboost {command}: error: cannot write {where}: "
             f"{exc.strerror or exc}")
        return EXIT_FAILED
