"""Pictures of a fitted booster: its history, its features' importances, its margins.

Three functions, each drawing on matplotlib axes it makes or is given (``ax=``) and
returning them, as LightGBM's ``plot_metric`` and ``plot_importance`` do:

* :func:`plot_history`: the curves of ``history_`` round by round (the loss, the edges,
  the margins, the eval sets' curves beside the training ones, and the certificate's
  bracket of the boosters that record one), one panel a curve.
* :func:`plot_importance`: the features' importances as horizontal bars, largest on top
  (``feature_importances_`` by any ``importance_type`` the booster takes).
* :func:`plot_margins`: the cumulative distribution of the normalised margins
  ``y f(x) / ||λ||_1`` after several rounds, the picture of Schapire, Freund, Bartlett &
  Lee (1998, Figure 2).

matplotlib is imported when a function is called, not with this module; it comes with
the ``experiments`` extra (``pip install "oracleboost[experiments]"``).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Sequence
from numbers import Integral
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from oracleboost._cli_support import did_you_mean, extra_line
from oracleboost.engine.base import BaseBooster
from oracleboost.engine.eval_sets import EVAL_PREFIX
from oracleboost.optim.votes import vote_margins

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["plot_history", "plot_importance", "plot_margins", "staged_normalised_margins",
           "BRACKETS", "BRACKET"]

#: The certificate's bracket: the ``(lower, upper)`` history keys of the boosters that
#: record bounds on the optimum they approach, in the order they are looked for.
#: ``AcceleratedMarginClassifier``: the ℓ2 margin γ(w_t) ≤ γ̄ ≤ ``margin_upper_bound``
#: (Ji, Srebro & Telgarsky 2021); ``TotallyCorrectiveClassifier``: the restricted LP's
#: value γ_t ≤ P* ≤ ``upper_bound``, the least edge so far.
BRACKETS: tuple[tuple[str, str], ...] = (
    ("margin", "margin_upper_bound"),
    ("lp_value", "upper_bound"),
)

#: The panel name of the bracket in :func:`plot_history`'s ``keys``.
BRACKET = "bracket"

#: :func:`plot_history`'s panels when ``keys`` is None, by booster (the first class of
#: the model's type's MRO found here); a panel is drawn when it has a finite value.
_DEFAULT_PANELS: dict[str, tuple[str, ...]] = {
    "CoordinateBoostingClassifier": ("loss", "train_error", "edge", "margin", "gap"),
    # its loss is the training error (ties counted as errors); ``bound`` bounds it
    "MirrorBoostingClassifier": ("loss", "edge", "margin", "bound"),
    "AcceleratedMarginClassifier": ("loss", "train_error", "edge", BRACKET),
    # its loss is the training error of the vote
    "TotallyCorrectiveClassifier": ("loss", "edge", "margin", BRACKET),
    "FunctionalGradientClassifier": ("loss", "train_error", "edge", "margin"),
    "FunctionalGradientRegressor": ("loss", "edge"),
    "FunctionalGradientRanker": ("loss", "edge"),
}
_GENERIC_PANELS = ("loss", "train_error", "edge", "margin", BRACKET)

#: The booster's own eval curves (``val_loss_i``, a classifier's ``val_error_i``); any
#: other metric of an eval set comes from ``fit``'s ``eval_metric``.
_OWN_METRICS = ("loss", "error")


def _pyplot():
    """matplotlib's pyplot, or an ImportError that says which extra installs it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            extra_line(["matplotlib"], "experiments", "oracleboost.plotting draws with it")
        ) from exc
    return plt


def _fitted_history(model: Any, caller: str) -> dict[str, np.ndarray]:
    """``model.history_``, once ``model`` is known to be a fitted booster."""
    if not isinstance(model, BaseBooster):
        raise TypeError(f"{caller} draws a fitted oracleboost booster; got "
                        f"{type(model).__name__}")
    check_is_fitted(model, "history_")
    return model.history_


