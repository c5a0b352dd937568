"""The result every reproduction returns: named curves over one x axis.

A :class:`Curves` is what a figure of a paper shows: a few series against one x axis
(the boosting round, or the shrinkage ν), horizontal reference lines (a maximum margin,
a limit), a title and axis labels.  It draws itself with matplotlib (imported only when
drawing, through :class:`matplotlib.figure.Figure`, never pyplot, so no display and no
global backend are involved), prints itself as a compact table and writes its numbers as
CSV (:meth:`Curves.to_csv`); :func:`write_summary` writes the Markdown summary of one run
(the figure with its caption, the paper's claim, what was measured, the run's settings).

Figures are meant for a paper: labels and legends are set in matplotlib's mathtext
(:attr:`Curves.mathtext` maps the plain-text labels, which the CSV and the tables keep, to
their mathtext form), the title is the caption in ``summary.md`` rather than text inside
the figure, and points that the axes cannot show (outside :attr:`Curves.ylim`, or ≤ 0 on
a log axis) are counted in the caption (:meth:`Curves.hidden_points`).  Every file is
written under a temporary name and renamed into place (:mod:`oracleboost._files`), so
an interrupted write leaves no partial file.

Every experiment builds its oracles through :func:`cached`: inside
``with oracle_cache(directory):`` they are wrapped in
:class:`~oracleboost.oracles.CachedOracle` on that directory (``oracleboost reproduce
--cache DIR``), so a second identical run answers every cached query from disk; outside
it, or with ``directory=None``, :func:`cached` returns the oracle unchanged.
"""

from __future__ import annotations

import contextlib
import csv
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

import joblib
import numpy as np

from oracleboost._files import atomic_path
from oracleboost._markdown import cell
from oracleboost._markdown import table as md_table
from oracleboost.oracles.base import Oracle

if TYPE_CHECKING:  # matplotlib is imported only when drawing (an optional dependency)
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

__all__ = [
    "Curves",
    "ThresholdCurves",
    "cached",
    "oracle_cache",
    "active_oracle_cache",
    "summary_markdown",
    "write_summary",
    "save_figure",
    "FIGURE_FORMATS",
]


# -- caching the experiments' oracle calls ------------------------------------------------

#: The cache of :func:`cached` (a directory or ``joblib.Memory``), or None for no cache.
_ORACLE_CACHE: ContextVar[object] = ContextVar("oracleboost_oracle_cache", default=None)


@contextlib.contextmanager
def oracle_cache(directory: str | os.PathLike | joblib.Memory | None) -> Iterator[object]:
    """Within the block, :func:`cached` wraps oracles in a ``CachedOracle`` on ``directory``.

    Parameters
    ----------
    directory : str, path-like, joblib.Memory or None
        Where the answers are cached (created by joblib when needed); ``None`` turns
        caching off inside the block.  The setting is a context variable: blocks nest,
        and the previous setting is restored on exit.

    Yields
    ------
    The active setting (the directory as a ``str``, the ``Memory``, or None).
    """
    if directory is not None and not hasattr(directory, "cache"):  # not a joblib.Memory
        directory = os.fspath(directory)
    token = _ORACLE_CACHE.set(directory)
    try:
        yield directory
    finally:
        _ORACLE_CACHE.reset(token)


def active_oracle_cache() -> object:
    """The cache :func:`cached` uses now (set by :func:`oracle_cache`), or None."""
    return _ORACLE_CACHE.get()


def cached(oracle: Oracle) -> Oracle:
    """``CachedOracle(oracle, directory)`` inside ``oracle_cache(directory)``, else ``oracle``.

    The experiments build every oracle through this hook, so the same code runs
    uncached (bitwise the numbers of a plain run) or cached on disk.  An oracle that is
    already a ``CachedOracle`` is returned unchanged.
    """
    memory = _ORACLE_CACHE.get()
    if memory is None:
        return oracle
    from oracleboost.oracles.cache import CachedOracle

    if isinstance(oracle, CachedOracle):
        return oracle
    return CachedOracle(oracle, memory)


