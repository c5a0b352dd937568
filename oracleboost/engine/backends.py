"""Where a fit's rows live: the backend seam.

A fit's rows are in this process's memory (passed over by threads, :mod:`oracleboost.rows`)
unless ``fit`` is given a collection that another backend accepts (a dask array puts them
on a Dask cluster's workers, an array on a GPU on that GPU), or its oracle names a device
(``StumpOracle(device="cuda")``: the rows given in memory go to the GPU, :data:`DEVICES`).
Memory is a backend too (:class:`~oracleboost.engine.fit_data.MemoryBackend`): a booster asks
:func:`~oracleboost.engine.fit_data.fit_backend` for ``X``'s backend, builds its problem
from the fit's data that backend makes, and asks it by need (:meth:`Backend.can`,
:meth:`Backend.refuse`), never by name.

* :data:`BACKENDS` is the table of the library's backends beyond memory: the collections
  each accepts, and the module that serves it, imported the first time a fit is given
  such a collection (so that nothing imports Dask unless a fit is given a dask array).
  :func:`backend_for` is ``X``'s backend among them, or None for arrays in memory;
  :data:`DEVICES` names the backend of an oracle's ``device`` (:func:`device_backend`).
* :class:`Backend` is what a backend provides: the fit's data made where the rows are
  (its checks equal to those in memory), the oracle bound there, predictions on its
  collections, and :attr:`Backend.cannot`, the one table of what it cannot do, refused
  from there by name (:meth:`Backend.refuse`, a
  :class:`~oracleboost.rows.partitioned.NotDistributedError`).
* An oracle that can answer on a backend's partitions declares how
  (``Oracle._bind_partitioned``: its answers are sums over rows, of histograms or of
  column products); the backend says how such sums run there (:meth:`Backend.bind_stumps`,
  :meth:`Backend.bind_hist_trees`, :meth:`Backend.bind_columns`).
* :func:`register_backend` adds one at run time (the tests add an in-process backend that
  splits the rows between two "workers").
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from oracleboost.rows.partitioned import NotDistributedError, is_dask_collection

__all__ = ["Backend", "BackendEntry", "BACKENDS", "DEVICES", "NEEDS", "backend_for",
           "device_backend", "equal_weights", "is_device_array", "register_backend"]

#: What a booster may need of the place its rows are, by name: the keys of
#: :attr:`Backend.cannot`.
NEEDS: dict[str, str] = {
    "warm_start": "continuing a fit from its running state, kept after fit",
    "all_rows": "every row in one process (an LP over the rows, an n × n Gram matrix, "
                "the exact optimum of the risk)",
    "held_out_rows": "early stopping's rows held out of the training rows "
                     "(validation_fraction)",
    "eval_rows": "an eval set in the backend's collections (eval sets are scored in this "
                 "process, round by round)",
    "categories": "encoding a DataFrame's categorical columns",
    "class_weight": "weighting each row by its class (class_weight)",
    "init_score": "a per-row starting score (init_score)",
    "callable_objective": "a loss given as a Python function (loss=callable)",
}


class Backend:
    """A place for a fit's rows other than this process's memory.

    A subclass names itself (:attr:`name`), says what its collections are
    (:attr:`collection`, for messages), what it cannot do (:attr:`cannot`: a need of
    :data:`NEEDS` -> why not), and overrides the methods it provides; those it does not
    provide refuse by name."""

    #: The backend's name (``"dask"``).
    name: str = ""
    #: Its collections, as a message names them (``"a dask array"``).
    collection: str = ""
    #: What it cannot do: a need of :data:`NEEDS` -> why not (read by :meth:`refuse`).
    cannot: Mapping[str, str] = {}

    def refuse(self, need: str, who: str, instead: str = "") -> None:
        """Raise :class:`NotDistributedError` if this backend cannot do ``need``: ``who``
        (what asked: ``"warm_start"``, ``"TotallyCorrectiveClassifier"``) on
        :attr:`collection`, the backend's reason, and ``instead`` (what to do)."""
        if not self.can(need):
            tail = f"; {instead}" if instead else ""
            raise NotDistributedError(
                f"{who} does not run on {self.collection}: {self.cannot[need]}{tail}")

    def can(self, need: str) -> bool:
        """Whether this backend can do ``need`` (a key of :data:`NEEDS`).  A backend that
        can do ``"all_rows"`` gives rows with ``X``, every row in this process."""
        if need not in NEEDS:
            raise KeyError(f"unknown need {need!r}; the needs are {sorted(NEEDS)}")
        return need not in self.cannot

    def _missing(self, what: str) -> NotDistributedError:
        return NotDistributedError(f"{what} does not run on {self.collection} "
                                   f"(the {self.name} backend does not provide it)")

    # -- the fit's data -------------------------------------------------------------------
    def classification_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                            block_size: int, **options: Any) -> Any:
        """A classifier's data where the rows are (the checks of
        :func:`oracleboost.engine.classifier.classification_data`); sets ``classes_``
        and ``n_features_in_``.  A backend that can do ``"init_score"`` takes
        ``offset=`` (the per-row starting scores) and gives the data an ``offset``."""
        raise self._missing(type(estimator).__name__)

    def regression_data(self, estimator: Any, X: Any, y: Any, sample_weight: Any,
                        block_size: int) -> Any:
        """A regressor's data where the rows are; sets ``n_features_in_``.  (``offset=``
        as for :meth:`classification_data`.)"""
        raise self._missing(type(estimator).__name__)

    # -- oracles --------------------------------------------------------------------------
    def bind(self, oracle: Any, rows: Any, **keywords: Any) -> Any:
        """``oracle`` bound to the fit's ``rows``: an oracle says how its answers are sums
        over partitions (``Oracle._bind_partitioned``, which calls :meth:`bind_stumps`,
        :meth:`bind_hist_trees` or :meth:`bind_columns`); ``keywords`` are ``bind``'s
        beyond X, none off memory."""
        return oracle._bind_partitioned(rows, self)

    def bind_stumps(self, oracle: Any, rows: Any) -> Any:
        """A stump oracle over ``rows``: histograms summed over the partitions."""
        raise self._missing(type(oracle).__name__)

    def bind_hist_trees(self, oracle: Any, rows: Any) -> Any:
        """A histogram-tree oracle over ``rows``: each leaf's histogram summed over the
        partitions, each partition keeping its rows' leaves."""
        raise self._missing(type(oracle).__name__)

    def bind_columns(self, oracle: Any, rows: Any, make: Callable) -> Any:
        """A finite class of columns over ``rows`` (``make(j, scale)``: column j's
        hypothesis): products summed over the partitions.  Beside the bound oracle's
        queries it answers ``peak`` (max |A|), ``largest_row_norm(extra, peak=None)``
        and ``row(i, *others)`` (row i of the columns, and entry i of each of the
        per-row ``others``), which accelerated boosting reads."""
        raise self._missing(type(oracle).__name__)

    # -- predictions ----------------------------------------------------------------------
    def predict(self, estimator: Any, method: Callable, X: Any, *,
                staged: bool = False) -> Any:
        """``method`` (a prediction method of a fitted ``estimator``) on the collection
        ``X``, as a collection of the backend (``staged``: a generator of them)."""
        raise self._missing(f"{type(estimator).__name__}'s prediction")