def _axes_for(ax: Any, n_panels: int, caller: str) -> list[Axes]:
    """``n_panels`` axes: the given ones (one Axes, or a sequence of them), or the panels
    of a new figure, at most three a row."""
    if ax is None:
        plt = _pyplot()
        ncols = min(n_panels, 3)
        nrows = math.ceil(n_panels / ncols)
        fig, grid = plt.subplots(nrows, ncols, figsize=(4.0 * ncols, 3.0 * nrows),
                                 squeeze=False, layout="constrained")
        axes = list(grid.ravel())
        for extra in axes[n_panels:]:
            extra.remove()
        return axes[:n_panels]
    if isinstance(ax, np.ndarray):  # (plt.subplots' grid of axes)
        given = list(ax.ravel())
    else:
        given = list(ax) if isinstance(ax, Sequence) else [ax]
    if len(given) != n_panels:
        raise ValueError(f"{caller}: ax must be one matplotlib Axes per panel ({n_panels}); "
                         f"got {len(given)}")
    return given


# -- history ------------------------------------------------------------------------------


def _eval_curves(history: dict[str, np.ndarray]) -> dict[str, dict[int, str]]:
    """``{metric: {eval set index: history key}}`` of the eval sets' curves."""
    found: dict[str, dict[int, str]] = {}
    for key in history:
        match = re.fullmatch(rf"{EVAL_PREFIX}_(.+)_(\d+)", key)
        if match:
            found.setdefault(match[1], {})[int(match[2])] = key
    return found


def _eval_set_names(model: Any, curves: dict[str, dict[int, str]]) -> dict[int, str]:
    """The eval sets' names (``eval_names``: ``valid_0``, …, or ``training``) by index."""
    indices = sorted({i for by_set in curves.values() for i in by_set})
    names = list(getattr(model, "evals_result_", {}))
    if len(names) != len(indices):  # (a history written elsewhere: the keys' own names)
        return {i: f"valid_{i}" for i in indices}
    return dict(zip(indices, names, strict=True))


def _bracket_of(history: dict[str, np.ndarray]) -> tuple[str, str] | None:
    return next(((lo, hi) for lo, hi in BRACKETS if lo in history and hi in history), None)


def _panel_lines(key: str, model: Any, history: dict[str, np.ndarray]
                 ) -> list[tuple[str, str]]:
    """The ``(history key, label)`` of each line of the panel ``key`` (empty when it
    draws nothing)."""
    if key == BRACKET:
        pair = _bracket_of(history)
        if pair is None:
            return []
        return [(pair[0], f"lower bound ({pair[0]})"), (pair[1], f"upper bound ({pair[1]})")]
    curves = _eval_curves(history)
    metric = "error" if key == "train_error" else key
    evals = curves.get(metric, {})
    heldout = f"heldout_{metric}"
    several = bool(evals) or heldout in history
    lines = []
    if key in history and not key.startswith(f"{EVAL_PREFIX}_"):
        lines.append((key, "training" if several else key))
    elif key in history:  # one eval curve by its own key
        return [(key, key)]
    names = _eval_set_names(model, curves)
    lines += [(evals[i], names[i]) for i in sorted(evals)]
    if heldout in history and heldout != key:
        lines.append((heldout, "held out (early stopping)"))
    return lines


def _default_panels(model: Any, history: dict[str, np.ndarray]) -> list[str]:
    panels = _GENERIC_PANELS
    for cls in type(model).__mro__:
        if cls.__name__ in _DEFAULT_PANELS:
            panels = _DEFAULT_PANELS[cls.__name__]
            break
    shown = [k for k in panels
             if any(np.isfinite(history[h]).any() for h, _ in _panel_lines(k, model, history))]
    # the bracket's lower bound is a curve of its own no more
    pair = _bracket_of(history)
    if BRACKET in shown and pair is not None and pair[0] in shown:
        shown.remove(pair[0])
    # eval_metric's curves, which have no training curve to sit beside
    covered = {h for k in shown for h, _ in _panel_lines(k, model, history)}
    for metric, by_set in _eval_curves(history).items():
        if metric not in _OWN_METRICS and not set(by_set.values()) <= covered:
            shown.append(metric)
    return shown


def _check_keys(keys: Any, model: Any, history: dict[str, np.ndarray]) -> list[str]:
    if isinstance(keys, str):
        keys = [keys]
    try:
        keys = list(keys)
    except TypeError:
        raise TypeError(f"keys must be a str or a list of str; got {type(keys).__name__}"
                        ) from None
    if not keys or not all(isinstance(k, str) for k in keys):
        raise TypeError(f"keys must be a str or a non-empty list of str; got {keys!r}")
    valid = sorted({*history, *_eval_curves(history),
                    *([BRACKET] if _bracket_of(history) else [])})
    for key in keys:
        if not _panel_lines(key, model, history):
            close = did_you_mean(key, valid, n=2)
            hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
            raise ValueError(
                f"keys: {key!r} is no curve of {type(model).__name__}'s history_{hint}; "
                f"its curves: {', '.join(valid)}"
            )
    return keys


