"""A backend is added without touching a booster (:mod:`oracleboost.engine.backends`).

This file defines a backend of its own: its collection is :class:`Held`, an array said to
be kept elsewhere, and it serves a fit as the Dask backend does, here in this process:
the fit's data made by the backend, the rows cut into partitions of unequal sizes held
by two in-process "workers" (:class:`~oracleboost.rows.executor.InProcessExecutor`), the
passes run partition by partition through the blocks over partitions
(:class:`~oracleboost.rows.partition_blocks.PartitionBlocks`), the oracle bound through
``Backend.bind_stumps`` / ``bind_columns`` to the oracles over partitions (their sums
made partition by partition and added in order), predictions through
``Backend.predict``, and what it cannot do refused from its table.  Every registered
booster fitted on a ``Held`` array is then equal, bit for bit, to the same booster
fitted on the plain array; the boosters that need every row in one process refuse it by
the backend's own words.

The Dask backend runs the same blocks and oracles through its own executor (proven
equal to memory by the cluster tests, ``pytest -m cluster``); this one proves the seam
and the partitioned sums without a cluster: no booster, oracle or engine module knows
this backend, and every booster reaches it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from oracleboost.boosters import BOOSTERS
from oracleboost.engine.backends import Backend, backend_for, register_backend
from oracleboost.engine.classifier import classification_data
from oracleboost.oracles import LinearOracle, StumpOracle
from oracleboost.oracles.partitioned_columns import PartitionedColumns
from oracleboost.oracles.partitioned_hist_trees import PartitionedHistTreeOracle
from oracleboost.oracles.partitioned_stumps import PartitionedStumpOracle
from oracleboost.oracles.stumps import bin_thresholds
from oracleboost.rows.blocks import BLOCKS_PER_PARTITION
from oracleboost.rows.executor import InProcessExecutor
from oracleboost.rows.partition_blocks import PartitionBlocks
from oracleboost.rows.partitioned import NotDistributedError, Partitioned

#: Rows of a block in these fits: partitions of ``BLOCKS_PER_PARTITION`` blocks, 64 rows,
#: so that the tests' 150 rows are three partitions of 64, 64 and 22 rows.
BLOCK = 4


@dataclass(frozen=True)
class Held:
    """The backend's collection: an array kept "elsewhere"."""

    a: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        return self.a.shape

    @property
    def ndim(self) -> int:
        return self.a.ndim


@dataclass(frozen=True)
class HeldRows:
    """A fit's features in partitions, with their blocks (what the oracles over
    partitions bind to: ``PartitionedRows``)."""

    X: np.ndarray  # (kept whole only to cut it and to sample its bins' rows)
    blocks: PartitionBlocks
    backend: Backend

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    def blocks_for(self, oracle: Any) -> PartitionBlocks:
        assert int(oracle.block_size) == self.blocks.block_size
        return self.blocks

    def stump_thresholds(self, oracle: StumpOracle) -> tuple[list, list]:
        rows = oracle._sample(self.X.shape[0])
        t = bin_thresholds(self.X if rows is None else self.X[rows], oracle.max_bins,
                           oracle.exact)
        return t, t

    def bind_partitions(self, bind: Any, *args: Any) -> Partitioned:
        bound = _split(self.X, self.blocks.sizes, lambda part: bind(part, *args))
        self.blocks.place(bound)
        return bound


def _split(a: np.ndarray, sizes: tuple, fn: Any = None) -> Partitioned:
    """``a``'s rows in partitions of ``sizes`` (each made ``fn(part)``), each partition's
    handle the value itself (the in-process executor's)."""
    cuts = np.cumsum(sizes)[:-1]
    parts = [np.ascontiguousarray(p) for p in np.split(a, cuts)]
    return Partitioned(tuple((p if fn is None else fn(p), None) for p in parts), sizes)


@dataclass(frozen=True)
class _Classes:
    rows: HeldRows
    ypm: Partitioned
    s: Partitioned | None
    group: Partitioned | None = None


@dataclass(frozen=True)
class _Targets:
    rows: HeldRows
    y: Partitioned
    s: Partitioned | None


def _plain(a: Any) -> Any:
    return a.a if isinstance(a, Held) else a


