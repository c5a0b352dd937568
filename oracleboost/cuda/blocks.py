"""Row blocks on the GPU: a fit's per-row state kept on the device, its passes run there.

:class:`DeviceBlocks` is the :class:`~oracleboost.rows.blocks.RowBlocks` of a fit whose
rows are on one GPU.  A booster runs every pass of its round through ``blocks.map(stage,
*rows, **consts)``; here ``map`` runs the stage's device twin (:mod:`.stages`), whose
per-row outputs stay on the device (numba device arrays) and whose stat is a few
numbers made by exact reductions (:mod:`.reductions`): only those cross the bus.  So a
round moves the chosen hypothesis and a few scalars, and its bits do not depend on the
launch shape.  A stage without a twin is refused by name (:func:`.stages.twin_of`),
never run on a copy on the host.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from oracleboost.cuda.class_kernels import class_kernels
from oracleboost.cuda.device import cuda_module, upload
from oracleboost.cuda.reductions import Reductions
from oracleboost.cuda.row_kernels import row_kernels
from oracleboost.cuda.stages import twin_of
from oracleboost.cuda.stumps import Launch
from oracleboost.rows.blocks import ReadyStats, RowBlocks
from oracleboost.rows.partitioned import NotDistributedError

__all__ = ["DeviceBlocks"]


class DeviceBlocks(RowBlocks):
    """The rows of a fit on the GPU: ``n`` rows, the passes run by their device twins.

    Parameters
    ----------
    n : int
        Rows.
    grid : (int, int) or None
        The row kernels' ``(blocks, threads a block)``; None: those of
        :meth:`.stumps.Launch.default`.  The fit's bits do not depend on it.

    Notes
    -----
    ``block_size`` and ``n_jobs`` of the booster do not apply (the device's sums are
    exact: no order to fix); the blocks are one block of every row, as
    :class:`RowBlocks` reads them.
    """

    #: A pass may write over the per-row arrays of an earlier pass of its round.
    in_place = True
    #: The running state (margins, weights) lives on the device; a fitted booster keeps
    #: no copy of it (``warm_start`` is refused by the backend).
    keeps_state = False
    #: The per-row arrays are device arrays: the passes take them as they are.
    rows_elsewhere = True

    def __init__(self, n: int, grid: tuple[int, int] | None = None) -> None:
        super().__init__(n, max(1, int(n)), n_jobs=1)
        self.cuda = cuda_module()
        if grid is None:
            launch = Launch.default(self.n, 1, 2)
            grid = (launch.row_blocks, launch.threads)
        grid = tuple(grid)
        if len(grid) != 2 or not all(isinstance(g, int | np.integer) and not isinstance(
                g, bool) and g >= 1 for g in grid):
            raise ValueError(f"grid must be two positive ints (blocks, threads); got {grid!r}")
        self.grid = (int(grid[0]), int(grid[1]))
        self.kernels = row_kernels()
        self.reduce = Reductions(self.cuda, self.grid)
        #: a device array of length 0: the kernels' "none" for an optional per-row array
        self.nothing = self.cuda.device_array(0, dtype=np.float64)

    @property
    def lane(self) -> int:
        return max(1, self.n)

    def map(self, stage: Callable[..., tuple[tuple, Any]], *rows: Any,
            **consts: Any) -> tuple[tuple, Any]:
        """``stage``'s device twin on every row: ``(outputs, [stat])`` as
        :meth:`RowBlocks.map` gives them (a ``deferred_stat`` stage's list in a
        ``ReadyStats``); a stage without a twin is refused by name."""
        outputs, stat = twin_of(stage)(self, *rows, **consts)
        return outputs, ReadyStats([stat]) if getattr(stage, "stat_later", False) else [stat]

    def map_one(self, part: int, stage: Callable[..., tuple[tuple, Any]], *rows: Any,
                **consts: Any) -> Any:
        if part != 0:
            raise IndexError(f"partition {part} of 1")
        return self.map(stage, *rows, **consts)[1][0]

    def lane_map(self, fn: Callable) -> None:
        raise NotDistributedError("rows on the GPU are passed over by map(stage), by the "
                                  "stage's device twin")

    def cells(self, width: int, lane: int) -> RowBlocks:
        """The ``n × width`` cells as rows of their own (MABoost's multiclass weights: a
        row's cells consecutive), on the same launch; ``lane`` does not apply (the
        device's sums are exact)."""
        return DeviceBlocks(self.n * width, self.grid)

    def empty(self, shape: int | tuple[int, ...] | None = None) -> Any:
        """A new per-row device array (``shape`` defaults to ``(n,)``), undefined."""
        return self.cuda.device_array(self.n if shape is None else shape, dtype=np.float64)

    def full(self, value: float | np.ndarray) -> Any:
        """A per-row device array of ``value``: a number, or a row of shape (K,) (an
        ``(n, K)`` array: a score a class)."""
        if np.ndim(value) == 1:
            row = np.ascontiguousarray(value, dtype=np.float64)
            out = self.empty((self.n, row.shape[0]))
            class_kernels().fill_rows[self.grid](out, upload(row))
            return out
        if np.ndim(value):
            raise NotDistributedError("per-row arrays of more than one axis do not run on "
                                      "the GPU; fit on the CPU")
        out = self.empty()
        self.kernels.fill[self.grid](out, float(value))
        return out

    def optional(self, a: Any) -> Any:
        """``a``, or :attr:`nothing` for None or the CPU's empty marker (unit weights)."""
        if a is None or (isinstance(a, np.ndarray) and a.size == 0):
            return self.nothing
        return a
