"""Child processes that a test only checks, started as soon as collection ends so that
they run on the second core while the suite goes on in this process (on a 2-core
machine the suite itself is mostly one thread).

A test (or a module, through ``pytestmark``) marked ``early_subprocess(start)`` names a
function ``start(folder) -> subprocess.Popen`` that starts the child in a new folder;
:func:`start_marked` (``tests/conftest.py``, when collection ends) starts each such
function's child once, and the test asks :func:`child` for it and waits.  The test then
asserts what it would on a child it started itself.  A child still running when the
session ends is killed (:func:`finish`).  Mark with
``pytest.mark.early_subprocess.with_args(start)``: a mark given one callable alone
takes it as the function it marks.

The children run at a lower priority than the suite (``os.setpriority``: nice
:data:`NICE`, or the start function's ``nice`` attribute): the suite keeps a core, and a
child takes what the suite leaves (on a 2-core machine, the second core).  A child that
the suite needs late sets a higher ``nice`` so that the others, needed sooner, go first.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

Start = Callable[[Path], subprocess.Popen]

_CHILDREN: dict[Start, tuple[subprocess.Popen, Path]] = {}

#: The children's niceness, unless the start function has its own ``nice`` attribute.
NICE = 10


def child(start: Start) -> tuple[subprocess.Popen, Path]:
    """``start``'s child and its folder (started now if collection did not start it)."""
    if start not in _CHILDREN:
        folder = Path(tempfile.mkdtemp(prefix="oracleboost-early-"))
        process = start(folder)
        # (a child that has already ended; no os.setpriority off Unix)
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, process.pid, getattr(start, "nice", NICE))
        _CHILDREN[start] = (process, folder)
    return _CHILDREN[start]


def start_marked(items: Iterable[pytest.Item]) -> None:
    for item in items:
        for marker in item.iter_markers("early_subprocess"):
            child(marker.args[0])


def finish() -> None:
    for process, folder in _CHILDREN.values():
        if process.poll() is None:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)
    _CHILDREN.clear()


@contextlib.contextmanager
def output_files(folder: Path) -> Iterator[tuple]:
    """``folder / "stdout.txt"`` and ``"stderr.txt"``, open for a child's output (a pipe
    that nobody reads while the suite runs would fill and stop the child); the child
    keeps its own descriptors when they close here."""
    with open(folder / "stdout.txt", "w", encoding="utf-8") as out, \
            open(folder / "stderr.txt", "w", encoding="utf-8") as err:
        yield out, err


def python_child(code: str, folder: Path, *args: str, **popen: object) -> subprocess.Popen:
    """``python -c code *args`` with its output in :func:`output_files` (``popen``: more
    of ``subprocess.Popen``'s arguments, such as ``cwd`` and ``env``)."""
    with output_files(folder) as (out, err):
        return subprocess.Popen([sys.executable, "-c", code, *args], stdout=out, stderr=err,
                                text=True, **popen)


def outputs(folder: Path) -> tuple[str, str]:
    """The child's standard output and error, as written so far."""
    return ((folder / "stdout.txt").read_text(encoding="utf-8"),
            (folder / "stderr.txt").read_text(encoding="utf-8"))


#: A child's code that pickles ``value`` as ``folder/name.pkl`` for :func:`result`:
#: written to another name, then renamed (the file is whole when it appears).
DUMP = """
import os, pickle
def dump(folder, name, value):
    with open(f"{folder}/{name}.partial", "wb") as f:
        pickle.dump(value, f)
    os.replace(f"{folder}/{name}.partial", f"{folder}/{name}.pkl")
"""


def result(start: Start, name: str, timeout: float = 900) -> object:
    """What ``start``'s child pickled as ``name`` (``DUMP``'s ``dump``), waiting for
    it; fails with the child's error output if the child ends without it."""
    process, folder = child(start)
    path = folder / f"{name}.pkl"
    deadline = time.monotonic() + timeout
    while not path.exists():
        if process.poll() is not None and not path.exists():
            raise AssertionError(f"the child ended ({process.returncode}) without "
                                 f"{name}:\n{outputs(folder)[1][-3000:]}")
        assert time.monotonic() < deadline, f"no {name} from the child after {timeout} s"
        time.sleep(0.05)
    with open(path, "rb") as f:
        return pickle.load(f)
