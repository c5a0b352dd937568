"""A trained tree ensemble read back as a finite hypothesis class: one column per tree.

:meth:`TreeEnsembleOracle.from_lightgbm` reads a LightGBM model (a ``Booster``, an
``LGBMModel`` or its model text, such as :func:`oracleboost.export.to_lightgbm` writes)
and :meth:`TreeEnsembleOracle.from_sklearn` a scikit-learn ensemble (gradient boosting,
random forests, extra trees, histogram gradient boosting).  Each tree becomes one
hypothesis; any booster can then re-weight them: the totally corrective boosters
(LPBoost and its family) thin an ensemble of hundreds of trees to the few that keep its
margin (Akkerman et al., 2025, do this with an LP solved by Gurobi).

The class is a finite class held as its columns on the training rows, as
:class:`~oracleboost.oracles.MatrixOracle` is (the same products, correlation vectors,
``combine`` and exact certificates), but its hypotheses are the trees: a fitted booster
predicts new rows by evaluating the trees it kept, and exports them to LightGBM (and so
to SHAP) as trees.

Scale.  Margin boosters want hypotheses in [−1, 1].  Tree ``j`` enters the class divided
by ``2**e_j``, the least power of two at or above its largest ``|leaf value|``: its
column lies in [−1, 1] with a largest ``|entry|`` in (0.5, 1], and the division is exact,
so ``2**e_j`` times the column is the tree's output bit for bit
(:attr:`EnsembleTree.tree_scale` keeps ``2**e_j``).  A tree whose leaves are all 0 keeps
``e_j = 0``.  Every tree thus counts at the scale of its largest leaf, not its
learning rate: a booster re-weights them as functions, not as the sum they were.

Rows are routed as :class:`~oracleboost.oracles.trees.TreeStructure` routes them
(LightGBM's rules): for a LightGBM tree these are its own decisions (missing values
included), for a scikit-learn tree its float32 comparison made in float64
(:func:`~oracleboost.oracles.trees.float32_split`).

References
----------
Akkerman et al.  Boosting revisited: benchmarking and advancing LP-based ensemble
methods.  Transactions on Machine Learning Research (TMLR), 2025.

A. Demiriz, K. P. Bennett and J. Shawe-Taylor.  Linear programming boosting via column
generation.  Machine Learning 46, 2002.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from oracleboost._typing import ArrayLike
from oracleboost.oracles._lightgbm_text import lightgbm_trees
from oracleboost.oracles._sklearn_trees import sklearn_trees
from oracleboost.oracles.base import BoundOracle, Capabilities, Hypothesis, Oracle, check_X
from oracleboost.oracles.matrix import BoundColumns, _check_blocks
from oracleboost.oracles.trees import TreeStructure
from oracleboost.rows.blocks import DEFAULT_BLOCK_SIZE

__all__ = ["TreeEnsembleOracle", "EnsembleTree"]


class EnsembleTree(Hypothesis):
    """Tree ``j`` of an ensemble, divided by ``2**exponent``, times ``scale``.

    Parameters
    ----------
    tree : TreeStructure
        The tree as it was trained (its own leaf values and covers).
    j : int
        Its index in the ensemble.
    exponent : int
        The tree's leaves divided by ``2**exponent`` lie in [−1, 1].
    scale : float
        The coefficient the oracle's answer carries (−1 for a negated tree).
    allow_nan : bool, default=False
        Whether ``predict`` takes NaN (routed by the tree's missing-value rules).
    """

    def __init__(self, tree: TreeStructure, j: int, exponent: int, scale: float,
                 allow_nan: bool = False) -> None:
        self.tree = tree
        self.j = int(j)
        self.exponent = int(exponent)
        self.scale = float(scale)
        self.allow_nan = bool(allow_nan)
        self.key = ("ensemble_tree", _digest(tree, self.exponent))

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a stored tree; its ``key`` (which names the function, so that equal
        trees share a coefficient) is made again from the tree, never taken from a file."""
        self.__dict__.update(state)
        self.key = ("ensemble_tree", _digest(self.tree, self.exponent))

    @property
    def tree_scale(self) -> float:
        """``2**exponent``: the tree's own output is this times its column."""
        return math.ldexp(1.0, self.exponent)

    def predict(self, X: ArrayLike) -> np.ndarray:
        return self._predict_validated(check_X(X, allow_nan=self.allow_nan,
                                               who="an EnsembleTree hypothesis"))

    def _predict_validated(self, X: Any) -> np.ndarray:
        if X.shape[1] != self.tree.n_features:
            raise ValueError(f"X has {X.shape[1]} features, but the tree was trained on "
                             f"{self.tree.n_features}")
        return self.scale * np.ldexp(self.tree.predict(X), -self.exponent)

    def tree_structure(self) -> TreeStructure:
        """The tree with the leaves :meth:`predict` returns (``scale · value / 2**exponent``,
        the same products) and its own covers."""
        return self.tree.with_values(self.scale * np.ldexp(self.tree.value, -self.exponent))

    def feature_importances(self, n_features: int) -> np.ndarray:
        """How often the tree splits on each feature, normalised (LightGBM's
        ``importance_type="split"``); zeros for a tree without splits."""
        out = np.bincount(self.tree.feature, minlength=n_features).astype(np.float64)
        total = out.sum()
        return out / total if total > 0 else out

    def __repr__(self) -> str:
        return (f"EnsembleTree(j={self.j}, n_leaves={self.tree.n_leaves}, "
                f"tree_scale={self.tree_scale:g}, scale={self.scale:g})")


def _digest(tree: TreeStructure, exponent: int) -> str:
    """A name of the function ``tree / 2**exponent``: equal trees share a coefficient."""
    return tree.digest(str(exponent))


def leaf_exponent(tree: TreeStructure) -> int:
    """The least ``e`` with ``max |leaf value| <= 2**e`` (0 for a tree of zeros)."""
    top = float(np.max(np.abs(tree.value))) if tree.value.size else 0.0
    if not np.isfinite(top):
        raise ValueError("a tree has a non-finite leaf value")
    if top == 0.0:
        return 0
    mantissa, e = math.frexp(top)  # top = mantissa · 2**e, mantissa in [0.5, 1)
    return e - 1 if mantissa == 0.5 else e


class TreeEnsembleOracle(Oracle):
    """The trees of a trained ensemble as a finite hypothesis class, one column each.

    Build it from a model with :meth:`from_lightgbm` or :meth:`from_sklearn`.  Bound to
    rows ``X`` (the features the ensemble was trained on), the class is the matrix of
    the trees' outputs on them, each tree divided by the power of two at or above its
    largest ``|leaf|`` (exact; columns in [−1, 1]; see the module docstring).  It is
    closed under negation, as :class:`MatrixOracle` is: ``correlate`` returns the tree
    with the largest ``|<r, h>|``, negated where the product is negative; ``project`` the
    best scaled tree in weighted least squares; ``correlation_vector`` every tree's
    product at once.  Every booster takes it: the coordinate, mirror, totally corrective
    and functional boosters keep a weighted sum of trees (exported to LightGBM by
    :func:`oracleboost.export.to_lightgbm`), the accelerated booster a linear model over
    the trees.  On a Dask collection each partition evaluates the trees on its own rows,
    and the products are summed over the partitions as :class:`MatrixOracle`'s are (the
    same bits as in memory).

    Parameters
    ----------
    trees : sequence of TreeStructure
        The trees, each of scalar leaves over the same features.
    allow_nan : bool, default=False
        Whether X may hold NaN, routed by each split's missing-value rule (LightGBM's
        trees learn one; :meth:`from_lightgbm` sets this).
    n_jobs : int or None, default=None
        Threads of the products' passes over the rows (as :class:`MatrixOracle`'s); the
        answers do not depend on it.
    block_size : int, default=65536
        Rows of a block: the order of the sums over the rows (as
        :class:`MatrixOracle`'s).

    Examples
    --------
    Thin a 40-tree LightGBM model with LPBoost:

    >>> import lightgbm as lgb
    >>> from sklearn.datasets import load_breast_cancer
    >>> from oracleboost import TotallyCorrectiveClassifier
    >>> from oracleboost.oracles import TreeEnsembleOracle
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> model = lgb.LGBMClassifier(n_estimators=40, num_leaves=4, verbose=-1).fit(X, y)
    >>> oracle = TreeEnsembleOracle.from_lightgbm(model)
    >>> len(oracle.trees)
    40
    >>> thin = TotallyCorrectiveClassifier(oracle, method="lpboost").fit(X, y)
    >>> len(thin.estimators_) < 40
    True
    """

    def __init__(self, trees: Sequence[TreeStructure], allow_nan: bool = False,
                 n_jobs: int | None = None, block_size: int = DEFAULT_BLOCK_SIZE) -> None:
        self.trees = trees
        self.allow_nan = allow_nan
        self.n_jobs = n_jobs
        self.block_size = block_size

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(correlation_vector=True, bounded=True,
                            allow_nan=bool(self.allow_nan))

    # -- sources ------------------------------------------------------------------------
    @classmethod
    def from_lightgbm(cls, model: Any, **params: Any) -> TreeEnsembleOracle:
        """The trees of a trained LightGBM model.

        Parameters
        ----------
        model : lightgbm.Booster, lightgbm.LGBMModel or str
            A trained model, or its text (``Booster.model_to_string``, a model file's
            contents, :func:`oracleboost.export.lightgbm_model_string`).  One output
            per row: a multiclass model (a tree per class per round) is refused.
        **params
            The oracle's other parameters (``n_jobs``, ``block_size``).

        Returns
        -------
        TreeEnsembleOracle
            Its trees in the model's order (tree ``t`` is iteration ``t``), NaN taken
            (``allow_nan=True``) and routed as LightGBM routes it.  X holds what
            LightGBM's ``predict`` reads from a NumPy array (category codes for
            categorical features).
        """
        return cls(lightgbm_trees(model), **{"allow_nan": True, **params})

    @classmethod
    def from_sklearn(cls, model: Any, **params: Any) -> TreeEnsembleOracle:
        """The trees of a fitted scikit-learn ensemble.

        Parameters
        ----------
        model : fitted estimator
            ``GradientBoostingClassifier`` (two classes) or ``GradientBoostingRegressor``:
            its regression trees (without the learning rate);
            ``RandomForestClassifier`` or ``ExtraTreesClassifier`` (two classes, one
            output): each tree's ``p(classes_[1]) − p(classes_[0])``, in [−1, 1];
            ``RandomForestRegressor`` or ``ExtraTreesRegressor`` (one output): each
            tree's prediction; ``HistGradientBoostingClassifier`` (two classes) or
            ``HistGradientBoostingRegressor`` without categorical splits: its trees
            (their values include the learning rate; NaN routed as each split learnt,
            so ``allow_nan=True``).  Multiclass and multi-output models are refused.
        **params
            The oracle's other parameters (``n_jobs``, ``block_size``).

        Returns
        -------
        TreeEnsembleOracle
        """
        trees, allow_nan = sklearn_trees(model)
        return cls(trees, **{"allow_nan": allow_nan, **params})

    # -- binding ------------------------------------------------------------------------
    def bind(self, X: ArrayLike) -> BoundOracle:
        _check_blocks(self)
        return BoundColumns(self, *self._matrix_of(X))

    def _matrix_of(self, X: ArrayLike) -> tuple[np.ndarray, Callable]:
        """The trees' scaled outputs on X (shape (n, J)) and the maker of their
        hypotheses."""
        trees = _checked_trees(self.trees)
        X = check_X(X, allow_nan=bool(self.allow_nan), who="TreeEnsembleOracle")
        n_features = trees[0].n_features
        if X.shape[1] != n_features:
            raise ValueError(f"X has {X.shape[1]} features, but the ensemble's trees were "
                             f"trained on {n_features}")
        exponents = tuple(leaf_exponent(t) for t in trees)
        A = np.empty((X.shape[0], len(trees)))
        for j, (t, e) in enumerate(zip(trees, exponents, strict=True)):
            A[:, j] = np.ldexp(t.predict(X), -e)  # exact: a power of two
        make = functools.partial(_ensemble_tree, trees, exponents, bool(self.allow_nan))
        return A, make

    def _bind_partitioned(self, rows: Any, backend: Any) -> BoundOracle:
        """The class over rows held in a backend's partitions (each partition evaluates
        the trees on its rows), by products summed over them."""
        _check_blocks(self)
        trees = _checked_trees(self.trees)
        exponents = tuple(leaf_exponent(t) for t in trees)
        return backend.bind_columns(
            self, rows, functools.partial(_ensemble_tree, trees, exponents,
                                          bool(self.allow_nan)))


def _ensemble_tree(trees: tuple[TreeStructure, ...], exponents: tuple[int, ...],
                   allow_nan: bool, j: int, scale: float) -> EnsembleTree:
    return EnsembleTree(trees[j], j, exponents[j], scale, allow_nan)


def _checked_trees(trees: Any) -> tuple[TreeStructure, ...]:
    """``trees`` as a non-empty tuple of scalar trees over one number of features, or an
    error naming ``trees``."""
    if isinstance(trees, TreeStructure) or not isinstance(trees, Sequence):
        raise TypeError("trees must be a sequence of TreeStructure (use "
                        "TreeEnsembleOracle.from_lightgbm or from_sklearn to read a model); "
                        f"got {type(trees).__name__}")
    trees = tuple(trees)
    if not trees:
        raise ValueError("trees is empty: the class needs at least one tree")
    for j, t in enumerate(trees):
        if not isinstance(t, TreeStructure):
            raise TypeError(f"trees[{j}] is a {type(t).__name__}, not a TreeStructure")
        if t.n_outputs != 1:
            raise ValueError(f"trees[{j}] has {t.n_outputs} outputs a leaf; the class takes "
                             "trees of one output")
        if t.n_features != trees[0].n_features:
            raise ValueError(f"trees[{j}] is over {t.n_features} features, trees[0] over "
                             f"{trees[0].n_features}")
        if not np.all(np.isfinite(t.value)):
            raise ValueError(f"trees[{j}] has a non-finite leaf value")
    return trees