def plot_history(model: Any, keys: str | Sequence[str] | None = None,
                 ax: Axes | Sequence[Axes] | None = None) -> Axes | list[Axes]:
    """Draw a fitted booster's ``history_`` round by round, one panel a curve.

    A panel named by a training curve draws, beside it, the same metric on every eval
    set of ``fit(eval_set=...)`` (``val_loss_0`` beside ``loss``, ``val_error_0`` beside
    ``train_error``; labelled by ``eval_names``) and on early stopping's held-out rows
    (``heldout_loss``), as LightGBM's ``plot_metric`` draws a metric on each data set.
    The panel ``"bracket"`` draws the certificate of the boosters that record one: a
    lower and an upper bound on the optimum (:data:`BRACKETS`), the shaded band between
    them closing as the fit converges (``AcceleratedMarginClassifier``: the ℓ2 margin and
    its upper bound, Ji, Srebro & Telgarsky 2021; ``TotallyCorrectiveClassifier``: the
    restricted LP's value and the least edge so far).  The x axis counts the rounds from
    1, one per weak learner (NaN entries are left as gaps).

    Parameters
    ----------
    model : fitted booster
        Any oracleboost booster.
    keys : str or list of str, default=None
        The panels: history keys (``"loss"``, ``"edge"``, ``"margin"``, ``"gap"``, …,
        every key of ``history_``), the name of an ``eval_metric`` (its curve on each
        eval set), or ``"bracket"``.  None: the booster's usual picture, those of its
        panels that have a finite value: the loss (with the eval curves), the training
        error, the edge, the margin, and by booster the duality gap
        (``CoordinateBoostingClassifier`` with ``duality_gap``), MABoost's bound on the
        training error, or the bracket; then each ``eval_metric``.
    ax : matplotlib Axes or sequence of Axes, default=None
        Where to draw: one Axes per panel.  None: a new figure with the panels three a
        row.

    Returns
    -------
    matplotlib Axes or list of Axes
        The panels' axes, in the order of ``keys``: a list, or one Axes when ``keys`` is
        a single str.

    Raises
    ------
    ValueError
        A key that names no curve of the model's history (with the keys it has), or
        ``ax`` of the wrong length.
    TypeError
        ``model`` is not an oracleboost booster, or ``keys`` not str.
    sklearn.exceptions.NotFittedError
        Before ``fit``.
    ImportError
        matplotlib is not installed (the ``experiments`` extra).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import make_classification
    >>> from oracleboost import CoordinateBoostingClassifier
    >>> from oracleboost.plotting import plot_history
    >>> X, y = make_classification(200, random_state=0)
    >>> model = CoordinateBoostingClassifier(n_estimators=20).fit(X, y, eval_set=[(X, y)])
    >>> [ax.get_title() for ax in plot_history(model)]
    ['loss', 'train_error', 'edge', 'margin']
    """
    history = _fitted_history(model, "plot_history")
    single = isinstance(keys, str)
    panels = _default_panels(model, history) if keys is None else \
        _check_keys(keys, model, history)
    axes = _axes_for(ax, len(panels), "plot_history")
    for panel, where in zip(panels, axes, strict=True):
        lines = _panel_lines(panel, model, history)
        for key, label in lines:
            values = history[key]
            where.plot(np.arange(1, values.shape[0] + 1), values, label=label)
        if panel == BRACKET:
            lo, hi = (history[key] for key, _ in lines)
            where.fill_between(np.arange(1, lo.shape[0] + 1), lo, hi, alpha=0.2)
        where.set_title(panel)
        where.set_xlabel("round")
        if len(lines) > 1:
            where.legend()
    return axes[0] if single else axes


# -- importance ---------------------------------------------------------------------------


def _feature_names(model: Any, n_features: int, given: Any) -> list[str]:
    if given is None:
        names = getattr(model, "feature_names_in_", None)
        # LightGBM's names for unnamed columns, as the export writes them
        return [str(n) for n in names] if names is not None else \
            [f"Column_{i}" for i in range(n_features)]
    if isinstance(given, str):
        raise TypeError("feature_names must be a list of str, one per feature; got a str")
    names = [str(n) for n in given]
    if len(names) != n_features:
        raise ValueError(f"feature_names has {len(names)} names but the model has "
                         f"{n_features} features (n_features_in_)")
    return names


