"""The trees of a fitted scikit-learn ensemble, each as a
:class:`~oracleboost.oracles.trees.TreeStructure` of one output.

Decision trees (of gradient boosting, random forests, extra trees) are read by
:meth:`FittedEstimator.tree_structure
<oracleboost.oracles.sklearn.FittedEstimator.tree_structure>` (their float32 splits made
float64 comparisons); a classification tree of two classes gets the leaves
``p(classes_[1]) − p(classes_[0])`` (its ``predict_proba``'s numbers), in [−1, 1].
Histogram gradient boosting's trees (``_predictors``, its ``TreePredictor`` nodes)
compare ``x <= num_threshold`` in float64 and send a NaN where the split learnt
(``missing_go_to_left``): LightGBM's NaN-missing splits.

The trees are evaluated by LightGBM's rules, which read a value of magnitude at most
1e-35 as 0: at a split within 1e-35 of 0 (0.0, a scikit-learn tree's split of a feature
coded ±1) such a value takes 0's side, where scikit-learn compares the value itself.
Every other row goes where scikit-learn sends it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import check_is_fitted

from oracleboost.oracles.sklearn import FittedEstimator
from oracleboost.oracles.trees import MISSING_NAN, TreeStructure

__all__ = ["sklearn_trees"]

_FORESTS = (RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier,
            ExtraTreesRegressor)
_HIST = (HistGradientBoostingClassifier, HistGradientBoostingRegressor)


def sklearn_trees(model: Any) -> tuple[tuple[TreeStructure, ...], bool]:
    """The trees of ``model`` and whether they route NaN (histogram gradient boosting).

    Raises
    ------
    TypeError
        For a model of another class.
    ValueError
        For a multiclass or multi-output model, or categorical splits of histogram
        gradient boosting.
    """
    name = type(model).__name__
    if not isinstance(model, (GradientBoostingClassifier, GradientBoostingRegressor,
                              *_FORESTS, *_HIST)):
        raise TypeError(
            "model must be a fitted GradientBoosting*, RandomForest*, ExtraTrees* or "
            f"HistGradientBoosting* classifier or regressor of scikit-learn; got {name}")
    check_is_fitted(model)
    classes = getattr(model, "classes_", None)
    if classes is not None and np.ndim(classes) == 1 and len(classes) > 2:
        raise ValueError(
            f"the {name} is multiclass ({len(classes)} classes, a tree per class per "
            "round or class-probability leaves); TreeEnsembleOracle takes models of one "
            "output per row: fit one binary model per class to re-weight each")
    if getattr(model, "n_outputs_", 1) != 1:
        raise ValueError(f"the {name} has {model.n_outputs_} outputs; TreeEnsembleOracle "
                         "takes models of one output per row")
    if isinstance(model, _HIST):
        trees = _hist_trees(model)
    else:
        estimators = (model.estimators_[:, 0] if isinstance(
            model, (GradientBoostingClassifier, GradientBoostingRegressor))
            else model.estimators_)
        trees = tuple(_decision_tree(est) for est in estimators)
    return trees, isinstance(model, _HIST)


def _decision_tree(est: Any) -> TreeStructure:
    tree = FittedEstimator(est).tree_structure()
    if not isinstance(est, DecisionTreeClassifier):
        return tree
    # predict_proba's numbers: the leaves' class fractions, as the tree keeps them
    t = est.tree_
    leaves = np.flatnonzero(t.children_left == -1)  # the order tree_structure numbers them
    proba = t.value[leaves, 0, :]
    return tree.with_values((proba[:, 1] - proba[:, 0])[:, None])


def _hist_trees(model: Any) -> tuple[TreeStructure, ...]:
    name = type(model).__name__
    if getattr(model, "n_trees_per_iteration_", 1) != 1:
        raise ValueError(f"the {name} fits {model.n_trees_per_iteration_} trees a round; "
                         "TreeEnsembleOracle takes models of one output per row")
    n_features = int(model.n_features_in_)
    trees = []
    for t, (predictor,) in enumerate(model._predictors):
        nodes = predictor.nodes
        if np.any(nodes["is_categorical"][nodes["is_leaf"] == 0]):
            raise ValueError(f"tree {t} of the {name} splits a categorical feature, which "
                             "TreeEnsembleOracle does not read; refit with "
                             "categorical_features=None")
        trees.append(_hist_tree(nodes, n_features))
    return tuple(trees)


def _hist_tree(nodes: np.ndarray, n_features: int) -> TreeStructure:
    """A ``TreePredictor``'s nodes (node 0 the root) in LightGBM's numbering."""
    is_leaf = nodes["is_leaf"].astype(bool)
    internal = np.flatnonzero(~is_leaf)
    leaves = np.flatnonzero(is_leaf)
    if internal.size == 0:
        return TreeStructure.constant(float(nodes["value"][0]), n_features).with_counts(
            nodes["count"][leaves].astype(np.float64))
    number = np.empty(len(nodes), dtype=np.intp)
    number[internal] = np.arange(internal.size)
    number[leaves] = ~np.arange(leaves.size)
    if internal[0] != 0:  # pragma: no cover - scikit-learn's root is node 0
        raise ValueError("a histogram gradient boosting tree whose root is not node 0")
    return TreeStructure(
        n_features=n_features,
        feature=nodes["feature_idx"][internal].astype(np.intp),
        threshold=nodes["num_threshold"][internal].astype(np.float64),
        left=number[nodes["left"][internal].astype(np.intp)],
        right=number[nodes["right"][internal].astype(np.intp)],
        value=nodes["value"][leaves].astype(np.float64)[:, None],
        default_left=nodes["missing_go_to_left"][internal].astype(bool),
        missing=np.full(internal.size, MISSING_NAN, dtype=np.intp),
        leaf_count=nodes["count"][leaves].astype(np.float64),
    )

