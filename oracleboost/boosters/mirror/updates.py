"""Steps (c) and (d) of MABoost's box as small objects (Naghibi & Pfister 2014).

Algorithm 1 moves the weights in two steps: (c) the mirror step, a point of the dual
space ``∇R(z_{t+1}) = ∇R(·) + η_t d_t``, and (d) the Bregman projection of that point back
onto the feasible set (eq. 2).  Each way of making a step is an object chosen once, when
a fit sets up its problem, and the round calls it without asking which it is:

* an **update** (c) (:class:`DualUpdate`): :class:`LazyUpdate` (``∇R(z_t) + η d``, the dual
  average), :class:`ActiveUpdate` (``∇R(w_t) + η d``), SparseBoost's
  :class:`SparseBoostUpdate` (Algorithm 2, eq. 29) and the MadaBoost variant's
  :class:`MadaBoostUpdate` (Algorithm 3, Lemma 5).  ``start`` gives the dual state of
  round 1, ``point`` writes the point of one lane of rows (inside the pass of
  :func:`.passes.mirror_step`, where the rows are: in memory or on a worker);
* a **projection** (d) (:class:`Projection`): :class:`Softmax` (the KL projection onto
  the simplex, whose normaliser the next round predicts), :class:`EuclideanNear` (the
  sort-based Euclidean projection, started near the last threshold), :class:`MapProjection`
  (the map's own ``project_rows``, onto S or the capped S_k and S_c) and SparseBoost's
  :class:`Normalised` (``w = y / ‖y‖₁``).  An update names the projection it takes with
  a map and a cap (:meth:`DualUpdate.projection`).

Like the maps (:mod:`.maps`) and the step rules, these are frozen dataclasses: picklable
(a pass on a cluster ships its update to the workers), equal by value, shown by ``repr``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from oracleboost.boosters.mirror import passes as mirror_passes
from oracleboost.boosters.mirror.maps import EntropyMap, EuclideanMap, MirrorMap
from oracleboost.optim import row_passes
from oracleboost.optim.row_projections import euclidean_simplex_rows_near, kl_softmax_rows
from oracleboost.rows.blocks import RowBlocks
from oracleboost.rows.partitioned import Rows

__all__ = ["DualUpdate", "LazyUpdate", "ActiveUpdate", "SparseBoostUpdate", "MadaBoostUpdate",
           "Projection", "Softmax", "EuclideanNear", "MapProjection", "Normalised",
           "default_projection"]


# -- (c) the mirror step ---------------------------------------------------------------------


@dataclass(frozen=True)
class DualUpdate:
    """Base: Algorithm 1 (c), the point ``∇R(z_{t+1})`` that step (d) projects.

    ``keeps_dual``: the state carries a dual ``z`` from round to round (the point itself
    unless ``own_dual``: then an array of its own); ``unnormalised``: the point is an
    unnormalised state whose mass ``‖y‖₁`` the pass sums (SparseBoost);
    ``log_weights``: the point adds ``log s`` (the MadaBoost variant with unequal
    weights)."""

    name: ClassVar[str] = ""
    keeps_dual: ClassVar[bool] = True
    own_dual: ClassVar[bool] = False
    unnormalised: ClassVar[bool] = False
    log_weights: ClassVar[bool] = False

    def start(self, blocks: RowBlocks, mirror: MirrorMap, w1: Rows) -> tuple[Rows | None, float]:
        """The dual state of round 1 from ``w_1``, and the state's mass (1: normalised)."""
        return mirror_passes.gradient(blocks, mirror, w1), 1.0  # ∇R(z_1) = ∇R(w_1)

    def dual_rows(self, point: np.ndarray, n: int) -> np.ndarray | None:
        """Where one stage's new dual state goes: the point's array, one of its own
        (``own_dual``) or none (``keeps_dual`` False)."""
        if not self.keeps_dual:
            return None
        return np.empty(n) if self.own_dual else point

    def point(self, out: np.ndarray, dual: np.ndarray | None, step: np.ndarray,
              z: np.ndarray | None, w: np.ndarray, mirror: MirrorMap,
              log_s: np.ndarray | None, alpha_eta: float) -> None:  # pragma: no cover
        """Write one lane's point into ``out`` (its new dual into ``dual``), from the
        lane's dual state ``z`` or weights ``w`` and ``step = η_t d_t``."""
        raise NotImplementedError

    def projection(self, mirror: MirrorMap, cap: object) -> Projection:
        """The projection (d) a binary round takes with this update, ``mirror`` and
        ``cap`` (None: onto the simplex S)."""
        return default_projection(mirror)