@dataclass(frozen=True)
class Curves:
    """Series of one reproduced figure.

    Attributes
    ----------
    title, xlabel, ylabel : str
    x : ndarray of shape (n,)
        The shared x axis (e.g. rounds ``1, …, T``).
    series : dict of str to ndarray of shape (n,)
        One curve per entry, drawn in insertion order; the key is its legend label.
    reference : dict of str to float
        Horizontal reference lines (e.g. ``"γ = 3/8 (LP)"``), drawn dashed.
    notes : str
        What the run did and what it found; printed under the table.
    xscale, yscale : {"linear", "log"}
        Axis scales of the plot.
    ylim : (float, float) or None
        y range of the plot (default: matplotlib's).
    aux : dict of str to ndarray of shape (n,)
        Further per-x arrays kept for inspection (e.g. the weights λ_t); not drawn.
    runtime : float
        Seconds the experiment took.
    mathtext : dict of str to str
        Mathtext for the figure: a plain-text label (the x or y label, a series name, a
        reference name) mapped to how the figure sets it, e.g. ``{"shrinkage ν":
        r"shrinkage $\nu$"}``.  Labels not in it are drawn as they are.  The CSV, the
        tables and the summary keep the plain text.
    """

    title: str
    xlabel: str
    ylabel: str
    x: np.ndarray
    series: dict[str, np.ndarray]
    reference: dict[str, float] = field(default_factory=dict)
    notes: str = ""
    xscale: str = "linear"
    yscale: str = "linear"
    ylim: tuple[float, float] | None = None
    aux: dict[str, np.ndarray] = field(default_factory=dict)
    runtime: float = math.nan
    mathtext: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.x)
        for name, values in {**self.series, **self.aux}.items():
            if len(values) != n:
                raise ValueError(f"series {name!r} has {len(values)} points; x has {n}")
        labels = {self.xlabel, self.ylabel, *self.series, *self.reference}
        unknown = sorted(set(self.mathtext) - labels)
        if unknown:
            raise ValueError(f"mathtext names labels this figure does not have: {unknown}")

    def label(self, text: str) -> str:
        """How the figure sets the plain-text label ``text`` (:attr:`mathtext`, else as is)."""
        return self.mathtext.get(text, text)

    # -- drawing -------------------------------------------------------------------------
    @overload
    def plot(self, ax: None = None, *, title: bool = False) -> Figure: ...

    @overload
    def plot(self, ax: Axes, *, title: bool = False) -> Figure | SubFigure: ...

    def plot(self, ax: Axes | None = None, *, title: bool = False) -> Figure | SubFigure:
        """Draw the curves and reference lines; return the matplotlib ``Figure``.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Draw into it; by default a new ``matplotlib.figure.Figure`` (no pyplot).
        title : bool, default=False
            Put :attr:`title` above the axes.  Off by default: a figure for a paper
            carries its title as a caption (``summary.md`` does).
        """
        if ax is None:
            from matplotlib.figure import Figure

            fig: Figure | SubFigure = Figure(figsize=(7.0, 4.5), layout="constrained")
            ax = fig.add_subplot()
        else:
            fig = ax.figure
        x = np.asarray(self.x, dtype=float)
        # "A (train)" and "A (test)" are one algorithm: one colour, training dashed.
        colours: dict[str, str] = {}
        cycle = [f"C{k}" for k in range(10)]
        for name, values in self.series.items():
            y = np.asarray(values, dtype=float)
            if self.yscale == "log":
                y = np.where(y > 0, y, np.nan)  # log axes cannot show y ≤ 0 (the caption says)
            stem = name.removesuffix(" (train)").removesuffix(" (test)")
            colour = colours.setdefault(stem, cycle[len(colours) % len(cycle)])
            ax.plot(x, y, label=self.label(name), linewidth=1.4,
                    marker="o" if len(x) <= 50 else None, markersize=3, color=colour,
                    linestyle="--" if name.endswith(" (train)") else "-")
        for k, (name, value) in enumerate(self.reference.items()):
            ax.axhline(value, color=f"{0.25 + 0.2 * (k % 3):.2f}", linestyle="--",
                       linewidth=1.0, label=self.label(name))
        ax.set_xscale(self.xscale)
        ax.set_yscale(self.yscale)
        if self.ylim is not None:
            ax.set_ylim(*self.ylim)
        ax.set_xlabel(self.label(self.xlabel))
        ax.set_ylabel(self.label(self.ylabel))
        if title:
            ax.set_title(self.title, fontsize=9, wrap=True)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
        return fig

    def save(self, path: str | os.PathLike, dpi: int = 120) -> str:
        """Save :meth:`plot` to ``path`` (format from its suffix: png, pdf, svg, …); return it.

        Written under a temporary name and renamed into place; PDF and SVG files carry no
        creation date, so the same curves give the same bytes.
        """
        return save_figure(self.plot(), path, dpi=dpi)

    def hidden_points(self) -> list[str]:
        """What the figure cannot show, one sentence per curve: points outside
        :attr:`ylim`, and points ≤ 0 on a log y axis (NaN values are not counted)."""
        notes = []
        low, high = self.ylim if self.ylim is not None else (-math.inf, math.inf)
        for name, values in self.series.items():
            y = np.asarray(values, dtype=float)
            finite = y[~np.isnan(y)]
            clauses = []
            if self.yscale == "log" and np.any(finite <= 0):
                clauses.append(f"{int(np.sum(finite <= 0))} are ≤ 0, which a log axis "
                               "cannot show")
                finite = finite[finite > 0]
            span = f"[{low:g}, {high:g}]"
            below, above = finite[finite < low], finite[finite > high]
            if below.size:
                clauses.append(f"{below.size} lie below the y range {span} (the lowest is "
                               f"{below.min():.4g})")
            if above.size:
                clauses.append(f"{above.size} lie above it (the highest is {above.max():.4g})"
                               if below.size else f"{above.size} lie above the y range "
                               f"{span} (the highest is {above.max():.4g})")
            if clauses:
                notes.append(f"of the {len(y)} points of `{name}`, {' and '.join(clauses)}")
        return notes

    # -- numbers -----------------------------------------------------------------------------
    def to_csv(self, path: str | os.PathLike, which: str = "series") -> str:
        """Write the numbers behind the figure as CSV (UTF-8, comma-separated); return ``path``.

        The first column is ``x``, headed by :attr:`xlabel`; then one column per entry of
        :attr:`series` (``which="series"``, the drawn curves) or of :attr:`aux`
        (``which="aux"``, the further per-x arrays), headed by its key, in insertion
        order.  Floats are written with ``repr`` (the shortest text that reads back to
        the same float, so the file round-trips exactly; ``nan`` and ``inf`` as such),
        integers as integers.  The reference lines are scalars and are not written here
        (see :func:`write_summary`).

        Parameters
        ----------
        path : str or path-like
        which : {"series", "aux"}, default="series"
        """
        if which not in ("series", "aux"):
            raise ValueError(f"which must be 'series' or 'aux', got {which!r}")
        columns = self.series if which == "series" else self.aux
        header = [self.xlabel or "x", *columns]
        values = [_csv_cells(self.x)] + [_csv_cells(v) for v in columns.values()]
        path = os.fspath(path)
        with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            writer.writerows(zip(*values, strict=True))
        return path

    # -- text ------------------------------------------------------------------------------
    def rows(self) -> np.ndarray:
        """Indices shown by :meth:`to_text`.

        Every point when there are at most 25; otherwise x values ``1, 2, 5, 10, 20, 50, …``
        (a log axis) or about 12 evenly spaced points, and always the last one.
        """
        n = len(self.x)
        if n <= 25:
            return np.arange(n)
        x = np.asarray(self.x, dtype=float)
        if self.xscale == "log":
            marks = [d * 10.0**e for e in range(int(math.log10(max(x[-1], 1.0))) + 1)
                     for d in (1, 2, 5)]
            idx = [int(np.searchsorted(x, v)) for v in marks if x[0] <= v <= x[-1]]
        else:
            idx = list(np.linspace(0, n - 1, 12).round().astype(int))
        return np.unique(np.concatenate([np.asarray(idx, dtype=int), [n - 1]]))

    def to_text(self, rows: Sequence[int] | None = None, digits: int = 5) -> str:
        """A compact table of the series at selected points, then references and notes.

        Parameters
        ----------
        rows : sequence of int, optional
            Indices into ``x`` (default :meth:`rows`).
        digits : int, default=5
            Significant digits of the values.
        """
        idx = self.rows() if rows is None else np.asarray(rows, dtype=int)
        names = list(self.series)
        width = max([12, digits + 7] + [len(n) for n in names])
        xw = max(8, len(self.xlabel))
        lines = [self.title, f"{self.xlabel:>{xw}} " + " ".join(f"{n:>{width}}" for n in names)]
        for i in idx:
            xv = self.x[i]
            xs = f"{int(xv):d}" if float(xv).is_integer() else f"{float(xv):.6g}"
            vals = " ".join(f"{float(self.series[n][i]) + 0.0:>{width}.{digits}g}" for n in names)
            lines.append(f"{xs:>{xw}} {vals}")
        for name, value in self.reference.items():
            lines.append(f"reference {name}: {value:.{digits}g}")
        lines.extend(self._extra_lines())
        if not math.isnan(self.runtime):
            lines.append(f"runtime: {self.runtime:.1f}s")
        if self.notes:
            lines.append(self.notes)
        return "\n".join(lines)

    def _extra_lines(self) -> list[str]:
        return []


