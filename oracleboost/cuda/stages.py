"""The device twins of the boosters' stages: a table from a stage to its GPU version.

A booster's round is a chain of *stages* (``stage(blocks, *rows, **consts) -> (outputs,
stat)``, :mod:`oracleboost.optim.row_passes`), run by its blocks' ``map``.  On the GPU
(:class:`~oracleboost.cuda.blocks.DeviceBlocks`) each stage runs as its twin here: the
same arguments, outputs of the same meaning kept on the device (per-row arrays as numba
device arrays), and the same stat, made of exact reductions
(:class:`~oracleboost.cuda.reductions.Reductions`: fixed-point sums, exact extremes), as
one lane's partials (shape ``(1, width)``: the caller combines lanes in order, and one
lane is its own sum).  The caller reads the stat as it reads the CPU's, so the booster's
code does not know where its rows are.

:data:`TWINS` is keyed by the stage's qualified name (``module.function``).  A stage with
no twin is refused by name.  What each twin computes is its stage's docstring; where the twin's
numbers differ from the CPU's, it is by the fixed-point rounding of the sums' terms
(:mod:`.reductions`) and by the device's ``exp`` and ``log`` (an ulp at most).  The
twins of MABoost's projections are in :mod:`.projection_stages`, those of the weighted
quantile's passes in :mod:`.quantile`, the multiclass passes' in :mod:`.class_stages`,
and stochastic boosting's row draws in :mod:`.draws`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from oracleboost import losses
from oracleboost.cuda import class_stages
from oracleboost.cuda.device import fetch, upload
from oracleboost.cuda.draws import DRAW_TWINS
from oracleboost.cuda.projection_stages import PROJECTION_TWINS, _copy, map_name, update_code
from oracleboost.cuda.quantile import QUANTILE_TWINS
from oracleboost.cuda.row_kernels import (
    LOSS_CODES,
    REGRESSION_CODES,
)
from oracleboost.losses import Loss, MarginLoss
from oracleboost.rows.fixed_point import fixed_point_exponent, from_fixed
from oracleboost.rows.partitioned import NotDistributedError

if TYPE_CHECKING:
    from oracleboost.cuda.blocks import DeviceBlocks

__all__ = ["TWINS", "stage_name", "twin_of"]

_ROW_PASSES = "oracleboost.optim.row_passes"
_MIRROR = "oracleboost.boosters.mirror.passes"
_MARGIN = "oracleboost.optim.margin_passes"


def stage_name(stage: Callable) -> str:
    """A stage's key in :data:`TWINS`: ``module.qualname``."""
    return f"{getattr(stage, '__module__', '?')}.{getattr(stage, '__qualname__', stage)!s}"


def _code(loss: MarginLoss) -> int:
    """The kernels' code of ``loss``, refused by name unless it is one of theirs (a
    subclass may change the formulas: only the classes themselves)."""
    if type(loss) in (losses.Exponential, losses.Logistic):
        return LOSS_CODES[loss.name]
    name = getattr(loss, "name", type(loss).__name__)
    raise NotDistributedError(
        f"loss={name!r} does not run on the GPU: its logits have no device kernel (the GPU "
        f"runs the margin losses {sorted(LOSS_CODES)}); choose one of those, or fit on "
        "the CPU")


# -- the weights: row_passes.dual_weights, step_and_weights ------------------------------
def _logits(blocks: DeviceBlocks, margins: Any, log_s: Any, *,
            loss: MarginLoss) -> tuple[tuple, np.ndarray]:
    """Pass 1 of the weights: ``z = ln(−φ'(m)) + ln s`` and, unless ``φ = −φ'``,
    ``ln φ(m) + ln s``; the stat is their maxima (``−inf`` for the second when there is
    none).  The second output is None when ``φ = −φ'`` (the CPU's empty dict)."""
    code = _code(loss)
    separate = not loss.phi_is_neg_dphi
    both = blocks.empty((2 if separate else 1, blocks.n))  # one reduction for both
    z, lp = both[0], both[1] if separate else blocks.nothing
    blocks.kernels.logits[blocks.grid](code, margins, blocks.optional(log_s), separate, z, lp)
    tops = np.full((1, 2), -math.inf)
    tops[0, :both.shape[0]] = blocks.reduce.tally(both).high
    return (z, lp if separate else None), tops


def _exps(blocks: DeviceBlocks, zs: Any, log_phis: Any, *, top: float,
          top_phi: float) -> tuple[tuple, np.ndarray]:
    """Pass 2: ``e = exp(z − top)``, the stat ``(Σ e, Σ exp(ln φ − top_phi))`` (the
    second 0 without a separate ``ln φ`` or a finite ``top_phi``)."""
    phis = log_phis is not None and math.isfinite(top_phi)
    both = blocks.empty((2 if phis else 1, blocks.n))  # one reduction for both sums
    blocks.kernels.exps[blocks.grid](zs, top, both[0])
    if phis:
        blocks.kernels.exps[blocks.grid](log_phis, top_phi, both[1])
    sums = np.zeros((1, 2))
    sums[0, :both.shape[0]] = blocks.reduce.sums(both)
    return (both[0],), sums


