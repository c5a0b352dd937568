"""The result every reproduction returns: named curves over one x axis.

A :class:`Curves` is what a figure of a paper shows: a few series against one x axis
(the boosting round, or the shrinkage ν), horizontal reference lines (a maximum margin,
a limit), a title and axis labels.  It draws itself with matplotlib (imported only when
drawing, through :class:`matplotlib.figure.Figure`, never pyplot, so no display and no
global backend are involved) and prints itself as a compact table.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Curves", "ThresholdCurves"]


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

    def __post_init__(self):
        n = len(self.x)
        for name, values in {**self.series, **self.aux}.items():
            if len(values) != n:
                raise ValueError(f"series {name!r} has {len(values)} points; x has {n}")

    # -- drawing -------------------------------------------------------------------------
    def plot(self, ax=None):
        """Draw the curves and reference lines; return the matplotlib ``Figure``.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Draw into it; by default a new ``matplotlib.figure.Figure`` (no pyplot).
        """
        if ax is None:
            from matplotlib.figure import Figure

            fig = Figure(figsize=(7.0, 4.5), layout="constrained")
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
                y = np.where(y > 0, y, np.nan)  # log axes cannot show y ≤ 0
            stem = name.removesuffix(" (train)").removesuffix(" (test)")
            colour = colours.setdefault(stem, cycle[len(colours) % len(cycle)])
            ax.plot(x, y, label=name, linewidth=1.4, marker="o" if len(x) <= 50 else None,
                    markersize=3, color=colour,
                    linestyle="--" if name.endswith(" (train)") else "-")
        for k, (name, value) in enumerate(self.reference.items()):
            ax.axhline(value, color=f"{0.25 + 0.2 * (k % 3):.2f}", linestyle="--",
                       linewidth=1.0, label=name)
        ax.set_xscale(self.xscale)
        ax.set_yscale(self.yscale)
        if self.ylim is not None:
            ax.set_ylim(*self.ylim)
        ax.set_xlabel(self.xlabel)
        ax.set_ylabel(self.ylabel)
        ax.set_title(self.title, fontsize=9, wrap=True)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
        return fig

    def save(self, path: str | os.PathLike, dpi: int = 120) -> str:
        """Save :meth:`plot` to ``path`` (format from its suffix, e.g. ``.png``); return it."""
        path = os.fspath(path)
        self.plot().savefig(path, dpi=dpi)
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

    def plot(self, ax=None):
        fig = super().plot(ax)
        if not math.isnan(self.switch):
            axes = fig.axes[0] if ax is None else ax
            axes.axvline(self.switch, color="tab:red", linestyle=":", linewidth=1.2,
                         label=f"switch ≈ {self.switch:.4g}")
            axes.legend(fontsize=8)
        return fig

    def _extra_lines(self) -> list[str]:
        lines = [f"switch ≈ {self.switch:.6g} (last upper-limit run at {self.last_high:.6g}, "
                 f"then lower limit from {self.first_low:.6g})"]
        if self.exceptions:
            lines.append("below the switch but at the lower limit: "
                         + ", ".join(f"{v:.6g}" for v in self.exceptions))
        return lines
