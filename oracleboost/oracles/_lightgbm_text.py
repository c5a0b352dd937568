"""The trees of a LightGBM model, read from its model text (LightGBM's model format v4,
``Booster.model_to_string``), each as a
:class:`~oracleboost.oracles.trees.TreeStructure`.

Each tree block is read by :meth:`LightGBMTree.tree_structure
<oracleboost.oracles.lightgbm.LightGBMTree.tree_structure>`, the reader of the trees
that :class:`~oracleboost.oracles.LightGBMOracle` grows: splits, missing-value rules,
categorical splits, leaf values and covers.  A tree's leaf values in the text are its
outputs (shrinkage applied; the first tree of a model boosted from the average holds the
average), so the trees' outputs add up to ``predict(X, raw_score=True)``.
"""

from __future__ import annotations

from typing import Any

from oracleboost.oracles.lightgbm import LightGBMTree
from oracleboost.oracles.trees import TreeStructure

__all__ = ["lightgbm_trees", "lightgbm_text"]


def lightgbm_text(model: Any) -> str:
    """The model text of a trained ``Booster``, an ``LGBMModel`` or a model text."""
    if isinstance(model, str):
        return model
    import lightgbm as lgb  # (here: importing the library costs 90 ms and 40 MB)

    if isinstance(model, lgb.LGBMModel):
        if not model.__sklearn_is_fitted__():
            raise ValueError(f"this {type(model).__name__} is not fitted yet; call fit first")
        model = model.booster_
    if isinstance(model, lgb.Booster):
        return model.model_to_string()
    raise TypeError("model must be a lightgbm.Booster, a lightgbm.LGBMModel or a LightGBM "
                    f"model text (str); got {type(model).__name__}")


def _header_field(header: str, key: str) -> str | None:
    for line in header.splitlines():
        if line.startswith(key + "="):
            return line[len(key) + 1:]
    return None


def lightgbm_trees(model: Any) -> tuple[TreeStructure, ...]:
    """The trees of a LightGBM model of one output per row, in the model's order.

    Raises
    ------
    ValueError
        For text that is no LightGBM model, a multiclass model (a tree per class per
        iteration), a model without trees, or a tree with linear leaves
        (``linear_tree=True``: its leaves are no constants).
    """
    text = lightgbm_text(model)
    if not text.startswith("tree\n") or "\nend of trees" not in text:
        raise ValueError("model is not LightGBM model text (Booster.model_to_string); it "
                         "does not start with 'tree' or has no 'end of trees'")
    if "\nTree=" not in text:
        raise ValueError("the LightGBM model has no trees: there is nothing to re-weight")
    header = text[: text.index("\nTree=")]
    per_round = int(_header_field(header, "num_tree_per_iteration") or 1)
    if per_round != 1:
        raise ValueError(
            f"the LightGBM model is multiclass ({per_round} trees a round, one per class); "
            "TreeEnsembleOracle takes models of one output per row (binary classification, "
            "regression, ranking): fit one binary model per class to re-weight each")
    n_features = int(_header_field(header, "max_feature_idx")) + 1
    body = text[text.index("\nTree="): text.index("\nend of trees")]
    blocks = body.split("\nTree=")[1:]
    trees = []
    for t, block in enumerate(blocks):
        block = "\nTree=" + block.rstrip("\n") + "\n"
        if "\nis_linear=1\n" in block:
            raise ValueError(f"tree {t} of the LightGBM model has linear leaves "
                             "(linear_tree=True), which are no constants; refit without "
                             "linear_tree")
        one = "\n" + block + "\nend of trees\n"
        trees.append(LightGBMTree(one, n_features, _num_leaves(block)).tree_structure())
    return tuple(trees)


def _num_leaves(block: str) -> int:
    start = block.index("\nnum_leaves=") + len("\nnum_leaves=")
    return int(block[start: block.index("\n", start)])