@dataclass(frozen=True)
class ThresholdCurves(Curves):
    """:class:`Curves` of a final quantity against a parameter, with an estimated switch.

    Attributes
    ----------
    switch : float
        Midpoint between ``last_high`` and ``first_low`` (NaN when either is missing).
    last_high : float
        The largest parameter whose run reached the upper limit.
    first_low : float
        The smallest parameter above ``last_high`` (every run above it stayed at the
        lower limit).
    exceptions : tuple of float
        Parameters below the switch whose runs nevertheless stayed at the lower limit.
    """

    switch: float = math.nan
    last_high: float = math.nan
    first_low: float = math.nan
    exceptions: tuple[float, ...] = ()

    @overload
    def plot(self, ax: None = None, *, title: bool = False) -> Figure: ...

    @overload
    def plot(self, ax: Axes, *, title: bool = False) -> Figure | SubFigure: ...

    def plot(self, ax: Axes | None = None, *, title: bool = False) -> Figure | SubFigure:
        fig = super().plot(ax, title=title)
        if not math.isnan(self.switch):
            axes = fig.axes[0] if ax is None else ax
            axes.axvline(self.switch, color="tab:red", linestyle=":", linewidth=1.2,
                         label=rf"switch $\approx$ {self.switch:.4g}")
            axes.legend(fontsize=8)
        return fig

    def _extra_lines(self) -> list[str]:
        lines = [f"switch ≈ {self.switch:.6g} (last upper-limit run at {self.last_high:.6g}, "
                 f"then lower limit from {self.first_low:.6g})"]
        if self.exceptions:
            lines.append("below the switch but at the lower limit: "
                         + ", ".join(f"{v:.6g}" for v in self.exceptions))
        return lines