@dataclass(frozen=True)
class LazyUpdate(DualUpdate):
    """``∇R(z_{t+1}) = ∇R(z_t) + η_t d_t``: the dual average (Algorithm 1 (c), lazy;
    ``log z`` for the entropy map, which never underflows to a stuck zero)."""

    name = "lazy"

    def point(self, out: np.ndarray, dual: np.ndarray | None, step: np.ndarray,
              z: np.ndarray | None, w: np.ndarray, mirror: MirrorMap,
              log_s: np.ndarray | None, alpha_eta: float) -> None:
        np.add(z, step, out=out)

    def projection(self, mirror: MirrorMap, cap: object) -> Projection:
        # the entropy map, uncapped: the KL projection is a softmax, whose normaliser the
        # next round predicts from its column (one pass: :func:`.passes.entropy_step`)
        if cap is None and type(mirror) is EntropyMap:
            return Softmax()
        return default_projection(mirror)


@dataclass(frozen=True)
class ActiveUpdate(DualUpdate):
    """``∇R(z_{t+1}) = ∇R(w_t) + η_t d_t`` (Algorithm 1 (c), active): no dual state."""

    name = "active"
    keeps_dual = False

    def start(self, blocks: RowBlocks, mirror: MirrorMap, w1: Rows) -> tuple[Rows | None, float]:
        return None, 1.0

    def point(self, out: np.ndarray, dual: np.ndarray | None, step: np.ndarray,
              z: np.ndarray | None, w: np.ndarray, mirror: MirrorMap,
              log_s: np.ndarray | None, alpha_eta: float) -> None:
        np.add(mirror.gradient(w), step, out=out)


@dataclass(frozen=True)
class SparseBoostUpdate(DualUpdate):
    """SparseBoost's unnormalised state (Algorithm 2, eq. 29):
    ``y_{t+1} = max(0, y_t + η_t d_t − α_t η_t)``, with ``y_1 = w_1``; step (d) is its
    normalisation ``w = y / ‖y‖₁`` (:class:`Normalised`)."""

    name = "sparse"
    unnormalised = True

    def start(self, blocks: RowBlocks, mirror: MirrorMap, w1: Rows) -> tuple[Rows | None, float]:
        return w1, row_passes.total(blocks, w1)  # y_1 = w_1

    def point(self, out: np.ndarray, dual: np.ndarray | None, step: np.ndarray,
              z: np.ndarray | None, w: np.ndarray, mirror: MirrorMap,
              log_s: np.ndarray | None, alpha_eta: float) -> None:
        np.add(z, step, out=out)
        out -= alpha_eta  # (y + η d) − α η, in this order: the bits of eq. 29 as written
        np.maximum(out, 0.0, out=out)

    def projection(self, mirror: MirrorMap, cap: object) -> Projection:
        return Normalised()


