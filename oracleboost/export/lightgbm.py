"""A fitted ensemble of trees as a LightGBM model.

:func:`to_lightgbm` writes the model of a fitted booster whose weak learners are trees
(decision stumps, scikit-learn trees, LightGBM trees, MABoost's votes over them) as a
``lightgbm.Booster``.  Everything that reads LightGBM models then reads ours, with no
code of ours: SHAP's ``TreeExplainer`` (exact TreeSHAP), LightGBM's compiled
prediction, ``dump_model``/``save_model``, and the converters built for LightGBM
(treelite, ONNX through onnxmltools).

The model ``f(x) = intercept + Σ_r δ_r h_{j_r}(x)`` (one term a round, as
:class:`~oracleboost.engine.model.Ensemble` sums it; from the last totally corrective
round on, that round's coefficients) becomes one iteration of constant trees holding
the intercept, then one iteration a term whose trees are ``h_{j_r}``'s splits with its
leaves times ``δ_r``.  LightGBM sums a row's trees in that order from 0, as the
ensemble sums its terms from the intercept, so ``predict(X, raw_score=True)`` is
``decision_function(X)`` to the bit for one score a row and for class scores; where
``decision_function`` is the difference of two class scores (the functional
classifier's two-class vector losses), each leaf is that difference, and the two agree
to float64 rounding.  ``predict(X, raw_score=True, num_iteration=k + 1)`` is the model
after its first k rounds (``staged_decision_function``'s k-th), except for a totally
corrective model: its iterations are its hypotheses at the last round's coefficients
(each round re-solves them all), so ``num_iteration=k + 1`` is its first k hypotheses
at those, not its round k.

Values near 0: LightGBM's prediction on a dense row reads a feature of magnitude at
most 1e-35 (``1e-35f``: 1.0000000180025095e-35) as 0, so every split sends all such
values one way.  A stump or a scikit-learn tree that splits within 1e-35 of 0 (a
scikit-learn tree on a feature coded -1/+1 splits at 0.0; a stump, only between two
training values within 1e-35 of 0) separates them, and has no LightGBM equivalent: it
is refused by name (LightGBM's own trees read such values as LightGBM does, and always
export).  A scikit-learn tree's float32 comparison becomes an equivalent float64
threshold (:func:`~oracleboost.oracles.trees.float32_split`).

LightGBM's categorical splits (``LightGBMOracle`` on a DataFrame's ``category``
columns) are written as LightGBM wrote them, with the fit's categories as the model's
``pandas_categorical``: ``predict`` of the same DataFrames is ``decision_function``
bit for bit (see :func:`to_lightgbm`).  ``X`` (the covers) may be a DataFrame, as
``predict`` takes it, or a scipy sparse matrix.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from oracleboost._typing import ArrayLike
from oracleboost.engine.backends import backend_for
from oracleboost.engine.input import validate_input
from oracleboost.engine.model import Ensemble
from oracleboost.oracles.trees import ZERO_THRESHOLD, TreeStructure
from oracleboost.rows.partitioned import NotDistributedError

if TYPE_CHECKING:  # pragma: no cover
    import lightgbm

    from oracleboost.engine.base import BaseBooster

__all__ = ["to_lightgbm", "lightgbm_model_string", "lightgbm_feature_names", "ExportWarning"]


class ExportWarning(UserWarning):
    """An export that had to fill in something the model does not know."""


#: The values of ``to_lightgbm``'s ``link``: where a logistic link's scale is written.
LINKS = ("native", "standard")


def to_lightgbm(estimator: BaseBooster, X: ArrayLike | None = None, *,
                link: str = "native") -> lightgbm.Booster:
    """The fitted ``estimator``'s model as a ``lightgbm.Booster``.

    Parameters
    ----------
    estimator : fitted booster
        Any booster whose model is an ensemble of trees: every hypothesis answers
        :meth:`~oracleboost.oracles.Hypothesis.tree_structure`.
    X : array-like of shape (n_samples, n_features), default=None
        Rows whose counts become the trees' covers (``leaf_count`` and
        ``internal_count``: the distribution SHAP's path-dependent TreeSHAP integrates
        over), usually the training rows.  None: each tree's own covers
        (scikit-learn trees: their weighted training samples; LightGBM trees: their
        training counts); stumps carry none, and get a cover of 1 a leaf, with an
        :class:`ExportWarning`.  A split whose cover is 0 (no row of X reaches it)
        gets an :class:`ExportWarning` too: path-dependent TreeSHAP divides by it (its
        contributions come out NaN).
    link : {"native", "standard"}, default="native"
        How a link ``σ(c·f)`` with ``c ≠ 1`` is written (the exponential loss's
        ``predict_proba`` is ``σ(2f)``: Friedman, Hastie & Tibshirani 2000).
        ``"native"``: the trees sum to ``f`` (``decision_function``) and the objective
        carries the scale, ``binary sigmoid:2``.  LightGBM and treelite apply it, but
        SHAP's ``model_output="probability"`` and onnxmltools ignore ``sigmoid`` and
        give ``σ(f)``.  ``"standard"``: every leaf value is multiplied by ``c`` and the
        objective is ``binary sigmoid:1``, the logistic transform every reader applies,
        so the raw score is the log-odds ``c·f`` and every reader's transformed output
        is ``predict_proba``.  For ``c = 2`` (the library's exponential loss) each leaf
        is doubled exactly in binary floating point, and so is every partial sum:
        ``predict(X, raw_score=True)`` is ``2 · decision_function(X)`` bit for bit
        (for a loss of your own whose scale is not a power of two, each leaf times
        ``c`` is rounded).  Where the link's scale is 1 or there is no sigmoid (the
        logistic loss, the softmax, regressors, the identity), both write the same model.

    Returns
    -------
    lightgbm.Booster
        ``predict(X, raw_score=True)`` equals ``estimator.decision_function(X)`` (or
        ``predict`` for a regressor or ranker; ``c`` times it with
        ``link="standard"``).  Its objective, in the model text and in ``params``
        (with ``num_class`` and ``sigmoid``, where SHAP and onnxmltools read it), makes
        ``predict(X)`` the estimator's ``predict_proba`` where its link is LightGBM's:
        ``binary sigmoid:2`` for the exponential loss (``sigmoid:1`` with
        ``link="standard"``), ``binary sigmoid:1`` for the logistic, ``multiclass``
        for the softmax; ``regression`` (the identity) for regressors and rankers.
        Where no LightGBM objective is the booster's link, the identity, so that
        ``predict(X)`` is the raw score:
        ``regression`` for one score a row (MABoost's and the totally corrective vote,
        whose ``predict_proba`` is the affine ``(1 + f / ‖λ‖₁) / 2``: every LightGBM
        transform but the identity is non-linear), ``custom`` (LightGBM's name for an
        objective it does not know) for class scores (vote shares, the multiclass
        hinge: LightGBM has no identity objective of several scores).  Feature names
        are the fit's, as :func:`lightgbm_feature_names` makes them.

    Raises
    ------
    ValueError
        When ``link`` is not one of ``"native"``, ``"standard"``, or a weak learner is
        not a tree (naming its class), or the model is not an ensemble (a linear or
        kernel model), or its ``categories_`` are not strings
        or numbers (LightGBM keeps them as JSON), or a stump or scikit-learn tree
        splits a feature within 1e-35 of 0 (naming the feature and the threshold):
        LightGBM reads every value of magnitude at most 1e-35 as 0, so no LightGBM
        split sends them apart as that split does.

    Notes
    -----
    Categories: a model fitted on a DataFrame's ``category`` columns with an oracle
    that takes them (``LightGBMOracle``) has LightGBM's categorical splits, and the
    export writes them as they are: the trees were grown on the codes of
    ``categories_``, and the model's ``pandas_categorical`` holds those categories,
    so ``predict`` of a DataFrame maps its category columns by value as
    ``decision_function`` does (an unseen category, like a missing value, goes right
    at every categorical split), and a NumPy X holds the codes themselves.  SHAP's
    ``TreeExplainer(model)`` explains it in its default mode (path-dependent, no
    background data), which hands the trees to LightGBM's own TreeSHAP
    (``pred_contrib``); SHAP's own tree reader has no categorical splits, so its
    interventional mode (``data=...``) refuses a DataFrame and gets a NumPy array
    wrong (its additivity check fails), for LightGBM's own categorical models alike.
    A LightGBM model reads every ``category`` column of a DataFrame as categories:
    a model whose oracle read a numeric category column as numbers (``StumpOracle``,
    say: ``categories_`` is empty) must be given that column as numbers.
    """
    import lightgbm as lgb

    return lgb.Booster(model_str=lightgbm_model_string(estimator, X, link=link))


def lightgbm_model_string(estimator: BaseBooster, X: ArrayLike | None = None, *,
                          link: str = "native") -> str:
    """The text of :func:`to_lightgbm`'s model, in LightGBM's model format (version v4),
    as ``Booster.model_to_string`` writes it."""
    if not isinstance(link, str) or link not in LINKS:
        raise ValueError(f"link must be one of {LINKS}, got {link!r}")
    check_is_fitted(estimator, "ensemble_")
    name = type(estimator).__name__
    ensemble = estimator.ensemble_
    if not isinstance(ensemble, Ensemble):
        raise ValueError(
            f"{name} fits a {type(ensemble).__name__}, not an ensemble of weak learners: "
            "it has no trees to export (its coef_ and intercept_ are the model)"
        )
    trees = []
    for h in ensemble.hypotheses:
        tree = h.tree_structure()
        if tree is None:
            # a wrapped estimator by its own public class (a Ridge, an MLPRegressor),
            # not the wrapper's
            learner = type(getattr(h, "estimator", h))
            while learner.__name__.startswith("_") and learner.__bases__[0] is not object:
                learner = learner.__bases__[0]
            learner = learner.__name__
            raise ValueError(
                f"{name}'s weak learner {learner} is not a tree of threshold "
                "splits, so the model cannot be exported to LightGBM (stumps, "
                "scikit-learn trees, LightGBM trees and MABoost votes over them can)"
            )
        trees.append(tree.pruned())  # the same function; no split that changes nothing
    terms = _terms(ensemble)
    for j in sorted({j for coef, j in terms if coef != 0.0}):  # a term of 0 splits nothing
        _check_zero_splits(name, j, ensemble.hypotheses[j], trees[j], estimator)
    n_features = int(estimator.n_features_in_)
    categories = getattr(estimator, "categories_", None) or {}
    if X is not None:
        # checked as decision_function checks its X: the number of features, a
        # DataFrame's column names and order against the fit's, its categories as the
        # fit's codes (covers counted on columns in another order would be another
        # model's)
        if backend_for(X) is not None:
            raise NotDistributedError(
                "to_lightgbm counts the covers of X in this process: pass a NumPy array "
                "(a sample of the rows, say; X.compute())")
        X = validate_input(estimator, X, reset=False)
        trees = [t.with_counts(_leaf_counts(t, X)) for t in trees]
    elif any(t.leaf_count is None for t in trees):
        warnings.warn(
            f"{name}'s weak learners ({type(ensemble.hypotheses[0]).__name__}) carry no "
            "training counts: every leaf's cover is set to 1, and SHAP's path-dependent "
            "TreeSHAP then weighs each split's sides equally; pass X (the training rows, "
            "say) to count the covers on it",
            ExportWarning, stacklevel=3,
        )
    empty = [t.n_leaves > 1 and t.leaf_count is not None
             and bool((t.internal_counts(t.leaf_count) == 0.0).any()) for t in trees]
    if any(empty):
        warnings.warn(
            f"{sum(empty)} of {name}'s {len(trees)} trees have a split with a cover of 0 "
            f"(the first: weak learner {empty.index(True)}): "
            + ("no row of X reaches it" if X is not None else "no training weight reached it")
            + ". SHAP's path-dependent TreeSHAP divides by a split's cover, and LightGBM's "
            "pred_contrib and SHAP's TreeExplainer give NaN for the rows' contributions; "
            "count the covers on rows that reach every split (the training rows, say). "
            "Predictions are not affected",
            ExportWarning, stacklevel=3,
        )
    decide = getattr(estimator, "_decision", None) or (lambda f: f)
    intercept = np.asarray(ensemble.intercept, dtype=np.float64)
    first = _outputs(decide, intercept.reshape(1, -1))
    K = first.shape[1]
    objective = _objective(estimator, K)
    scale = None
    if link == "standard":
        objective, scale = _standard_link(objective)
    if scale is not None:
        first = scale * first
    blocks = [_tree_block(TreeStructure.constant(first[0, k], n_features), None) for k in range(K)]
    for coef, j in terms:
        tree = trees[j]
        leaves = _outputs(decide, np.float64(coef) * tree.value)
        if leaves.shape[1] != K:
            raise ValueError(f"{name}'s weak learner {j} has {leaves.shape[1]} outputs, not {K}")
        if scale is not None:
            leaves = scale * leaves
        blocks.extend(_tree_block(tree, leaves[:, k]) for k in range(K))
    names = lightgbm_feature_names(getattr(estimator, "feature_names_in_", None), n_features)
    texts = [f"Tree={i}\n{b}" for i, b in enumerate(blocks)]
    header = [
        "tree",
        "version=v4",
        f"num_class={K}",
        f"num_tree_per_iteration={K}",
        "label_index=0",
        f"max_feature_idx={n_features - 1}",
        f"objective={objective}",
        "feature_names=" + " ".join(names),
        "feature_infos=" + " ".join(["none"] * n_features),
        # each block's length from its "Tree=" line: LightGBM seeks the trees by them
        "tree_sizes=" + " ".join(str(len(t)) for t in texts),
    ]
    return ("\n".join(header) + "\n\n" + "".join(texts) + "end of trees\n\n"
            + "feature_importances:\n\nparameters:\n" + _parameters(objective, K)
            + "end of parameters\n\n"
            + f"pandas_categorical:{_pandas_categorical(name, categories)}\n")


def _reads_tiny_as_zero(h) -> bool:
    """Whether hypothesis ``h`` reads a value of magnitude at most 1e-35 as 0 itself, as
    LightGBM's prediction does: a LightGBM tree (which predicts through LightGBM), a tree
    read back from a trained ensemble (routed by LightGBM's rules), or a vote over either
    (MABoost's ``inner``)."""
    from oracleboost.oracles.lightgbm import LightGBMTree
    from oracleboost.oracles.tree_ensemble import EnsembleTree

    kinds = (LightGBMTree, EnsembleTree)
    while not isinstance(h, kinds) and getattr(h, "inner", None) is not None:
        h = h.inner
    return isinstance(h, kinds)


def _check_zero_splits(name: str, j: int, h, tree: TreeStructure, estimator) -> None:
    """Refuse a tree that splits values LightGBM cannot tell apart.

    LightGBM's prediction on a dense row reads every value of magnitude at most
    ``kZeroThreshold`` (``1e-35f``: :data:`~oracleboost.oracles.trees.ZERO_THRESHOLD`)
    as 0, before any tree sees it, so all such values take one side of every split.  A
    split ``x <= t`` of a hypothesis comparing the values themselves sends them all one
    way only when ``t < -1e-35f`` or ``t >= 1e-35f``; with ``t`` between (0.0, say: a
    scikit-learn tree's split of a feature of values ±1) no LightGBM split is the same
    function, so the export would predict otherwise for some finite rows.  LightGBM
    trees read such values as LightGBM does, whatever their thresholds."""
    if tree.n_leaves == 1 or _reads_tiny_as_zero(h):
        return
    numeric = (np.ones(tree.n_leaves - 1, dtype=bool) if tree.categories_left is None
               else np.array([c is None for c in tree.categories_left]))
    near = numeric & (tree.threshold >= -ZERO_THRESHOLD) & (tree.threshold < ZERO_THRESHOLD)
    if not near.any():
        return
    i = int(np.flatnonzero(near)[0])
    f = int(tree.feature[i])
    names = getattr(estimator, "feature_names_in_", None)
    which = f"feature {f}" + (f" ({names[f]!r})" if names is not None else "")
    raise ValueError(
        f"{name}'s weak learner {j} splits {which} at {float(tree.threshold[i])!r}, "
        "within 1e-35 of 0: LightGBM reads every value of magnitude at most 1e-35 as 0 "
        "and sends them all one way, where this split separates them, so the exported "
        "model would predict otherwise for such values.  Refit with that feature "
        "shifted or scaled so that no split falls within 1e-35 of 0 (a feature coded "
        "-1/+1 as 0/1, say), or with LightGBMOracle, whose trees read such values as "
        "LightGBM does"
    )


#: Rows of a sparse X made dense at a time to count the covers (as many floats: 8 MiB).
_SPARSE_BLOCK_FLOATS = 1 << 20


def _leaf_counts(tree: TreeStructure, X) -> np.ndarray:
    """How many rows of X (float64, dense or a canonical CSR/CSC matrix) reach each
    leaf; a sparse X is made dense a block of rows at a time."""
    if not sp.issparse(X):
        return np.bincount(tree.apply(X), minlength=tree.n_leaves).astype(float)
    X = X.tocsr()
    step = max(1, _SPARSE_BLOCK_FLOATS // max(1, X.shape[1]))
    counts = np.zeros(tree.n_leaves)
    for start in range(0, X.shape[0], step):
        block = X[start:start + step].toarray()
        counts += np.bincount(tree.apply(block), minlength=tree.n_leaves)
    return counts


def _pandas_categorical(name: str, categories: dict[int, np.ndarray]) -> str:
    """The model's ``pandas_categorical`` line: the fit's categories of each
    categorical column, in column order, as LightGBM's Python package stores a
    DataFrame's (``Booster.predict`` of a DataFrame then maps each category column's
    values through them by value, an unseen one to NaN, as ``categories_`` does: the
    codes the trees were grown on).  ``null`` for a fit without categories."""
    if not categories:
        return "null"
    try:
        return json.dumps([categories[j].tolist() for j in sorted(categories)])
    except TypeError as exc:
        raise ValueError(
            f"{name}'s categories_ cannot be written as the exported model's "
            f"pandas_categorical (JSON: {exc}); LightGBM stores a DataFrame's categories "
            "as JSON: use strings or numbers as categories"
        ) from exc


def _terms(ensemble: Ensemble) -> list[tuple[float, int]]:
    """``(δ, j)`` of the terms the ensemble sums after its intercept, in order: from its
    last totally corrective round (every coefficient, in the order of j) on."""
    last = max(ensemble.refits, default=None)
    terms: list[tuple[float, int]] = []
    start = 0
    if last is not None:
        terms = [(c, j) for j, c in enumerate(ensemble.refits[last].tolist())]
        start = last + 1
    terms += [(ensemble.round_delta[r], ensemble.round_index[r])
              for r in range(start, ensemble.n_rounds)]
    return terms


def _outputs(decide: Callable, scores: np.ndarray) -> np.ndarray:
    """Rows of class scores as the estimator's decision shows them, shape (m, K')."""
    out = np.asarray(decide(scores), dtype=np.float64)
    return out.reshape(scores.shape[0], -1)


def _objective(estimator, K: int) -> str:
    """The model's objective line: the booster's link where LightGBM has it
    (``_lightgbm_objective``), else an objective whose transform is the identity, so
    that every reader's transformed output is the raw score: ``regression`` for one
    score a row, and LightGBM's name for a transform it does not know, ``custom``, for
    class scores (LightGBM has no identity objective of several scores; treelite and
    onnxmltools refuse such a model by its objective's name)."""
    link = getattr(estimator, "_lightgbm_objective", None)
    objective = link(K) if link is not None else None
    if objective is None:
        objective = "regression" if K == 1 else "custom"
    return objective


def _standard_link(objective: str) -> tuple[str, float | None]:
    """``link="standard"``: for ``binary sigmoid:c`` with ``c ≠ 1``, the objective
    ``binary sigmoid:1`` and the scale ``c`` to multiply the leaves by (``σ(c·f)`` is
    then ``σ`` of the new raw score, the transform SHAP and onnxmltools apply whatever
    the ``sigmoid``); any other objective as it is, and None (nothing to scale)."""
    name, *options = objective.split()
    scale = float(dict(option.split(":", 1) for option in options).get("sigmoid", "1"))
    if name != "binary" or scale == 1.0:
        return objective, None
    return "binary sigmoid:1", scale


def _parameters(objective: str, K: int) -> str:
    """The ``parameters:`` section's lines that ``Booster.params`` reads back: the
    objective's name, ``num_class`` and the sigmoid's scale, as LightGBM writes them
    (``[objective: binary]``, ``[num_class: 1]``, ``[sigmoid: 2]``).  SHAP and
    onnxmltools read the objective from ``params``."""
    name, *options = objective.split()
    values = dict(option.split(":", 1) for option in options)
    lines = {"boosting": "gbdt", "objective": name,
             "num_class": str(K if K > 1 else 1), "sigmoid": values.get("sigmoid", "1")}
    return "".join(f"[{k}: {v}]\n" for k, v in lines.items())


#: What LightGBM cannot keep in a feature name: the JSON delimiters, which its
#: ``Dataset`` refuses in a name, and whitespace, which separates the names in the model
#: text (its ``Dataset`` replaces each space by ``_``; a tab or a newline would break
#: the model text or ``dump_model``'s JSON).
_NAME_UNSAFE = re.compile(r"[\s\[\]{}:,\"]")


def lightgbm_feature_names(names: Sequence | None, n_features: int) -> list[str]:
    """The feature names of an exported model: the fit's ``feature_names_in_`` with each
    space replaced by ``_``, as LightGBM's ``Dataset`` writes a DataFrame's column names
    (``"mean radius"`` becomes ``"mean_radius"``), and so each other whitespace
    character and each JSON delimiter (``"``, ``,``, ``:``, ``[``, ``]``, ``{``,
    ``}``), which LightGBM refuses in a name.  LightGBM's own ``Column_0``,
    ``Column_1``, ... without names, or where two names would become one (``"a b"``
    and ``"a_b"``) or a name is empty.

    Parameters
    ----------
    names : sequence of str or None
        The fit's feature names.
    n_features : int

    Returns
    -------
    list of str
    """
    if names is not None:
        clean = [_NAME_UNSAFE.sub("_", str(v)) for v in names]
        if len(set(clean)) == len(clean) == n_features and all(clean):
            return clean
    return [f"Column_{i}" for i in range(n_features)]


def _g(values: Sequence[float] | np.ndarray) -> str:
    """Doubles as LightGBM writes them: 17 significant digits, read back exactly."""
    return " ".join(f"{float(v):.17g}" for v in np.asarray(values, dtype=np.float64).tolist())


def _ints(values) -> str:
    return " ".join(str(int(v)) for v in np.asarray(values).tolist())


def _tree_block(tree: TreeStructure, leaves: np.ndarray | None) -> str:
    """One tree in the model format (after its ``Tree=i`` line), with ``leaves`` as its
    leaf values (``tree.value[:, 0]`` when None)."""
    value = tree.value[:, 0] if leaves is None else np.asarray(leaves, dtype=np.float64)
    count = (tree.leaf_count if tree.leaf_count is not None
             else np.ones(tree.n_leaves))
    if tree.n_leaves == 1:
        fields = {
            "num_leaves": "1", "num_cat": "0", "split_feature": "", "split_gain": "",
            "threshold": "", "decision_type": "", "left_child": "", "right_child": "",
            "leaf_value": _g(value), "leaf_weight": "", "leaf_count": _g(count),
            "internal_value": "", "internal_weight": "", "internal_count": "",
        }
    else:
        internal = tree.internal_counts(count)
        decision = (tree.default_left.astype(np.int64) << 1) | (tree.missing.astype(np.int64) << 2)
        threshold, cats = _categorical_splits(tree)
        if cats is not None:
            decision |= np.array([c is not None for c in tree.categories_left], dtype=np.int64)
        fields = {
            "num_leaves": str(tree.n_leaves),
            "num_cat": "0" if cats is None else str(len(cats[0]) - 1),
            "split_feature": _ints(tree.feature),
            "split_gain": _g(_split_gains(tree, value, count)),
            "threshold": _g(threshold), "decision_type": _ints(decision),
            "left_child": _ints(tree.left), "right_child": _ints(tree.right),
            "leaf_value": _g(value), "leaf_weight": _g(count), "leaf_count": _g(count),
            "internal_value": _g(_internal_values(tree, value, count)),
            "internal_weight": _g(internal), "internal_count": _g(internal),
        }
        if cats is not None:
            fields.update({"cat_boundaries": _ints(cats[0]), "cat_threshold": _ints(cats[1])})
    fields.update({"is_linear": "0", "shrinkage": "1"})
    return "".join(f"{k}={v}\n" for k, v in fields.items()) + "\n\n"


def _categorical_splits(tree: TreeStructure) -> tuple[np.ndarray, tuple | None]:
    """The thresholds as written, and for a tree with categorical splits its
    ``(cat_boundaries, cat_threshold)``: LightGBM's format (``Tree::ToString``), where
    the k-th categorical node has ``threshold = k`` and its set of codes as a bitset of
    32-bit words ``cat_threshold[cat_boundaries[k]:cat_boundaries[k + 1]]`` (code c:
    bit c % 32 of word c // 32; as many words as the largest code needs, as LightGBM's
    ``Common::ConstructBitset`` makes them)."""
    if tree.categories_left is None:
        return tree.threshold, None
    threshold = np.array(tree.threshold, dtype=np.float64)
    bounds, words = [0], []
    for i, cats in enumerate(tree.categories_left):
        if cats is None:
            continue
        threshold[i] = len(bounds) - 1
        codes = np.asarray(cats, dtype=np.int64)
        bits = np.zeros(int(codes.max()) // 32 + 1 if codes.size else 1, dtype=np.uint64)
        np.bitwise_or.at(bits, codes // 32,
                         np.left_shift(np.uint64(1), (codes % 32).astype(np.uint64)))
        words.extend(bits.tolist())
        bounds.append(len(words))
    return threshold, (np.array(bounds), np.array(words, dtype=np.uint64))


def _split_gains(tree: TreeStructure, value: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Each split's gain as written: the decrease of the squared deviation of the tree's
    own output over its covers, ``W_L W_R / (W_L + W_R) · (m_L − m_R)²`` with ``W`` the
    sides' covers and ``m`` their cover-weighted mean outputs (for a least-squares stump
    on its training rows: the decrease of the squared error it was grown on).  LightGBM's
    ``feature_importance("split")`` counts the splits of positive gain, and
    ``"gain"`` sums these.  LightGBM reads them as float32: a positive gain is
    written within float32's normal range (a split of a model of targets near 1e-25
    would otherwise read as gain 0 and not be counted, one near 1e20 as inf)."""
    out = np.zeros(tree.n_leaves - 1)

    def side(c: int) -> tuple[float, float]:  # (cover, cover-weighted sum of outputs)
        if c < 0:
            return float(count[~c]), float(count[~c]) * float(value[~c])
        w_l, s_l = side(int(tree.left[c]))
        w_r, s_r = side(int(tree.right[c]))
        if w_l > 0 and w_r > 0:
            out[c] = w_l * w_r / (w_l + w_r) * (s_l / w_l - s_r / w_r) ** 2
        return w_l + w_r, s_l + s_r

    side(0)
    f32 = np.finfo(np.float32)
    positive = out > 0.0
    out[positive] = np.clip(out[positive], float(f32.tiny), float(f32.max))
    return out


def _internal_values(tree: TreeStructure, value: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Each internal node's value as LightGBM keeps it: the cover-weighted mean of its
    leaves (what the node would output as a leaf)."""
    out = np.zeros(tree.n_leaves - 1)

    def mass(c: int) -> tuple[float, float]:
        if c < 0:
            return float(count[~c]) * float(value[~c]), float(count[~c])
        a, n_a = mass(int(tree.left[c]))
        b, n_b = mass(int(tree.right[c]))
        out[c] = (a + b) / (n_a + n_b) if n_a + n_b > 0 else 0.0
        return a + b, n_a + n_b

    mass(0)
    return out
