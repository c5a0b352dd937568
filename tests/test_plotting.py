"""``oracleboost.plotting``: what each picture draws is the model's own numbers.

The artists are read back: a history panel's lines hold the history's columns, the
importance bars the importances, a margin curve's steps the sorted normalised margins
(whose least, on the training rows, is the history's ``margin``).  Agg backend, fits of
at most 200 rows and 30 rounds.
"""

from __future__ import annotations

import doctest
import io
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from oracleboost import (  # noqa: E402
    AcceleratedMarginClassifier,
    CoordinateBoostingClassifier,
    FunctionalGradientClassifier,
    FunctionalGradientRegressor,
    MatrixOracle,
    MirrorBoostingClassifier,
    TotallyCorrectiveClassifier,
)
from oracleboost.plotting import (  # noqa: E402
    plot_history,
    plot_importance,
    plot_margins,
    staged_normalised_margins,
)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _data(seed=0, n_classes=2):
    return make_classification(160, 6, n_informative=4, n_classes=n_classes,
                               random_state=seed)


def _line_data(ax):
    return {line.get_label(): (line.get_xdata(), line.get_ydata()) for line in ax.get_lines()}


# -- plot_history ---------------------------------------------------------------------------

def test_history_lines_hold_the_history_and_the_eval_curves_sit_beside_the_training_ones():
    X, y = _data()
    model = CoordinateBoostingClassifier(n_estimators=20).fit(
        X[:100], y[:100], eval_set=[(X[100:], y[100:])], eval_names=["test"])
    h = model.history_
    axes = plot_history(model)
    assert [ax.get_title() for ax in axes] == ["loss", "train_error", "edge", "margin"]
    loss, error, edge, margin = (_line_data(ax) for ax in axes)
    assert set(loss) == {"training", "test"} and set(error) == {"training", "test"}
    rounds = np.arange(1, 21)
    for lines, train, held in ((loss, "loss", "val_loss_0"),
                               (error, "train_error", "val_error_0")):
        np.testing.assert_array_equal(lines["training"][0], rounds)
        np.testing.assert_array_equal(lines["training"][1], h[train])
        np.testing.assert_array_equal(lines["test"][1], h[held])
    np.testing.assert_array_equal(edge["edge"][1], h["edge"])
    np.testing.assert_array_equal(margin["margin"][1], h["margin"])


def test_history_bracket_draws_the_lower_and_upper_bounds():
    X, y = _data()
    for model, (lo, hi) in (
            (AcceleratedMarginClassifier(n_estimators=15), ("margin", "margin_upper_bound")),
            (TotallyCorrectiveClassifier(n_estimators=15), ("lp_value", "upper_bound"))):
        model.fit(X, y)
        axes = plot_history(model)
        titles = [ax.get_title() for ax in axes]
        assert titles[-1] == "bracket"
        if lo == "margin":  # the lower bound is drawn in the bracket only
            assert "margin" not in titles
        lines = _line_data(axes[titles.index("bracket")])
        np.testing.assert_array_equal(lines[f"lower bound ({lo})"][1], model.history_[lo])
        np.testing.assert_array_equal(lines[f"upper bound ({hi})"][1], model.history_[hi])
        # the band between them: its path spans the bracket
        band = axes[titles.index("bracket")].collections[0].get_paths()[0].vertices
        finite = np.isfinite(model.history_[hi])
        assert band[:, 1].min() == pytest.approx(model.history_[lo][finite].min())
        assert band[:, 1].max() == pytest.approx(model.history_[hi][finite].max())


def test_history_defaults_by_booster_and_keys_on_request():
    X, y = _data()
    Xr, yr = make_regression(120, 5, random_state=0)
    reg = FunctionalGradientRegressor(n_estimators=10).fit(Xr, yr)
    # a regressor's margin is NaN: no panel for it
    assert [ax.get_title() for ax in plot_history(reg)] == ["loss", "edge"]
    maboost = MirrorBoostingClassifier(n_estimators=10).fit(X, y)
    assert [ax.get_title() for ax in plot_history(maboost)] == [
        "loss", "edge", "margin", "bound"]
    # one key: one Axes; several: a list in their order, on the axes given
    ax = plot_history(maboost, keys="eta")
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), maboost.history_["eta"])
    _, given = plt.subplots(1, 2)
    out = plot_history(maboost, keys=["step", "max_weight"], ax=given)
    assert list(out) == list(given)
    np.testing.assert_array_equal(given[1].get_lines()[0].get_ydata(),
                                  maboost.history_["max_weight"])


