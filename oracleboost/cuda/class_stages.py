"""The device twins of the multiclass passes: scores of one column a class, and MABoost's
cells.

A multiclass fit of :class:`~oracleboost.boosters.FunctionalGradientClassifier` (the
softmax cross-entropy, or the multiclass hinge) keeps ``f``, the descent and the
answers as ``(n, K)`` device arrays, and its labels as class indices.  Its passes are
the binary ones (:mod:`oracleboost.optim.row_passes`) on those arrays; each twin of
:mod:`.stages` hands a two-dimensional array to the function of the same name here.
A row's value is the CPU's (:mod:`.class_kernels`), a sum over rows is exact on its
terms rounded to fixed point (:class:`~oracleboost.cuda.reductions.Reductions`), so the
records equal the CPU's to the rounding of the sums and the bits do not depend on the
launch.

MABoost's multiclass round (:mod:`oracleboost.boosters.mirror.cells`) keeps one weight
a cell, N rows of K − 1 cells flat in row order; the rows' passes read them as rows
here, and the mirror step and the projection run over the cells' own blocks
(:meth:`~oracleboost.cuda.blocks.DeviceBlocks.cells`: the N(K − 1) cells as rows, by
the binary twins of :mod:`.projection_stages`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from oracleboost import losses
from oracleboost.cuda.class_kernels import CLASS_LOSS_CODES, class_kernels
from oracleboost.cuda.device import cuda_module
from oracleboost.cuda.projection_stages import update_code
from oracleboost.cuda.row_kernels import ACTIVE_EUCLIDEAN, MAX_CHANNELS, MIRROR_UPDATES
from oracleboost.rows.partitioned import NotDistributedError

if TYPE_CHECKING:
    from oracleboost.cuda.blocks import DeviceBlocks

__all__ = ["CELL_TWINS", "class_loss_code", "combined", "descent", "index_masses",
           "ldexp", "peak_inners", "scaled", "vote_error_and_margin", "weighted_inner",
           "weighted_loss", "weighted_residual"]


def class_loss_code(loss: Any) -> int:
    """The kernels' code of a multiclass loss (:data:`CLASS_LOSS_CODES`): the library's
    classes only (a subclass may change the formulas), any other refused by name."""
    if type(loss) is losses.SoftmaxCrossEntropy:
        return CLASS_LOSS_CODES["softmax"]
    if type(loss) is losses.MulticlassHinge:
        return CLASS_LOSS_CODES[f"multiclass_hinge/{loss.tie}"]
    name = getattr(loss, "name", type(loss).__name__)
    raise NotDistributedError(
        f"loss={name!r} does not run on the GPU with several classes: it has no device "
        "kernel (the GPU runs 'softmax' and 'multiclass_hinge' there); fit on the CPU")


def _flat(a: Any) -> Any:
    """An ``(n, K)`` device array as its ``n·K`` cells (a view: C order)."""
    return a.reshape(a.shape[0] * a.shape[1])


def index_masses(blocks: DeviceBlocks, y: Any, s: Any, *, K: int
                 ) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ s [y = k] for k < K)``: the classes' masses, up to
    ``MAX_CHANNELS`` classes a reduction."""
    kernels, out = class_kernels(), np.empty((1, K))
    for c0 in range(0, K, MAX_CHANNELS):
        terms = blocks.empty((min(MAX_CHANNELS, K - c0), blocks.n))
        kernels.index_terms[blocks.grid](y, blocks.optional(s), c0, terms)
        out[0, c0:c0 + terms.shape[0]] = blocks.reduce.sums(terms)
    return (), out


def descent(blocks: DeviceBlocks, y: Any, f: Any, *, loss: Any) -> tuple[tuple, None]:
    """``−∇l(y, f)``, a row of K a class."""
    out = blocks.empty(f.shape)
    class_kernels().descent[blocks.grid](class_loss_code(loss), y, f, out)
    return (out,), None


def weighted_loss(blocks: DeviceBlocks, y: Any, raw: Any, s: Any, *,
                  loss: Any) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ s l(y, raw),)``."""
    terms = blocks.empty()
    class_kernels().loss_terms[blocks.grid](class_loss_code(loss), y, raw,
                                            blocks.optional(s), terms)
    return (), blocks.reduce.sums(terms).reshape(1, 1)


def vote_error_and_margin(blocks: DeviceBlocks, y: Any, f: Any, s: Any
                          ) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ s [argmax f ≠ y], min (f_y − max_{k≠y} f_k))``."""
    terms = blocks.empty((2, blocks.n))
    class_kernels().vote_terms[blocks.grid](y, f, blocks.optional(s), terms)
    got = blocks.reduce.tally(terms, (0,))
    return (), np.array([[got.sums[0], got.low[1]]])