def _normalise(blocks: DeviceBlocks, e: Any, zs: Any, y: Any, *, top: float,
               total: float) -> tuple[tuple, np.ndarray]:
    """Pass 3: the query ``(e · (1 / total)) · y`` and, with the logits ``zs``, the
    entropy's ``Σ e (z − top)`` (0 without)."""
    query = blocks.empty()
    blocks.kernels.normalised[blocks.grid](e, 1.0 / total, y, query)
    inner = np.zeros((1, 1))
    if zs is not None:
        inner[0, 0] = _entropy_sum(blocks, e, zs, top)
    return (query,), inner


def _entropy_sum(blocks: DeviceBlocks, e: Any, z: Any, top: float) -> float:
    terms = blocks.empty()
    blocks.kernels.entropy_terms[blocks.grid](e, z, top, terms)
    return float(blocks.reduce.sums(terms)[0])


def _rescaled(blocks: DeviceBlocks, q: Any, *, scale: float) -> tuple[tuple, None]:
    """``q · scale``."""
    out = blocks.empty()
    blocks.kernels.scaled[blocks.grid](q, scale, out)
    return (out,), None


def _step_margins(blocks: DeviceBlocks, m: Any, a: Any, y: Any, s: Any, *,
                  c: float) -> tuple[tuple, np.ndarray]:
    """The step ``m + y (c a)`` and the stat ``(min, Σ s [wrong])`` of the new margins."""
    out, wrong = blocks.empty(), blocks.empty()
    blocks.kernels.step[blocks.grid](m, a, y, c, blocks.optional(s), out, wrong,
                                     blocks.reduce.ext)
    got = blocks.reduce.settle(wrong, 2, (0,))
    return (out,), np.array([[got.low[1], got.sums[0]]])


def _step_exps(blocks: DeviceBlocks, m: Any, a: Any, y: Any, s: Any, log_s: Any, *,
               c: float, loss: MarginLoss, top: float, top_phi: float,
               query: bool = False) -> tuple[tuple, tuple]:
    """The step, pass 1 at the new margins and, when ``top`` is finite, pass 2 shifted
    by it: outputs ``(margins, logits, ln φ's, e, query)`` and the stat ``(step's,
    logits' maxima, exps' sums)``, as the CPU's stage.  The exponential loss keeps no
    logits (None) and its sums' second entry is the entropy's ``Σ e (z − top)``; with
    ``query`` its exps are written as ``e · y`` (the last output; ``e`` is then None)."""
    _code(loss)  # refused by name unless the kernels know it
    if loss.log_weight_is_neg_margin and math.isfinite(top):
        return _exponential_step(blocks, m, a, y, s, log_s, c=c, top=top, query=query)
    (stepped,), step_parts = _step_margins(blocks, m, a, y, s, c=c)
    (zs, log_phis), tops = _logits(blocks, stepped, log_s, loss=loss)
    if not math.isfinite(top):
        return (stepped, zs, log_phis, None, None), (step_parts, tops, None)
    (e,), sums = _exps(blocks, zs, log_phis, top=top, top_phi=top_phi)
    return (stepped, zs, log_phis, e, None), (step_parts, tops, sums)


def _exponential_step(blocks: DeviceBlocks, m: Any, a: Any, y: Any, s: Any, log_s: Any, *,
                      c: float, top: float, query: bool) -> tuple[tuple, tuple]:
    """:func:`_step_exps` for the exponential loss with a finite ``top``: one kernel
    (the step, the logits, the exps and the entropy's terms, or the query ``e · y``)
    and one reduction of its five channels, where the stages it stands for made six
    reductions and four passes."""
    margins, out, terms = blocks.empty(), blocks.empty(), blocks.empty((3, blocks.n))
    blocks.kernels.exponential_step[blocks.grid](
        m, a, y, c, blocks.optional(s), blocks.optional(log_s), top, margins, out, query,
        terms, blocks.reduce.ext)
    got = blocks.reduce.settle(terms, 5, (0, 1, 2))
    parts = (np.array([[got.low[3], got.sums[0]]]), np.array([[got.high[4], -math.inf]]),
             np.array([[got.sums[1], got.sums[2]]]))
    return (margins, None, None, None if query else out, out if query else None), parts


