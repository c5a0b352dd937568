"""The exported LightGBM model carries its objective and parameters: in the model text
and in ``Booster.params``, so that SHAP's probability output, treelite's and
onnxmltools' transformed outputs are ``predict_proba`` wherever they have the booster's
link, and the raw score (the identity) where no LightGBM objective has it.  The
exponential loss's link σ(2f) is ``sigmoid:2``, which SHAP and onnxmltools ignore;
``link="standard"`` writes it as doubled leaves with ``sigmoid:1``, which every reader
applies.  Feature names are the fit's, as LightGBM's ``Dataset`` writes them.

The converters are not test dependencies: their tests skip without them.
"""

from __future__ import annotations

import warnings

import lightgbm as lgb
import numpy as np
import pytest
from scipy.special import expit
from sklearn.datasets import make_classification, make_regression

from oracleboost.boosters import (
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRanker,
    FunctionalGradientRegressor,
    MirrorBoostingClassifier,
    TotallyCorrectiveClassifier,
)
from oracleboost.export.lightgbm import (
    ExportWarning,
    lightgbm_feature_names,
    lightgbm_model_string,
)
from oracleboost.oracles import StumpOracle, TreeOracle


def _data(kind: str, seed: int):
    """200 rows of 6 features, as float32 values (the ONNX model reads float32 rows:
    the same rows then reach the same leaves in both)."""
    if kind == "regression":
        X, y = make_regression(200, 6, noise=5.0, random_state=seed)
    else:
        X, y = make_classification(200, 6, n_informative=4, random_state=seed,
                                   n_classes=3 if kind == "multiclass" else 2)
    return X.astype(np.float32).astype(np.float64), y


def _tree():
    return TreeOracle(max_depth=2)


#: name: (make, data kind, objective line, params' objective, params' sigmoid)
CASES = {
    "adaboost": (lambda: CoordinateBoostingClassifier(_tree(), n_estimators=8),
                 "binary", "binary sigmoid:2", "binary", 2),
    "coordinate_logistic": (lambda: CoordinateBoostingClassifier(
        _tree(), loss="logistic", step="wolfe", n_estimators=8),
        "binary", "binary sigmoid:1", "binary", 1),
    "functional_exponential": (lambda: FunctionalGradientClassifier(
        _tree(), loss="exponential", n_estimators=8), "binary", "binary sigmoid:2", "binary", 2),
    "functional_logistic": (lambda: FunctionalGradientClassifier(
        _tree(), loss="logistic", n_estimators=8), "binary", "binary sigmoid:1", "binary", 1),
    "functional_softmax_binary": (lambda: FunctionalGradientClassifier(
        _tree(), loss="softmax", n_estimators=8), "binary", "binary sigmoid:1", "binary", 1),
    "functional_softmax": (lambda: FunctionalGradientClassifier(_tree(), n_estimators=8),
                           "multiclass", "multiclass num_class:3", "multiclass", 1),
    "functional_regressor": (lambda: FunctionalGradientRegressor(_tree(), n_estimators=8),
                             "regression", "regression", "regression", 1),
    # vote shares and hinge scores: no LightGBM link; the identity
    "maboost": (lambda: MirrorBoostingClassifier(StumpOracle(), n_estimators=8),
                "binary", "regression", "regression", 1),
    "totally_corrective": (lambda: TotallyCorrectiveClassifier(StumpOracle(), n_estimators=8),
                           "binary", "regression", "regression", 1),
    "maboost_multiclass": (lambda: MirrorBoostingClassifier(n_estimators=8),
                           "multiclass", "custom", "custom", 1),
    "multiclass_hinge": (lambda: FunctionalGradientClassifier(
        StumpOracle(), loss="multiclass_hinge", n_estimators=8), "multiclass", "custom",
        "custom", 1),
}
#: The boosters whose link is σ(2f): LightGBM's ``binary sigmoid:2``.
EXPONENTIAL = ["adaboost", "functional_exponential"]


def _fit(name: str, seed: int = 0):
    make, kind, *_ = CASES[name]
    X, y = _data(kind, seed)
    return make().fit(X, y), X


def _export(model, X=None, link: str = "native") -> lgb.Booster:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExportWarning)
        return model.to_lightgbm(X, link=link)


def _raw(model, X):
    return model.decision_function(X) if hasattr(model, "decision_function") \
        else model.predict(X)