class HeldBackend(Backend):
    """Rows in partitions of unequal sizes held by two in-process workers, served
    through the seam."""

    name = "held"
    collection = "a held array"
    cannot = {
        "warm_start": "the held rows keep no running state",
        "all_rows": "it needs every row in one process",
        "held_out_rows": "hold rows out yourself and pass them as an eval_set",
        "eval_rows": "pass plain arrays",
        "categories": "categories are not held",
    }

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.placed: list[tuple] = []  # (the partitions' sizes, their groups) a bind
        self.executor = InProcessExecutor(workers=2)

    def classification_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                            block_size: int, sample_group: Any = None,
                            scale_free: bool = True, labels: str = "signs") -> _Classes:
        self.calls.append("classification_data")
        data = classification_data(estimator, _plain(X), _plain(y), _plain(sample_weight),
                                   _plain(sample_group), binary=labels == "signs")
        two = labels == "signs" or (labels == "auto" and data.n_classes == 2)
        labels_kept = data.signs(np.int8) if two else data.y_index.astype(np.int64)
        rows = self._rows(data.X, block_size)
        sizes = rows.blocks.sizes
        group = None if sample_group is None else _split(data.rows[0] != 0, sizes)
        s = self._weights(sample_weight, data.s, scale_free)
        return _Classes(rows, _split(labels_kept, sizes),
                        None if s is None else _split(s, sizes), group)

    def regression_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                        block_size: int) -> _Targets:
        from oracleboost.engine.base import validate_input
        from oracleboost.oracles.base import check_sample_weight

        self.calls.append("regression_data")
        Xa, ya = validate_input(estimator, _plain(X), _plain(y), y_numeric=True)
        s = check_sample_weight(_plain(sample_weight), Xa.shape[0])
        Xa, ya, s = estimator._positive_weight_rows(Xa, ya, s)
        rows = self._rows(Xa, block_size)
        s = self._weights(sample_weight, s, True)
        return _Targets(rows, _split(np.asarray(ya, dtype=np.float64), rows.blocks.sizes),
                        None if s is None else _split(s, rows.blocks.sizes))

    def _rows(self, X: np.ndarray, block_size: int) -> HeldRows:
        n, P = X.shape[0], BLOCKS_PER_PARTITION * block_size
        sizes = (P,) * (n // P) + ((n % P,) if n % P else ())
        return HeldRows(np.asarray(X, dtype=np.float64),
                        PartitionBlocks(self.executor, sizes, block_size), self)

    @staticmethod
    def _weights(given: Any, s: np.ndarray, scale_free: bool) -> np.ndarray | None:
        """As the Dask backend gives them: None when none were given or (scaled) all are
        equal (they cancel), else the kept rows' weights."""
        if given is None or (scale_free and bool((s == s[0]).all())):
            return None
        return s

    def bind_stumps(self, oracle: Any, rows: HeldRows) -> Any:
        self.calls.append("bind_stumps")
        return self._placed(PartitionedStumpOracle(oracle, rows))

    def bind_hist_trees(self, oracle: Any, rows: HeldRows) -> Any:
        self.calls.append("bind_hist_trees")
        return self._placed(PartitionedHistTreeOracle(oracle, rows))

    def bind_columns(self, oracle: Any, rows: HeldRows, make: Any) -> Any:
        self.calls.append("bind_columns")
        return self._placed(PartitionedColumns(oracle, rows, make))

    def _placed(self, bound: Any) -> Any:
        self.placed.append((bound.blocks.sizes, bound.blocks.groups))
        return bound

    def predict(self, estimator: Any, method: Any, X: Any, *, staged: bool = False) -> Any:
        self.calls.append("predict")
        return method(_plain(X))


def _data(task: str, seed: int = 0):
    rng = np.random.RandomState(seed)
    X = rng.randn(150, 4)
    if task == "regression":
        return X, X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.randn(150)
    if task == "ranking":
        return X, np.clip(np.round(X[:, 0] + 1), 0, 3)
    if task == "classification":
        return X, np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.5, 0.5])
    return X, (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)


def _model(name: str, oracle: Any, **params: Any):
    spec = BOOSTERS[name]
    params = {"n_estimators": 6, "block_size": BLOCK, **params}
    if name in ("lpboost", "erlpboost"):
        params["nu"] = 5  # several rounds on these few rows
    return spec, spec.make(oracle, **params)


def _scores(model: Any, X: Any) -> np.ndarray:
    return np.asarray(model.decision_function(X) if hasattr(model, "decision_function")
                      else model.predict(X))


#: The boosters and the oracle each fits on a backend's partitions with (accelerated
#: boosting reads whole correlation vectors: the linear oracle).
CASES = [(name, LinearOracle if name == "accelerated" else StumpOracle)
         for name in BOOSTERS]
SEEDS = (0, 1)


