"""The finite classes (matrix, linear) and the scikit-learn-backed oracles."""

import pickle

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from oracleboost.oracles import (
    LinearOracle,
    MatrixOracle,
    MLPOracle,
    SklearnOracle,
    TreeOracle,
)

rng = np.random.RandomState(0)


@pytest.mark.parametrize("seed", range(5))
def test_matrix_correlate_is_telgarsky_oracle(seed):
    """argmax_j |<r, H_j>| over signed columns, lowest index on ties."""
    r_rng = np.random.RandomState(seed)
    H = r_rng.uniform(-1, 1, size=(25, 12))
    rows = r_rng.permutation(25)[:20]
    r = r_rng.randn(20)
    bound = MatrixOracle(H).bind(rows)
    h = bound.correlate(r)
    c = H[rows].T @ r
    j = int(np.argmax(np.abs(c)))
    assert h.j == j and h.scale == np.sign(c[j])
    np.testing.assert_allclose(bound.correlation_vector(r), c)
    np.testing.assert_allclose(h.train_output, np.sign(c[j]) * H[rows, j])
    # predict takes row indices, also of rows the oracle was not bound to
    np.testing.assert_allclose(h.predict(np.arange(25)), np.sign(c[j]) * H[:, j])
    assert np.dot(r, h.train_output) == pytest.approx(np.max(np.abs(c)))


def test_matrix_ties_go_to_the_lowest_index():
    H = np.array([[1.0, 1.0, -1.0], [1.0, 1.0, -1.0]])
    h = MatrixOracle(H).bind(np.arange(2)).correlate(np.ones(2))
    assert h.j == 0 and h.scale == 1.0


def test_matrix_project_is_the_best_scaled_column():
    H = rng.randn(30, 6)
    t = rng.randn(30)
    w = rng.uniform(0.2, 2.0, 30)
    h = MatrixOracle(H).bind(np.arange(30)).project(t, w)
    errors = []
    for j in range(6):
        c = np.sum(w * H[:, j] * t) / np.sum(w * H[:, j] ** 2)
        errors.append(np.sum(w * (t - c * H[:, j]) ** 2))
    assert h.j == int(np.argmin(errors))
    assert np.sum(w * (t - h.train_output) ** 2) == pytest.approx(min(errors), rel=1e-12)


def test_linear_oracle_coordinates():
    X = rng.randn(40, 5)
    r = rng.randn(40)
    bound = LinearOracle().bind(X)
    h = bound.correlate(r)
    j = int(np.argmax(np.abs(X.T @ r)))
    assert h.j == j
    np.testing.assert_allclose(h.predict(X), h.train_output)
    np.testing.assert_allclose(bound.correlation_vector(r), X.T @ r)
    hp = bound.project(3.0 * X[:, 2] + 0.0)
    assert hp.j == 2 and hp.scale == pytest.approx(3.0)


def test_sklearn_classifier_correlate_is_weighted_classification():
    X = rng.randn(60, 3)
    r = rng.randn(60)
    h = SklearnOracle(DecisionTreeClassifier(max_depth=2)).bind(X).correlate(r, random_state=3)
    ref = DecisionTreeClassifier(max_depth=2, random_state=3).fit(
        X, np.where(r >= 0, 1, -1), sample_weight=np.abs(r)
    )
    np.testing.assert_array_equal(h.train_output, ref.predict(X))
    assert set(np.unique(h.train_output)) <= {-1.0, 1.0}


def test_seed_reaches_every_random_state_parameter():
    bound = SklearnOracle(DecisionTreeRegressor(max_features=1)).bind(rng.randn(50, 4))
    t = rng.randn(50)
    a = bound.project(t, random_state=1).estimator
    b = bound.project(t, random_state=1).estimator
    assert a.random_state == 1
    np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)


def test_regressor_correlate_fits_r_and_project_uses_weights():
    X = rng.randn(50, 3)
    t = X @ np.array([1.0, -2.0, 0.5])
    bound = SklearnOracle(Ridge(alpha=1e-8)).bind(X)
    np.testing.assert_allclose(bound.correlate(t).train_output, t, atol=1e-6)
    w = rng.uniform(0, 1, 50)
    np.testing.assert_allclose(bound.project(t, w).train_output, t, atol=1e-6)


def test_tree_oracle_kinds():
    X = rng.randn(80, 3)
    r = rng.randn(80)
    bound = TreeOracle(max_depth=2).bind(X)
    assert set(np.unique(bound.correlate(r).train_output)) <= {-1.0, 1.0}
    T = rng.randn(80, 3)
    h = bound.project(T)
    assert h.train_output.shape == (80, 3)  # multi-output least-squares tree
    with pytest.raises(ValueError, match="max_depth"):
        TreeOracle(max_depth=-2).bind(X)


def test_mlp_fits_tiny_targets_by_rescaling():
    """The target is rescaled to unit RMS: the fit does not collapse on 1e-6-sized targets."""
    X = rng.uniform(-1, 1, size=(100, 2))
    t = np.tanh(2 * X[:, 0])
    bound = MLPOracle(max_iter=300).bind(X)
    big = bound.project(t, random_state=0).train_output
    tiny = bound.project(1e-6 * t, random_state=0).train_output
    np.testing.assert_allclose(tiny, 1e-6 * big, rtol=1e-6, atol=1e-15)
    assert np.corrcoef(big, t)[0, 1] > 0.95
    h = bound.project(t, random_state=0)
    assert h.estimator.hidden_layer_sizes == (5,)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(h)).predict(X), h.train_output)


def test_finite_classes_combine_and_give_columns_without_copies(tmp_path):
    """``combine(w) = H w`` and ``correlation_vector(r) = Hᵀ r`` through every wrapper;
    ``columns()`` is a read-only view of the bound matrix, not a copy per call."""
    from oracleboost.oracles import ApproximateOracle, CachedOracle

    rng = np.random.RandomState(0)
    H = np.where(rng.rand(30, 6) < 0.5, -1.0, 1.0)
    X = rng.randn(30, 4)
    w, r = rng.randn(6), rng.randn(30)
    cases = [
        (MatrixOracle(H), np.arange(30)[:, None], H),
        (LinearOracle(), X, X),
        (ApproximateOracle(MatrixOracle(H), 0.5), np.arange(30)[:, None], H),
        (CachedOracle(MatrixOracle(H), str(tmp_path)), np.arange(30)[:, None], H),
    ]
    for oracle, rows, M in cases:
        bound = oracle.bind(rows)
        np.testing.assert_allclose(bound.combine(w[: M.shape[1]]), M @ w[: M.shape[1]])
        np.testing.assert_allclose(bound.correlation_vector(r), M.T @ r)
    view = MatrixOracle(H).bind(np.arange(30)[:, None]).columns()
    assert not view.flags.writeable and not view.flags.owndata
    from oracleboost.oracles import StumpOracle
    from oracleboost.oracles.base import OracleCapabilityError

    with pytest.raises(OracleCapabilityError, match="weighted combination"):
        StumpOracle().bind(X).combine(np.ones(4))
