"""One way to write a Markdown table (grid summaries, reproduction summaries and their
index, the benchmark report)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["cell", "table"]


def cell(text: object) -> str:
    """Text for one table cell: white space folded to single spaces, ``|`` escaped (it
    would end the cell)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table(header: Sequence[str], rows: Iterable[Sequence[str]], *, pad: bool = False) -> list[str]:
    """The lines of a Markdown table.  Cells are used as given (see :func:`cell`).

    ``pad=True`` pads every column but the last to its widest cell, so that the table
    also reads as plain text (the last, often long, is left ragged)."""
    rows = [list(header), *(list(r) for r in rows)]
    if not pad:
        lines = ["| " + " | ".join(r) + " |" for r in rows]
        lines.insert(1, "|" + "---|" * len(header))
        return lines
    widths = [max(len(r[i]) for r in rows) for i in range(len(header) - 1)]
    lines = ["| " + " | ".join([*(v.ljust(w) for v, w in zip(r[:-1], widths, strict=True)),
                                r[-1]]) + " |" for r in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in [*widths, 5]) + "|")
    return lines