def test_history_draws_early_stoppings_held_out_curve_beside_the_loss():
    X, y = _data()
    model = CoordinateBoostingClassifier(n_estimators=30, n_iter_no_change=3,
                                         random_state=0).fit(X, y)
    lines = _line_data(plot_history(model, keys="loss"))
    assert set(lines) == {"training", "held out (early stopping)"}
    np.testing.assert_array_equal(lines["held out (early stopping)"][1],
                                  model.history_["heldout_loss"])


def test_history_eval_metric_gets_a_panel_of_its_own():
    X, y = _data()
    model = FunctionalGradientClassifier(n_estimators=8).fit(
        X[:100], y[:100], eval_set=[(X[100:], y[100:])], eval_metric="roc_auc")
    axes = plot_history(model)
    assert axes[-1].get_title() == "roc_auc"
    np.testing.assert_array_equal(axes[-1].get_lines()[0].get_ydata(),
                                  model.history_["val_roc_auc_0"])


def test_history_refuses_unknown_keys_by_name():
    X, y = _data()
    model = CoordinateBoostingClassifier(n_estimators=5).fit(X, y)
    with pytest.raises(ValueError, match=r"'los' is no curve.*did you mean 'loss'"):
        plot_history(model, keys=["edge", "los"])
    with pytest.raises(ValueError, match="bracket"):  # AdaBoost records no certificate
        plot_history(model, keys="bracket")
    with pytest.raises(TypeError, match="keys"):
        plot_history(model, keys=[1])
    with pytest.raises(ValueError, match="one matplotlib Axes per panel"):
        plot_history(model, keys=["loss", "edge"], ax=plt.subplots()[1])
    with pytest.raises(NotFittedError):
        plot_history(CoordinateBoostingClassifier())
    with pytest.raises(TypeError, match="fitted oracleboost booster"):
        plot_history(object())


# -- plot_importance ------------------------------------------------------------------------

@pytest.mark.parametrize("importance_type", ["weight", "split"])
def test_importance_bars_are_the_importances_sorted(importance_type):
    X, y = _data()
    model = CoordinateBoostingClassifier(n_estimators=30).fit(X, y)
    names = [f"f{i}" for i in range(X.shape[1])]
    ax = plot_importance(model, importance_type=importance_type, feature_names=names)
    assert model.importance_type == "weight"  # the model is not changed
    expected = model.set_params(importance_type=importance_type).feature_importances_
    kept = np.flatnonzero(expected)
    order = kept[np.argsort(expected[kept], kind="stable")]  # ascending: largest on top
    widths = [bar.get_width() for bar in ax.patches]
    np.testing.assert_array_equal(widths, expected[order])
    assert [t.get_text() for t in ax.get_yticklabels()] == [names[i] for i in order]
    top = plot_importance(model, importance_type=importance_type, max_num_features=2)
    assert [bar.get_width() for bar in top.patches] == widths[-2:]
    assert [t.get_text() for t in top.get_yticklabels()] == [
        f"Column_{i}" for i in order[-2:]]


def test_importance_refusals():
    X, y = _data()
    model = CoordinateBoostingClassifier(n_estimators=5).fit(X, y)
    with pytest.raises(ValueError, match="importance_type"):
        plot_importance(model, importance_type="cover")
    with pytest.raises(ValueError, match="max_num_features"):
        plot_importance(model, max_num_features=0)
    with pytest.raises(ValueError, match="feature_names has 2 names"):
        plot_importance(model, feature_names=["a", "b"])
    H = np.sign(np.random.default_rng(0).standard_normal((40, 6)))
    matrix = CoordinateBoostingClassifier(MatrixOracle(H), n_estimators=3).fit(
        np.arange(40)[:, None], H[:, 0] > 0)
    with pytest.raises(TypeError, match="do not say which input features"):
        plot_importance(matrix)


