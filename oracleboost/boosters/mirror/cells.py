"""MABoost's multiclass round over the N × (K − 1) cells (row, wrong class), by row blocks.

The ``maboost`` package's multiclass construction (:mod:`.estimator`): one distribution W
over the cells, the weak learner shown the row sums of W, and the mirror step and the
projection made over all the cells at once.  The cells are kept flat, row by row (row
i's K − 1 cells in class order), where their rows are: in memory, or on a Dask cluster
on the worker that holds the row's partition.  Stages over the rows (:func:`row_masses`,
:func:`directions`, :func:`vote`) read a partition's cells as its rows × (K − 1); the
mirror step, the projection and the weights' extremes run over the cells' own blocks
(:func:`cell_blocks`), whose lanes start at every partition's first cell, so that every
sum is made by the same lanes in memory, on any number of threads and on a cluster.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from oracleboost.boosters.mirror.maps import MirrorMap
from oracleboost.optim.margin_passes import row_lane_sums
from oracleboost.optim.row_passes import lane_parts
from oracleboost.optim.votes import one_hot, predicted_index, vote_margins
from oracleboost.rows.blocks import (
    BLOCKS_PER_PARTITION,
    LANE_ROWS,
    RowBlocks,
    ordered_sum,
    outputs_only,
)
from oracleboost.rows.partitioned import Partitioned, Rows, shaped_like, with_ndim

if TYPE_CHECKING:
    from oracleboost.boosters.mirror.updates import DualUpdate

__all__ = ["cell_blocks", "cell_caps", "start", "row_masses", "query", "directions",
           "step_target", "vote", "extremes"]


def cell_blocks(blocks: RowBlocks, width: int) -> RowBlocks:
    """The blocks of the ``width`` cells a row of ``blocks``: lanes of ``gcd(cells of a
    partition, LANE_ROWS)`` cells, which divide every partition's first cell."""
    lane = math.gcd(BLOCKS_PER_PARTITION * blocks.block_size * width, LANE_ROWS)
    return blocks.cells(width, lane)


@outputs_only(1)
def _start(blocks: RowBlocks, s, *, total: float, width: int) -> tuple[tuple, None]:
    w = np.ones(blocks.n) if s is None else s
    return (np.repeat(w / total / width, width),), None


def _as_cells(out: Rows, width: int) -> Rows:
    """A row stage's output of ``width`` cells a row, seen as the cells' array (on a
    cluster: a partition's cells, counted as such)."""
    if isinstance(out, Partitioned):
        return dataclasses.replace(out, sizes=tuple(m * width for m in out.sizes))
    return out


def start(blocks: RowBlocks, s: Rows | None, total: float, width: int) -> Rows:
    """The starting distribution: each row's weight ``s_i / Σ s`` shared by its cells
    (``s`` None: equal weights)."""
    return _as_cells(blocks.map(_start, s, total=total, width=width)[0][0], width)


@outputs_only(1)
def _cell_caps(blocks: RowBlocks, group, *, cap: float, width: int) -> tuple[tuple, None]:
    return (np.repeat(np.where(group, cap, np.inf), width),), None


def cell_caps(blocks: RowBlocks, group: Rows, cap: float, width: int) -> Rows:
    """Each cell's cap: ``cap`` on the secondary rows (``group`` True), none elsewhere."""
    return _as_cells(blocks.map(_cell_caps, group, cap=cap, width=width)[0][0], width)


def _row_masses(blocks: RowBlocks, w, *, width: int) -> tuple[tuple, np.ndarray]:
    q = w.reshape(blocks.n, width).sum(axis=1)
    out = np.zeros(blocks.n_lanes)
    blocks.lane_map(lambda q0, q1, lo, hi: row_lane_sums(q, lo, hi, blocks.lane, out[q0:q1]))
    return (q,), out


def row_masses(blocks: RowBlocks, w: Rows, width: int) -> tuple[Rows, float]:
    """Each row's mass ``q_i = Σ_k W_ik`` and ``Σ q`` (by lanes)."""
    (q,), parts = blocks.map(_row_masses, w, width=width)
    return q, float(ordered_sum(lane_parts(parts)))


@outputs_only(1)
def _query(blocks: RowBlocks, q, a, *, total: float, K: int) -> tuple[tuple, None]:
    return ((q / total)[:, None] * one_hot(a, K),), None


def query(blocks: RowBlocks, q: Rows, a: Rows, total: float, K: int) -> Rows:
    """The weak learner's query ``r = (q / Σ q) e_a``: maximise ``Σ q_i [h(x_i) = a_i]``."""
    return with_ndim(blocks.map(_query, q, a, total=total, K=K)[0][0], 2, K)