@pytest.fixture
def held():
    backend = HeldBackend()
    with register_backend(lambda X: isinstance(X, Held), backend):
        yield backend


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("name", "oracle"), CASES, ids=[n for n, _ in CASES])
def test_every_booster_fits_through_a_backend_the_tests_define(held, name, oracle, seed):
    spec, model = _model(name, oracle(block_size=BLOCK))
    if spec.task == "ranking":
        pytest.skip("the ranker fits in memory only (its queries are not partitioned)")
    X, y = _data(spec.task, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.fit(Held(X), y)
        except NotDistributedError as exc:
            # refused from the backend's table, in its words
            assert "a held array" in str(exc) and "every row in one process" in str(exc)
            assert held.calls == []  # before any data moved
            return
        expected = _model(name, oracle(block_size=BLOCK))[1].fit(X, y)
    assert "bind_stumps" in held.calls or "bind_columns" in held.calls
    # the fit ran over partitions of unequal sizes, in two workers' groups of them
    ((sizes, groups),) = held.placed
    assert sum(sizes) == len(X) and len(set(sizes)) == 2
    assert len(groups) == 2 and sorted(sum(groups, [])) == list(range(len(sizes)))
    np.testing.assert_array_equal(_scores(model, X), _scores(expected, X))
    for key, values in expected.history_.items():
        if "time" not in key:
            np.testing.assert_array_equal(model.history_[key], values, err_msg=key)
    held.calls.clear()
    np.testing.assert_array_equal(_scores(model, Held(X)), _scores(expected, X))
    assert held.calls == ["predict"]


def test_what_the_backend_cannot_do_is_refused_from_its_table(held):
    X, y = _data("binary")
    _, model = _model("adaboost", StumpOracle(block_size=BLOCK), warm_start=True)
    model.fit(Held(X), y)
    with pytest.raises(NotDistributedError, match="held rows keep no running state"):
        model.fit(Held(X), y)
    _, model = _model("adaboost", StumpOracle(block_size=BLOCK), n_iter_no_change=2)
    with pytest.raises(NotDistributedError, match="hold rows out yourself"):
        model.fit(Held(X), y)
    _, model = _model("adaboost", StumpOracle(block_size=BLOCK))
    with pytest.raises(NotDistributedError, match=r"eval_set\[0\].*pass plain arrays"):
        model.fit(X, y, eval_set=[(Held(X), y)])
    with pytest.raises(KeyError, match="unknown need"):
        held.refuse("teleport", "a fit")


def test_the_backend_is_found_only_while_registered():
    backend = HeldBackend()
    assert backend_for(Held(np.zeros((2, 2)))) is None
    with register_backend(lambda X: isinstance(X, Held), backend):
        assert backend_for(Held(np.zeros((2, 2)))) is backend
        assert backend_for(np.zeros((2, 2))) is None
    assert backend_for(Held(np.zeros((2, 2)))) is None
    with pytest.raises(TypeError, match="must be a Backend"):
        with register_backend(lambda X: True, object()):  # type: ignore[arg-type]
            pass


@pytest.mark.parametrize("seed", SEEDS)
def test_the_partitions_histograms_and_products_are_those_in_memory(held, seed):
    """The sums over partitions, read directly: a stump oracle's histograms and a
    column oracle's ``Hᵀr``, for weights of many magnitudes (where the order of a sum
    shows in its bits; few bins, so that each bin sums rows of every partition), equal
    bit for bit to those of the same oracles in memory."""
    from oracleboost.oracles import _stump_kernels as kernels

    rng = np.random.RandomState(seed)
    X, _ = _data("binary", seed)
    r = rng.randn(len(X)) * 10.0 ** rng.uniform(-8, 8, len(X))
    rows = held._rows(X, BLOCK)
    r_held = _split(r, rows.blocks.sizes)

    stumps = StumpOracle(block_size=BLOCK, max_bins=8)
    here, there = stumps.bind(X), held.bind_stumps(stumps, rows)
    outs = [np.empty((X.shape[1], here._B)) for _ in range(2)]
    here._histograms(kernels.hist_1d, (r,), (outs[0],))
    there._histograms(kernels.hist_1d, (r_held,), (outs[1],))
    np.testing.assert_array_equal(outs[1], outs[0])

    columns = LinearOracle(block_size=BLOCK)
    here = columns.bind(X)
    there = held.bind_columns(columns, rows, None)
    np.testing.assert_array_equal(there.correlation_vector(r_held),
                                  here.correlation_vector(r))
    assert there.peak == here.peak


def test_the_in_process_executor_groups_consecutive_partitions_by_worker():
    executor = InProcessExecutor(workers=2)
    assert executor.groups(["a", "b", "c", "d", "e"]) == [[0, 1], [2, 3, 4]]
    assert InProcessExecutor(workers=4).groups(["a"]) == [[0]]
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="workers must be a positive int"):
            InProcessExecutor(workers=bad)  # type: ignore[arg-type]
