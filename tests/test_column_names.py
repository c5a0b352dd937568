"""DataFrame columns that cannot be features are named with their cause; DataFrames of
sparse columns are taken where scipy sparse X is."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from oracleboost.boosters import (
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientRegressor,
)
from oracleboost.boosters.registry import BOOSTERS
from oracleboost.oracles import LinearOracle, StumpOracle

pd = pytest.importorskip("pandas")

N = 40
RNG = np.random.default_rng(0)
BASE = pd.DataFrame({"a": RNG.normal(size=N), "b": RNG.normal(size=N)})
Y_CLS = np.where(BASE["a"] > 0, 1, 0)
Y_REG = BASE["a"].to_numpy() + 0.1 * RNG.normal(size=N)
QID = np.arange(N) // 10


def _target(spec):
    """``fit``'s arguments after X for a registered booster's task."""
    if spec.task == "ranking":
        return (np.round(np.abs(Y_REG) * 2), QID)
    return (Y_REG,) if spec.task == "regression" else (Y_CLS,)


def _fit(spec, X):
    est = spec.make(n_estimators=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, *_target(spec))


TIMES = {
    "datetime": (pd.date_range("2020-01-01", periods=N), "dates or times"),
    "datetime_tz": (pd.date_range("2020-01-01", periods=N, tz="UTC"), "dates or times"),
    "period": (pd.period_range("2020-01-01", periods=N, freq="D"), "dates or times"),
    "timedelta": (pd.to_timedelta(np.arange(N), unit="s"), "durations"),
}


@pytest.mark.parametrize("spec", list(BOOSTERS.values()), ids=list(BOOSTERS))
@pytest.mark.parametrize("kind", list(TIMES))
def test_a_date_column_is_named_with_its_cause(spec, kind):
    values, what = TIMES[kind]
    frame = BASE.assign(when=values)
    def pattern(name):
        return (rf"^X must be numeric for \w+; column '{name}' \([^)]+\) holds {what}, "
                r"which are not numbers: convert it first")

    with pytest.raises(TypeError, match=pattern("when")):
        _fit(spec, frame)
    # alone, NumPy would turn it into a count of its unit (ns, us, days): refused too
    with pytest.raises(TypeError, match=pattern("when")):
        _fit(spec, frame[["when"]])
    est = _fit(spec, BASE)
    with pytest.raises(TypeError, match=pattern("b")):  # and at predict
        est.predict(BASE.assign(b=values))


@pytest.mark.parametrize("spec", list(BOOSTERS.values()), ids=list(BOOSTERS))
def test_columns_of_one_name_are_refused_with_their_positions(spec):
    frame = pd.concat([BASE, BASE[["a"]]], axis=1)
    pattern = (r"^X has columns of the same name \('a' at positions 0, 2\); each feature "
               r"must have its own name")
    with pytest.raises(ValueError, match=pattern):
        _fit(spec, frame)
    est = _fit(spec, BASE)
    with pytest.raises(ValueError, match=pattern):
        est.predict(frame)


def _hostile_frames():
    yield "strings", BASE.assign(c="x"), r"column 'c' \((object|str)\)"
    yield "mixed", BASE.assign(c=[1, "x"] * (N // 2)), r"column 'c' \(object\)"
    yield ("categories", BASE.assign(c=pd.Categorical(["u", "v"] * (N // 2))),
           r"column 'c' \(categorical with categories that are not numbers")
    yield ("complex", BASE.assign(c=np.arange(N) * 1j),
           r"column 'c' \(complex128: complex, not real numbers\)")
    yield ("two", BASE.assign(c="x", d=np.arange(N) * 1j),
           r"columns 'c' \(\w+\), 'd' \(complex128")


@pytest.mark.parametrize("case", list(_hostile_frames()), ids=lambda c: c[0])
def test_other_columns_that_are_not_numbers_are_named_in_one_line(case):
    _, frame, named = case
    with pytest.raises((TypeError, ValueError)) as info:
        CoordinateBoostingClassifier(n_estimators=2).fit(frame, Y_CLS)
    message = str(info.value)
    assert re.search(rf"^X must be numeric for CoordinateBoostingClassifier; {named}", message)
    assert "\n" not in message  # (scikit-learn's complex error went on with the whole frame)


@pytest.mark.parametrize("frame", [
    BASE.assign(c=np.arange(N) % 2 == 0),  # bool
    BASE.assign(c=pd.Categorical(np.arange(N) % 3)),  # numeric categories: their values
    BASE.assign(c=np.arange(N).astype(object)),  # numbers held as objects
    BASE.assign(c=pd.array(np.arange(N), dtype="Int64")),  # nullable, no NA
    pd.DataFrame(BASE.to_numpy(), columns=pd.MultiIndex.from_tuples([("g", "a"), ("g", "b")])),
    pd.DataFrame(BASE.to_numpy()),  # integer names
], ids=["bool", "numeric_categories", "object_numbers", "Int64", "multiindex", "int_names"])
def test_numeric_columns_of_every_kind_still_fit(frame):
    est = CoordinateBoostingClassifier(n_estimators=2).fit(frame, Y_CLS)
    assert est.predict(frame).shape == (N,)


def _sparse_frame():
    dense = BASE.where(BASE > 0.3, 0.0)
    return dense, dense.astype(pd.SparseDtype("float64", 0.0))


@pytest.mark.parametrize("make", [
    lambda: FunctionalGradientRegressor(oracle=StumpOracle(), n_estimators=5, random_state=0),
    lambda: FunctionalGradientRegressor(oracle=LinearOracle(), n_estimators=5, random_state=0),
], ids=["stumps", "linear"])
def test_a_frame_of_sparse_columns_fits_as_scipy_sparse(make):
    dense, sparse = _sparse_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no densifying warning: read as sparse
        from_frame = make().fit(sparse, Y_REG)
    assert list(from_frame.feature_names_in_) == ["a", "b"]
    from_scipy = make().fit(sp.csr_matrix(dense.to_numpy()), Y_REG)
    for X in (sparse, dense):
        np.testing.assert_array_equal(from_frame.predict(X),
                                      from_scipy.predict(dense.to_numpy()))
    with pytest.raises(ValueError, match="feature names"):  # names are checked
        from_frame.predict(sparse.rename(columns={"a": "z"}))


def test_a_frame_of_sparse_columns_is_refused_by_name_where_sparse_x_is():
    _, sparse = _sparse_frame()
    with pytest.raises(TypeError, match=r"^X is a DataFrame of sparse columns, which "
                       r"AcceleratedMarginClassifier does not take; pass "
                       r"X\.sparse\.to_dense\(\)"):
        AcceleratedMarginClassifier(n_estimators=2).fit(sparse, Y_CLS)


def test_an_eval_set_s_x_is_named_as_the_set_s_for_type_errors_too():
    """A TypeError (dates, a sparse X refused) named the fit's X, not the eval set's."""
    est = CoordinateBoostingClassifier(n_estimators=2)
    with pytest.raises(TypeError, match=r"^eval_set\[0\]: X: X must be numeric for \w+; "
                       r"column 'b' \(datetime64"):
        est.fit(BASE, Y_CLS, eval_set=[(BASE.assign(b=TIMES["datetime"][0]), Y_CLS)])
    _, sparse = _sparse_frame()
    with pytest.raises(TypeError, match=r"^eval_set\[0\]: X: X is a DataFrame of sparse"):
        AcceleratedMarginClassifier(n_estimators=2).fit(BASE, Y_CLS,
                                                        eval_set=[(sparse, Y_CLS)])
