"""A backend is added without touching a booster (:mod:`oracleboost.engine.backends`).

This file defines a backend of its own: its collection is :class:`Held`, an array said to
be kept elsewhere, and it serves a fit as the Dask backend does (the fit's data made by
the backend and handed to the booster's partitioned path, the oracle bound through
``Backend.bind_stumps`` / ``bind_columns``, predictions through ``Backend.predict``, and
what it cannot do refused from its table), here in this process, in one partition.  Every
registered booster fitted on a ``Held`` array is then equal, bit for bit, to the same
booster fitted on the plain array; the boosters that need every row in one process refuse
it by the backend's own words.

The Dask backend's partitions are proven equal to memory by the cluster tests
(``pytest -m cluster``); this one proves the seam: no booster, oracle or engine module
knows this backend, and every booster reaches it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from oracleboost._numerics import largest_row_norm
from oracleboost.boosters import BOOSTERS
from oracleboost.engine.backends import Backend, backend_for, register_backend
from oracleboost.engine.classifier import classification_data
from oracleboost.oracles import LinearOracle, StumpOracle
from oracleboost.oracles.base import max_abs
from oracleboost.oracles.matrix import BoundColumns
from oracleboost.rows.blocks import RowBlocks
from oracleboost.rows.partitioned import NotDistributedError


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
    """A fit's features where the backend keeps them, with their blocks."""

    X: np.ndarray
    blocks: RowBlocks
    backend: Backend


@dataclass(frozen=True)
class _Classes:
    rows: HeldRows
    ypm: np.ndarray
    s: np.ndarray | None
    group: np.ndarray | None = None


@dataclass(frozen=True)
class _Targets:
    rows: HeldRows
    y: np.ndarray
    s: np.ndarray | None


def _plain(a: Any) -> Any:
    return a.a if isinstance(a, Held) else a


class HeldBackend(Backend):
    """Rows in one partition of this process, served through the seam."""

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

    def classification_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                            block_size: int, sample_group: Any = None,
                            scale_free: bool = True, labels: str = "signs") -> _Classes:
        self.calls.append("classification_data")
        data = classification_data(estimator, _plain(X), _plain(y), _plain(sample_weight),
                                   _plain(sample_group), binary=labels == "signs")
        two = labels == "signs" or (labels == "auto" and data.n_classes == 2)
        labels_kept = data.signs(np.int8) if two else data.y_index.astype(np.int64)
        group = None if sample_group is None else data.rows[0] != 0
        return _Classes(self._rows(data.X, block_size), labels_kept,
                        self._weights(sample_weight, data.s, scale_free), group)

    def regression_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                        block_size: int) -> _Targets:
        from oracleboost.engine.base import validate_input
        from oracleboost.oracles.base import check_sample_weight

        self.calls.append("regression_data")
        Xa, ya = validate_input(estimator, _plain(X), _plain(y), y_numeric=True)
        s = check_sample_weight(_plain(sample_weight), Xa.shape[0])
        Xa, ya, s = estimator._positive_weight_rows(Xa, ya, s)
        return _Targets(self._rows(Xa, block_size), np.asarray(ya, dtype=np.float64),
                        self._weights(sample_weight, s, True))

    def _rows(self, X: np.ndarray, block_size: int) -> HeldRows:
        return HeldRows(np.ascontiguousarray(X, dtype=np.float64),
                        RowBlocks(X.shape[0], block_size), self)

    @staticmethod
    def _weights(given: Any, s: np.ndarray, scale_free: bool) -> np.ndarray | None:
        """As the Dask backend gives them: None when none were given or (scaled) all are
        equal (they cancel), else the kept rows' weights."""
        if given is None or (scale_free and bool((s == s[0]).all())):
            return None
        return s

    def bind_stumps(self, oracle: Any, rows: HeldRows) -> Any:
        self.calls.append("bind_stumps")
        return oracle.bind(rows.X)

    def bind_columns(self, oracle: Any, rows: HeldRows, make: Any) -> Any:
        self.calls.append("bind_columns")
        return HeldColumns(oracle, *oracle._matrix_of(rows.X))

    def predict(self, estimator: Any, method: Any, X: Any, *, staged: bool = False) -> Any:
        self.calls.append("predict")
        return method(_plain(X))


class HeldColumns(BoundColumns):
    """Bound columns with what a backend's columns answer besides the queries."""

    @property
    def peak(self) -> float:
        return max_abs(self.A)

    def largest_row_norm(self, extra: float = 0.0, peak: float | None = None) -> float:
        return largest_row_norm(self.A, extra, peak)

    def row(self, i: int, *others: np.ndarray) -> tuple:
        return (np.array(self.A[i], dtype=np.float64), *(o[i] for o in others))


def _data(task: str, seed: int = 0):
    rng = np.random.RandomState(seed)
    X = rng.randn(120, 4)
    if task == "regression":
        return X, X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.randn(120)
    if task == "ranking":
        return X, np.clip(np.round(X[:, 0] + 1), 0, 3)
    if task == "classification":
        return X, np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.5, 0.5])
    return X, (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)


def _model(name: str, oracle: Any, **params: Any):
    spec = BOOSTERS[name]
    params = {"n_estimators": 6, **params}
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


@pytest.fixture
def held():
    backend = HeldBackend()
    with register_backend(lambda X: isinstance(X, Held), backend):
        yield backend


@pytest.mark.parametrize(("name", "oracle"), CASES, ids=[n for n, _ in CASES])
def test_every_booster_fits_through_a_backend_the_tests_define(held, name, oracle):
    spec, model = _model(name, oracle())
    if spec.task == "ranking":
        pytest.skip("the ranker fits in memory only (its queries are not partitioned)")
    X, y = _data(spec.task)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.fit(Held(X), y)
        except NotDistributedError as exc:
            # refused from the backend's table, in its words
            assert "a held array" in str(exc) and "every row in one process" in str(exc)
            assert held.calls == []  # before any data moved
            return
        expected = _model(name, oracle())[1].fit(X, y)
    assert "bind_stumps" in held.calls or "bind_columns" in held.calls
    np.testing.assert_array_equal(_scores(model, X), _scores(expected, X))
    for key, values in expected.history_.items():
        if "time" not in key:
            np.testing.assert_array_equal(model.history_[key], values, err_msg=key)
    held.calls.clear()
    np.testing.assert_array_equal(_scores(model, Held(X)), _scores(expected, X))
    assert held.calls == ["predict"]


def test_what_the_backend_cannot_do_is_refused_from_its_table(held):
    X, y = _data("binary")
    _, model = _model("adaboost", StumpOracle(), warm_start=True)
    model.fit(Held(X), y)
    with pytest.raises(NotDistributedError, match="held rows keep no running state"):
        model.fit(Held(X), y)
    _, model = _model("adaboost", StumpOracle(), n_iter_no_change=2)
    with pytest.raises(NotDistributedError, match="hold rows out yourself"):
        model.fit(Held(X), y)
    _, model = _model("adaboost", StumpOracle())
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
