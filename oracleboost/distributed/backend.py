"""The Dask backend: a fit's rows on a Dask cluster's workers (see
:mod:`oracleboost.engine.backends` for the seam it sits on)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from oracleboost.engine.backends import Backend

__all__ = ["DaskBackend", "BACKEND"]


class DaskBackend(Backend):
    """Rows in the partitions of a dask array, held by the workers of the active
    ``distributed.Client``; the passes run where the rows are, only statistics and the
    chosen hypotheses travel."""

    name = "dask"
    collection = "a dask array"
    cannot = {
        "warm_start": "the running state is not kept on the cluster after fit; set "
                      "warm_start=False",
        "all_rows": "it needs every row in one process",
        "held_out_rows": "early stopping on a fit on a dask array needs an eval_set (NumPy "
                         "arrays) instead of validation_fraction; set "
                         "validation_fraction=None and pass eval_set=[(X_val, y_val)]",
        "eval_rows": "an eval set is scored in this process, round by round: pass NumPy "
                     "arrays (a sample of the rows, say; X.compute()); the fit's own X may "
                     "be a dask array",
        "categories": "categorical columns are encoded in memory",
        "class_weight": "the classes' weights are applied in memory; pass sample_weight "
                        "as a dask array of the products instead",
        "init_score": "the starting scores are set in memory",
        "callable_objective": "the function would run on the workers, pickled; use a "
                              "Loss subclass",
    }

    def classification_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                            block_size: int, **options: Any) -> Any:
        from oracleboost.distributed.data import cluster_classification_data

        if getattr(estimator, "class_weight", None) is not None:
            self.refuse("class_weight", "class_weight")
        return _on(self, cluster_classification_data(estimator, X, y, sample_weight,
                                                     block_size, **options))

    def regression_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                        block_size: int) -> Any:
        from oracleboost.distributed.data import cluster_regression_data

        return _on(self, cluster_regression_data(estimator, X, y, sample_weight, block_size))

    def bind_stumps(self, oracle: Any, rows: Any) -> Any:
        from oracleboost.distributed.stumps import ClusterStumpOracle

        return ClusterStumpOracle(oracle, rows)

    def bind_hist_trees(self, oracle: Any, rows: Any) -> Any:
        from oracleboost.oracles.partitioned_hist_trees import PartitionedHistTreeOracle

        return PartitionedHistTreeOracle(oracle, rows)

    def bind_columns(self, oracle: Any, rows: Any, make: Callable) -> Any:
        from oracleboost.oracles.partitioned_columns import PartitionedColumns

        return PartitionedColumns(oracle, rows, make)

    def predict(self, estimator: Any, method: Callable, X: Any, *,
                staged: bool = False) -> Any:
        from oracleboost.distributed.predict import on_dask

        return on_dask(estimator, method, X, staged=staged)


def _on(backend: DaskBackend, data: Any) -> Any:
    """``data`` whose rows name ``backend`` (the oracles bind through it)."""
    return dataclasses.replace(data, rows=dataclasses.replace(data.rows, backend=backend))


#: The backend :data:`oracleboost.engine.backends.BACKENDS` names for dask collections.
BACKEND = DaskBackend()
