"""What a stored booster holds is a public, documented set of types.

Every case of ``test_persistence`` (every booster; stumps, scikit-learn trees, LightGBM
trees, histogram trees, MLPs, matrix and linear columns, ``CachedOracle``), fitted with
``warm_start=True``, is stored with ``skops.io``: the types the file asks to be trusted
are public ones of :func:`oracleboost.persistence.trusted_types`, and the booster loaded
trusting exactly that list (what MLflow's skops flavour does: dump,
``get_untrusted_types``, load) predicts bit for bit and holds its running state as the
working objects again.  (With ``warm_start=False``: ``test_persistence``'s round trips,
which load the same way; a warm start continued after a round trip: there too.)  A
pickle names no class outside the list but NumPy's and Python's own.  MLflow itself,
where it is installed.
"""

from __future__ import annotations

import io
import pickle
import warnings

import numpy as np
import pytest
from test_persistence import (
    CASES,
    WARM,
    _assert_same_model,
    _fit,
    _kinds,
    _round_trip,
    _skops_io,
    assert_same_running_state,
)

from oracleboost import _running_state
from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor
from oracleboost.oracles import MLPOracle, SklearnOracle, StumpOracle
from oracleboost.persistence import dump, load, trusted_types


@pytest.mark.parametrize("case", [c for c in CASES if c not in WARM])
def test_a_warm_start_model_asks_only_for_public_types(case, tmp_path):
    """(The cases of ``WARM`` go through this check, and continue, in
    ``test_persistence.test_warm_start_continues_after_a_round_trip``.)"""
    est, *_, X_test = _fit(case, tmp_path, warm_start=True)
    loaded = _round_trip(est)  # the list checked, and loaded trusting it alone
    _assert_same_model(est, loaded, X_test)
    assert_same_running_state(est, loaded)


def test_the_histogram_memo_of_a_warm_start_is_stored_as_data(tmp_path):
    """Stumps keep a histogram between rounds at 2¹⁶ cells and more (its query shifted
    from the last one): a class of the running state, stored as data too."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 220))
    y = X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=300)
    est = FunctionalGradientRegressor(StumpOracle(), n_estimators=3,
                                      warm_start=True).fit(X, y)
    assert "oracleboost.oracles.stumps.HistogramMemo" in _kinds(est._state_)
    loaded = _round_trip(est)
    assert_same_running_state(est, loaded)
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    est.set_params(n_estimators=5).fit(X, y)
    loaded.set_params(n_estimators=5).fit(X, y)
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))


class _Names(pickle.Unpickler):
    """An unpickler that records each class a pickle names."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.names: set[str] = set()

    def find_class(self, module: str, name: str):
        self.names.add(f"{module}.{name}")
        return super().find_class(module, name)


@pytest.mark.parametrize("case", ["adaboost-stump", "softboost-stump",
                                  "accelerated-kernel", "classifier-label-coded",
                                  "regressor-early-stopping"])
def test_a_pickle_names_only_trusted_classes(case, tmp_path):
    est, *_, X_test = _fit(case, tmp_path, warm_start=True)
    reader = _Names(pickle.dumps(est))
    loaded = reader.load()
    ours = {n for n in reader.names if n.startswith("oracleboost.")}
    assert ours and ours <= set(trusted_types())
    others = {n.split(".")[0] for n in reader.names - ours}
    assert others <= {"numpy", "builtins", "copyreg", "_codecs", "sklearn"}, others
    _assert_same_model(est, loaded, X_test)


