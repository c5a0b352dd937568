"""Warnings silenced around a call, safely when threads do it at once.

``warnings.catch_warnings`` saves the process's filter list on entry and puts the saved
list back on exit.  Two threads that overlap (A enters, B enters, A leaves, B leaves)
leave B's saved list behind, which holds A's filter: the warnings A silenced stay
silenced for the rest of the process, and the user's own filters set meanwhile are
lost.  Oracles fit estimators on threads (grids, a booster's ``n_jobs``), so they
silence with :func:`silenced` instead: one filter a category, added by the first thread
in and removed by the last one out, under a lock; nothing else in the list is touched.

As with ``catch_warnings``, the filter holds for every thread while it is in the list.
"""

from __future__ import annotations

import contextlib
import re
import threading
import warnings
from collections.abc import Iterator

__all__ = ["silenced"]

#: The message pattern of the filters added here: it matches every message, and no
#: filter a user writes is likely to be this one, so ours is found (and removed) alone.
_EVERY_MESSAGE = "(?:)"

_LOCK = threading.Lock()
#: category -> how many ``silenced`` blocks are inside now
_INSIDE: dict[type[Warning], int] = {}


def _ours(category: type[Warning]) -> tuple:
    """The filter entry :func:`silenced` adds for ``category``, as ``warnings`` stores
    it (``filterwarnings`` compiles the message ignoring case)."""
    return ("ignore", re.compile(_EVERY_MESSAGE, re.I), category, None, 0)


@contextlib.contextmanager
def silenced(category: type[Warning] = Warning) -> Iterator[None]:
    """Ignore warnings of ``category`` (and its subclasses) inside the block.

    The filter is added by the first block to enter and removed by the last to leave,
    whatever the order of the threads; the rest of the filter list is left as it is."""
    with _LOCK:
        if _INSIDE.get(category, 0) == 0:
            warnings.filterwarnings("ignore", message=_EVERY_MESSAGE, category=category)
        _INSIDE[category] = _INSIDE.get(category, 0) + 1
    try:
        yield
    finally:
        with _LOCK:
            _INSIDE[category] -= 1
            if _INSIDE[category] == 0:
                del _INSIDE[category]
                # (gone already if the user reset the filters meanwhile)
                with contextlib.suppress(ValueError):
                    warnings.filters.remove(_ours(category))
