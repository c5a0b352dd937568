"""Input checks shared by oracles, losses and boosters.

Every check names the argument it rejects, so that a user who passes a NaN, a wrong
shape or a negative weight is told which array is at fault.  Nothing is coerced
silently: arrays are converted to float64 only when the conversion is exact for the
values given (integers, booleans, floats).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "check_finite_array", "check_frame_columns", "check_groups", "check_query",
    "check_sample_weight", "converts", "is_sparse_frame", "non_numeric_columns",
    "normalise_weights", "normalising_power",
]


def check_finite_array(a, name: str, *, ndim: tuple[int, ...] = (1,),
                       finite: bool = True) -> np.ndarray:
    """Return ``a`` as a float64 array after checking its dimension and (unless
    ``finite`` is False: the caller's own pass will) its finiteness."""
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric array-like; got {type(a).__name__}") from exc
    if arr.ndim not in ndim:
        want = " or ".join(f"{d}-D" for d in ndim)
        raise ValueError(f"{name} must be {want}; got an array of shape {arr.shape}")
    if finite and not np.isfinite(arr).all():
        bad = "NaN" if np.isnan(arr).any() else "inf"
        raise ValueError(f"{name} contains {bad}; every entry must be finite")
    return arr


def check_query(
    a, n_samples: int, name: str, *, multioutput: bool = True, finite: bool = True
) -> np.ndarray:
    """Check a per-example query array of shape ``(n,)`` or ``(n, K)`` against
    ``n_samples`` (its finiteness too, unless ``finite`` is False)."""
    arr = check_finite_array(a, name, ndim=(1, 2) if multioutput else (1,), finite=finite)
    if arr.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {arr.shape[0]} rows but the oracle is bound to {n_samples} samples"
        )
    return arr


def check_sample_weight(sample_weight, n_samples: int, name: str = "sample_weight") -> np.ndarray:
    """Return non-negative finite weights of shape ``(n_samples,)``; ``None`` means all ones."""
    if sample_weight is None:
        return np.ones(n_samples)
    w = check_finite_array(sample_weight, name, ndim=(1,))
    if w.shape[0] != n_samples:
        raise ValueError(f"{name} has {w.shape[0]} entries but there are {n_samples} samples")
    if np.any(w < 0):
        raise ValueError(f"{name} contains negative values; weights must be non-negative")
    if not np.any(w > 0):
        raise ValueError(f"{name} sums to zero; at least one weight must be positive")
    return w


def check_groups(groups, n_samples: int, name: str = "groups") -> np.ndarray:
    """Return query ids (one per row, shape ``(n_samples,)``) that can be sorted and
    compared: all numbers (finite) or all strings.

    NumPy would turn a list mixing ints and strings into strings silently (``1`` and
    ``"1"`` become one query) and fail later on such an object array with "'<' not
    supported between instances of 'str' and 'int'", which names no argument.
    """
    if groups is None:
        raise ValueError(
            f"{name} is required: pass {name}=<query id of each row>, an array of shape "
            "(n_samples,)"
        )
    raw = groups if isinstance(groups, np.ndarray) else np.asarray(groups, dtype=object)
    if raw.shape != (n_samples,):
        raise ValueError(
            f"{name} must have shape ({n_samples},), one query id per row; got {raw.shape}"
        )
    if raw.dtype == object:
        is_str = np.fromiter((isinstance(v, str) for v in raw), dtype=bool, count=raw.size)
        if is_str.any() and not is_str.all():
            a, b = raw[np.argmax(is_str)], raw[np.argmin(is_str)]
            raise ValueError(
                f"{name} mixes strings and other values (e.g. {a!r} and {b!r}); query ids "
                "must be all numbers or all strings"
            )
        try:
            raw = np.asarray(raw.tolist())
            np.unique(raw)  # they must sort: pairs are formed within sorted queries
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} holds query ids that cannot be compared with each other ({exc}); "
                "use numbers or strings"
            ) from exc
    if raw.dtype.kind not in "biufUS":
        raise ValueError(f"{name} must hold numbers or strings; got dtype {raw.dtype}")
    if raw.dtype.kind == "f" and not np.all(np.isfinite(raw)):
        raise ValueError(f"{name} contains NaN or inf; every query id must be finite")
    return raw


def normalise_weights(w: np.ndarray) -> np.ndarray:
    """Non-negative weights with a positive entry, scaled by the power of two that brings
    their mean into [1, 2) (a new array).

    Every risk and every least-squares fit the library computes is a weighted mean,
    ``Σ w_i l_i / Σ w_i``, whose value does not depend on the scale of ``w``; so that the
    arithmetic does not either (products ``w·l`` that overflow near 1e300, sums that
    underflow near 1e-300, scikit-learn's and LightGBM's absolute thresholds), weights
    are normalised once, where they enter (a booster's ``fit``, an oracle's ``project``).

    A power of two, not ``n / Σ w``: scaling by it is exact, so

    * weights scaled by any power of two give bit-identical results, and normalising
      normalised weights changes nothing (wrappers that hand weights on, a cache, never
      normalise twice in effect);
    * weights whose mean is already in [1, 2) are used exactly as given: unit weights,
      and integer weights, which stay exactly equivalent to repeated rows.

    Another common factor ``c`` changes the weights the oracles see by ``c`` times a
    power of two, a factor in (1/2, 2): a fit whose arithmetic is scale-free (trees,
    stumps, least squares) changes in its last bits only; a learner whose fit depends on
    the weights' scale (a penalised scikit-learn regressor such as ``Ridge``, whose
    ``alpha`` weighs against ``Σ w (y − f)²``) sees weights of that scale within a factor
    of 2.  A weight below ``2**-1074`` times the largest becomes 0: next to the largest
    it is lost to the rounding of any sum anyway.
    """
    exponent = math.frexp(float(w.max()))[1]  # max(w) < 2**exponent
    # the mean of w / 2**exponent is in (0, 1): no overflow on the way
    return np.ldexp(w, normalising_power(exponent, float(np.sum(np.ldexp(w, -exponent))),
                                        w.shape[0]))


