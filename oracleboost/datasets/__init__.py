"""Data sets and instance generators for the reproduced experiments, one module per family.

* :mod:`~oracleboost.datasets.matrices` — small boosting instances given as margin
  matrices (Rudin et al. 2004; Schapire 2010; Telgarsky 2012, 2013): :func:`rudin_matrix`,
  :func:`schapire_matrix`, the random generators :func:`separable_matrix`,
  :func:`attainable_matrix`, :func:`mixed_matrix`, and :func:`matrix_problem`, which
  turns a margin matrix into the ``(X, y, H)`` a booster over a ``MatrixOracle`` takes.
* :mod:`~oracleboost.datasets.uci` — the UCI multiclass data sets of Grubb & Bagnell
  (2011, §5): :func:`load_uci` (letter, pendigits, satimage, splice) and
  :func:`uci_stand_in_for_connect4`.
* :mod:`~oracleboost.datasets.ranking` — :func:`make_ranking`, a synthetic stand-in for
  MSLR-WEB10K.
* :mod:`~oracleboost.datasets.planning` — synthetic maximum-margin-planning maps
  (:class:`GridWorlds`, :func:`make_terrain_worlds`, :func:`make_grid_worlds`,
  :func:`grid_world_cost`), whose paths are demonstrated with the planner of the
  planning loss, :func:`oracleboost.losses.planning.dag_shortest_paths`.

Every public name is re-exported here, so ``from oracleboost.datasets import ...`` works
for all of them.
"""

from __future__ import annotations

from oracleboost.datasets.matrices import (
    attainable_matrix,
    matrix_problem,
    mixed_matrix,
    rudin_matrix,
    schapire_matrix,
    separable_matrix,
)
from oracleboost.datasets.planning import (
    GridWorlds,
    grid_world_cost,
    make_grid_worlds,
    make_terrain_worlds,
)
from oracleboost.datasets.ranking import make_ranking
from oracleboost.datasets.uci import (
    CONNECT4_STAND_IN,
    UCI_DATASETS,
    load_uci,
    uci_stand_in_for_connect4,
)

__all__ = [
    "rudin_matrix",
    "schapire_matrix",
    "matrix_problem",
    "separable_matrix",
    "attainable_matrix",
    "mixed_matrix",
    "UCI_DATASETS",
    "CONNECT4_STAND_IN",
    "load_uci",
    "uci_stand_in_for_connect4",
    "make_ranking",
    "GridWorlds",
    "make_terrain_worlds",
    "grid_world_cost",
    "make_grid_worlds",
]