# -- a column's sums: SignedColumn.of ---------------------------------------------------
def _signed_sums(blocks: DeviceBlocks, a: Any, y: Any, w: Any, *,
                 norm: float) -> tuple[tuple, np.ndarray]:
    """With ``v = y a / norm``: ``(Σ w v, Σ w (1 + v), Σ w (1 − v), min v, max v,
    max |a|)`` (``y`` None: ``w`` is the query ``w · y``)."""
    terms = blocks.empty((4, blocks.n))
    blocks.kernels.signed_terms[blocks.grid](a, blocks.optional(y), w, norm, terms,
                                             blocks.reduce.ext)
    got = blocks.reduce.settle(terms, 5, (0, 1, 2))
    return (), np.array([[*got.sums[:3], got.low[3], got.high[3], got.peak[4]]])


def _two_value_masses(blocks: DeviceBlocks, a: Any, y: Any, w: Any, *, norm: float,
                      sign: float, lo: float, hi: float) -> tuple[tuple, np.ndarray]:
    """For ``u = (y a / norm) · sign`` with extremes ``lo`` and ``hi``: ``(Σ w [u = lo],
    Σ w [u = hi], #{u ∉ {lo, hi}})`` (a stump's line for the exponential loss: two
    points, whatever ``n``).  ``y`` must be None (``w`` the query)."""
    if y is not None:
        raise NotDistributedError("two_value_masses runs on the GPU from the query alone "
                                  "(y=None)")
    terms = blocks.empty((3, blocks.n))
    blocks.kernels.two_value_terms[blocks.grid](a, w, norm, sign, lo, hi, terms)
    return (), blocks.reduce.sums(terms).reshape(1, 3)


def _phi_and_low(blocks: DeviceBlocks, m: Any, s: Any, *,
                 loss: MarginLoss) -> tuple[tuple, np.ndarray]:
    """``(Σ s φ(m), min s)`` (unit weights: ``min s = 1``), the argument of Telgarsky's
    (2013) curvature constant ``C_t``."""
    terms = blocks.empty()
    blocks.kernels.risk_terms[blocks.grid](_code(loss), m, blocks.optional(s), terms)
    low = 1.0 if s is None else float(blocks.reduce.minima(s)[0])
    return (), np.array([[blocks.reduce.sums(terms)[0], low]])


def _peak(blocks: DeviceBlocks, a: Any) -> tuple[tuple, float]:
    """``max |a|``."""
    return (), float(blocks.reduce.abs_max(a)[0])


# -- the weights given: the problem's Σ s and ln s --------------------------------------
def _lane_totals(blocks: DeviceBlocks, a: Any) -> tuple[tuple, np.ndarray]:
    """``Σ a``."""
    return (), blocks.reduce.sums(a).reshape(1, 1)


def _log(blocks: DeviceBlocks, a: Any) -> tuple[tuple, None]:
    """``ln a`` (``−inf`` at 0)."""
    out = blocks.empty()
    blocks.kernels.logs[blocks.grid](a, out)
    return (out,), None


# -- the risk along one column, for the line searches: row_passes.line_weights, ... -----
def _oriented(blocks: DeviceBlocks, a: Any, y: Any, *, norm: float,
              sign: float) -> tuple[tuple, None]:
    """The oriented column ``u = sign · y · a / norm``."""
    u = blocks.empty()
    blocks.kernels.oriented[blocks.grid](a, y, norm, sign, u)
    return (u,), None


def _risk_logits(blocks: DeviceBlocks, m: Any, log_s: Any, *,
                 loss: MarginLoss) -> tuple[tuple, np.ndarray]:
    """``ln φ(m) + ln s`` and the stat ``(max,)``."""
    code = _code(loss)
    out = blocks.empty()
    blocks.kernels.risk_logits[blocks.grid](code, m, blocks.optional(log_s), out,
                                            blocks.reduce.ext)
    return (out,), blocks.reduce.settle(out, 1).high.reshape(1, 1)


def _line_rho(blocks: DeviceBlocks, lr: Any, *, top: float) -> tuple[tuple, np.ndarray]:
    """``ln ρ = lr − top`` (written over ``lr``), ``ρ = exp(ln ρ)`` and the stat
    ``(Σ ρ,)``."""
    rho = blocks.empty()
    blocks.kernels.line_rho[blocks.grid](lr, top, lr, rho, blocks.reduce.ext)
    return (lr, rho), blocks.reduce.settle(rho, 1, (0,)).sums.reshape(1, 1)


def _line_delta(blocks: DeviceBlocks, m: Any, u: Any, rho: Any, *, loss: MarginLoss,
                alpha: float) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ ρ expm1(ln φ(m + α u) − ln φ(m)),)``: ``R(α)/R(0) − 1`` times the
    line's total."""
    code = _code(loss)
    terms = blocks.empty()
    blocks.kernels.line_delta[blocks.grid](code, m, u, rho, float(alpha), terms,
                                           blocks.reduce.ext)
    return (), blocks.reduce.settle(terms, 1, (0,)).sums.reshape(1, 1)