@dataclass(frozen=True)
class MadaBoostUpdate(DualUpdate):
    """The MadaBoost variant's double projection (Algorithm 3, Lemma 5): the lazy dual
    ``log z_{t+1} = log z_t + η_t d_t = −a H_t`` (``log z_1 = 0``), projected first onto
    the hypercube, ``min(1, z)``, then onto the simplex; the point is
    ``log s + min(0, log z_{t+1})`` (equal weights: ``log s`` cancels)."""

    name = "madaboost"
    own_dual = True
    log_weights = True

    def start(self, blocks: RowBlocks, mirror: MirrorMap, w1: Rows) -> tuple[Rows | None, float]:
        return blocks.full(0.0), 1.0  # log z_1 = −a H_0 = 0

    def point(self, out: np.ndarray, dual: np.ndarray | None, step: np.ndarray,
              z: np.ndarray | None, w: np.ndarray, mirror: MirrorMap,
              log_s: np.ndarray | None, alpha_eta: float) -> None:
        zb = np.add(z, step, out=dual)
        np.minimum(zb, 0.0, out=out)
        if log_s is not None:
            out += log_s


# -- (d) the Bregman projection --------------------------------------------------------------


@dataclass(frozen=True)
class Projection:
    """Base: Algorithm 1 (d), ``w_{t+1} = argmin_{w ∈ S} B_R(w, z_{t+1})`` (eq. 2).

    Called with the point, the cap (None: S itself), the map, the new state's mass
    (SparseBoost's ``‖y‖₁``) and the state's hints: ``log_norm`` (``log Σ z`` of the
    lazy entropy average) and ``near`` (where the Euclidean threshold was); returns the
    weights and the hints for the next round.  ``fused``: a round may make (c), (d)
    and the next query in one pass instead."""

    fused: ClassVar[bool] = False

    def __call__(self, blocks: RowBlocks, point: Rows, *, cap: object, mirror: MirrorMap,
                 mass: float, log_norm: float, near: object
                 ) -> tuple[Rows, float, object]:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class Softmax(Projection):
    """The entropy map's KL projection onto S: ``w = exp(log z − log Σ z)``, its
    normaliser kept for the next round's prediction."""

    fused = True

    def __call__(self, blocks: RowBlocks, point: Rows, *, cap: object, mirror: MirrorMap,
                 mass: float, log_norm: float, near: object) -> tuple[Rows, float, object]:
        w, log_norm = kl_softmax_rows(blocks, point)
        return w, log_norm, near


@dataclass(frozen=True)
class EuclideanNear(Projection):
    """The Euclidean projection onto S (S_k, S_c: ``cap``), its first pivots near the
    last round's threshold (:func:`.row_projections.euclidean_simplex_rows_near`)."""

    def __call__(self, blocks: RowBlocks, point: Rows, *, cap: object, mirror: MirrorMap,
                 mass: float, log_norm: float, near: object) -> tuple[Rows, float, object]:
        w, near = euclidean_simplex_rows_near(blocks, point, cap, near)
        return w, log_norm, near


@dataclass(frozen=True)
class MapProjection(Projection):
    """The map's own projection rows (:meth:`.maps.MirrorMap.project_rows`): the KL
    projection onto S_k or S_c, a map of the user's."""

    def __call__(self, blocks: RowBlocks, point: Rows, *, cap: object, mirror: MirrorMap,
                 mass: float, log_norm: float, near: object) -> tuple[Rows, float, object]:
        return mirror.project_rows(blocks, point, cap), log_norm, near


@dataclass(frozen=True)
class Normalised(Projection):
    """SparseBoost's ``w_{t+1} = y_{t+1} / ‖y_{t+1}‖₁`` (Algorithm 2); a state of zeros
    stays zeros (the round then stops: ``"zero_weights"``)."""

    def __call__(self, blocks: RowBlocks, point: Rows, *, cap: object, mirror: MirrorMap,
                 mass: float, log_norm: float, near: object) -> tuple[Rows, float, object]:
        w = mirror_passes.divided(blocks, point, mass) if mass > 0.0 else blocks.full(0.0)
        return w, log_norm, near


def default_projection(mirror: MirrorMap) -> Projection:
    """The projection of ``mirror`` (exactly the library's Euclidean map: started near the
    last threshold; any other map: its ``project_rows``)."""
    return EuclideanNear() if type(mirror) is EuclideanMap else MapProjection()