def _proba(model, X):
    """What the transformed output should be: ``predict_proba``'s positive column (two
    classes), its rows (more), or a regressor's prediction."""
    if not hasattr(model, "predict_proba"):
        return model.predict(X)
    p = model.predict_proba(X)
    return p[:, 1] if p.shape[1] == 2 else p


@pytest.mark.parametrize("name", CASES)
def test_the_objective_is_in_the_model_text_and_in_params(name):
    model, X = _fit(name)
    _, _, line, objective, sigmoid = CASES[name]
    text = lightgbm_model_string(model, X)
    assert f"\nobjective={line}\n" in text
    params = _export(model, X).params
    K = 3 if CASES[name][1] == "multiclass" else 1
    assert params["objective"] == objective
    assert params["num_class"] == K
    assert params["sigmoid"] == sigmoid
    # LightGBM writes them back as it read them
    again = lgb.Booster(model_str=_export(model, X).model_to_string())
    assert again.params == params
    # LightGBM's transformed prediction: predict_proba where the link is LightGBM's,
    # else the raw score
    exported = _export(model, X)
    expected = _raw(model, X) if objective in ("regression", "custom") else _proba(model, X)
    np.testing.assert_allclose(exported.predict(X), expected, rtol=0, atol=1e-15)


def test_the_ranker_s_objective_is_the_identity():
    X, y = make_regression(120, 4, random_state=0)
    qid = np.repeat(np.arange(12), 10)
    model = FunctionalGradientRanker(StumpOracle(), n_estimators=5).fit(X, y, qid=qid)
    exported = _export(model)
    assert exported.params["objective"] == "regression"
    np.testing.assert_array_equal(exported.predict(X), model.predict(X))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", ["coordinate_logistic", "functional_logistic",
                                  "functional_softmax_binary", "adaboost"])
def test_shap_probability_output(name, seed):
    """SHAP's ``model_output="probability"`` (interventional) reads the objective from
    ``params``: for the logistic link its values add up to ``predict_proba``.  SHAP
    applies σ(f) to every ``binary`` model whatever its ``sigmoid``: for AdaBoost's
    exponential loss (``sigmoid:2``) they add up to σ(f), not ``predict_proba``'s
    σ(2f) (as the user guide says; ``link="standard"`` is the way out: see
    :func:`test_shap_probability_output_with_the_standard_link`).  Within 5e-8: SHAP's
    own rounding in probability space (measured over seeds 0-4: at most 3.4e-9 for the
    logistic link, 1.8e-8 for σ(f) of AdaBoost's larger scores)."""
    shap = pytest.importorskip("shap")
    model, X = _fit(name, seed)
    total = _shap_probability(shap, _export(model, X), X)
    if name == "adaboost":
        np.testing.assert_allclose(total, expit(model.decision_function(X[:40])),
                                   rtol=0, atol=5e-8)
        assert np.abs(total - _proba(model, X[:40])).max() > 1e-3
    else:
        np.testing.assert_allclose(total, _proba(model, X[:40]), rtol=0, atol=5e-8)


def _shap_probability(shap, booster: lgb.Booster, X) -> np.ndarray:
    """SHAP's interventional probability output for the first 40 rows of X (80 rows of
    background): its values' sums plus the base value."""
    explainer = shap.TreeExplainer(booster, X[:80], model_output="probability",
                                   feature_perturbation="interventional")
    explained = explainer(X[:40])
    return explained.values.sum(axis=1) + explained.base_values


#: Where a converter's transformed output is predict_proba (or a regressor's predict):
#: every link it has.
LINKED = ["adaboost", "functional_exponential", "coordinate_logistic", "functional_logistic",
          "functional_softmax_binary", "functional_softmax", "functional_regressor"]
#: One score a row and no link: the export's identity gives the raw score.
IDENTITY = ["maboost", "totally_corrective"]


@pytest.mark.parametrize("name", LINKED + IDENTITY)
def test_treelite_s_transformed_output(name):
    """treelite's ``gtil.predict`` (its transformed output) honours ``sigmoid:2``: it is
    ``predict_proba`` for every link, to the rounding of a float64 softmax; the raw
    score for the identity."""
    treelite = pytest.importorskip("treelite")
    for seed in (0, 1):
        model, X = _fit(name, seed)
        converted = treelite.frontend.from_lightgbm(_export(model, X))
        out = treelite.gtil.predict(converted, X).reshape(len(X), -1)
        out = out[:, 0] if out.shape[1] == 1 else out
        expected = _raw(model, X) if name in IDENTITY else _proba(model, X)
        np.testing.assert_allclose(out, expected, rtol=0, atol=1e-7)


