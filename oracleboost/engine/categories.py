"""A pandas DataFrame's categorical columns, for oracles that split on categories.

An oracle that declares ``Capabilities.categorical`` (LightGBM's trees) takes category
codes: ``bind(X, categorical_features=indices)``.  Every booster gets them the same way,
here:

* at ``fit`` (:func:`encode_categories`), each ``category``-dtype column of a DataFrame
  X (any categories: strings, numbers, …) becomes its codes, pandas' ``cat.codes`` as
  float64 with NaN for a missing value; the categories of each such column are kept in
  the fitted attribute ``categories_`` (``{column index: the categories as an
  array}``) and the indices are passed to ``bind``;
* at ``predict``, for eval sets and the staged methods (:func:`apply_categories`, from
  :func:`~oracleboost.engine.base.validate_input`), a DataFrame's columns are mapped
  through the *stored* categories, by value: the same category gets the same code
  whatever order its column lists its categories in, and a category not seen at fit
  becomes NaN, a missing value (as LightGBM does).  A column that was categorical at
  fit and is not: a ``ValueError`` naming X and the column.  A NumPy X holds the codes
  themselves (as a LightGBM model reads them).

With an oracle without the capability nothing here runs: a categorical column is read
as scikit-learn reads it (numeric categories as their values, others refused), and
``categories_`` is empty.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["apply_categories", "encode_categories", "same_categories", "takes_categorical"]


def takes_categorical(oracle: Any) -> bool:
    """Whether ``oracle`` declares that it takes category codes
    (``Capabilities.categorical``); False when its capabilities cannot be read (a
    wrapper around something that is no oracle: ``fit`` refuses it with its own
    message)."""
    try:
        capabilities = oracle.capabilities
    except (AttributeError, TypeError):
        return False
    return bool(getattr(capabilities, "categorical", False))


def _is_frame(X: Any) -> bool:
    return hasattr(X, "dtypes") and hasattr(X, "iloc") and hasattr(X, "columns")


def _is_categorical(dtype: Any) -> bool:
    return str(dtype) == "category"


def _as_codes(codes: np.ndarray) -> np.ndarray:
    """Integer codes (−1: missing) as float64 with NaN for missing."""
    out = codes.astype(np.float64)
    out[codes < 0] = np.nan
    return out


def encode_categories(X: Any) -> tuple[Any, dict[int, np.ndarray]]:
    """``fit``'s X with its categorical columns as codes, and their categories.

    Parameters
    ----------
    X : array-like
        What ``fit`` was given.

    Returns
    -------
    X : array-like
        X itself when it is not a DataFrame or has no ``category`` column; else a new
        DataFrame (X is not written to) whose categorical columns hold pandas'
        ``cat.codes`` as float64, NaN where the value is missing.
    categories : dict of int to ndarray
        The categories of each such column by its position, in code order.
    """
    if not _is_frame(X):
        return X, {}
    positions = [j for j, dtype in enumerate(X.dtypes) if _is_categorical(dtype)]
    if not positions:
        return X, {}
    out = X.copy(deep=False)  # the columns replaced below are new arrays: X is untouched
    categories: dict[int, np.ndarray] = {}
    for j in positions:
        column = X.iloc[:, j]
        categories[j] = np.asarray(column.cat.categories)
        out.isetitem(j, _as_codes(column.cat.codes.to_numpy()))
    return out, categories


def apply_categories(X: Any, categories: dict[int, np.ndarray], n_features: int,
                     name: str = "X") -> Any:
    """X (to predict on) with the fit's categorical columns as the fit's codes.

    Parameters
    ----------
    X : array-like
        Rows to predict on, an eval set's X.
    categories : dict of int to ndarray
        The fitted ``categories_``.
    n_features : int
        The fit's number of features: a DataFrame of another width is returned as it
        is, for scikit-learn's check to refuse it by its own message.
    name : str, default="X"
        How errors name X.

    Returns
    -------
    X : array-like
        X itself unless it is a DataFrame and ``categories`` is not empty; then a new
        DataFrame whose columns at the keys of ``categories`` hold the codes of their
        values among the stored categories (NaN for a missing value or a category not
        seen at fit).

    Raises
    ------
    ValueError
        A column categorical at fit is not categorical in X (naming X and the column).
    """
    if not categories or not _is_frame(X) or X.shape[1] != n_features:
        return X
    import pandas as pd  # X is a DataFrame: pandas is there

    out = X.copy(deep=False)
    for j, known in categories.items():
        column = X.iloc[:, j]
        if not _is_categorical(column.dtype):
            raise ValueError(
                f"{name}'s column {X.columns[j]!r} (position {j}) was categorical at fit, "
                f"with categories {_some(known)}, but here it is {column.dtype}: pass it "
                "as a pandas category column (e.g. X.astype({"
                f"{X.columns[j]!r}: 'category'}})), as at fit"
            )
        # each category of this column → its code at fit, −1 where fit did not see it
        lookup = pd.Index(known).get_indexer(column.cat.categories)
        codes = column.cat.codes.to_numpy()
        out.isetitem(j, _as_codes(np.where(codes >= 0, lookup[np.maximum(codes, 0)], -1)))
    return out


def _some(values: np.ndarray, k: int = 5) -> str:
    shown = ", ".join(repr(v) for v in values[:k].tolist())
    return f"[{shown}{', …' if len(values) > k else ''}]"


def same_categories(a: dict[int, np.ndarray], b: dict[int, np.ndarray]) -> bool:
    """Whether two fits' ``categories_`` are the same: the same columns, with the same
    categories in the same order (the same codes mean the same values)."""
    return a.keys() == b.keys() and all(a[j].tolist() == b[j].tolist() for j in a)