def _directions(blocks: RowBlocks, out, a, w, *, width: int) -> tuple[tuple, np.ndarray]:
    pred = np.argmax(out, axis=1)
    right = pred == a
    D = np.zeros((blocks.n, width))
    D[right] = -1.0
    wrong = np.nonzero(~right)[0]
    D[wrong, pred[wrong] - (pred[wrong] > a[wrong])] = 1.0  # the wrong class' column
    edge = -(w.reshape(blocks.n, width) * D).sum(axis=1)
    parts = np.zeros((blocks.n_lanes, 2))
    blocks.lane_map(lambda q0, q1, lo, hi: row_lane_sums(edge, lo, hi, blocks.lane,
                                                      parts[q0:q1, 0]))
    parts[0, 1] = np.count_nonzero(~right)
    return (D.reshape(-1), pred), parts


def directions(blocks: RowBlocks, out: Rows, a: Rows, w: Rows,
               width: int) -> tuple[Rows, Rows, float, int]:
    """From the hypothesis' outputs: each cell's direction D (−1 on every cell of a row
    it votes right, +1 on the cell of the class it votes wrongly), each row's vote,
    the edge ``e = −Σ W ∘ D`` (each row's cells in order, by lanes) and the rows voted
    wrong."""
    (D, pred), parts = blocks.map(_directions, out, a, w, width=width)
    p = lane_parts(parts)
    return _as_cells(D, width), pred, float(ordered_sum(p[:, 0])), int(p[:, 1].sum())


@outputs_only(2)
def _step_target(blocks: RowBlocks, w, z, D, *, eta: float, update: DualUpdate,
                 mirror: MirrorMap) -> tuple[tuple, None]:
    point = np.empty(blocks.n)
    dual = update.dual_rows(point, blocks.n)
    update.point(point, dual, eta * D, z, w, mirror, None, 0.0)
    return (point, dual), None


def step_target(blocks: RowBlocks, mirror: MirrorMap, w: Rows, z: Rows | None, D: Rows,
                eta: float, update: DualUpdate) -> tuple[Rows, Rows | None]:
    """Algorithm 1 (c) over the cells, by ``update`` (:mod:`.updates`):
    ``∇R(z') = ∇R(z or w) + η D``, the point to project, and the lazy update's new dual
    average (None for the active one)."""
    (target, z_next), _ = blocks.map(_step_target, w, z, D, eta=eta, update=update,
                                     mirror=mirror)
    return target, (z_next if update.keeps_dual else None)


def _vote(blocks: RowBlocks, f, pred, a, s, *, eta: float) -> tuple[tuple, np.ndarray]:
    K = f.shape[1]
    f = f + eta * one_hot(pred, K)
    margins = vote_margins(a, f)
    w = np.ones(blocks.n) if s is None else s
    lane = blocks.lane
    parts = np.zeros((blocks.n_lanes, 3))
    bad, wrong = np.where(margins <= 0, w, 0.0), np.where(predicted_index(f) != a, w, 0.0)

    def run(q0: int, q1: int, lo: int, hi: int) -> None:
        row_lane_sums(bad, lo, hi, lane, parts[q0:q1, 0])
        row_lane_sums(wrong, lo, hi, lane, parts[q0:q1, 1])
        for q in range(q0, q1):
            parts[q, 2] = margins[q * lane:min((q + 1) * lane, blocks.n)].min()

    blocks.lane_map(run)
    return (f,), parts


def vote(blocks: RowBlocks, f: Rows, pred: Rows, a: Rows, s: Rows | None,
         eta: float) -> tuple[Rows, float, float, float]:
    """The running vote ``f + η e_pred`` and its record: the mass of rows whose vote
    margin ``f_a − max_{k≠a} f_k`` is ≤ 0, the mass ``predict`` gets wrong (ties to
    the lowest class) and the smallest margin."""
    (f_next,), parts = blocks.map(_vote, f, pred, a, s, eta=eta)
    p = lane_parts(parts)
    bad, wrong = ordered_sum(p[:, :2])
    return shaped_like(f_next, f), float(bad), float(wrong), float(p[:, 2].min())


def _extremes(blocks: RowBlocks, w) -> tuple[tuple, tuple[float, int]]:
    return (), (float(w.max(initial=-math.inf)), int(np.count_nonzero(w == 0.0)))


def extremes(blocks: RowBlocks, w: Rows) -> tuple[float, int]:
    """``max W`` and the number of cells at exactly 0 (exact in any order)."""
    stats = blocks.map(_extremes, w)[1]
    return max(t for t, _ in stats), sum(z for _, z in stats)