def normalising_power(exponent: int, scaled_sum: float, n: int) -> int:
    """The power of two :func:`normalise_weights` scales by: ``2**exponent`` bounds the
    largest weight, ``scaled_sum`` is ``Σ w / 2**exponent`` over the ``n`` weights (a
    cluster's fit sums it on its workers)."""
    return -(exponent + math.frexp(scaled_sum / n)[1] - 1)


# -- DataFrames: what their columns hold -------------------------------------------------
def converts(a) -> bool:
    """Whether ``a`` converts to float64 as scikit-learn converts it (pandas' missing
    values become NaN; finiteness is checked elsewhere)."""
    from sklearn.utils.validation import check_array

    try:
        check_array(a, dtype=np.float64, ensure_all_finite=False, ensure_2d=False,
                    ensure_min_samples=0, ensure_min_features=0, allow_nd=True)
    except (TypeError, ValueError):
        return False
    return True


def _is_frame(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def is_sparse_frame(X) -> bool:
    """Whether X is a pandas DataFrame whose columns are all sparse (``pd.SparseDtype``):
    scikit-learn reads it as a scipy sparse matrix (``X.sparse.to_coo()``), keeping
    its column names."""
    if not _is_frame(X) or len(X.columns) == 0:
        return False
    from pandas import SparseDtype  # X is a DataFrame: pandas is there

    return all(isinstance(dtype, SparseDtype) for dtype in X.dtypes)


def _time_kind(dtype) -> str | None:
    """What a column of ``dtype`` holds when it is dates, times or durations (pandas'
    datetime64, with or without a time zone, timedelta64, period), else None."""
    if getattr(dtype, "kind", None) == "m":
        return "durations"
    if getattr(dtype, "kind", None) == "M" or str(dtype).startswith("period["):
        return "dates or times"
    return None


def check_frame_columns(X, who: str, name: str = "X") -> None:
    """Refuse a DataFrame whose columns cannot be features, naming them: columns of one
    name (scikit-learn refuses them too: each feature is told by its name,
    ``feature_names_in_``), and dates, times and durations, which are not numbers
    (NumPy's float conversion of a datetime64 column alone gives its count of
    nanoseconds, or microseconds, or days, by the column's unit; mixed with numbers it
    fails without naming the column).  Anything else passes (arrays too)."""
    if not _is_frame(X):
        return
    labels = list(X.columns)
    positions: dict = {}
    for i, label in enumerate(labels):
        positions.setdefault(label, []).append(i)
    repeated = {label: at for label, at in positions.items() if len(at) > 1}
    if repeated:
        shown = "; ".join(f"{label!r} at positions {', '.join(map(str, at))}"
                          for label, at in repeated.items())
        raise ValueError(
            f"{name} has columns of the same name ({shown}); each feature must have its own "
            "name (scikit-learn's feature_names_in_): rename them"
        )
    for label, dtype in zip(labels, X.dtypes, strict=True):
        kind = _time_kind(dtype)
        if kind is not None:
            how = ("to seconds with .dt.total_seconds()" if kind == "durations"
                   else "to seconds since an epoch")
            raise TypeError(
                f"{name} must be numeric for {who}; column {label!r} ({dtype}) holds {kind}, "
                f"which are not numbers: convert it first, e.g. {how}"
            )


def non_numeric_columns(X) -> str | None:
    """Where X holds values that are not numbers (None if it converts): the columns of a
    DataFrame by name, categorical and complex ones called so, else the array as a
    whole."""
    if converts(X):
        return None
    if not _is_frame(X):
        return "it holds values that are not numbers"
    bad = [(label, dtype) for i, (label, dtype) in enumerate(zip(X.columns, X.dtypes,
                                                                 strict=True))
           if not converts(X.iloc[:, i])]
    if not bad:  # each column converts alone, not together
        return "it holds values that are not numbers"
    described = [f"{label!r} ({_why_not_numbers(dtype)})" for label, dtype in bad]
    many = len(bad) > 1
    return (f"column{'s' if many else ''} {', '.join(described)} hold{'' if many else 's'} "
            "values that are not numbers")


def _why_not_numbers(dtype) -> str:
    if str(dtype) == "category":
        return ("categorical with categories that are not numbers: encode it first, e.g. "
                "with OrdinalEncoder or OneHotEncoder")
    if getattr(dtype, "kind", None) == "c":
        return f"{dtype}: complex, not real numbers"
    return str(dtype)
