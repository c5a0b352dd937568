"""Where the algorithms coincide, oracleboost reproduces scikit-learn exactly.

* Discrete AdaBoost (exponential loss, AdaBoost step, ±1 stumps) is scikit-learn's
  ``AdaBoostClassifier`` (SAMME with two classes; its estimator weight is 2α).
* Naive functional gradient projection with squared loss, least-squares trees and
  f_0 = mean is scikit-learn's ``GradientBoostingRegressor``.
"""

import numpy as np
import pytest
from sklearn.datasets import (
    load_breast_cancer,
    load_diabetes,
    make_classification,
    make_regression,
)
from sklearn.ensemble import AdaBoostClassifier, GradientBoostingRegressor
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from oracleboost.boosters import CoordinateBoostingClassifier, FunctionalGradientRegressor
from oracleboost.oracles import SklearnOracle, TreeOracle


def _split(X, y):
    return train_test_split(X, y, test_size=0.3, random_state=0)


@pytest.mark.parametrize(
    "dataset,learning_rate",
    [("breast_cancer", 1.0), ("breast_cancer", 0.5), ("synthetic", 1.0)],
)
def test_adaboost_matches_sklearn_round_by_round(dataset, learning_rate):
    if dataset == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
    else:
        X, y = make_classification(n_samples=400, n_features=8, flip_y=0.1, random_state=3)
    X_tr, X_te, y_tr, y_te = _split(X, y)
    n_rounds = 40
    ours = CoordinateBoostingClassifier(
        SklearnOracle(DecisionTreeClassifier(max_depth=1)),
        loss="exponential",
        step="adaboost",
        n_estimators=n_rounds,
        learning_rate=learning_rate,
        random_state=0,
    ).fit(X_tr, y_tr)
    ref = AdaBoostClassifier(
        DecisionTreeClassifier(max_depth=1),
        n_estimators=n_rounds,
        learning_rate=learning_rate,
        random_state=0,
    ).fit(X_tr, y_tr)
    assert ours.n_estimators_ == len(ref.estimators_) == n_rounds
    for X_eval in (X_tr, X_te):
        stages = list(zip(ours.staged_predict(X_eval), ref.staged_predict(X_eval), strict=True))
        assert len(stages) == n_rounds
        for t, (a, b) in enumerate(stages):
            np.testing.assert_array_equal(a, b, err_msg=f"round {t + 1}")
    # Same weak learners and the same weights: sklearn's SAMME weight is 2α.
    np.testing.assert_allclose(
        2 * ours.history_["step"], ref.estimator_weights_, rtol=1e-10, atol=0
    )
    # And the decision functions agree up to scale: sklearn's SAMME codes the predicted
    # class as +1 and the other as -1/(K-1) = -1 in each of its two columns, sums the
    # columns (a factor 2), weights by 2α and divides by Σ_t 2α_t: 4 f / Σ_t 2α_t.
    np.testing.assert_allclose(
        ours.decision_function(X_te) * 4 / ref.estimator_weights_.sum(),
        ref.decision_function(X_te),
        rtol=1e-9,
        atol=1e-12,
    )


def _gbr(**kw):
    # scikit-learn >= 1.9 always grows squared_error trees and deprecates `criterion`;
    # older versions default to friedman_mse, so ask for squared_error there.
    if GradientBoostingRegressor().criterion != "deprecated":
        kw["criterion"] = "squared_error"
    return GradientBoostingRegressor(loss="squared_error", **kw)


@pytest.mark.parametrize("learning_rate", [0.1, 0.5])
def test_functional_gradient_matches_sklearn_gbr(learning_rate):
    """Train and test predictions agree to 1e-8 at every stage, on data without tied splits.

    With ``min_samples_leaf=5`` and continuous features no two features cut a node's
    points into the same partition, so no split is decided by the tree's seed (see the
    next test for what happens when one is).
    """
    X, y = make_regression(n_samples=400, n_features=8, noise=5.0, random_state=0)
    X_tr, X_te, y_tr, y_te = _split(X, y)
    n_rounds = 60
    tree = DecisionTreeRegressor(max_depth=3, min_samples_leaf=5, criterion="squared_error")
    ours = FunctionalGradientRegressor(
        SklearnOracle(tree),
        loss="squared",
        n_estimators=n_rounds,
        learning_rate=learning_rate,
        random_state=0,
    ).fit(X_tr, y_tr)
    ref = _gbr(
        max_depth=3, min_samples_leaf=5, n_estimators=n_rounds,
        learning_rate=learning_rate, random_state=0,
    ).fit(X_tr, y_tr)
    for X_eval in (X_tr, X_te):
        np.testing.assert_allclose(ours.predict(X_eval), ref.predict(X_eval), rtol=0, atol=1e-8)
        stages = list(zip(ours.staged_predict(X_eval), ref.staged_predict(X_eval), strict=True))
        assert len(stages) == n_rounds
        for a, b in stages:
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-8)
    # Our loss is ½(f − y)² (gradient f − y); sklearn's train_score_ reports the mean
    # squared error without the ½.
    np.testing.assert_allclose(2 * ours.history_["loss"], ref.train_score_, rtol=1e-10)


@pytest.mark.parametrize("random_state", [0, 1])
def test_functional_gradient_matches_gbr_on_training_points_with_ties(random_state):
    """On diabetes (repeated feature values, leaves of one point) training predictions agree.

    Where two features split a node's training points identically (equal gain), the
    tree breaks the tie by its random feature order.  GradientBoostingRegressor draws
    every tree's order from one shared RandomState; oracleboost gives each oracle call
    an int seed, as AdaBoostClassifier does (which keeps cached calls exact).  Such ties
    leave the training partition, and so the training predictions, unchanged; only
    where test points fall can differ, so only the training set is compared here.
    """
    X, y = load_diabetes(return_X_y=True)
    ours = FunctionalGradientRegressor(
        TreeOracle(max_depth=3), n_estimators=60, learning_rate=0.2,
        random_state=random_state,
    ).fit(X, y)
    ref = _gbr(
        max_depth=3, n_estimators=60, learning_rate=0.2, random_state=random_state
    ).fit(X, y)
    for a, b in zip(ours.staged_predict(X), ref.staged_predict(X), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-8)