def _line_slope(blocks: DeviceBlocks, m: Any, u: Any, log_rho: Any, *, loss: MarginLoss,
                alpha: float) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ u exp(ln ρ + ln(−φ'(m + α u)) − ln φ(m)),)``: ``−R'(α)/R(0)``
    times the line's total."""
    code = _code(loss)
    terms = blocks.empty()
    blocks.kernels.line_slope[blocks.grid](code, m, u, log_rho, float(alpha), terms,
                                           blocks.reduce.ext)
    return (), blocks.reduce.settle(terms, 1, (0,)).sums.reshape(1, 1)


# -- MABoost's entropy round: boosters.mirror.passes ------------------------------------
def _gradient(blocks: DeviceBlocks, w: Any, *, mirror: Any) -> tuple[tuple, None]:
    """The map's ``∇R(w)``: ``ln w`` for the entropy (``−inf`` at 0), ``w`` itself (a
    copy) for the Euclidean."""
    if map_name(mirror) == "entropy":
        return _log(blocks, w)
    return _copy(blocks, w)


def _divided(blocks: DeviceBlocks, a: Any, *, divisor: float) -> tuple[tuple, None]:
    """``a / divisor``."""
    out = blocks.empty()
    blocks.kernels.quotient[blocks.grid](a, divisor, out)
    return (out,), None


def _mirror_step(blocks: DeviceBlocks, w: Any, z: Any, f: Any, a: Any, out: Any, s: Any,
                 log_s: Any, *, coef: float, update: Any, mirror: Any,
                 alpha_eta: float) -> tuple[tuple, np.ndarray]:
    """Algorithm 1 (c) by ``update`` (the active one reads the map's gradient), and the
    vote: outputs ``(point, new dual or None, f')`` and the stat ``(Σ s [a f' ≤ 0], Σ s
    [predict wrong], min a f', Σ point)`` (the last 0 unless the update is
    SparseBoost's unnormalised state)."""
    kind = update_code(update, mirror)
    target, f_new, terms = blocks.empty(), blocks.empty(), blocks.empty((3, blocks.n))
    z_new = blocks.empty() if update.own_dual else (target if update.keeps_dual else None)
    blocks.kernels.mirror_step[blocks.grid](
        kind, blocks.optional(w), blocks.optional(z), f, a, out, blocks.optional(s),
        blocks.optional(log_s), float(coef), float(alpha_eta), target,
        blocks.optional(z_new if update.own_dual else None), f_new, terms,
        blocks.reduce.ext)
    got = blocks.reduce.settle(terms, 3, (0, 1))
    # SparseBoost's ‖y‖₁: a reduction of its own (the point is the state kept)
    mass = float(blocks.reduce.sums(target)[0]) if update.unnormalised else 0.0
    return (target, z_new, f_new), np.array([[got.sums[0], got.sums[1], got.low[2],
                                               mass]])


def _query(blocks: DeviceBlocks, w: Any, a: Any) -> tuple[tuple, np.ndarray]:
    """MABoost's query ``w · a`` and the stat ``(max w, #{w = 0})``."""
    out, both = blocks.empty(), blocks.empty((2, blocks.n))  # one reduction for both
    blocks.kernels.weighted_labels[blocks.grid](w, a, out, both[1])
    blocks.kernels.scaled[blocks.grid](w, 1.0, both[0])  # (a copy: w is the caller's)
    got = blocks.reduce.tally(both, (1,))
    return (out,), np.array([[got.high[0], got.sums[1]]])


def _entropy_step(blocks: DeviceBlocks, z: Any, f: Any, a: Any, out: Any, s: Any, *,
                  coef: float, log_norm: float) -> tuple[tuple, np.ndarray]:
    """MABoost's lazy, uncapped entropy round in one pass: outputs ``(log z', f', e,
    e · a)`` and the stat ``(Σ s [a f' ≤ 0], Σ s [predict wrong], min a f', 0, Σ e,
    max e, #{e = 0})`` (:data:`oracleboost.boosters.mirror.kernels.N_STATS`)."""
    target, f_new, query = (blocks.empty() for _ in range(3))
    terms = blocks.empty((5, blocks.n))  # e is the last: one reduction for all five
    e = terms[4]
    blocks.kernels.entropy_step[blocks.grid](z, f, a, out, blocks.optional(s), coef,
                                             log_norm, target, f_new, e, query, terms)
    got = blocks.reduce.tally(terms, (0, 1, 2, 4))
    wrong, missed, zeros = got.sums[:3]
    stats = np.array([[wrong, missed, got.low[3], 0.0, got.sums[4], got.high[4], zeros]])
    return (target, f_new, e, query), stats


# -- the functional boosters' pointwise losses and steps: row_passes --------------------
def _pointwise(loss: Loss) -> tuple[int, float]:
    """The kernels' code of a pointwise loss and its parameter: a margin loss's code
    (:data:`LOSS_CODES`, 0 for the parameter), or a regression loss's
    (:data:`REGRESSION_CODES`, with Huber's δ or the quantile's α); the library's
    classes only (a subclass may change the formulas), any other refused by name."""
    if type(loss) in (losses.Exponential, losses.Logistic):
        return LOSS_CODES[loss.name], 0.0
    if type(loss) in (losses.Squared, losses.Absolute, losses.Huber, losses.Quantile):
        return REGRESSION_CODES[loss.name], float(getattr(loss, "delta",
                                                          getattr(loss, "alpha", 0.0)))
    name = getattr(loss, "name", type(loss).__name__)
    raise NotDistributedError(
        f"loss={name!r} does not run on the GPU: it has no device kernel (the functional "
        f"boosters run {sorted(REGRESSION_CODES)} and {sorted(LOSS_CODES)} there); fit "
        "on the CPU")


def _by_class(a: Any) -> bool:
    """Whether ``a`` holds a score a class (shape (n, K)): the multiclass functional
    classifier's rows, run by :mod:`.class_stages`."""
    return getattr(a, "ndim", 1) == 2


def _one_score(*arrays: Any) -> None:
    """Refuse several scores a row by name, in a pass that takes one."""
    if any(getattr(a, "ndim", 1) != 1 for a in arrays):
        raise NotDistributedError("several scores a row do not run in this pass on the "
                                  "GPU (only the functional classifier's multiclass "
                                  "passes take them); fit on the CPU")


def _descent(blocks: DeviceBlocks, y: Any, f: Any, *, loss: Loss) -> tuple[tuple, None]:
    """``−∇l(y, f)`` of a pointwise loss the kernels know (others refused by name);
    scores of one column a class by :func:`.class_stages.descent`."""
    if _by_class(f):
        return class_stages.descent(blocks, y, f, loss=loss)
    code, p = _pointwise(loss)
    out = blocks.empty()
    if code < 0:
        blocks.kernels.regression_descent[blocks.grid](code, p, y, f, out)
    else:
        blocks.kernels.margin_descent[blocks.grid](code, y, f, out)
    return (out,), None


def _weighted_loss(blocks: DeviceBlocks, y: Any, raw: Any, s: Any, *,
                   loss: Loss) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ s l(y, raw),)`` of a pointwise loss the kernels know."""
    if _by_class(raw):
        return class_stages.weighted_loss(blocks, y, raw, s, loss=loss)
    code, p = _pointwise(loss)
    terms = blocks.empty()
    blocks.kernels.loss_terms[blocks.grid](code, p, y, raw, blocks.optional(s), terms,
                                           blocks.reduce.ext)
    return (), blocks.reduce.settle(terms, 1, (0,)).sums.reshape(1, 1)


def _class_masses(blocks: DeviceBlocks, y: Any, s: Any) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ s [y > 0], Σ s [y < 0])`` of ±1 labels."""
    terms = blocks.empty((2, blocks.n))
    blocks.kernels.class_terms[blocks.grid](y, blocks.optional(s), terms)
    return (), blocks.reduce.sums(terms).reshape(1, 2)


def _index_masses(blocks: DeviceBlocks, y: Any, s: Any, *, K: int
                  ) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ s [y = k] for k < K)`` of class indices."""
    return class_stages.index_masses(blocks, y, s, K=K)


def _vote_error_and_margin(blocks: DeviceBlocks, y: Any, f: Any, s: Any
                           ) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ s [argmax f ≠ y], min (f_y − max_{k≠y} f_k))`` of scores of one
    column a class."""
    return class_stages.vote_error_and_margin(blocks, y, f, s)