# -- plot_margins ---------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_margin_curves_are_the_sorted_normalised_margins(seed):
    """Each stage's steps are the sorted margins at heights i/n; on the training rows
    the least is the history's ``margin`` at that round, and every margin is in [−1, 1]
    (|h| ≤ 1 there after scaling, the intercept counted in the norm)."""
    X, y = _data(seed)
    X3, y3 = _data(seed, n_classes=3)
    models = [
        (CoordinateBoostingClassifier(n_estimators=25), X, y),
        (MirrorBoostingClassifier(n_estimators=25), X, y),
        (FunctionalGradientClassifier(n_estimators=25), X, y),
        (FunctionalGradientClassifier(n_estimators=10), X3, y3),  # f_y − max_{k≠y} f_k
        (TotallyCorrectiveClassifier(n_estimators=10), X, y),
    ]
    for model, Xm, ym in models:
        model.fit(Xm, ym)
        n = model.n_estimators_
        ax = plot_margins(model, Xm, ym)
        margins = staged_normalised_margins(model, Xm, ym)
        assert max(margins) == n and len(margins) >= 2
        lines = ax.get_lines()[:-1]  # (the last is the dotted line at 0)
        assert [line.get_label() for line in lines] == [
            f"{t} round{'s' if t > 1 else ''}" for t in margins]
        for line, (t, m) in zip(lines, margins.items(), strict=True):
            np.testing.assert_array_equal(line.get_xdata(), np.sort(m))
            np.testing.assert_array_equal(line.get_ydata(), np.arange(1, len(ym) + 1) / len(ym))
            assert m.min() == pytest.approx(model.history_["margin"][t - 1], rel=1e-12,
                                            abs=1e-15), (type(model).__name__, t)
            assert np.all(np.abs(m) <= 1 + 1e-12)


def test_margins_on_held_out_rows_and_chosen_stages():
    X, y = _data()
    model = CoordinateBoostingClassifier(n_estimators=12).fit(X[:100], y[:100])
    ax = plot_margins(model, X[100:], y[100:], stages=[3, 12])
    final = ax.get_lines()[1].get_xdata()
    ypm = np.where(y[100:] == model.classes_[1], 1.0, -1.0)
    expected = ypm * model.decision_function(X[100:]) / np.sum(
        np.abs(model.coef_) * model.ensemble_.norms)
    np.testing.assert_allclose(final, np.sort(expected), rtol=1e-12)


def test_margins_are_refused_where_there_are_none():
    X, y = _data()
    Xr, yr = make_regression(80, 4, random_state=0)
    with pytest.raises(TypeError, match="not a classifier"):
        plot_margins(FunctionalGradientRegressor(n_estimators=3).fit(Xr, yr), Xr, yr)
    with pytest.raises(TypeError, match="ℓ2 margin"):
        plot_margins(AcceleratedMarginClassifier(n_estimators=3).fit(X, y), X, y)
    model = CoordinateBoostingClassifier(n_estimators=4).fit(X, y)
    with pytest.raises(ValueError, match=r"stages .*\[1, 4\]; got 5"):
        plot_margins(model, X, y, stages=[1, 5])
    with pytest.raises(ValueError, match="labels the model was not fitted on"):
        plot_margins(model, X, y + 2)
    with pytest.raises(ValueError, match="rows"):
        plot_margins(model, X, y[:-1])


def test_without_matplotlib_the_error_names_the_extra(monkeypatch):
    X, y = _data()
    model = CoordinateBoostingClassifier(n_estimators=3).fit(X, y)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import raises
    with pytest.raises(ImportError, match=r'pip install "oracleboost\[experiments\]"'):
        plot_history(model)


def test_the_docstring_examples_run():
    import oracleboost.plotting as module

    tests = [t for t in doctest.DocTestFinder().find(module) if t.examples]
    assert {t.name.rpartition(".")[2] for t in tests} >= {
        "plot_history", "plot_importance", "plot_margins"}
    for test in tests:
        out = io.StringIO()
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=out.write)
        assert runner.failures == 0, out.getvalue()