def _products(blocks: DeviceBlocks, a: Any, s: Any, bs: tuple) -> Any:
    """``Σ s Σ_k a b`` for each of ``bs`` (one or two) and ``max |a|``, one kernel and
    one reduction."""
    if not 1 <= len(bs) <= 2 or any(getattr(b, "shape", None) != a.shape for b in bs):
        raise NotDistributedError("inner products of more than two arrays, or of arrays of "
                                  "other shapes, do not run on the GPU; fit on the CPU")
    terms = blocks.empty((len(bs) + 1, blocks.n))
    class_kernels().products[blocks.grid](a, bs[0], bs[-1], len(bs), blocks.optional(s),
                                          terms)
    return blocks.reduce.tally(terms, tuple(range(len(bs))))


def peak_inners(blocks: DeviceBlocks, a: Any, s: Any, *bs: Any) -> tuple[tuple, np.ndarray]:
    """The stat ``(max |a|, Σ s Σ_k a b for b in bs)``."""
    got = _products(blocks, a, s, bs)
    return (), np.array([[got.peak[len(bs)], *got.sums[:len(bs)]]])


def weighted_inner(blocks: DeviceBlocks, a: Any, b: Any, s: Any) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ s Σ_k a b,)``."""
    return (), _products(blocks, a, s, (b,)).sums[:1].reshape(1, 1)


def weighted_residual(blocks: DeviceBlocks, t: Any, a: Any, s: Any, *,
                      coef: float) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ s Σ_k (t − coef a)²,)``."""
    terms = blocks.empty()
    class_kernels().residual_terms[blocks.grid](t, a, float(coef), blocks.optional(s),
                                                terms)
    return (), blocks.reduce.sums(terms).reshape(1, 1)


def combined(blocks: DeviceBlocks, a: Any, bs: tuple, coefs: tuple) -> tuple[tuple, None]:
    """``a + Σ_k c_k b_k`` on the cells, each term added in turn (the binary kernel on
    the flat view: an elementwise pass)."""
    if any(getattr(b, "shape", None) != a.shape for b in bs):
        raise NotDistributedError("a sum of arrays of other shapes does not run on the "
                                  "GPU; fit on the CPU")
    out = blocks.empty(a.shape)
    flat, source = _flat(out), _flat(a)
    terms = [(float(c), _flat(b)) for c, b in zip(coefs, bs, strict=True)]
    if not terms:
        blocks.kernels.scaled[blocks.grid](source, 1.0, flat)  # (a copy)
    for k in range(0, len(terms), 2):
        (c0, b0), (c1, b1) = (*terms[k:k + 2], (0.0, blocks.nothing))[:2]
        blocks.kernels.combined[blocks.grid](source, b0, c0, b1, c1,
                                             min(2, len(terms) - k), flat)
        source = flat
    return (out,), None


def scaled(blocks: DeviceBlocks, a: Any, s: Any) -> tuple[tuple, None]:
    """``s_i · a_ik`` (``s`` one weight a row)."""
    if s.ndim != 1:
        raise NotDistributedError("weights of one column a class do not run on the GPU; "
                                  "fit on the CPU")
    out = blocks.empty(a.shape)
    class_kernels().scaled_rows[blocks.grid](s, a, out)
    return (out,), None


def ldexp(blocks: DeviceBlocks, a: Any, *, e: int) -> tuple[tuple, None]:
    """``a · 2^e`` on the cells (exact)."""
    out = blocks.empty(a.shape)
    blocks.kernels.ldexps[blocks.grid](_flat(a), int(e), _flat(out))
    return (out,), None


# -- MABoost's multiclass cells: boosters.mirror.cells ----------------------------------
def _cell_start(blocks: DeviceBlocks, s: Any, *, total: float,
                width: int) -> tuple[tuple, None]:
    """The starting distribution over the cells: ``(s_i / Σ s) / width`` each."""
    out = blocks.empty(blocks.n * width)
    class_kernels().cell_start[blocks.grid](blocks.optional(s), float(total), int(width),
                                            out)
    return (out,), None


