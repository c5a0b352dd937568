"""What a place's calls leave for a later call at the same place, in its process's
memory, outside the executor's results.

A collective call's members make no per-row outputs (an executor that makes a lost
place's results again cannot run one member alone, so nothing may be made from them);
what a member found about its partitions' rows that a later stage could use instead
of finding it again (the rows of each leaf of a tree, say) it may :func:`keep` here.
The later stage :func:`take`\\ s it if it runs in the same process, and finds it again
itself if not (after a lost place, say): so the result never depends on whether it was
kept.  The executor clears the store when a fit ends (:func:`clear`).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any

__all__ = ["clear", "keep", "shared", "take"]

_STORE: dict[Hashable, Any] = {}
_LOCK = threading.Lock()


def keep(key: Hashable, value: Any) -> None:
    """Keep ``value`` under ``key`` for a later call in this process."""
    with _LOCK:
        _STORE[key] = value


def take(key: Hashable) -> Any:
    """The value kept under ``key`` (and let go of here), or None."""
    with _LOCK:
        return _STORE.pop(key, None)


def shared(key: Hashable, value: Any) -> Any:
    """The value kept under ``key``, kept there (and not let go of) until the store is
    cleared: ``value`` itself when none was."""
    with _LOCK:
        return _STORE.setdefault(key, value)


def clear() -> None:
    """Let go of everything kept (a fit ended)."""
    with _LOCK:
        _STORE.clear()