def test_an_mlp_fitted_with_adam_holds_scikit_learns_optimizer_from_the_list():
    """scikit-learn keeps an MLP's optimizer when it is fitted with Adam or SGD: a
    scikit-learn class skops does not trust by default, on the list.  The nets' fits do
    not warn when they stop early (silenced at fit, not by a class of the library)."""
    sio = _skops_io()
    X = np.random.default_rng(0).normal(size=(100, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = CoordinateBoostingClassifier(MLPOracle(solver="adam", max_iter=5),
                                           n_estimators=2, random_state=0).fit(X, y)
    data = sio.dumps(est)
    assert "sklearn.neural_network._stochastic_optimizers.AdamOptimizer" in \
        sio.get_untrusted_types(data=data)
    assert {type(h.estimator).__name__ for h in est.estimators_} == {"MLPRegressor"}
    loaded = sio.loads(data, trusted=trusted_types())
    np.testing.assert_array_equal(loaded.decision_function(X), est.decision_function(X))


def test_dump_and_load_trust_exactly_the_list(tmp_path):
    sio = _skops_io()
    est, *_, X_test = _fit("coordinate-tree", tmp_path, warm_start=True)
    path = tmp_path / "model.skops"
    path.write_bytes(b"an older file")
    path.chmod(0o640)
    dump(est, path)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["model.skops"]
    assert path.stat().st_mode & 0o777 == 0o640
    _assert_same_model(est, load(path), X_test)
    # a model that holds a type outside the list is refused, naming it
    from sklearn.neighbors import KNeighborsRegressor

    X = np.random.default_rng(0).normal(size=(40, 2))
    knn = FunctionalGradientRegressor(SklearnOracle(KNeighborsRegressor(3)),
                                      n_estimators=2).fit(X, X[:, 0])
    dump(knn, path)
    with pytest.raises(sio.exceptions.UntrustedTypesFoundException, match="KDTree"):
        load(path)


def test_trusted_types_is_the_json_allow_list():
    from oracleboost.export.schema import allowed_classes

    names = trusted_types()
    assert names == sorted(set(names))
    assert len(names) == len(allowed_classes())
    assert "sklearn.tree._tree.Tree" in names
    assert "oracleboost.boosters.coordinate.estimator.CoordinateBoostingClassifier" in names
    assert not any(part.startswith("_") for n in names if n.startswith("oracleboost.")
                   for part in n.split("."))


# -- the plain form of the running state ----------------------------------------------
def test_the_plain_form_keeps_shared_objects_shared_and_named_tuples():
    from oracleboost.optim.row_projections import Near
    from oracleboost.rows.blocks import ReadyStats

    stats = ReadyStats([np.arange(3.0)])
    value = {"a": stats, "b": (stats, Near(0.5, 2.0)), "c": [1, "x", None]}
    plain = _running_state.to_plain(value)
    assert _kinds(plain) <= {"builtins.dict", "builtins.tuple", "builtins.list"}
    made = _running_state.from_plain(plain)
    assert made["a"] is made["b"][0] and made["a"] is not stats
    assert type(made["b"][1]) is Near and made["b"][1] == Near(0.5, 2.0)
    np.testing.assert_array_equal(made["a"].get()[0], np.arange(3.0))
    assert made["c"] == [1, "x", None]


def test_the_plain_form_makes_only_running_state_classes():
    with pytest.raises(ValueError, match="'os.system', which is not a running-state"):
        _running_state.from_plain({"__running__": "os.system", "fields": {}})
    with pytest.raises(ValueError, match="two running-state classes are stored as"):
        _running_state.stored_as("ReadyStats")(type("Other", (), {}))


@pytest.mark.parametrize("ref", [-1, 1, "0", 0.0])
def test_the_plain_form_refuses_a_reference_to_an_object_not_made(ref):
    # (-1 would have read the last object made, whatever it was)
    stats = {"__running__": "ReadyStats", "fields": {"_values": [1.0]}}
    with pytest.raises(ValueError, match="refers to object .* which it has not made"):
        _running_state.from_plain([stats, {"__running_ref__": ref}])
    with pytest.raises(ValueError, match="'ReadyStats' has no fields"):
        _running_state.from_plain({"__running__": "ReadyStats", "fields": [1]})


# -- MLflow itself, where it is installed --------------------------------------------
@pytest.mark.slow  # (MLflow's import alone takes seconds)
def test_mlflow_saves_and_loads_a_booster_with_the_list(tmp_path):
    """``mlflow.sklearn.save_model`` with its default format (skops) and the list, and
    ``load_model``: the model predicts bit for bit."""
    mlflow_sklearn = pytest.importorskip("mlflow.sklearn", reason="MLflow is not installed")
    est, *_, X_test = _fit("maboost-multiclass", tmp_path, warm_start=True)
    path = tmp_path / "mlflow-model"
    mlflow_sklearn.save_model(est, path, skops_trusted_types=trusted_types())
    loaded = mlflow_sklearn.load_model(str(path))
    _assert_same_model(est, loaded, X_test)