def _cell_caps(blocks: DeviceBlocks, group: Any, *, cap: float,
               width: int) -> tuple[tuple, None]:
    """Each cell's cap: ``cap`` on the secondary rows' cells, none elsewhere."""
    out = blocks.empty(blocks.n * width)
    class_kernels().cell_caps[blocks.grid](group, float(cap), int(width), out)
    return (out,), None


def _row_masses(blocks: DeviceBlocks, w: Any, *, width: int) -> tuple[tuple, np.ndarray]:
    """Each row's mass ``q_i = Σ_k W_ik`` and the stat ``(Σ q,)``."""
    q = blocks.empty()
    class_kernels().row_masses[blocks.grid](w, int(width), q)
    return (q,), blocks.reduce.sums(q).reshape(1)


def _cell_query(blocks: DeviceBlocks, q: Any, a: Any, *, total: float,
                K: int) -> tuple[tuple, None]:
    """The weak learner's query ``(q / Σ q) e_a``, shape (n, K)."""
    out = blocks.empty((blocks.n, K))
    class_kernels().cell_query[blocks.grid](q, a, float(total), out)
    return (out,), None


def _directions(blocks: DeviceBlocks, out: Any, a: Any, w: Any, *,
                width: int) -> tuple[tuple, np.ndarray]:
    """Each cell's direction, each row's vote and the stat ``(e, rows voted wrong)``."""
    if getattr(out, "ndim", 1) != 2 or out.shape[1] != width + 1:
        raise NotDistributedError("MABoost's multiclass round on the GPU takes a label-coded "
                                  "answer of (n, K) outputs; fit on the CPU")
    D = blocks.empty(blocks.n * width)
    pred = cuda_module().device_array(blocks.n, dtype=np.int64)
    terms = blocks.empty((2, blocks.n))
    class_kernels().directions[blocks.grid](out, a, w, D, pred, terms)
    return (D, pred), blocks.reduce.sums(terms).reshape(1, 2)


def _step_target(blocks: DeviceBlocks, w: Any, z: Any, D: Any, *, eta: float, update: Any,
                 mirror: Any) -> tuple[tuple, None]:
    """Algorithm 1 (c) over the cells: the point ``z + η D`` (lazy; the dual average is
    the point) or ``∇R(w) + η D`` (active)."""
    kind = update_code(update, mirror)
    if kind not in (MIRROR_UPDATES["lazy"], MIRROR_UPDATES["active"], ACTIVE_EUCLIDEAN):
        raise NotDistributedError(f"the update {type(update).__name__} does not run on the "
                                  "GPU over multiclass cells; fit on the CPU")
    out = blocks.empty()
    class_kernels().cell_step[blocks.grid](kind, blocks.optional(w), blocks.optional(z), D,
                                           float(eta), out)
    return (out, out if update.keeps_dual else None), None


def _cell_vote(blocks: DeviceBlocks, f: Any, pred: Any, a: Any, s: Any, *,
               eta: float) -> tuple[tuple, np.ndarray]:
    """The vote ``f + η e_pred`` and the stat ``(Σ s [margin ≤ 0], Σ s [predict wrong],
    min margin)``."""
    f_next, terms = blocks.empty(f.shape), blocks.empty((3, blocks.n))
    class_kernels().cell_vote[blocks.grid](f, pred, a, blocks.optional(s), float(eta),
                                           f_next, terms)
    got = blocks.reduce.tally(terms, (0, 1))
    return (f_next,), np.array([[got.sums[0], got.sums[1], got.low[2]]])


def _extremes(blocks: DeviceBlocks, w: Any) -> tuple[tuple, tuple[float, int]]:
    """``(max W, the number of cells at exactly 0)``."""
    both = blocks.empty((2, blocks.n))
    blocks.kernels.scaled[blocks.grid](w, 1.0, both[0])  # (a copy: one reduction for both)
    class_kernels().zeros_of[blocks.grid](w, both[1])
    got = blocks.reduce.tally(both, (1,))
    return (), (float(got.high[0]), int(got.sums[1]))


_CELLS = "oracleboost.boosters.mirror.cells"

#: The twins of MABoost's multiclass cells' stages.
CELL_TWINS = {
    f"{_CELLS}._start": _cell_start,
    f"{_CELLS}._cell_caps": _cell_caps,
    f"{_CELLS}._row_masses": _row_masses,
    f"{_CELLS}._query": _cell_query,
    f"{_CELLS}._directions": _directions,
    f"{_CELLS}._step_target": _step_target,
    f"{_CELLS}._vote": _cell_vote,
    f"{_CELLS}._extremes": _extremes,
}