def plot_importance(model: Any, importance_type: str = "weight",
                    max_num_features: int | None = None, ax: Axes | None = None,
                    feature_names: Sequence[str] | None = None, *,
                    ignore_zero: bool = True, precision: int | None = 3,
                    height: float = 0.2, title: str | None = "Feature importance",
                    xlabel: str | None = None, ylabel: str | None = "Features") -> Axes:
    """Draw a fitted booster's feature importances as horizontal bars, largest on top.

    The bars are ``feature_importances_`` as the booster computes them for
    ``importance_type`` (the model is not changed: a shallow copy is asked), sorted, with
    each value written at the end of its bar; LightGBM's ``plot_importance`` draws the
    same picture and takes the same options.

    Parameters
    ----------
    model : fitted booster
        Any oracleboost booster whose weak learners say which features they use
        (stumps, trees, linear coordinates; not a ``MatrixOracle``'s columns).
    importance_type : str, default="weight"
        Any value the booster's ``importance_type`` parameter takes: ``"weight"`` (each
        round's coefficient times its hypothesis' own importances, summing to 1) or
        ``"split"`` (split counts), and the others the booster documents.
    max_num_features : int or None, default=None
        Draw only this many features, those of largest importance.  None: all of them.
    ax : matplotlib Axes, default=None
        Where to draw.  None: a new figure.
    feature_names : list of str, default=None
        One name per feature.  None: ``feature_names_in_`` (a DataFrame's columns), else
        ``Column_0``, ``Column_1``, … (LightGBM's names, as the export writes them).
    ignore_zero : bool, default=True
        Leave out the features of importance 0.
    precision : int or None, default=3
        Digits after the point of the values written by the bars; None writes none.
    height : float, default=0.2
        The bars' height.
    title, xlabel, ylabel : str or None
        The axes' title and labels; ``xlabel`` None says ``importance_type``.

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    ValueError
        An ``importance_type`` the booster does not take, ``max_num_features`` below 1,
        ``feature_names`` of the wrong length, or no feature to draw.
    TypeError
        ``model`` is not an oracleboost booster, or its weak learners do not say which
        features they use.
    sklearn.exceptions.NotFittedError
        Before ``fit``.
    ImportError
        matplotlib is not installed (the ``experiments`` extra).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import load_breast_cancer
    >>> from oracleboost import CoordinateBoostingClassifier
    >>> from oracleboost.plotting import plot_importance
    >>> data = load_breast_cancer()
    >>> model = CoordinateBoostingClassifier(n_estimators=50).fit(data.data, data.target)
    >>> ax = plot_importance(model, max_num_features=3, feature_names=data.feature_names)
    >>> [label.get_text() for label in ax.get_yticklabels()][::-1]  # largest first
    ['area error', 'worst concave points', 'worst texture']
    """
    _fitted_history(model, "plot_importance")
    if "importance_type" not in model.get_params(deep=False):
        raise TypeError(f"plot_importance: {type(model).__name__} has no importance_type")
    if max_num_features is not None and (
            isinstance(max_num_features, bool) or not isinstance(max_num_features, Integral)
            or max_num_features < 1):
        raise ValueError(f"max_num_features must be None or an int >= 1; got "
                         f"{max_num_features!r}")
    view = copy.copy(model)  # shares the fitted model, read only
    view.importance_type = importance_type
    view._validate_params()  # as fit checks it (scikit-learn's message names it)
    try:
        values = np.asarray(view.feature_importances_, dtype=np.float64)
    except AttributeError as exc:  # weak learners that do not know their features
        raise TypeError(f"plot_importance: {exc}") from None
    names = _feature_names(model, values.shape[0], feature_names)
    ranked = sorted(zip(values.tolist(), names, strict=True), key=lambda pair: pair[0])
    if ignore_zero:
        ranked = [pair for pair in ranked if pair[0] != 0.0]
    if max_num_features is not None:
        ranked = ranked[-max_num_features:]
    if not ranked:
        raise ValueError(f"plot_importance: no feature has a non-zero {importance_type!r} "
                         "importance (ignore_zero=False draws them all)")
    if ax is None:
        _, ax = _pyplot().subplots(figsize=(6.0, 0.5 + 0.3 * len(ranked)),
                                   layout="constrained")
    widths = [v for v, _ in ranked]
    rows = np.arange(len(ranked))
    ax.barh(rows, widths, align="center", height=height)
    if precision is not None:
        for row, value in zip(rows, widths, strict=True):
            ax.text(value, row, f" {value:.{precision}f}", va="center")
    ax.set_yticks(rows, [n for _, n in ranked])
    ax.set_xlim(0.0, max(widths) * 1.15 if max(widths) > 0 else 1.0)
    ax.grid(True, axis="x", alpha=0.3)
    if title is not None:
        ax.set_title(title)
    ax.set_xlabel(f"importance ({importance_type})" if xlabel is None else xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    return ax


# -- margins ------------------------------------------------------------------------------


def _default_stages(n_rounds: int, norms: list[float]) -> list[int]:
    """About four rounds spread evenly on a log scale from the first to the last, those
    whose model is not the zero vote."""
    stages = np.unique(np.round(np.geomspace(1, max(n_rounds, 1), 4)).astype(int))
    return [int(t) for t in stages if norms[t - 1] > 0.0]


def _check_stages(stages: Any, n_rounds: int, norms: list[float]) -> list[int]:
    if stages is None:
        return _default_stages(n_rounds, norms)
    if isinstance(stages, Integral) and not isinstance(stages, bool):
        stages = [stages]
    found = []
    for t in stages:
        if isinstance(t, bool) or not isinstance(t, Integral) or not 1 <= t <= n_rounds:
            raise ValueError(f"stages must be round counts in [1, n_estimators_] = "
                             f"[1, {n_rounds}]; got {t!r}")
        if not norms[t - 1] > 0.0:
            raise ValueError(f"stages: after {t} rounds the model is the zero vote "
                             "(||λ||_1 = 0), whose normalised margins are undefined")
        found.append(int(t))
    return sorted(set(found))


def staged_normalised_margins(model: Any, X: Any, y: Any,
                              stages: Sequence[int] | None = None) -> dict[int, np.ndarray]:
    """Each row's normalised margin after each round of ``stages``: the numbers
    :func:`plot_margins` draws.

    The margin of a row under the vote ``f_t`` of the first t rounds is
    ``y f_t(x) / ||λ_t||_1`` (Schapire, Freund, Bartlett & Lee 1998): ``f_t`` from
    ``staged_decision_function``, ``||λ_t||_1`` the ℓ1 norm of its coefficients over
    distinct functions scaled to ``max |h| = 1`` on the training rows, an intercept
    counted as a constant hypothesis, as each booster normalises the least of these on
    the training rows, ``history_["margin"]``.  With more than two classes the margin is
    ``f_y − max_{k≠y} f_k`` over the same norm.

    Parameters
    ----------
    model : fitted classifier
        As for :func:`plot_margins`.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels among ``classes_``.
    stages : list of int, default=None
        Round counts in [1, ``n_estimators_``]; None: about four, evenly on a log scale
        from the first round to the last.

    Returns
    -------
    dict of int to ndarray of shape (n_samples,)
        The margins after each of the rounds, in increasing order of rounds.

    Raises
    ------
    TypeError, ValueError
        As :func:`plot_margins`.
    """
    if not is_classifier(model):
        raise TypeError(f"plot_margins: {type(model).__name__} is not a classifier: a "
                        "margin y f(x) needs labels y = ±1 (or classes)")
    _fitted_history(model, "plot_margins")
    ensemble = model.ensemble_
    if not hasattr(ensemble, "l1_norms"):
        raise TypeError(
            f"plot_margins: {type(model).__name__} fits a {type(ensemble).__name__}, not a "
            "vote of weak learners with an ℓ1 norm; its margin is the ℓ2 margin of "
            "history_['margin'] (plot_history)")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label a row); got shape {y.shape}")
    classes = model.classes_
    index = np.searchsorted(classes, y)
    index = np.minimum(index, len(classes) - 1)
    unknown = classes[index] != y
    if unknown.any():
        raise ValueError(f"y holds labels the model was not fitted on: "
                         f"{np.unique(y[unknown])[:5].tolist()} (classes_: "
                         f"{classes.tolist()})")
    norms = list(ensemble.l1_norms())
    offset = float(np.max(np.abs(np.asarray(model.intercept_, dtype=np.float64))))
    norms = [n + offset for n in norms]
    wanted = _check_stages(stages, model.n_estimators_, norms)
    if not wanted:
        return {}
    out: dict[int, np.ndarray] = {}
    last = wanted[-1]
    for t, f in enumerate(model.staged_decision_function(X), start=1):
        if f.shape[0] != y.shape[0]:
            raise ValueError(f"X has {f.shape[0]} rows but y has {y.shape[0]}")
        if t in wanted:
            target = np.where(index == 1, 1.0, -1.0) if f.ndim == 1 else index
            out[t] = vote_margins(target, f) / norms[t - 1]
        if t == last:
            break
    return out