@dataclass(frozen=True)
class BackendEntry:
    """A row of :data:`BACKENDS`: the backend ``name``, ``accepts(X)`` (whether ``X`` is
    one of its collections) and the ``module`` whose ``BACKEND`` serves it."""

    name: str
    accepts: Callable[[Any], bool]
    module: str


def is_device_array(x: object) -> bool:
    """Whether ``x`` is an array on a CUDA GPU: it exposes ``__cuda_array_interface__``
    (a CuPy array, a numba device array, a PyTorch CUDA tensor), or it is a device
    array of numba's CUDA simulator.  Imports nothing."""
    # (asked of the instance: a CPU tensor's class has the property, which refuses it)
    return hasattr(x, "__cuda_array_interface__") or (
        type(x).__module__.startswith("numba.cuda.simulator") and hasattr(x, "copy_to_host"))


#: The library's backends (in memory is the default: no row here).
BACKENDS: tuple[BackendEntry, ...] = (
    BackendEntry("dask", is_dask_collection, "oracleboost.distributed.backend"),
    BackendEntry("cuda", is_device_array, "oracleboost.cuda.backend"),
)

#: The backends an oracle's ``device`` selects for rows given in memory (an oracle
#: declares ``device="cuda"``: its answers, and the booster's passes, on the GPU), by
#: device: the module whose ``BACKEND`` serves it, imported when a fit asks for it.
DEVICES: dict[str, str] = {"cuda": "oracleboost.cuda.backend"}

#: Backends added by :func:`register_backend`, tried before :data:`BACKENDS`.
_REGISTERED: list[tuple[Callable[[Any], bool], Backend]] = []


def backend_for(X: Any) -> Backend | None:
    """The backend whose collection ``X`` is, or None for rows in memory."""
    for accepts, backend in _REGISTERED:
        if accepts(X):
            return backend
    for entry in BACKENDS:
        if entry.accepts(X):
            return importlib.import_module(entry.module).BACKEND
    return None


def device_backend(oracle: Any) -> Backend | None:
    """The backend of ``oracle``'s ``device`` (:data:`DEVICES`), or None for the CPU (no
    ``device``, or ``device="cpu"``)."""
    device = getattr(oracle, "device", "cpu")
    if device == "cpu" or not isinstance(device, str) or device not in DEVICES:
        return None
    return importlib.import_module(DEVICES[device]).BACKEND


def equal_weights(s: Any) -> bool:
    """Whether a fit's weights ``s`` (as a backend gives them) are all equal: None (a
    backend drops equal weights: they cancel), or an array in memory whose entries are
    equal."""
    if s is None:
        return True
    return isinstance(s, np.ndarray) and bool((s == s[0]).all())


@contextmanager
def register_backend(accepts: Callable[[Any], bool], backend: Backend) -> Iterator[Backend]:
    """Within the block, ``backend`` serves the collections that ``accepts``."""
    if not isinstance(backend, Backend):
        raise TypeError(f"backend must be a Backend; got {type(backend).__name__}")
    entry = (accepts, backend)
    _REGISTERED.insert(0, entry)
    try:
        yield backend
    finally:
        _REGISTERED.remove(entry)
