"""A booster's input checked: X (and y) as scikit-learn's ``validate_data`` reads them, with
errors that name the argument at fault; the fingerprint of a fit's data.

Every check of X a booster makes goes through :func:`validate_input`: ``fit`` in memory
(:mod:`.fit_data`), predictions, eval sets and held-out rows (:mod:`.eval_sets`,
:mod:`.hold_out`, :mod:`.inspection`).
"""

from __future__ import annotations

from typing import Literal, overload

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import get_tags
from sklearn.utils.validation import validate_data

from oracleboost._fingerprint import fingerprint
from oracleboost._typing import ArrayLike
from oracleboost._validation import (
    check_frame_columns,
    converts,
    is_sparse_frame,
    non_numeric_columns,
)
from oracleboost.engine.backends import backend_for
from oracleboost.engine.categories import apply_categories
from oracleboost.oracles.base import canonical_sparse
from oracleboost.rows.partitioned import NotDistributedError

__all__ = ["validate_input", "data_signature", "check_offset"]


@overload
def validate_input(  # type: ignore[overload-overlap]  # "no_validation" is also ArrayLike
    estimator: BaseEstimator, X: ArrayLike, y: Literal["no_validation"] = ..., *,
    y_numeric: bool = ..., reset: bool = ...,
) -> np.ndarray: ...


@overload
def validate_input(
    estimator: BaseEstimator, X: ArrayLike, y: ArrayLike, *, y_numeric: bool = ...,
    reset: bool = ...,
) -> tuple[np.ndarray, np.ndarray]: ...