def plot_margins(model: Any, X: Any, y: Any, stages: Sequence[int] | None = None,
                 ax: Axes | None = None) -> Axes:
    """Draw the cumulative distribution of the normalised margins after several rounds.

    The margin of a row under the vote ``f = Σ_j λ_j h_j`` is ``y f(x) / ||λ||_1`` (two
    classes, y = ±1; ``f_y − max_{k≠y} f_k`` over the same norm for more), in [−1, 1]
    on the training rows: positive where the vote is right, near 1 where it is right by
    a wide majority.  Schapire, Freund, Bartlett & Lee (1998, Figure 2) drew its
    cumulative distribution after 5, 100 and 1,000 rounds of AdaBoost: its left end
    moves right as boosting goes on, even after the training error is 0, and their
    bound on the test error depends on the share of small margins, not on the number of
    rounds.  Each stage's curve is a step
    function: at the i-th smallest margin it rises to i / n.

    The margins are those that ``history_["margin"]`` records the least of
    (:func:`staged_normalised_margins`): the decision function after t rounds
    (``staged_decision_function``) over its coefficients' ℓ1 norm at that round.

    Parameters
    ----------
    model : fitted classifier
        An oracleboost classifier whose model is a vote of weak learners
        (``CoordinateBoostingClassifier``, ``MirrorBoostingClassifier``,
        ``TotallyCorrectiveClassifier``, ``FunctionalGradientClassifier``).
        ``AcceleratedMarginClassifier``'s margin is an ℓ2 margin: it is refused.
    X : array-like of shape (n_samples, n_features)
        The rows: the training rows for the paper's picture, or held-out ones.
    y : array-like of shape (n_samples,)
        Their labels, among ``classes_``.
    stages : list of int, default=None
        The round counts to draw, in [1, ``n_estimators_``].  None: about four, evenly
        on a log scale from the first round to the last.
    ax : matplotlib Axes, default=None
        Where to draw.  None: a new figure.

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    TypeError
        A regressor or ranker (no margins), or a booster whose model is no vote with an
        ℓ1 norm.
    ValueError
        Labels the model was not fitted on, X and y of different lengths, or a stage
        outside [1, ``n_estimators_``] (or one whose model is the zero vote).
    sklearn.exceptions.NotFittedError
        Before ``fit``.
    ImportError
        matplotlib is not installed (the ``experiments`` extra).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import load_breast_cancer
    >>> from oracleboost import CoordinateBoostingClassifier
    >>> from oracleboost.plotting import plot_margins
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = CoordinateBoostingClassifier(n_estimators=100).fit(X, y)
    >>> ax = plot_margins(model, X, y, stages=[10, 100])
    >>> [line.get_label() for line in ax.get_lines()[:2]]
    ['10 rounds', '100 rounds']
    >>> bool(ax.get_lines()[1].get_xdata()[0] > 0)  # every training row right at round 100
    True

    References
    ----------
    Schapire, R. E., Freund, Y., Bartlett, P. & Lee, W. S. (1998). Boosting the margin:
    a new explanation for the effectiveness of voting methods. Annals of Statistics
    26(5), 1651–1686.
    """
    margins = staged_normalised_margins(model, X, y, stages)
    if ax is None:
        _, ax = _pyplot().subplots(figsize=(5.0, 3.5), layout="constrained")
    for t, m in margins.items():
        x = np.sort(m)
        ax.step(x, np.arange(1, x.shape[0] + 1) / x.shape[0], where="post",
                label=f"{t} round{'s' if t > 1 else ''}")
    ax.axvline(0.0, color="0.6", linewidth=0.8, linestyle=":")
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("normalised margin  y f(x) / ||λ||₁")
    ax.set_ylabel("cumulative distribution")
    ax.set_title(f"margins of {type(model).__name__}")
    if margins:
        ax.legend()
    return ax