def _error_and_margin(blocks: DeviceBlocks, y: Any, f: Any, s: Any
                      ) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ s [(f > 0) ≠ (y > 0)], min y f)`` of a binary score."""
    _one_score(f)
    terms = blocks.empty((2, blocks.n))
    blocks.kernels.error_terms[blocks.grid](y, f, blocks.optional(s), terms,
                                            blocks.reduce.ext)
    got = blocks.reduce.settle(terms, 2, (0,))
    return (), np.array([[got.sums[0], got.low[1]]])


def _combined(blocks: DeviceBlocks, a: Any, *bs: Any, coefs: tuple) -> tuple[tuple, None]:
    """``a + Σ_k c_k b_k``, each term added in turn: two a launch, the CPU's order."""
    if _by_class(a):
        return class_stages.combined(blocks, a, bs, coefs)
    _one_score(*bs)
    if not bs:
        return _copy(blocks, a)
    out = blocks.empty()
    terms = [(float(c), b) for c, b in zip(coefs, bs, strict=True)]
    source = a
    for k in range(0, len(terms), 2):
        (c0, b0), (c1, b1) = (*terms[k:k + 2], (0.0, blocks.nothing))[:2]
        nb = min(2, len(terms) - k)
        blocks.kernels.combined[blocks.grid](source, b0, c0, b1, c1, nb, out)
        source = out
    return (out,), None


