"""Files that are either whole or absent: write to a temporary name, then rename.

A reader (a user, a later run, a documentation build) must never find half a CSV or half
a figure because a run was interrupted or crashed while writing it.  ``os.replace`` is
atomic on one file system, so every writer here works on a temporary name beside the
target and renames it into place only once it is complete; on any exception, Ctrl-C
included, the temporary file or folder is removed and the target is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "atomic_path",
    "write_text_atomic",
    "atomic_folder",
    "remove_stale_staging",
    "writable_folder",
    "OutputFolderError",
    "STAGING_MARK",
]

#: Part of the name of every temporary file or folder written here (hidden: it starts
#: with a dot), followed by the writer's process id.
STAGING_MARK = ".partial-"


def _temporary_name(path: Path, kind: str = STAGING_MARK) -> Path:
    # The suffix is kept, so that writers that read the format from it (matplotlib)
    # still do; the process and thread ids keep concurrent writers apart.
    stem = f".{path.stem}{kind}{os.getpid()}-{threading.get_ident()}"
    return path.with_name(stem + path.suffix)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` when the block ends,
    its data flushed to the disk first (``fsync``).

    If the block raises (any exception, ``KeyboardInterrupt`` included), the temporary
    file is removed and ``path`` is untouched: a previous version stays whole.
    """
    path = Path(path)
    tmp = _temporary_name(path)
    try:
        yield tmp
        _to_disk(tmp)
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


def _to_disk(path: Path) -> None:
    """Flush a written file's data to the disk (``fsync``): renamed before its data
    reached the disk, a crash (a power cut) could leave the target naming an empty
    file on some file systems."""
    if not path.is_file():  # a writer that made nothing: os.replace says so
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_text_atomic(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` through :func:`atomic_path`.

    A write that fails half-way (a full disk) leaves ``path`` as it was; a previous
    file's permission bits are kept.
    """
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding=encoding) as f:
            f.write(text)
        if path.exists():
            shutil.copymode(path, tmp)


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``path``; put it in ``path``'s place at the end.

    The folder is filled under a hidden temporary name and renamed to ``path`` only when
    the block succeeds, so ``path`` is at every moment either absent, the previous
    complete folder, or the new complete folder.  A previous folder is first renamed
    aside and removed after the new one is in place (two renames: a crash between them
    leaves ``path`` absent, never mixed).  If the block raises, the temporary folder is
    removed and ``path`` is untouched.
    """
    path = Path(path)
    staging = _temporary_name(path)
    _remove(staging)
    staging.mkdir(parents=True)
    try:
        yield staging
        old = None
        if path.exists() or path.is_symlink():
            old = _temporary_name(path, ".old-")
            os.replace(path, old)
        os.replace(staging, path)
        if old is not None:
            _remove(old)
    except BaseException:
        _remove(staging)
        raise


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # another user's process, or no way to tell
        return True
    return True


def remove_stale_staging(folder: str | os.PathLike) -> list[Path]:
    """Remove the temporary files and folders that a killed writer left in ``folder``.

    Only names written by :func:`atomic_path` / :func:`atomic_folder` whose process is
    gone are removed (a writer killed with SIGKILL cannot clean up after itself); those
    of running processes, and everything else, are left alone.  Returns what was removed.
    """
    folder = Path(folder)
    removed = []
    if not folder.is_dir():
        return removed
    for entry in folder.iterdir():
        name = entry.name
        for mark in (STAGING_MARK, ".old-"):
            if name.startswith(".") and mark in name:
                pid_text = name.rsplit(mark, 1)[1].split("-", 1)[0]
                if pid_text.isdigit() and not _process_alive(int(pid_text)):
                    _remove(entry)
                    removed.append(entry)
                break
    return removed


class OutputFolderError(ValueError):
    """A folder given for output (``--out``, ``--cache``) cannot be used: it is a file,
    or it cannot be created or written.  Raised before any work starts."""


def writable_folder(path: str | os.PathLike, option: str) -> Path:
    """``path`` as a folder this process can write to, created if missing.

    Raises :class:`OutputFolderError` naming ``option`` (e.g. ``"--out"``) and saying why:
    a file is in the way, or creating or writing fails (the operating system's reason).
    """
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise OutputFolderError(f"{option} {os.fspath(path)}: is a file, not a folder")
    probe = folder / ".oracleboost-write-check"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(probe) as tmp:
            tmp.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OutputFolderError(
            f"{option} {os.fspath(path)}: cannot write there ({reason})") from None
    return folder