def test_treelite_refuses_class_scores_without_a_link():
    """A model of class scores that no LightGBM objective transforms (``custom``):
    treelite reads only ``multiclass`` and ``multiclassova`` models of several scores,
    and refuses it by its objective."""
    treelite = pytest.importorskip("treelite")
    model, X = _fit("maboost_multiclass")
    with pytest.raises(Exception, match="multiclass"):
        treelite.frontend.from_lightgbm(_export(model, X))


def test_onnxmltools_refuses_class_scores_without_a_link():
    """onnxmltools refuses the ``custom`` objective by its name (not a ``KeyError``)."""
    model, X = _fit("multiclass_hinge")
    with pytest.raises(NotImplementedError, match="custom"):
        _onnx(model, X)


def _onnx(model, X, link: str = "native"):
    """The onnxmltools conversion's outputs on X (as float32): its last output."""
    onnxmltools = pytest.importorskip("onnxmltools")
    ort = pytest.importorskip("onnxruntime")
    from onnxmltools.convert.common.data_types import FloatTensorType

    onx = onnxmltools.convert_lightgbm(
        _export(model, X, link), initial_types=[("X", FloatTensorType([None, X.shape[1]]))],
        zipmap=False)
    session = ort.InferenceSession(onx.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    out = session.run(None, {"X": X.astype(np.float32)})[-1].astype(np.float64)
    if out.ndim == 2 and out.shape[1] == 1:
        return out[:, 0]
    return out[:, 1] if out.shape[1] == 2 else out


@pytest.mark.parametrize("name", LINKED + IDENTITY)
def test_onnxmltools_transformed_output(name):
    """onnxmltools' ONNX model computes in float32: its probabilities are
    ``predict_proba`` within 2e-7 for the logistic and softmax links, a regressor's or
    an identity model's scores its raw scores within float32's rounding.  Its binary
    models apply σ(f) whatever the ``sigmoid``: the exponential loss's probabilities
    are σ(f), not ``predict_proba``'s σ(2f) (as the user guide says)."""
    for seed in (0, 1):
        model, X = _fit(name, seed)
        out = _onnx(model, X)
        if name in EXPONENTIAL:
            np.testing.assert_allclose(out, expit(model.decision_function(X)), rtol=0,
                                       atol=2e-7)
        elif name in IDENTITY or name == "functional_regressor":
            raw = _raw(model, X)
            np.testing.assert_allclose(out, raw, rtol=0,
                                       atol=1e-6 * (1 + np.abs(raw).max()))
        else:
            np.testing.assert_allclose(out, _proba(model, X), rtol=0, atol=2e-7)


@pytest.mark.parametrize("columns", [
    ["mean radius", "worst  area", "plain", "é x", "a_b", "z"],
    ["x0", "x1", "x2", "x3", "x4", "x 5"],
])
def test_feature_names_as_lightgbm_writes_them(columns):
    """Each space becomes ``_``, as LightGBM's own fit of the same DataFrame writes the
    names."""
    pd = pytest.importorskip("pandas")
    X, y = _data("binary", 0)
    frame = pd.DataFrame(X, columns=columns)
    ours = CoordinateBoostingClassifier(StumpOracle(), n_estimators=3).fit(frame, y)
    theirs = lgb.LGBMClassifier(n_estimators=2, verbose=-1).fit(frame, y)
    assert _export(ours).feature_name() == theirs.booster_.feature_name()
    assert _export(ours).feature_name()[0] == columns[0].replace(" ", "_")


def test_feature_names_lightgbm_would_refuse():
    """Names LightGBM's ``Dataset`` refuses (JSON delimiters) or whose whitespace would
    break the model text (a tab, a newline) get ``_`` in their place, and ``dump_model``
    (SHAP reads it) still parses; names that would then collide, or an empty one, give
    LightGBM's ``Column_i``."""
    assert lightgbm_feature_names(['a "b"', "c,d", "e:f", "[g]", "{h}", "i\tj\nk"], 6) == [
        "a__b_", "c_d", "e_f", "_g_", "_h_", "i_j_k"]
    assert lightgbm_feature_names(["a b", "a_b"], 2) == ["Column_0", "Column_1"]
    assert lightgbm_feature_names(["", "x"], 2) == ["Column_0", "Column_1"]
    assert lightgbm_feature_names(None, 2) == ["Column_0", "Column_1"]
    pd = pytest.importorskip("pandas")
    X, y = _data("binary", 1)
    frame = pd.DataFrame(X[:, :3], columns=['weight "kg"', "tab\there", "ok"])
    model = CoordinateBoostingClassifier(StumpOracle(), n_estimators=3).fit(frame, y)
    exported = _export(model)
    assert exported.dump_model()["feature_names"] == ["weight__kg_", "tab_here", "ok"]


# -- link="standard": the exponential loss's σ(2f) as σ of doubled leaves ----------------


@pytest.mark.parametrize("name", EXPONENTIAL)
def test_the_standard_link_doubles_the_raw_score(name):
    """``link="standard"`` writes ``binary sigmoid:1`` and every leaf doubled: an exact
    doubling in binary floating point, so LightGBM's raw score is ``2 ·
    decision_function`` bit for bit, its ``predict`` the native export's (σ(1 · 2f) and
    σ(2 · f) take the same bits) and so ``predict_proba`` as the native export states
    it, and its contributions are the native ones doubled."""
    for seed in (0, 1, 2):
        model, X = _fit(name, seed)
        text = lightgbm_model_string(model, X, link="standard")
        assert "\nobjective=binary sigmoid:1\n" in text
        standard, native = _export(model, X, "standard"), _export(model, X)
        assert standard.params["objective"] == "binary"
        assert standard.params["sigmoid"] == 1
        raw = standard.predict(X, raw_score=True)
        np.testing.assert_array_equal(raw, 2.0 * model.decision_function(X))
        assert np.abs(raw - model.decision_function(X)).max() > 0.1  # not the native f
        np.testing.assert_array_equal(standard.predict(X), native.predict(X))
        np.testing.assert_allclose(standard.predict(X), _proba(model, X), rtol=0, atol=1e-15)
        np.testing.assert_array_equal(standard.predict(X, pred_contrib=True),
                                      2.0 * native.predict(X, pred_contrib=True))


@pytest.mark.parametrize("name", [n for n in CASES if n not in EXPONENTIAL])
def test_the_standard_link_changes_nothing_without_a_scale(name):
    """Where the link's scale is 1 (logistic, softmax) or there is no sigmoid
    (regression, the identity, ``custom``), both links write the same model text."""
    model, X = _fit(name)
    assert (lightgbm_model_string(model, X, link="standard")
            == lightgbm_model_string(model, X))


@pytest.mark.parametrize("link", ["Standard", "sigmoid", None, 1])
def test_an_unknown_link_is_refused_by_name(link):
    model, X = _fit("adaboost")
    with pytest.raises(ValueError, match="link must be one of"):
        lightgbm_model_string(model, X, link=link)
    with pytest.raises(ValueError, match="link must be one of"):
        model.to_lightgbm(X, link=link)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", EXPONENTIAL)
def test_shap_probability_output_with_the_standard_link(name, seed):
    """With ``link="standard"``, SHAP's σ of the raw score is σ(2f): its values add up
    to ``predict_proba`` within SHAP's rounding (5e-8, as for the logistic link;
    measured over seeds 0-4: at most 2.3e-8)."""
    shap = pytest.importorskip("shap")
    model, X = _fit(name, seed)
    total = _shap_probability(shap, _export(model, X, "standard"), X)
    np.testing.assert_allclose(total, _proba(model, X[:40]), rtol=0, atol=5e-8)


@pytest.mark.parametrize("name", EXPONENTIAL)
def test_treelite_with_the_standard_link(name):
    """treelite's transformed output is ``predict_proba`` bit for bit with
    ``link="standard"`` (as with the native link, whose ``sigmoid:2`` it honours)."""
    treelite = pytest.importorskip("treelite")
    for seed in (0, 1):
        model, X = _fit(name, seed)
        converted = treelite.frontend.from_lightgbm(_export(model, X, "standard"))
        out = treelite.gtil.predict(converted, X).reshape(-1)
        np.testing.assert_array_equal(out, _proba(model, X))


@pytest.mark.parametrize("name", EXPONENTIAL)
def test_onnxmltools_with_the_standard_link(name):
    """onnxmltools' float32 probabilities are within 2e-7 of ``predict_proba`` with
    ``link="standard"``, as for the logistic link (with the native link they are σ(f):
    ``test_onnxmltools_transformed_output``)."""
    for seed in (0, 1):
        model, X = _fit(name, seed)
        np.testing.assert_allclose(_onnx(model, X, "standard"), _proba(model, X), rtol=0,
                                   atol=2e-7)