def _weighted_residual(blocks: DeviceBlocks, t: Any, a: Any, s: Any, *,
                       coef: float) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ s (t − coef a)²,)``: what a projection leaves of ``t``."""
    if _by_class(t):
        return class_stages.weighted_residual(blocks, t, a, s, coef=coef)
    _one_score(a)
    terms = blocks.empty()
    blocks.kernels.residual_terms[blocks.grid](t, a, float(coef), blocks.optional(s),
                                               terms, blocks.reduce.ext)
    return (), blocks.reduce.settle(terms, 1, (0,)).sums.reshape(1, 1)


def _scaled(blocks: DeviceBlocks, a: Any, s: Any) -> tuple[tuple, None]:
    """``s · a``."""
    if _by_class(a):
        return class_stages.scaled(blocks, a, s)
    _one_score(s)
    out = blocks.empty()
    blocks.kernels.products_of[blocks.grid](s, a, out)
    return (out,), None


def _ldexp(blocks: DeviceBlocks, a: Any, *, e: int) -> tuple[tuple, None]:
    """``a · 2^e`` (exact)."""
    if _by_class(a):
        return class_stages.ldexp(blocks, a, e=e)
    out = blocks.empty()
    blocks.kernels.ldexps[blocks.grid](a, int(e), out)
    return (out,), None


def _inner_products(blocks: DeviceBlocks, a: Any, s: Any, bs: tuple) -> Any:
    """``max |a|`` and ``Σ s a b`` for each of ``bs`` (one or two): one kernel, one
    reduction (:class:`~oracleboost.cuda.reductions.Tallied`)."""
    if not 1 <= len(bs) <= 2 or any(getattr(x, "ndim", 1) != 1 for x in (a, *bs)):
        raise NotDistributedError("inner products of more than two columns, or of several "
                                  "scores a row, do not run on the GPU; fit on the CPU")
    terms = blocks.empty((len(bs), blocks.n))
    blocks.kernels.products[blocks.grid](a, bs[0], bs[-1], len(bs), blocks.optional(s),
                                         terms, blocks.reduce.ext)
    return blocks.reduce.settle(terms, len(bs) + 1, tuple(range(len(bs))))


def _peak_inners(blocks: DeviceBlocks, a: Any, s: Any, *bs: Any) -> tuple[tuple, np.ndarray]:
    """``(max |a|, Σ s a b for b in bs)``."""
    if _by_class(a):
        return class_stages.peak_inners(blocks, a, s, *bs)
    got = _inner_products(blocks, a, s, bs)
    return (), np.array([[got.peak[len(bs)], *got.sums[:len(bs)]]])


def _weighted_inner(blocks: DeviceBlocks, a: Any, b: Any, s: Any) -> tuple[tuple, np.ndarray]:
    """``Σ s a b`` (``s`` None: unit weights)."""
    if _by_class(a):
        return class_stages.weighted_inner(blocks, a, b, s)
    return (), _inner_products(blocks, a, s, (b,)).sums[:1].reshape(1, 1)


def _squared_step(blocks: DeviceBlocks, f: Any, y: Any, h: Any, s: Any, inner_s: Any,
                  t: Any, *, c: float, coef: float) -> tuple[tuple, np.ndarray]:
    """The squared loss's step: outputs ``(f + c h, −(f + c h − y))`` and the stat
    ``(Σ s ½ d², max |v|, Σ s' v², Σ s' (t − coef h)²)`` (the last 0 without ``t``),
    one kernel and one reduction."""
    f_new, v, terms = blocks.empty(), blocks.empty(), blocks.empty((3, blocks.n))
    blocks.kernels.squared_step[blocks.grid](
        f, y, h, c, blocks.optional(s), blocks.optional(inner_s), blocks.optional(t), coef,
        f_new, v, terms, blocks.reduce.ext)
    got = blocks.reduce.settle(terms, 4, (0, 1, 2))
    return (f_new, v), np.array([[got.sums[0], got.peak[3], got.sums[1], got.sums[2]]])


# -- the margin booster's passes: optim.margin_passes (binary, batch) --------------------
def _binary(form_or_multiclass: Any) -> None:
    """Refuse the multiclass form (and the kernel form) by name."""
    if form_or_multiclass not in (False, "binary"):
        raise NotDistributedError(
            "AcceleratedMarginClassifier's multiclass and kernel forms do not run on the "
            "GPU (it runs two classes, with LinearOracle or MatrixOracle); fit on the CPU")


def _margin_scores(blocks: DeviceBlocks, S: Any, y: Any, *, scale: float, multiclass: bool,
                   intercept: Any) -> tuple[tuple, None]:
    """The binary scores ``Z w = −y (S + b) / scale``."""
    _binary(multiclass)
    out = blocks.empty()
    b = 0.0 if intercept is None else float(intercept)
    blocks.kernels.margin_scores[blocks.grid](S, y, intercept is not None, b, float(scale),
                                              out)
    return (out,), None


def _dual_terms(blocks: DeviceBlocks, Zw: Any, y: Any, log_s: Any, s: Any, *,
                loss: MarginLoss, multiclass: bool) -> tuple[tuple, np.ndarray]:
    """``xi = Zw``, ``lp = ln s + ln ℓ(xi)`` and the stat ``(max lp, max xi, Σ s [xi ≥
    0])``."""
    _binary(multiclass)
    code = _code(loss)
    rows = blocks.empty((3, blocks.n))  # lp, xi, the terms: one reduction
    lp, xi = rows[0], rows[1]
    blocks.kernels.dual_terms[blocks.grid](code, Zw, log_s, s, xi, lp, rows[2],
                                           blocks.reduce.ext)
    got = blocks.reduce.settle(rows, 3, (2,))
    return (xi, lp), np.array([[got.high[0], got.high[1], got.sums[2]]])


def _dual_sums(blocks: DeviceBlocks, lp: Any, *, top: float) -> tuple[tuple, np.ndarray]:
    """The stat ``(Σ exp(lp − top),)``."""
    e = blocks.empty()
    blocks.kernels.exps[blocks.grid](lp, float(top), e)
    return (), blocks.reduce.sums(e).reshape(1)


def _dual_q(blocks: DeviceBlocks, xi: Any, y: Any, log_s: Any, *, loss: MarginLoss,
            log_dpsi: float, form: str) -> tuple[tuple, np.ndarray]:
    """``q = exp(ln s + ln ℓ'(xi) − ln ℓ'(ψ))``, the binary query ``r = −y q`` and the
    stat ``(Σ q, Σ r)``."""
    _binary(form)
    both = blocks.empty((2, blocks.n))  # one reduction for both sums
    q, r = both[0], both[1]
    blocks.kernels.dual_q[blocks.grid](_code(loss), xi, y, log_s, float(log_dpsi), q, r,
                                       blocks.reduce.ext)
    got = blocks.reduce.settle(both, 2, (0, 1))
    return (q, r), np.array([[got.sums[0], got.sums[1]]])


def _margin_query(blocks: DeviceBlocks, q: Any, y: Any, *, form: str
                  ) -> tuple[tuple, np.ndarray]:
    """The binary query ``r = −y q`` and the stat ``(Σ r,)``."""
    _binary(form)
    r = blocks.empty()
    blocks.kernels.negated_labels[blocks.grid](q, y, r)
    return (r,), blocks.reduce.sums(r).reshape(1, 1)


def _worst(blocks: DeviceBlocks, xi: Any) -> tuple[tuple, tuple[float, int]]:
    """The largest entry of ``xi`` and its first index."""
    _one_score(xi)
    best = float(blocks.reduce.maxima(xi)[0])
    first = upload(np.array([blocks.n], dtype=np.int64))
    blocks.kernels.first_at[blocks.grid](xi, best, first)
    return (), (best, int(fetch(first)[0]))


def _momentum(blocks: DeviceBlocks, Zw: Any, Zg: Any, Zz: Any, *, beta: float,
              theta: float) -> tuple[tuple, None]:
    """``(Zg', Zw')``: ``Zg' = β (Zg + Zz)``, ``Zw' = Zw − θ (Zg' + Zz)``."""
    _one_score(Zz)
    g, w = blocks.empty(), blocks.empty()
    blocks.kernels.momentum[blocks.grid](Zw, blocks.optional(Zg), Zz, float(beta),
                                         float(theta), g, w)
    return (g, w), None


#: Rows a chunk of :func:`_find_in_lane`'s first pass.
_CHUNK_ROWS = 4096


def _find_in_lane(blocks: DeviceBlocks, q: Any, *, lane_index: int, start: float,
                  target: float) -> tuple[tuple, int]:
    """The first row at which the running mass ``start + q_0 + q_1 + …`` passes
    ``target`` (the last positive entry if none does): the chunks' masses in fixed point
    on the device, their running sum on the host finds the chunk, whose rows then run
    in order from the chunks' mass before it.  (The CPU's running sum is in floats
    from the lane's first row: the row found is the CPU's unless ``target`` falls
    within rounding of a running sum.)"""
    _one_score(q)
    if lane_index != 0:
        raise IndexError(f"lane {lane_index} of 1")
    n = blocks.n
    e = fixed_point_exponent(float(blocks.reduce.maxima(q)[0]), n)
    sums = upload(np.zeros(-(-n // _CHUNK_ROWS), dtype=np.int64))
    blocks.kernels.chunk_sums[blocks.grid](q, _CHUNK_ROWS, int(e), sums)
    ends = start + from_fixed(np.cumsum(fetch(sums)), int(e))  # the running mass
    c = int(np.searchsorted(ends, target, side="right"))
    if c >= ends.size:  # (rounding): the last chunk with mass, its last positive row
        c = int(np.flatnonzero(np.diff(np.concatenate([[start], ends])) > 0)[-1])
    lo, hi = c * _CHUNK_ROWS, min(n, (c + 1) * _CHUNK_ROWS)
    before = float(ends[c - 1]) if c > 0 else start
    rows = fetch(q[lo:hi])
    running = np.add.accumulate(np.concatenate([[before], rows]))[1:]
    above = np.flatnonzero(running > target)
    k = int(above[0]) if above.size else int(np.flatnonzero(rows > 0)[-1])
    return (), lo + k


#: The stages that have a device twin, by :func:`stage_name`.
TWINS: dict[str, Callable[..., tuple]] = {
    f"{_ROW_PASSES}._logits": _logits,
    f"{_ROW_PASSES}._exps": _exps,
    f"{_ROW_PASSES}._normalise": _normalise,
    f"{_ROW_PASSES}._rescaled": _rescaled,
    f"{_ROW_PASSES}._step_margins": _step_margins,
    f"{_ROW_PASSES}._step_exps": _step_exps,
    f"{_ROW_PASSES}._signed_sums": _signed_sums,
    f"{_ROW_PASSES}._two_value_masses": _two_value_masses,
    f"{_ROW_PASSES}._phi_and_low": _phi_and_low,
    f"{_ROW_PASSES}._peak": _peak,
    f"{_ROW_PASSES}._lane_totals": _lane_totals,
    f"{_ROW_PASSES}._log": _log,
    f"{_ROW_PASSES}._oriented": _oriented,
    f"{_ROW_PASSES}._risk_logits": _risk_logits,
    f"{_ROW_PASSES}._line_rho": _line_rho,
    f"{_ROW_PASSES}._line_delta": _line_delta,
    f"{_ROW_PASSES}._line_slope": _line_slope,
    f"{_MIRROR}._gradient": _gradient,
    f"{_MIRROR}._divided": _divided,
    f"{_MIRROR}._query": _query,
    f"{_MIRROR}._entropy_step": _entropy_step,
    f"{_MIRROR}._mirror_step": _mirror_step,
    f"{_ROW_PASSES}._descent": _descent,
    f"{_ROW_PASSES}._ldexp": _ldexp,
    f"{_ROW_PASSES}._peak_inners": _peak_inners,
    f"{_ROW_PASSES}._weighted_inner": _weighted_inner,
    f"{_ROW_PASSES}._squared_step": _squared_step,
    f"{_ROW_PASSES}._weighted_loss": _weighted_loss,
    f"{_ROW_PASSES}._class_masses": _class_masses,
    f"{_ROW_PASSES}._index_masses": _index_masses,
    f"{_ROW_PASSES}._vote_error_and_margin": _vote_error_and_margin,
    f"{_ROW_PASSES}._error_and_margin": _error_and_margin,
    f"{_ROW_PASSES}._combined": _combined,
    f"{_ROW_PASSES}._weighted_residual": _weighted_residual,
    f"{_ROW_PASSES}._scaled": _scaled,
    f"{_MARGIN}._scores": _margin_scores,
    f"{_MARGIN}._dual_terms": _dual_terms,
    f"{_MARGIN}._dual_sums": _dual_sums,
    f"{_MARGIN}._dual_q": _dual_q,
    f"{_MARGIN}._query": _margin_query,
    f"{_MARGIN}._worst": _worst,
    f"{_MARGIN}._momentum": _momentum,
    f"{_MARGIN}._find_in_lane": _find_in_lane,
    **PROJECTION_TWINS,
    **QUANTILE_TWINS,
    **DRAW_TWINS,
    **class_stages.CELL_TWINS,
}


def twin_of(stage: Callable) -> Callable[..., tuple]:
    """The device twin of ``stage``, or :class:`NotDistributedError` naming the stage."""
    name = stage_name(stage)
    twin = TWINS.get(name)
    if twin is None:
        short = name.rsplit(".", 1)[-1]
        raise NotDistributedError(
            f"the pass {short} ({name}) does not run on the GPU (it has no device twin); "
            "fit on the CPU")
    return twin
