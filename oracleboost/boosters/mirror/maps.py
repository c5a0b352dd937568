"""The mirror maps of MABoost (Naghibi & Pfister 2014) as objects.

A mirror map ``R`` is everything Algorithm 1 asks of its geometry:

* ``gradient(w)``: ``∇R(w)``, the point where step (c) adds ``η_t d_t``, in the form the
  projection takes (``log w`` for the entropy, ``w`` for the Euclidean map);
* ``project(z, cap)``: step (d), the Bregman projection (eq. 2) onto the simplex S, or
  onto the capped simplex S_k (§3.1) and the dataset-combining set S_c (§3.2) when
  ``cap`` holds per-coordinate caps (:mod:`.projections`);
* ``project_rows(blocks, z, cap)``: the same projection on the rows of a binary fit
  (:mod:`oracleboost.rows.blocks`), in memory or on a Dask cluster's workers
  (:mod:`.row_projections`), its sums in lane order;
* ``constant(n_cells)``: L, the bound on ``‖d_t‖_*²`` behind η_t = γ_t / L (eqs. 8–9);
* ``error_bound(potential, n_rows, equal_weights)``: Theorem 1's bound on the training error from
  the run's own ``Σ_t (η_t γ_t − L η_t² / 2)`` (eqs. 15/18 with the regret bound 13);
* ``default_update``: the update ``update="auto"`` takes with this map.

Like the step rules (:mod:`.steps`), a map is a frozen dataclass: picklable, equal by
value, shown by ``repr``; ``MirrorBoostingClassifier(mirror=...)`` takes it or its name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from oracleboost.optim.projections import (
    euclidean_capped_simplex,
    euclidean_simplex,
    grad_entropy,
    grad_euclidean,
    kl_capped_simplex,
    kl_simplex,
)
from oracleboost.optim.steps import resolve_by_name
from oracleboost.rows.blocks import RowBlocks
from oracleboost.rows.partitioned import NotDistributedError, Rows

__all__ = ["MirrorMap", "EntropyMap", "EuclideanMap", "MIRROR_MAPS", "get_mirror_map"]


@dataclass(frozen=True)
class MirrorMap:
    """Base: the pieces of a mirror map that MABoost's Algorithm 1 uses (see the module)."""

    name: ClassVar[str] = ""
    default_update: ClassVar[str] = "active"

    def gradient(self, w: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        """``∇R(w)``, the point where step (c) adds ``η_t d_t``, in the form
        :meth:`project` takes (``log w`` for the entropy, ``w`` for the Euclidean map)."""
        raise NotImplementedError

    def project(self, z: np.ndarray, cap: np.ndarray | None = None) -> np.ndarray:
        """Step (d): the Bregman projection of ``z`` (in :meth:`gradient`'s form) onto the
        simplex (eq. 2), or, with ``cap`` (per-coordinate caps), onto the capped simplex
        S_k (§3.1) or the dataset-combining set S_c (§3.2)."""
        raise NotImplementedError  # pragma: no cover - interface

    def constant(self, n_cells: int) -> float:  # pragma: no cover - interface
        """L, the bound on ``‖d_t‖_*²`` behind η_t = γ_t / L (eqs. 8–9), for a
        distribution over ``n_cells`` cells."""
        raise NotImplementedError

    def error_bound(self, potential: float, n_rows: int, equal_weights: bool) -> float:
        """Theorem 1's bound on the training error from the run's own
        ``potential = Σ_t (η_t γ_t − L η_t² / 2)`` (eqs. 15/18 with the regret bound 13),
        over ``n_rows`` rows; NaN where the theorem gives none (``equal_weights``
        False: the Euclidean map's bound is for the uniform start only)."""
        raise NotImplementedError  # pragma: no cover - interface

    def project_rows(self, blocks: RowBlocks, z: Rows, cap: float | Rows | None = None) -> Rows:
        """``project`` on the rows of a binary fit (:mod:`oracleboost.rows.blocks`): here in
        memory only; the library's maps also project rows held by a cluster."""
        if not isinstance(z, np.ndarray):
            raise NotDistributedError(
                f"the mirror map {self!r} projects rows in memory only; on a dask array use "
                "mirror='entropy' or 'euclidean'"
            )
        return self.project(z, cap)


@dataclass(frozen=True)
class EntropyMap(MirrorMap):
    """``R(w) = Σ w_i log w_i``: a multiplicative update and KL projections, L = 1
    (ℓ∞ dual norm), training error ≤ ``exp(−½ Σ γ_t²)`` at ν = 1 (Theorem 1, eq. 9).

    Weights are carried as ``log w`` (the projections take log z), so the lazy dual
    average ``log z_t`` never underflows to a stuck zero; that makes the lazy update the
    default (identical to the active one in exact arithmetic).
    """

    name = "entropy"
    default_update = "lazy"

    def gradient(self, w: np.ndarray) -> np.ndarray:
        return grad_entropy(w)  # log w; a weight at exact 0 stays 0 (KL)

    def project(self, z: np.ndarray, cap: np.ndarray | None = None) -> np.ndarray:
        return kl_simplex(z) if cap is None else kl_capped_simplex(z, cap)

    def constant(self, n_cells: int) -> float:
        return 1.0

    def error_bound(self, potential: float, n_rows: int, equal_weights: bool) -> float:
        return math.exp(-potential) if potential > 0 else 1.0

    def project_rows(self, blocks: RowBlocks, z: Rows, cap: float | Rows | None = None) -> Rows:
        from oracleboost.optim.row_projections import kl_simplex_rows

        return kl_simplex_rows(blocks, z, cap)


@dataclass(frozen=True)
class EuclideanMap(MirrorMap):
    """``R(w) = ½‖w‖²``: an additive update and sort-based simplex projections, L = N
    (ℓ2 dual norm over N cells), training error ≤ ``1/(1 + Σ γ_t²)`` at ν = 1
    (Theorem 1, eq. 8), stated for the uniform start only.  The update defaults to the
    active one, as the authors' R package does."""

    name = "euclidean"

    def gradient(self, w: np.ndarray) -> np.ndarray:
        return grad_euclidean(w)  # w itself (a copy)

    def project(self, z: np.ndarray, cap: np.ndarray | None = None) -> np.ndarray:
        return euclidean_simplex(z) if cap is None else euclidean_capped_simplex(z, cap)

    def constant(self, n_cells: int) -> float:
        return float(n_cells)

    def error_bound(self, potential: float, n_rows: int, equal_weights: bool) -> float:
        if not equal_weights:
            return math.nan  # B(w*, w_1) has no closed form in ε for unequal w_1
        return 1.0 / (1.0 + 2.0 * n_rows * potential) if potential > 0 else 1.0

    def project_rows(self, blocks: RowBlocks, z: Rows, cap: float | Rows | None = None) -> Rows:
        from oracleboost.optim.row_projections import euclidean_simplex_rows

        return euclidean_simplex_rows(blocks, z, cap)


MIRROR_MAPS: dict[str, type[MirrorMap]] = {cls.name: cls for cls in (EntropyMap, EuclideanMap)}


def get_mirror_map(mirror: str | MirrorMap) -> MirrorMap:
    """Resolve a mirror map given by name or instance."""
    return resolve_by_name(mirror, MIRROR_MAPS, MirrorMap, "mirror")
