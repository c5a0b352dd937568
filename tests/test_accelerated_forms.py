"""Dual acceleration's other forms: the multiclass reduction (Ji, Srebro & Telgarsky 2021,
Sec. 5.2 and App. E; k − 1 implicit rows per example) and the kernel form (w = Zᵀa)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.datasets import load_digits

from oracleboost.boosters import AcceleratedMarginClassifier
from oracleboost.oracles import StumpOracle


def _small_multiclass(seed=0, n=30, d=4, k=3):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    c = rng.randint(0, k, n)
    c[:k] = np.arange(k)  # every class present
    return X, c


def _explicit_Z(X, c, k, scale):
    """The reduction written out: a row x_i (e_j − e_{c_i})ᵀ / (√2 scale) per wrong j."""
    rows, cells = [], []
    for i, x in enumerate(X):
        for j in range(k):
            if j != c[i]:
                z = np.zeros((X.shape[1], k))
                z[:, j], z[:, c[i]] = x, -x
                rows.append(z.ravel() / (math.sqrt(2.0) * scale))
                cells.append((i, j))
    return np.array(rows), cells


def test_multiclass_margin_is_sqrt2_times_the_reduced_binary_margin():
    """γ_m(U) = min_i min_{j≠c_i} (x_iᵀU e_{c_i} − x_iᵀU e_j)/‖U‖_F equals √2 times the
    binary margin of the reduced rows, and the implicit products equal the explicit Z's."""
    X, c = _small_multiclass()
    k = 3
    est = AcceleratedMarginClassifier()
    p = est._setup(X, c, None)
    Z, cells = _explicit_Z(X, c, k, p.scale)
    rng = np.random.RandomState(1)
    for _ in range(20):
        U = rng.randn(X.shape[1], k)
        S = X @ U
        gamma_m = min(S[i, c[i]] - S[i, j] for i, j in cells) / np.linalg.norm(U)
        reduced = -float((Z @ U.ravel()).max()) / np.linalg.norm(U) * p.scale
        assert gamma_m == pytest.approx(math.sqrt(2.0) * reduced, rel=1e-12, abs=1e-12)
        L = p.Z(U)
        np.testing.assert_allclose([L[i, j] for i, j in cells], Z @ U.ravel(), atol=1e-12)
        q = rng.rand(len(X), k)
        q[np.arange(len(X)), c] = 0.0
        expected = Z.T @ np.array([q[i, j] for i, j in cells])
        np.testing.assert_allclose(p.ZT(*p.query(q)).ravel(), expected, atol=1e-12)