def validate_input(
    estimator: BaseEstimator, X: ArrayLike, y: ArrayLike = "no_validation", *,
    y_numeric: bool = False, reset: bool = True,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """scikit-learn's ``validate_data(estimator, X, y)`` (which sets, or with
    ``reset=False`` checks, ``n_features_in_`` and ``feature_names_in_``), X as float64
    (and y with ``y_numeric``), with errors that name the argument at fault; without y
    (scikit-learn's ``"no_validation"``), X alone.

    scikit-learn reports a value that is not a number, in X or in y, as NumPy's bare
    "could not convert string to float: 'abc'".  Here the error says which argument
    (and for a DataFrame, which columns) holds it.  X must be finite, or finite and NaN
    where the estimator's scikit-learn tags allow NaN (a booster's do exactly when its
    oracle takes missing values, ``Capabilities.allow_nan``).  A categorical column is read as
    scikit-learn reads it: numeric categories as their values, as the same column of
    floats would be; other categories are refused, naming X and the column (their codes
    would impose an order and distances the categories do not have: encode them first).
    Except where the fit made it categorical (an oracle that takes categories,
    ``Capabilities.categorical``; the fitted ``categories_``): with ``reset=False`` such a
    column of a DataFrame is mapped to the fit's codes first
    (:func:`~oracleboost.engine.categories.apply_categories`; ``fit`` encodes them
    before it validates).
    X is asked for as float64 (what every oracle computes in): with scikit-learn's
    default, "numeric", a DataFrame with such a column came back as an object array and
    failed later, in the oracle, without a name.
    """
    if (backend := backend_for(X)) is not None:
        # scikit-learn would gather every row into this process without a word
        raise NotDistributedError(
            f"{type(estimator).__name__} does not fit {backend.collection}: on a cluster, "
            "CoordinateBoostingClassifier, MirrorBoostingClassifier, the "
            "functional-gradient regressor and classifier (with StumpOracle, "
            "LinearOracle or MatrixOracle) and AcceleratedMarginClassifier do "
            "(see the Dask page of the user guide); or pass X.compute() to fit in memory"
        )
    check_frame_columns(X, type(estimator).__name__)  # one name a column; no dates
    if not reset:  # the fit's categorical columns as its codes (a no-op without them)
        X = apply_categories(X, getattr(estimator, "categories_", None) or {},
                             getattr(estimator, "n_features_in_", -1))
    # a DataFrame of sparse columns is read as scipy sparse X (its names kept)
    sparse = sp.issparse(X) or is_sparse_frame(X)
    if sparse and not _accepts_sparse(estimator):
        raise TypeError(_sparse_refusal(estimator, frame=not sp.issparse(X)))
    # NaN (a missing value) exactly where the booster's oracle takes it (its tags say so)
    allow_nan = get_tags(estimator).input_tags.allow_nan
    finite = "allow-nan" if allow_nan else True
    kw = dict(reset=reset, dtype=np.float64, ensure_all_finite=finite,
              accept_sparse=["csr", "csc"] if sparse else False)
    try:
        # scikit-learn's finiteness check first sums X, which overflows (inf − inf: a
        # RuntimeWarning) on rows holding both ±max; its exact check then decides
        with np.errstate(over="ignore", invalid="ignore"):
            if isinstance(y, str) and y == "no_validation":
                X = validate_data(estimator, X, **kw)
                return canonical_sparse(X, allow_nan=allow_nan) if sparse else X
            X, y = validate_data(estimator, X, y, y_numeric=y_numeric, **kw)
        # scikit-learn converts only an object y; strings stay strings.  A float64 y is
        # not copied (n · 8 bytes at the fit's peak): nothing writes into it
        # (tests/test_bad_input.py checks every regressor leaves it as given)
        return (canonical_sparse(X, allow_nan=allow_nan) if sparse else X,
                np.asarray(y, dtype=np.float64) if y_numeric else y)
    except (TypeError, ValueError) as exc:
        # the same type (scikit-learn's checks expect NumPy's TypeError for an object
        # that is no number), with a message that names the argument
        columns = non_numeric_columns(X)
        if columns is not None:  # (the first line: scikit-learn's may go on with X itself)
            raise type(exc)(
                f"X must be numeric for {type(estimator).__name__}; {columns}: "
                f"{str(exc).splitlines()[0]}"
            ) from exc
        if y_numeric and not converts(y):
            raise type(exc)(
                f"y must be numeric for {type(estimator).__name__} (a regression or "
                f"ranking target); it holds values that are not numbers ({exc}). For "
                "class labels use a classifier"
            ) from exc
        raise


def _accepts_sparse(estimator: BaseEstimator) -> bool:
    """Whether ``estimator`` fits and predicts scipy sparse X (``_accepts_sparse`` of a
    booster: its oracle's ``sparse_input``)."""
    accepts = getattr(estimator, "_accepts_sparse", None)
    return bool(accepts()) if callable(accepts) else False


def _sparse_refusal(estimator: BaseEstimator, frame: bool = False) -> str:
    """The error for scipy sparse X (``frame``: a DataFrame of sparse columns) given to a
    booster that cannot take it: names X, the booster and its oracle, and what to do."""
    name = type(estimator).__name__
    why = getattr(estimator, "_sparse_refusal_reason", lambda: "")()
    what, dense = (("a DataFrame of sparse columns", "X.sparse.to_dense()") if frame
                   else ("a scipy sparse matrix", "X.toarray()"))
    return (
        f"X is {what}, which {name}{why} does not take; pass {dense} "
        "(dense), or use StumpOracle, TreeOracle, LightGBMOracle or LinearOracle, whose "
        "fits on sparse X equal their fits on X.toarray()"
    )


def data_signature(*arrays) -> str:
    """A fingerprint of the fit's data: ``warm_start`` continues only on the same data
    (:func:`oracleboost._fingerprint.fingerprint`, layout-independent; early stopping
    holds out the same rows again by the same fingerprint: :mod:`.hold_out`)."""
    return fingerprint(*arrays)


def check_offset(offset: ArrayLike, n: int, name: str = "init_score",
                 columns: tuple[int, ...] | None = None) -> np.ndarray:
    """A per-row offset (``init_score``: LightGBM's ``init_score``, XGBoost's
    ``base_margin``) as float64 of ``n`` rows, finite; ``columns`` the shape of a row's
    score (``()`` for one score, ``(K,)`` for one per class), unchecked when None.
    Errors name ``name``."""
    try:
        a = np.asarray(offset, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of numbers; {exc}") from exc
    if a.ndim not in (1, 2) or a.shape[0] != n:
        raise ValueError(f"{name} must have one row per row of X ({n}); got shape {a.shape}")
    if columns is not None and a.shape[1:] != columns:
        want = (n, *columns)
        raise ValueError(
            f"{name} must have shape {want}, one starting score per row"
            f"{' and class' if columns else ''}; got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return a