# -- files of one run ------------------------------------------------------------------------

#: The figure formats ``oracleboost reproduce --format`` accepts.
FIGURE_FORMATS = ("png", "pdf", "svg")


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = 120) -> str:
    """Save a matplotlib figure to ``path`` (format from the suffix), atomically; return it.

    PDF and SVG get no creation date in their metadata and SVG ids a fixed salt, so that a
    re-run with the same numbers writes the same bytes.
    """
    import matplotlib

    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lstrip(".").lower() or "png"
    metadata = {"Date": None} if fmt in ("svg",) else (
        {"CreationDate": None} if fmt == "pdf" else None)
    # SVG element ids are hashes salted with a random value unless a salt is set
    with matplotlib.rc_context({"svg.hashsalt": "oracleboost"}), atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format=fmt, metadata=metadata)
    return path



def _csv_cells(values) -> list[str]:
    """CSV text of a 1-D array: integers as integers, floats by ``repr`` (exact round-trip)."""
    arr = np.asarray(values)
    if arr.dtype == bool:
        arr = arr.astype(int)
    if np.issubdtype(arr.dtype, np.integer):
        return [str(v) for v in arr.tolist()]
    return [repr(float(v)) for v in arr.tolist()]


def _number(value: float) -> str:
    """A value for a Markdown summary: 6 significant digits, integers without a point."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return f"{int(value):d}"
    return f"{value:.6g}"




def summary_markdown(
    name: str,
    curves: Curves,
    claim: str = "",
    settings: Mapping[str, object] | None = None,
    files: Sequence[str] = (),
) -> str:
    """The Markdown summary of one reproduction run (what :func:`write_summary` writes).

    First the figure (the first ``.png`` or ``.svg`` among ``files``) with its caption:
    the curves' :attr:`~Curves.title`, and what the axes do not show
    (:meth:`Curves.hidden_points`).  Sections: the paper's claim (``claim``; a
    placeholder when empty), the measured
    result (the curves' :attr:`~Curves.notes`, in a text block when they are laid out in
    lines; the last value of every curve, and the last finite one when some curve ends in
    NaN; the reference lines; for :class:`ThresholdCurves`, the estimated switch), the
    files written next to it (``files``, linked relatively) and the run's settings
    (``settings``, one bullet per key, in order).

    Parameters
    ----------
    name : str
        The experiment's registry name (the heading).
    curves : Curves
        The run's result.
    claim : str, optional
        The paper's claim, one paragraph.
    settings : mapping of str to object, optional
        E.g. mode, seed, version, date, seconds, command.
    files : sequence of str, optional
        File names relative to the summary.
    """
    lines = [f"# {name}", ""]
    shown = [f for f in files if f.endswith((".png", ".svg"))][:1]
    lines += [f"![{name}]({f})" for f in shown] + ([""] if shown else [])
    title = " ".join(curves.title.split())
    caption = f"*Figure.* {title}" + ("" if title.endswith((".", "!", "?")) else ".")
    hidden = curves.hidden_points()
    if hidden:
        caption += (" Not drawn, but in the CSV: " + "; ".join(hidden) + ".")
    lines += [caption, ""]
    lines += ["## The paper's claim", "",
              " ".join(claim.split()) if claim.strip()
              else "(No claim recorded for this experiment in oracleboost/experiments/claims.py.)",
              ""]
    lines += ["## Measured", ""]
    notes = curves.notes.strip()
    if "\n" in notes:  # laid out in lines (e.g. a table): keep the layout
        lines += ["```text", notes, "```", ""]
    elif notes:
        lines += [notes, ""]
    x = np.asarray(curves.x)
    if len(x):
        xlabel = curves.xlabel or "x"
        ys = {key: np.asarray(values, dtype=float) for key, values in curves.series.items()}
        gaps = any(not np.isfinite(y[-1]) for y in ys.values())
        rows = []
        for key, y in ys.items():
            row = [f"`{cell(key)}`", _number(y[-1])]
            if gaps:
                finite = np.flatnonzero(np.isfinite(y))
                i = finite[-1] if finite.size else None
                row.append("none" if i is None else f"{_number(y[i])} at {xlabel} = "
                           f"{_number(x[i])}")
            rows.append(row)
        header = ["curve", "last value"] + (["last finite value"] if gaps else [])
        lines += [f"Last value of each curve (at {xlabel} = {_number(x[-1])}):", "",
                  *md_table(header, rows), ""]
    if curves.reference:
        lines += ["Reference lines (dashed in the figure):", ""]
        lines += [f"- {key}: {float(value):.12g}" for key, value in curves.reference.items()]
        lines.append("")
    extra = curves._extra_lines()
    if extra:
        lines += [f"- {line}" for line in extra] + [""]
    if files:
        lines += ["## Files", ""]
        lines += [f"- [{f}]({f})" for f in files]
        lines.append("")
    if settings:
        lines += ["## Settings", ""]
        lines += [f"- {key}: {value}" for key, value in settings.items()]
        lines.append("")
    return "\n".join(lines)


def write_summary(
    path: str | os.PathLike,
    name: str,
    curves: Curves,
    claim: str = "",
    settings: Mapping[str, object] | None = None,
    files: Sequence[str] = (),
) -> str:
    """Write :func:`summary_markdown` to ``path`` (UTF-8, atomically); return ``path``."""
    path = os.fspath(path)
    text = summary_markdown(name, curves, claim, settings, files)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path