def test_implicit_multiclass_algorithm1_equals_the_explicit_binary_one():
    """100 steps of Algorithm 1 on the implicit reduction follow the explicit binary run
    on the N(k − 1) rows (the history's margin is γ_m = √2 × the binary margin)."""
    X, c = _small_multiclass(seed=2, n=40)
    k = 3
    est = AcceleratedMarginClassifier(n_estimators=100, tol=0.0).fit(X, c)
    Z, _ = _explicit_Z(X, c, k, est.scale_)
    n = len(Z)
    w, g, q = np.zeros(Z.shape[1]), np.zeros(Z.shape[1]), np.full(n, 1.0 / n)
    margins = []
    for t in range(100):
        g = t / (t + 1.0) * (g + Z.T @ q)
        w = w - (g + Z.T @ q)
        xi = Z @ w
        q = np.exp(xi - xi.max())
        q /= q.sum()
        margins.append(-xi.max() / np.linalg.norm(w))
    np.testing.assert_allclose(
        est.history_["margin"], math.sqrt(2.0) * np.array(margins), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(est.coef_.ravel() * est.scale_, w, rtol=1e-9, atol=1e-9)


def test_ten_class_digits_margin_is_positive_and_beats_the_batch_perceptron():
    """Full digits, raw pixels, 1,000 steps: Algorithm 1's γ_m is positive (measured
    0.0092 on the 75% split in the note's runs) and above the batch perceptron's."""
    X, y = load_digits(return_X_y=True)
    X, y = X[::2], y[::2]
    acc = AcceleratedMarginClassifier(n_estimators=1000, tol=0.0).fit(X, y)
    per = AcceleratedMarginClassifier(method="perceptron", n_estimators=1000, tol=0.0).fit(X, y)
    assert acc.history_["margin"][-1] > 0
    assert acc.history_["margin"][-1] > per.history_["margin"][-1]
    # the certificate brackets the multiclass max margin
    assert np.all(acc.history_["margin"] <= acc.history_["margin_upper_bound"] + 1e-12)
    assert acc.score(X, y) == 1.0
    assert acc.decision_function(X).shape == (len(X), 10)


def test_a_linear_kernel_is_the_linear_form():
    X, y = load_digits(n_class=2, return_X_y=True)
    # Integer pixels make exact ties between rows' scores (the perceptron's worst row at
    # step 57: two rows equal in exact arithmetic), which the two forms' rounding break
    # differently; a jitter far above rounding leaves no tie, and the forms agree to it.
    X = X + np.random.default_rng(0).uniform(0.0, 1e-3, size=X.shape)
    for method in ("accelerated", "normalized", "perceptron", "stochastic"):
        lin = AcceleratedMarginClassifier(method=method, n_estimators=200, tol=0.0,
                                          random_state=0).fit(X, y)
        ker = AcceleratedMarginClassifier(method=method, kernel="linear", n_estimators=200,
                                          tol=0.0, random_state=0).fit(X, y)
        np.testing.assert_allclose(ker.history_["margin"], lin.history_["margin"],
                                   rtol=1e-9, atol=1e-12)
        f_lin, f_ker = lin.decision_function(X), ker.decision_function(X)
        np.testing.assert_allclose(f_ker, f_lin, rtol=1e-9, atol=1e-9 * np.abs(f_lin).max())
        np.testing.assert_allclose(ker.dual_coef_ @ (X @ X.T), f_ker, rtol=1e-9,
                                   atol=1e-9 * np.abs(f_lin).max())


def test_an_rbf_kernel_separates_and_certifies_its_margin():
    X, y = load_digits(n_class=2, return_X_y=True)
    est = AcceleratedMarginClassifier(kernel="rbf", kernel_params={"gamma": 1e-3},
                                      n_estimators=300, tol=0.0).fit(X, y)
    h = est.history_
    assert h["margin"][-1] > 0 and est.score(X, y) == 1.0
    assert np.all(h["margin"] <= h["margin_upper_bound"] + 1e-12)
    assert h["gap"][-1] < 1e-3
    with pytest.raises(AttributeError, match="dual_coef_"):
        _ = est.coef_
    staged = list(est.staged_decision_function(X))
    np.testing.assert_array_equal(staged[-1], est.decision_function(X))


def test_the_kernel_form_does_not_follow_later_writes_into_the_callers_x():
    # Validation hands back the caller's own array when it is float64 and C-contiguous;
    # the kernel model must keep its own rows, or writing into X after fit changes it.
    X, y = load_digits(n_class=2, return_X_y=True)
    X = np.ascontiguousarray(X, dtype=np.float64)
    est = AcceleratedMarginClassifier(kernel="rbf", kernel_params={"gamma": 1e-3},
                                      n_estimators=20).fit(X, y)
    probe = X[:50].copy()
    before = est.decision_function(probe)
    X[:] = 0.0
    np.testing.assert_array_equal(est.decision_function(probe), before)


def test_kernel_form_refuses_an_oracle_and_multiclass():
    X, y = load_digits(n_class=3, return_X_y=True)
    with pytest.raises(ValueError, match="binary"):
        AcceleratedMarginClassifier(kernel="linear", n_estimators=5).fit(X, y)
    with pytest.raises(ValueError, match="oracle must be None"):
        AcceleratedMarginClassifier(StumpOracle(), kernel="linear").fit(X[y < 2], y[y < 2])


@pytest.mark.parametrize("name", ["exponential", "logistic"])
def test_the_potentials_derivative_at_its_value(name):
    """``log(−φ'(φ⁻¹(v)))``, the log of ℓ'(ψ) in ∇ψ = ℓ'(ξ)/ℓ'(ψ), against a root-found
    φ⁻¹ and the loss' own φ', from v = 1e-300 (late in training) to 1e4."""
    from scipy.optimize import brentq

    from oracleboost.losses import get_loss

    loss = get_loss(name)
    for log_v in (-690.0, -40.0, -18.0, -1.0, 0.0, 2.0, 9.0):
        m = brentq(lambda m, v=log_v: float(loss.log_phi(np.array([m]))[0]) - v, -1e4, 1e4,
                   xtol=1e-14, rtol=1e-15)
        expected = float(loss.log_neg_dphi(np.array([m]))[0])
        assert loss.log_neg_dphi_at_value(log_v) == pytest.approx(expected, rel=1e-9, abs=1e-9)


def _left_to_right(P, W):
    """``P @ W`` summed by hand: each entry over the columns in order, Python floats."""
    W = W[:, None] if W.ndim == 1 else W
    out = np.empty((P.shape[0], W.shape[1]))
    for i in range(P.shape[0]):
        for k in range(W.shape[1]):
            acc = 0.0
            for j in range(P.shape[1]):
                acc += float(P[i, j]) * float(W[j, k])
            out[i, k] = acc
    return out


@pytest.mark.parametrize("form", ["binary", "multiclass", "kernel"])
def test_predictions_sum_in_a_fixed_order_not_through_blas(form):
    """A fitted linear or kernel model predicts with each score summed over its columns
    in order (the same bits on every CPU), not through BLAS's ``gemv``, whose kernels
    (OpenBLAS's Haswell, SkylakeX, ...) sum in their own orders."""
    X, y = load_digits(n_class=3 if form == "multiclass" else 2, return_X_y=True)
    X = X / 16.0 + np.random.default_rng(1).uniform(0.0, 1e-3, size=X.shape)
    params = {"kernel": "rbf", "kernel_params": {"gamma": 1e-2}} if form == "kernel" else {}
    est = AcceleratedMarginClassifier(n_estimators=30, tol=0.0, random_state=0,
                                      **params).fit(X, y)
    probe = X[:40]
    model = est.ensemble_
    if form == "kernel":
        G = model.kernel(probe, model.X)
        expected = _left_to_right(G, model.dual_coef())[:, 0]
    else:
        expected = _left_to_right(model._features(probe), model._last()) / model.scale
        expected = expected[:, 0] if form == "binary" else expected
    np.testing.assert_array_equal(est.decision_function(probe), expected)
