"""``history_``: one record per weak learner, kept as columns of equal length."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["History"]


class History:
    """Per-round records gathered as lists, exposed as a dict of equal-length arrays.

    Appending a record costs O(number of keys), never O(rounds so far).
    """

    def __init__(self, keys: tuple[str, ...] = ()) -> None:
        # Declared keys exist (empty) even when no round ran, e.g. a stop at round 1.
        self._rows: dict[str, list[float]] = {k: [] for k in keys}
        self._n = 0

    def append(self, **record: float) -> None:
        """Add one row; a key the row lacks gets NaN, and a key new to the history (a
        warm start that adds an ``eval_set``) gets NaN for the earlier rows."""
        n = self._n
        rows = self._rows
        for k, v in record.items():
            column = rows.get(k)
            if column is None:  # (not setdefault: its default would be built every call)
                column = rows[k] = [math.nan] * n
            column.append(float(v))
        if len(record) < len(rows):
            for column in rows.values():
                if len(column) == n:
                    column.append(math.nan)
        self._n = n + 1

    def declare(self, *keys: str) -> None:
        """Columns that exist (NaN for rows so far) even before a row sets them."""
        for k in keys:
            if k not in self._rows:
                self._rows[k] = [math.nan] * self._n

    def truncate(self, n_rows: int) -> None:
        """Keep the first ``n_rows`` rows of every column (early stopping's best round)."""
        for k in self._rows:
            del self._rows[k][n_rows:]
        self._n = min(self._n, n_rows)

    @classmethod
    def from_dict(cls, rows: dict[str, np.ndarray]) -> History:
        """Continue a fitted ``history_`` (warm start)."""
        new = cls()
        new._rows = {k: [float(v) for v in values] for k, values in rows.items()}
        new._n = len(next(iter(new._rows.values()), []))
        return new

    def __len__(self) -> int:
        return self._n

    def keys(self) -> list[str]:
        """The column names, in the order they first appeared."""
        return list(self._rows)

    def column(self, key: str) -> list[float]:
        """The column ``key`` as the history's own list (not a copy), or ``[]`` when
        there is no such column."""
        return self._rows.get(key, [])

    def last(self, key: str, default: float = math.nan) -> float:
        """The latest value of ``key`` (``default`` before the first row)."""
        column = self._rows.get(key)
        return column[-1] if column else default

    def as_dict(self) -> dict[str, np.ndarray]:
        """The columns as float64 arrays of equal length: what ``history_`` holds."""
        return {k: np.asarray(v, dtype=np.float64) for k, v in self._rows.items()}
