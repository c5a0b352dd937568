"""The GPU backend: a fit's rows and per-row state on one NVIDIA GPU (see
:mod:`oracleboost.engine.backends` for the seam it sits on).

A fit runs here when its X is on the GPU (an array with ``__cuda_array_interface__``: a
CuPy or numba device array) or when its oracle asks for it (``StumpOracle(device=
"cuda")`` with X in memory).  The oracles that answer here are ``StumpOracle``
(:class:`~oracleboost.cuda.stumps.DeviceStumps`) and the columns of ``LinearOracle``
and ``MatrixOracle`` (:class:`~oracleboost.cuda.columns.DeviceColumns`).  The fit's
data are checked in memory as every fit's are
(:class:`~oracleboost.engine.fit_data.MemoryBackend`: the same labels, weights and rows
of weight 0 dropped), X binned there by the CPU oracle (the same thresholds and codes),
then uploaded once: the codes, the labels and the weights.  From there the booster's
passes run on the device (:class:`~oracleboost.cuda.blocks.DeviceBlocks`) and the oracle
answers there (:class:`~oracleboost.cuda.stumps.DeviceStumps`): the margins and weights
stay on the GPU for the whole fit, and a round brings back the chosen stump and a few
scalars.

A fitted booster's model is the CPU's (its stumps and coefficients).  Given X on the
device, a stump ensemble's scores are summed there, equal to the CPU's bit for bit
(:mod:`oracleboost.cuda.predict`); other models are scored on a host copy of X.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from oracleboost.cuda.blocks import DeviceBlocks
from oracleboost.cuda.columns import DeviceColumns
from oracleboost.cuda.device import cuda_module, upload
from oracleboost.cuda.stumps import DeviceStumps, Launch
from oracleboost.engine.backends import Backend, equal_weights, is_device_array
from oracleboost.engine.fit_data import MEMORY
from oracleboost.oracles.matrix import LinearOracle, MatrixOracle
from oracleboost.oracles.stumps import StumpOracle
from oracleboost.rows.partitioned import NotDistributedError

__all__ = ["BACKEND", "CudaBackend", "DeviceClassificationData", "DeviceRegressionData",
           "DeviceRows", "to_host"]


def to_host(a: Any) -> Any:
    """``a`` in this process's memory: a device array copied to a NumPy array (numba's
    ``copy_to_host``, CuPy's ``get``, or any ``__cuda_array_interface__`` through
    numba); anything else as it is."""
    if a is None or not is_device_array(a):
        return a
    if hasattr(a, "copy_to_host"):
        return a.copy_to_host()
    if type(a).__module__.split(".")[0] == "cupy":
        return a.get()
    return cuda_module().as_cuda_array(a).copy_to_host()


@dataclass(frozen=True)
class DeviceRows:
    """A fit's features for the GPU: ``X`` checked in memory (the CPU oracle bins it
    there; its codes are uploaded), the blocks on the device, and the backend."""

    X: np.ndarray
    blocks: DeviceBlocks
    backend: CudaBackend


@dataclass(frozen=True)
class DeviceClassificationData:
    """A classifier's data on the GPU: the labels ±1 (``int8``; class indices as
    ``int64`` for a booster that scores each class there) and the weights of the kept
    rows as device arrays; ``s`` is None when the weights are all equal (they
    cancel: :func:`~oracleboost.engine.backends.equal_weights`)."""

    rows: DeviceRows
    ypm: Any
    s: Any
    group: Any = None
    offset: None = None


@dataclass(frozen=True)
class DeviceRegressionData:
    """A regressor's data on the GPU: the float64 targets and the weights of the kept
    rows as device arrays; ``s`` is None when the weights are all equal (the functional
    regressor's fit is scale-free in them: they cancel)."""

    rows: DeviceRows
    y: Any
    s: Any
    offset: None = None


class CudaBackend(Backend):
    """Rows and per-row state on one NVIDIA GPU (numba's CUDA target; its simulator
    where ``NUMBA_ENABLE_CUDASIM=1``).

    Parameters
    ----------
    launch : Launch or None
        The kernels' launch shape (None: :meth:`Launch.default` for the data).  A fit's
        bits do not depend on it: every sum is exact on integers, every extreme exact.
    """

    name = "cuda"
    collection = "the GPU (device='cuda', or X on the device)"
    cannot = {
        "warm_start": "the running state (margins, weights) lives on the GPU during the "
                      "fit and is not kept after it; set warm_start=False",
        "all_rows": "it needs every row in one process's memory (an LP over the rows, an "
                    "n × n Gram matrix, the exact optimum of the risk); give the oracle "
                    "device='cpu' and X in memory",
        "held_out_rows": "early stopping's hold-out splits X in memory: with X on the "
                         "device, set validation_fraction=None and pass "
                         "eval_set=[(X_val, y_val)] as NumPy arrays",
        "eval_rows": "an eval set is scored in this process, round by round: pass NumPy "
                     "arrays (a CuPy array's .get()); the fit's own X may be on the device",
        "categories": "categorical features have no device kernel (the GPU's stumps split "
                      "numeric bins); fit on the CPU, or give the codes as numbers",
        "init_score": "the rounds on the GPU start from zero scores; fit on the CPU to "
                      "start from init_score",
        "callable_objective": "a loss given as a Python function runs row by row on the "
                              "host; use a loss the GPU runs, or fit on the CPU",
    }

    def __init__(self, launch: Launch | None = None) -> None:
        if launch is not None and not isinstance(launch, Launch):
            raise TypeError(f"launch must be a Launch or None; got {type(launch).__name__}")
        self.launch = launch

    # -- the fit's data -------------------------------------------------------------------
    def classification_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                            block_size: int, sample_group: Any = None,
                            scale_free: bool = True, labels: str = "signs",
                            offset: Any = None) -> DeviceClassificationData:
        if offset is not None:
            self.refuse("init_score", "init_score")
        X = self._dense(to_host(X))
        data = MEMORY.classification_data(
            estimator, X, to_host(y), to_host(sample_weight), block_size,
            sample_group=to_host(sample_group), scale_free=scale_free, labels=labels)
        by_class = data.ypm.dtype != np.int8  # class indices: a score for each class
        if by_class and not getattr(estimator, "_scores_by_class_on_device", False):
            raise NotDistributedError(
                f"{type(estimator).__name__} with {len(estimator.classes_)} classes does not "
                "run on the GPU: its rounds there score one margin (two classes, labels "
                "±1, a margin loss); fit on the CPU")
        cuda_module()  # no GPU: refused by name before anything is uploaded
        rows = DeviceRows(data.rows.X, self._blocks(data.rows.X.shape[0]), self)
        # equal weights cancel where the booster is scale-free in them, and unit weights
        # everywhere (class_weight has made them unequal by now, if it applies)
        equal = bool((data.s == data.s[0]).all()) and (scale_free or data.s[0] == 1.0)
        s = None if equal else upload(np.ascontiguousarray(data.s, dtype=np.float64))
        group = None if data.group is None else upload(data.group)
        # class indices as int64 (the kernels' one type for them, on every platform)
        ypm = data.ypm.astype(np.int64, copy=False) if by_class else data.ypm
        return DeviceClassificationData(rows, upload(ypm), s, group)

    def regression_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                        block_size: int, offset: Any = None) -> DeviceRegressionData:
        """The checks of a fit in memory (the same targets, weights and rows of weight 0
        dropped), then the targets and the weights uploaded once."""
        if offset is not None:
            self.refuse("init_score", "init_score")
        X = self._dense(to_host(X))
        data = MEMORY.regression_data(estimator, X, to_host(y), to_host(sample_weight),
                                      block_size)
        cuda_module()  # no GPU: refused by name before anything is uploaded
        rows = DeviceRows(data.rows.X, self._blocks(data.rows.X.shape[0]), self)
        s = None if equal_weights(data.s) else upload(
            np.ascontiguousarray(data.s, dtype=np.float64))
        y = upload(np.ascontiguousarray(data.y, dtype=np.float64))
        return DeviceRegressionData(rows, y, s)

    def _blocks(self, n: int) -> DeviceBlocks:
        return DeviceBlocks(n, self._grid(n))

    def _grid(self, n: int) -> tuple[int, int]:
        """The row kernels' ``(blocks, threads a block)`` for ``n`` rows."""
        launch = self.launch if self.launch is not None else Launch.default(max(1, n), 1, 2)
        return launch.row_blocks, launch.threads

    @staticmethod
    def _dense(X: Any) -> Any:
        if sp.issparse(X):
            raise NotDistributedError(
                "sparse X does not run on the GPU (its stumps read dense codes); pass "
                "X.toarray(), or fit on the CPU")
        return X

    # -- oracles --------------------------------------------------------------------------
    def bind(self, oracle: Any, rows: DeviceRows, **keywords: Any) -> DeviceStumps:
        if keywords.get("categorical_features"):
            self.refuse("categories", "categorical_features")
        if type(oracle) in (LinearOracle, MatrixOracle):
            return oracle._bind_partitioned(rows, self)  # (its bind_columns)
        if not isinstance(oracle, StumpOracle):
            raise NotDistributedError(
                f"oracle={type(oracle).__name__} does not answer on the GPU: StumpOracle's "
                "stumps (StumpOracle(device='cuda')), and LinearOracle's and "
                "MatrixOracle's columns with X on the device, do; fit on the CPU for other "
                "oracles")
        return self.bind_stumps(oracle, rows)

    def bind_stumps(self, oracle: StumpOracle, rows: DeviceRows) -> DeviceStumps:
        """The CPU oracle's bins and codes of ``rows.X``, the codes uploaded: the
        device's stumps are the CPU's candidates."""
        cpu = clone(oracle).set_params(device="cpu")
        return DeviceStumps(cpu.bind(rows.X), launch=self.launch)

    def bind_columns(self, oracle: Any, rows: DeviceRows, make: Callable) -> DeviceColumns:
        """The class's matrix of ``rows.X`` (made and checked on the CPU), uploaded: its
        products on the device (:class:`~oracleboost.cuda.columns.DeviceColumns`)."""
        A, make = oracle._matrix_of(rows.X)
        return DeviceColumns(oracle, A, make, rows.blocks)

    # -- predictions ----------------------------------------------------------------------
    def predict(self, estimator: Any, method: Callable, X: Any, *,
                staged: bool = False) -> Any:
        """``method`` on the device rows ``X``: a stump ensemble's scores summed on the
        device (:mod:`oracleboost.cuda.predict`: the scores stay there as an array of
        X's kind, labels and probabilities are made on the host from them); any other
        model, or X holding a NaN or an infinity, on a host copy of ``X`` (NumPy arrays;
        a generator of them when ``staged``)."""
        from oracleboost.cuda.predict import device_prediction

        if is_device_array(X) and not sp.issparse(X):
            n = int(X.shape[0]) if getattr(X, "ndim", 0) >= 1 else 0
            made = device_prediction(estimator, method, X, self._grid(n), _like(X), staged)
            if made is not NotImplemented:
                return made
        return method(to_host(X))


def _like(X: Any) -> Callable[[Any], Any]:
    """A device array (numba's) as an array of ``X``'s kind: CuPy's for a CuPy ``X``
    (no copy: it reads the same memory), numba's otherwise."""
    if type(X).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy.asarray
    return lambda a: a


#: The backend :data:`oracleboost.engine.backends.BACKENDS` names for device arrays, and
#: :data:`~oracleboost.engine.backends.DEVICES` for ``device="cuda"``.
BACKEND = CudaBackend()
