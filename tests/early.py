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
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

Start = Callable[[Path], subprocess.Popen]

_CHILDREN: dict[Start, tuple[subprocess.Popen, Path]] = {}


def child(start: Start) -> tuple[subprocess.Popen, Path]:
    """``start``'s child and its folder (started now if collection did not start it)."""
    if start not in _CHILDREN:
        folder = Path(tempfile.mkdtemp(prefix="oracleboost-early-"))
        _CHILDREN[start] = (start(folder), folder)
    return _CHILDREN[start]


def start_marked(items: Iterable[pytest.Item]) -> None:
    for item in items:
        marker = item.get_closest_marker("early_subprocess")
        if marker is not None:
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
