"""Regression trees grown by LightGBM, one tree per oracle query.

Design
------
``LightGBMOracle.bind(X)`` does the per-dataset work once: it bins ``X`` into **one**
``lightgbm.Dataset`` (constructed immediately), keeps ``X`` feature-major (its float64
transpose; no copy if ``X`` is in Fortran order) for reading the leaves of the training
rows, and creates a ``lightgbm.Booster`` on the Dataset.  Every later query reuses them;
nothing is re-binned.

Each ``project(target, sample_weight)`` grows exactly one tree, a weighted least-squares
fit of ``target`` *from zero*: its split search sees the squared-loss derivatives at a
zero prediction::

    grad_i = -w_i * (t_i - t_bar),    hess_i = w_i,

so the tree does not depend on the trees grown before.  ``t_bar`` is the weighted mean
of the target: least-squares split gains are invariant to shifting the target, and
centring keeps LightGBM's float32 gradients accurate.  The weights are rescaled to sum
to ``n`` (mean 1) and ``min_sum_hessian_in_leaf=0``, so that neither LightGBM's Hessian
thresholds nor its float32 arithmetic block splits when the weights are tiny (boosting
weights spanning many orders of magnitude are the normal case).  A weighted query hands
these to ``Booster.update(fobj=...)``.  An unweighted query (``correlate``, and
``project`` without weights) grows on a second booster with LightGBM's own squared loss,
whose labels are the centred target, written into the Dataset's label buffer in place:
its gradients ``score - label`` are the same float32 numbers, and as its Hessian is
constant LightGBM builds lighter histograms (its trees grow about 15% faster; they are
the trees of unit weights, which a test checks).  Both boosters run with learning rate
1e-300 and ``boost_from_average=False``: LightGBM's shrinkage rounds every leaf output
to 0 (it stores ``|v| <= 1e-35`` as 0), so their training scores stay exactly 0.  Trees
stay in the boosters (rolling each back cost about a millisecond a tree).

LightGBM computes leaf values from float32 gradient sums.  After growing, the oracle
reads the tree's splits from its model string and finds the leaf of every training row
with compiled kernels (:mod:`._tree_kernels`, numba): LightGBM's
``Tree::NumericalDecision`` on the float64 features (``x <= threshold``; a zero goes to
the default side where zero is the missing value; ``|x| <= kZeroThreshold`` reads as
0; a NaN goes to the default side where NaN or zero is the missing value, else where a
0 goes), the rows partitioned node by node as LightGBM's ``DataPartition`` does.  The leaves
are those of ``predict(pred_leaf=True)``, which tests check on values at and one ulp
around every threshold, zeros, constant features and 250,000 rows.  Every leaf value is
then recomputed in float64 as the exact weighted mean of the target over the rows in
that leaf, summed in row order (the sums of ``np.bincount``, bit for bit, whatever the
number of threads); a leaf with zero total weight gets 0.  The values are written into
the model string (byte for byte what ``Booster.set_leaf_output`` and
``model_to_string`` give), so the returned tree is the exact weighted least-squares fit
on its partition: the least-squares projection of Grubb & Bagnell (2011, eq. 4)
restricted to the partition LightGBM's greedy, histogram-based, leaf-wise growth (Ke et
al., 2017) found.  Its model string is the :class:`LightGBMTree`.  Trees with
categorical splits (``bind(X, categorical_features=...)``, which boosters pass for a
DataFrame's ``category`` columns, or ``params={"categorical_feature": ...}``) are read
back with ``predict(pred_leaf=True)`` instead, and their training outputs are those
leaves' values as well: ``LightGBMTree.predict`` on the training codes, bit for bit.

Threads
-------
LightGBM keeps one thread count for the whole process: every call that takes parameters
(``Dataset`` construction, ``Booster`` creation, every ``predict``) sets it from its
``num_threads``, and training only reads it.  Reading the leaves back with
``predict(pred_leaf=True)``, as this oracle used to, reset it to OpenMP's default, so
that under ``OMP_NUM_THREADS=1`` every later tree grew on one thread whatever
``params["num_threads"]``.  The oracle now sets LightGBM's count to its own
``num_threads`` (0: OpenMP's default) around each of its LightGBM calls and restores it
afterwards: its trees grow on the user's count whatever else runs LightGBM in the
process, and it changes nobody else's (:class:`LightGBMTree` predicts the same way).
The leaf kernel runs on as many threads (numba's; with numba's OpenMP layer, the
default without TBB, these are LightGBM's own, still awake after growing the tree).

Speed
-----
At 100,000 x 50 with 31 leaves on 2 cores (AMD EPYC, ``OMP_NUM_THREADS=1``,
``OPENBLAS_NUM_THREADS=1``), against rounds of ``lightgbm.train`` growing the same
trees (objective regression, the oracle's other parameters, learning rate 1, the
oracle asked for the same residuals; 20 rounds, ``Dataset`` built outside the timing,
interleaved, medians of 7 repeats, three runs): a ``project`` call took 12.0-12.7 ms
against 10.2-10.6 ms a round at 1 thread (1.17-1.20x) and 6.6-7.5 ms against 5.4-6.2
ms at 2 threads (1.19-1.21x); before, 24.5 ms (2.3x) and 23.9 ms (3.9x: its trees grew
on one thread).  Beyond LightGBM's growth a call spends about 1.5 ms (1 thread) or 0.8
ms (2 threads) on the rows' leaves and the leaf means, where ``predict(pred_leaf=True)``
alone took 11-12 ms, and about 0.5 ms in Python (model string, parsing, checks).
Weighted queries against ``lightgbm.train`` with the same weights: 1.15x and 1.20x.

``correlate(r)``: the class is closed under scaling, so the hypothesis maximising
``<r, h> / ||h||`` on a given partition is the least-squares fit of ``r`` with unit
weights; ``correlate(r)`` is ``project(r)``.  Multiclass ``(n, K)`` queries are not
supported (one tree has one output).

Missing values: X may hold NaN (``capabilities.allow_nan``; infinite values are
refused).  LightGBM's conventions apply: with ``use_missing=True`` (its default) a
feature with NaN in the training rows has missing type NaN, and each split learns the
side its NaN go to; with ``zero_as_missing=True`` zeros and NaN are missing together;
a NaN in a feature that had none in training (missing type None) is read as 0.

Sparse X (``capabilities.sparse_input``): a scipy CSR or CSC matrix goes to LightGBM
as it is, for the ``Dataset`` and for predicting; it is never made dense.  LightGBM
samples the same rows for its bins from a sparse matrix as from ``X.toarray()`` and
keeps the same values of them (the nonzeros and NaN), so the bins, the trees and the
answers are the dense ones; the training rows' leaves come from
``predict(pred_leaf=True)`` on the sparse matrix (the compiled walk reads dense
columns), and the leaf means are summed in row order as on dense X.

Tree growth is deterministic given the parameters (``deterministic=True``; no bagging
or feature sampling, which :meth:`LightGBMOracle.bind` rejects), so the oracle is not
stochastic: the query's ``random_state`` is ignored.

References
----------
A. Grubb and J. A. Bagnell.  Generalized boosting algorithms for convex optimization.
ICML 2011.  (Eq. 4: the least-squares projection of the gradient onto the class.)

G. Ke, Q. Meng, T. Finley, T. Wang, W. Chen, W. Ma, Q. Ye and T.-Y. Liu.  LightGBM: a
highly efficient gradient boosting decision tree.  NeurIPS 2017.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import math
import numbers
import threading
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from oracleboost._typing import ArrayLike
from oracleboost.oracles import _tree_kernels as kernels
from oracleboost.oracles.base import (
    BoundOracle,
    Capabilities,
    Hypothesis,
    Oracle,
    check_categorical_features,
    check_X,
)
from oracleboost.oracles.trees import TreeStructure
from oracleboost.rows.parallel import max_threads, run_parallel

if TYPE_CHECKING:
    import lightgbm as lgb


def _lgb() -> Any:
    """The ``lightgbm`` library, imported when first used (it takes 90 ms and 40 MB:
    ``import oracleboost`` does not pay them for a fit that never calls it)."""
    import lightgbm  # (absolute: this module is oracleboost.oracles.lightgbm)

    return lightgbm

__all__ = ["LightGBMOracle", "LightGBMTree"]


# -- LightGBM parameters ----------------------------------------------------------------

#: Shrinkage by this rounds every leaf output LightGBM can compute (sums of at most 2^31
#: float32 gradients over Hessian sums) to 0, as it stores |v| <= 1e-35 as 0.
_LEARNING_RATE = 1e-300

#: Settings that keep the boosters' training scores at exactly 0, so that LightGBM's own
#: squared loss (unweighted queries) is evaluated at a zero score.  The refit replaces
#: the leaf values anyway.  Other values in ``LightGBMOracle.params`` are refused.
_ZERO_SCORE_PARAMS: dict[str, Any] = {"learning_rate": _LEARNING_RATE, "boost_from_average": False}

#: Parameters the oracle fixes; ``LightGBMOracle.params`` is merged after them.
_FIXED_PARAMS: dict[str, Any] = {
    "objective": "none",  # custom gradients (weighted queries); see _BoundLightGBM._grow
    "boosting": "gbdt",
    **_ZERO_SCORE_PARAMS,
    "min_sum_hessian_in_leaf": 0.0,  # accepted by LightGBM 4; weights may be tiny
    "verbosity": -1,
    "num_threads": 0,  # OpenMP default; override through ``params``
    "deterministic": True,
    # A fixed histogram layout (needed for determinism).  Column-wise: 3.6 ms a tree
    # against 5.2 ms row-wise at n = 20,000, d = 20 on 2 cores.
    "force_col_wise": True,
}


def _unsupported(name: str, value: Any) -> str | None:
    """Why a (canonical) LightGBM parameter setting is refused, or None if it is fine."""
    if name in ("objective", "num_class"):
        ok = value in ("none", "custom", None) if name == "objective" else int(value) == 1
        return None if ok else "the oracle fixes it (one least-squares tree per query)"
    if name == "boosting" and value not in ("gbdt", "gbrt"):
        return "only plain 'gbdt' trees are grown"
    if name in ("feature_fraction", "feature_fraction_bynode") and float(value) < 1.0:
        return "feature sampling makes answers depend on the call history"
    if name == "bagging_freq" and int(value) > 0:
        return "bagging makes answers depend on the call history"
    if name in ("extra_trees", "linear_tree", "use_quantized_grad") and _truthy(value):
        return {
            "extra_trees": "random thresholds make answers depend on the call history",
            "linear_tree": "leaves must be constants for the exact least-squares refit",
            "use_quantized_grad": "stochastic gradient rounding makes answers non-deterministic",
        }[name]
    if name == "data_sample_strategy" and value != "bagging":
        return "GOSS sampling makes answers depend on the call history"
    if name in _ZERO_SCORE_PARAMS and value != _ZERO_SCORE_PARAMS[name]:
        return (
            "the oracle fixes it: each tree is a least-squares fit from a zero score, and "
            "the booster, not the tree, chooses the step (its learning_rate)"
        )
    if name in _MONOTONE_DEFAULTS and not _is_default(value, _MONOTONE_DEFAULTS[name]):
        return (
            "monotone constraints are not kept: the oracle refits every leaf to the "
            "exact weighted mean of the target (which undoes LightGBM's bounds on the "
            "leaf values), and a booster may step along a tree with a negative "
            "coefficient, which reverses it; no booster here keeps a model monotone"
        )
    if name == "max_delta_step" and _number(value) > 0.0:  # <= 0: no bound
        return (
            "the oracle refits every leaf to the exact weighted mean of the target, "
            "which LightGBM's bound on the leaf values would not hold, and the booster "
            "scales the tree by its step; bound the steps with the booster's "
            "learning_rate instead"
        )
    if name in ("cegb_penalty_feature_lazy", "cegb_penalty_feature_coupled") \
            and not _is_default(value, 0.0):
        return (
            "LightGBM charges it once for each feature (and row: lazy) over all the "
            "trees a booster grows, so answers would depend on the call history; "
            "cegb_penalty_split, charged at every split, is kept"
        )
    return None


#: LightGBM's monotone-constraint parameters at the settings that constrain nothing:
#: another value is refused (see :func:`_unsupported`).
_MONOTONE_DEFAULTS: dict[str, Any] = {
    "monotone_constraints": 0, "monotone_constraints_method": "basic",
    "monotone_penalty": 0.0,
}


def _number(value: Any) -> float:
    """A numeric LightGBM setting as a float; NaN when it is not one (LightGBM's own
    error then names it)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _is_default(value: Any, default: Any) -> bool:
    """Whether a LightGBM parameter's value (a scalar, a sequence or a comma-separated
    string, one entry a feature) is ``default`` in every entry (None: unset)."""
    if value is None:
        return True
    entries = value.split(",") if isinstance(value, str) else np.ravel(np.asarray(value,
                                                                                 dtype=object))
    if isinstance(default, str):
        return all(str(v).strip().lower() == default for v in entries)
    try:
        return all(float(v) == default for v in entries)
    except (TypeError, ValueError):
        return False


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "+", "yes")
    return bool(value)


@functools.lru_cache(maxsize=1)
def _alias_table() -> dict[str, str]:
    """Map every LightGBM parameter alias to its canonical name (empty if unavailable)."""
    try:
        from lightgbm.basic import _ConfigAliases

        table = _ConfigAliases._get_all_param_aliases()
    except Exception:  # pragma: no cover - private API of LightGBM; degrade gracefully
        return {}
    return {alias: canon for canon, names in table.items() for alias in names}


def _canonical(params: dict[str, Any]) -> dict[str, Any]:
    aliases = _alias_table()
    out: dict[str, Any] = {}
    for key, value in params.items():
        canon = aliases.get(key, key)
        if canon in out:
            raise ValueError(
                f"LightGBMOracle params sets {canon!r} twice (through an alias: {key!r})"
            )
        out[canon] = value
    return out


# -- LightGBM's thread count ----------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _thread_setting() -> ctypes.c_int | None:
    """LightGBM's process-wide thread count, ``LGBM_DEFAULT_NUM_THREADS`` (-1: OpenMP's
    default), or None if this build of LightGBM does not export it.

    Every LightGBM call that takes parameters (``Dataset`` construction, ``Booster``
    creation, every ``predict``) sets it from its own ``num_threads``, 0 meaning
    OpenMP's default; training calls (``LGBM_BoosterUpdateOneIter[Custom]``) only read
    it.  A ``predict`` without ``num_threads`` therefore makes later trees of any
    booster grow on OpenMP's default (one thread under ``OMP_NUM_THREADS=1``), whatever
    the booster's ``num_threads``: what the oracle's ``predict(pred_leaf=True)`` did.
    """
    try:
        return ctypes.c_int.in_dll(_lgb().basic._LIB, "LGBM_DEFAULT_NUM_THREADS")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - other builds
        return None


#: Held while LightGBM's process-wide thread count is set for a call (re-entrant: a
#: query's calls nest).
_thread_setting_lock = threading.RLock()


@contextlib.contextmanager
def _lightgbm_threads(num_threads: int):
    """Run the enclosed LightGBM calls on ``num_threads`` threads (0: OpenMP's default)
    and leave LightGBM's process-wide thread count as it was found.

    The count is one variable for the whole process, so the enclosed calls hold a
    process-wide lock: LightGBM calls made through the oracle from several Python threads
    (bound oracles of their own, trees predicting) run one after another, each on its
    own count, and the count is restored to what it was before the first.  (LightGBM
    runs each call on its own threads.)"""
    setting = _thread_setting()
    if setting is None:  # pragma: no cover - other builds: LightGBM's own handling
        yield
        return
    with _thread_setting_lock:
        saved = setting.value
        setting.value = num_threads if num_threads > 0 else -1
        try:
            yield
        finally:
            setting.value = saved


def _lightgbm_thread_count(num_threads: int) -> int:
    """The number of threads LightGBM runs on for ``num_threads`` (0: OpenMP's default)."""
    if num_threads > 0:
        return num_threads
    try:
        with _lightgbm_threads(0):
            return max(1, int(_lgb().basic._LIB.OMP_NUM_THREADS()))
    except AttributeError:  # pragma: no cover - other builds
        return 1


# -- the hypothesis -----------------------------------------------------------------------


class LightGBMTree(Hypothesis):
    """One LightGBM regression tree, stored as its model string.

    The prediction is the raw score of that single tree (float64).  A LightGBM booster
    for :meth:`predict` is built lazily from the string and dropped on pickling, so
    pickles hold only the string.

    Parameters
    ----------
    model_str : str or None
        ``Booster.model_to_string`` of a one-tree model, with refit leaf values.  ``None``
        for the constant hypothesis (when no feature can be split).
    n_features : int
        Number of features the tree was grown on.
    n_leaves : int
    constant : float
        The value of the constant hypothesis (used only when ``model_str`` is None).
    num_threads : int, default=0
        LightGBM threads for :meth:`predict` (0: OpenMP's default); the oracle passes
        its own.  Predicting leaves LightGBM's process-wide thread count as it was.
    """

    num_threads = 0  # class default: pickles made before the attribute existed

    def __init__(
        self, model_str: str | None, n_features: int, n_leaves: int, constant: float = 0.0,
        num_threads: int = 0,
    ) -> None:
        self.model_str = model_str
        self.n_features = int(n_features)
        self.n_leaves = int(n_leaves)
        self.constant = float(constant)
        self.num_threads = int(num_threads)
        self._booster: lgb.Booster | None = None
        # The tree alone names the function (the header differs between the oracle's
        # two boosters: LightGBM's objective for unweighted queries, custom otherwise).
        content = _tree_text(model_str) if model_str is not None else repr(self.constant)
        self.key = ("lightgbm_tree", hashlib.sha256(content.encode()).hexdigest())

    def predict(self, X: ArrayLike) -> np.ndarray:
        # NaN: missing, as LightGBM routes it; scipy sparse X: LightGBM reads CSR/CSC
        X = _as_lightgbm_input(check_X(X, allow_nan=True, accept_sparse=True))
        if X.shape[1] != self.n_features:
            raise ValueError(
                f"X has {X.shape[1]} features but the LightGBM tree was grown on {self.n_features}"
            )
        if self.model_str is None:
            return np.full(X.shape[0], self.constant)
        with _lightgbm_threads(self.num_threads):  # also makes the booster once only
            if self._booster is None:
                self._booster = _lgb().Booster(model_str=self.model_str)
            out = self._booster.predict(X, raw_score=True, num_threads=self.num_threads)
        return np.asarray(out, dtype=np.float64)

    def feature_importances(self, n_features: int) -> np.ndarray:
        """The tree's split gains summed per feature, normalised (LightGBM's
        ``importance_type="gain"``); zeros for a tree without splits."""
        out = np.zeros(n_features)
        if self.model_str is None or self.n_leaves < 2:
            return out
        block = _tree_block(self.model_str)
        features = np.array(_field(block, "split_feature").split(), dtype=np.intp)
        gains = np.array(_field(block, "split_gain").split(), dtype=np.float64)
        np.add.at(out, features, np.maximum(gains, 0.0))
        total = out.sum()
        return out / total if total > 0 else out

    def tree_structure(self) -> TreeStructure:
        """The tree as LightGBM wrote it: its splits (threshold splits, and the sets of
        category codes of its categorical splits), missing-value rules, leaf values
        and training counts."""
        if self.model_str is None:
            return TreeStructure.constant(self.constant, self.n_features)
        block = _tree_block(self.model_str)
        value = np.array([float(v) for v in _field(block, "leaf_value").split()])
        count = np.array(_field(block, "leaf_count").split(), dtype=np.float64)
        if int(_field(block, "num_leaves")) < 2:
            return TreeStructure.constant(value[0], self.n_features).with_counts(count)
        tree = _parse_tree(self.model_str)
        decision = np.array(_field(block, "decision_type").split(), dtype=np.int64)
        categories_left = _category_sets(block, tree.threshold, decision) if tree.categorical \
            else None
        return TreeStructure(
            n_features=self.n_features, feature=tree.feature.astype(np.intp),
            threshold=tree.threshold, left=tree.left.astype(np.intp),
            right=tree.right.astype(np.intp), value=value[:, None],
            default_left=(decision & 2) != 0, missing=((decision >> 2) & 3).astype(np.intp),
            leaf_count=count, categories_left=categories_left,
        )

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_booster"] = None
        return state

    def __repr__(self) -> str:
        return f"LightGBMTree(n_leaves={self.n_leaves}, n_features={self.n_features})"


def _as_lightgbm_input(X):
    """A validated X as LightGBM reads it without a copy: a scipy sparse array (CSR or
    CSC) as the matrix of its format, over the same buffers (LightGBM's Python package
    checks for ``csr_matrix``/``csc_matrix`` and copies anything else to a
    ``csr_matrix``, with a warning); dense X unchanged."""
    if sp.issparse(X) and not isinstance(X, sp.spmatrix):
        return sp.csr_matrix(X) if X.format == "csr" else sp.csc_matrix(X)
    return X


# -- a tree of a model string ---------------------------------------------------------------


class _Tree(NamedTuple):
    """The splits of one LightGBM tree (internal nodes ``0 .. n_leaves - 2``)."""

    n_leaves: int
    feature: np.ndarray  # int32: split feature of each node
    threshold: np.ndarray  # float64: a row goes left iff x <= threshold ...
    zero_flip: np.ndarray  # bool: ... reversed for x == 0 (zero as missing, other side)
    nan_left: np.ndarray  # bool: where a NaN goes (NumericalDecision's missing rules)
    left: np.ndarray  # int32: child node, or ~leaf if negative
    right: np.ndarray  # int32
    categorical: bool  # some node splits on categories (not handled by the kernels)


def _tree_block(model_str: str) -> str:
    """The (first) tree block of a model string, from ``Tree=`` on."""
    return model_str[model_str.index("\nTree=") :]


def _tree_text(model_str: str) -> str:
    """The tree blocks of a model string, without its header and parameters."""
    return model_str[model_str.index("\nTree=") : model_str.index("\nend of trees")]


def _field(block: str, key: str) -> str:
    start = block.index(f"\n{key}=") + len(key) + 2
    return block[start : block.index("\n", start)]


def _num_leaves(model_str: str) -> int:
    """``num_leaves`` of the (first) tree block of a model string, not of its header."""
    return int(_field(_tree_block(model_str), "num_leaves"))


def _parse_tree(model_str: str) -> _Tree:
    """The splits of the first tree of a model string that has at least two leaves.

    Thresholds are written with 17 significant digits, so ``float`` reads back the
    doubles LightGBM compares with.  ``decision_type`` bits (LightGBM's ``tree.h``):
    1 categorical, 2 default left, 4-8 the missing type (0 none, 1 zero, 2 NaN).
    """
    block = _tree_block(model_str)
    n_leaves = int(_field(block, "num_leaves"))
    threshold = np.array([float(v) for v in _field(block, "threshold").split()])
    decision = np.array(_field(block, "decision_type").split(), dtype=np.int64)
    zero_as_missing = ((decision >> 2) & 3) == 1
    default_left = (decision & 2) != 0
    # Where a zero goes: the default side if zero is the missing value, else 0 <= t.
    zero_flip = zero_as_missing & (default_left != (0.0 <= threshold))
    # Where a NaN goes: the default side if NaN is the missing value; else LightGBM
    # reads it as 0, which goes where a zero goes (the default side if zero is missing).
    nan_left = np.where(((decision >> 2) & 3) == 0, 0.0 <= threshold, default_left)
    return _Tree(
        n_leaves=n_leaves,
        feature=np.array(_field(block, "split_feature").split(), dtype=np.int32),
        threshold=threshold,
        zero_flip=zero_flip,
        nan_left=nan_left,
        left=np.array(_field(block, "left_child").split(), dtype=np.int32),
        right=np.array(_field(block, "right_child").split(), dtype=np.int32),
        categorical=int(_field(block, "num_cat")) > 0 or bool(np.any(decision & 1)),
    )


def _category_sets(block: str, threshold: np.ndarray,
                   decision: np.ndarray) -> tuple[np.ndarray | None, ...]:
    """The category codes each categorical node of a tree block sends left (None at a
    threshold split).  LightGBM's model format (``Tree::ToString``): a categorical node
    (``decision_type`` bit 1) has as ``threshold`` the index ``k`` of its bitset, whose
    32-bit words are ``cat_threshold[cat_boundaries[k]:cat_boundaries[k + 1]]``; code
    ``c`` is in the set iff bit ``c % 32`` of word ``c // 32`` is set."""
    bounds = np.array(_field(block, "cat_boundaries").split(), dtype=np.int64)
    words = np.array(_field(block, "cat_threshold").split(), dtype=np.uint64)
    out: list[np.ndarray | None] = []
    for t, kind in zip(threshold.tolist(), decision.tolist(), strict=True):
        if not kind & 1:
            out.append(None)
            continue
        k = int(t)
        bits = words[bounds[k]:bounds[k + 1]]
        flags = (bits[:, None] >> np.arange(32, dtype=np.uint64)) & np.uint64(1)
        out.append(np.flatnonzero(flags.ravel()).astype(np.int64))
    return tuple(out)


def _with_leaf_values(model_str: str, values: np.ndarray) -> str:
    """The one-tree model string with its leaf values replaced by ``values``: what
    ``Booster.set_leaf_output`` for every leaf, then ``model_to_string``, return (byte
    for byte: LightGBM writes doubles as ``{:.17g}``, and ``tree_sizes`` counts the
    characters of the tree block), without the two calls into LightGBM."""
    start = model_str.index("\nleaf_value=", model_str.index("\nTree=")) + len("\nleaf_value=")
    stop = model_str.index("\n", start)
    line = " ".join([f"{v:.17g}" for v in values.tolist()])
    s_start = model_str.index("\ntree_sizes=") + len("\ntree_sizes=")
    s_stop = model_str.index("\n", s_start)
    size = int(model_str[s_start:s_stop]) + len(line) - (stop - start)
    return (
        model_str[:s_start] + str(size) + model_str[s_stop:start] + line + model_str[stop:]
    )


def _feature_major(X: np.ndarray) -> np.ndarray:
    """``X`` transposed to (features, rows), C-contiguous float64, as LightGBM's
    prediction reads it: values with ``|x| <= kZeroThreshold`` are 0 (it drops them as
    the zeros of a sparse row).

    A view of ``X`` when nothing needs changing, else a copy: the caller's array is
    never written (it may be read-only, as a pandas DataFrame's values are).  Returned
    read-only either way, so that the kernels reading it are compiled once, for
    read-only arrays."""
    XT = np.ascontiguousarray(np.asarray(X, dtype=np.float64).T)
    if kernels.count_tiny(_read_only(XT)):
        XT = XT.copy() if np.shares_memory(XT, X) else XT
        kernels.zero_tiny(XT)
    return _read_only(XT)


def _read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a``."""
    view = a.view()
    view.flags.writeable = False
    return view


#: Rows below which partitioning on threads costs more than it saves.
_MIN_ROWS_PER_THREAD = 20_000


def _node_rules(tree: _Tree, has_nan: np.ndarray) -> tuple:
    """The kernels' arguments for ``tree``'s nodes over rows whose features hold NaN
    where ``has_nan`` (bool, one per feature) says: where a NaN goes matters only on
    those, and a node without a zero or NaN rule is split by the fast loop."""
    nan_left = tree.nan_left & has_nan[tree.feature]
    return (tree.feature, tree.threshold, tree.zero_flip, nan_left, tree.left, tree.right)


def _nan_features(XT: np.ndarray) -> np.ndarray:
    """Which features (rows of ``XT``) hold a NaN."""
    return np.isnan(XT).any(axis=1)


def _leaf_values(
    tree: _Tree, XT: np.ndarray, target: np.ndarray, w: np.ndarray, n_parts: int,
    rows: np.ndarray, has_nan: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The weighted mean of ``target`` in each leaf of ``tree`` over the rows of ``XT``
    (features x rows, NaN in the features ``has_nan`` marks; ``w`` of length 0: unit
    weights), and every row's leaf value.

    The rows are grouped by leaf (exactly the leaves of ``predict(pred_leaf=True)``) in
    ``n_parts`` blocks of rows, a block a thread, then each leaf is summed in row order,
    as ``np.bincount`` sums: the results do not depend on ``n_parts``.  ``rows`` is an
    int32 buffer of shape ``(2, n)``.

    The threads are numba's.  Where numba's threading layer is OpenMP (its default
    when TBB is not installed) they are LightGBM's own OpenMP threads, still awake
    after growing the tree: measured right after growing at 100,000 x 50, the
    partition took 0.64 ms on two of them against 1.37 ms on one thread, and 1.9 ms on
    two Python threads, which compete with LightGBM's while those spin
    (:func:`oracleboost.rows.parallel.run_parallel`).
    """
    n = XT.shape[1]
    bounds = np.zeros((n_parts, tree.n_leaves, 3), dtype=np.int64)
    values = np.empty(tree.n_leaves)
    out = np.empty(n)
    args = (XT, *_node_rules(tree, has_nan))
    if n_parts == 1:
        kernels.partition_rows(*args, 0, n, rows, bounds[0])
        kernels.leaf_means(rows, bounds, target, w, values, out)
        return values, out
    cuts = np.array([n * p // n_parts for p in range(n_parts + 1)], dtype=np.int64)
    run_parallel(kernels.leaf_means_parallel, n_parts, *args, cuts, rows, bounds, target, w,
                 values, out)
    return values, out


def _tree_leaves(tree: _Tree, XT: np.ndarray) -> np.ndarray:
    """Leaf index of every row of ``XT`` (features x rows, from :func:`_feature_major`)."""
    n = XT.shape[1]
    rows = np.empty((2, n), dtype=np.int32)
    bounds = np.zeros((tree.n_leaves, 3), dtype=np.int64)
    args = (XT, *_node_rules(tree, _nan_features(XT)))
    kernels.partition_rows(*args, 0, n, rows, bounds)
    leaf = np.empty(n, dtype=np.intp)
    for j, (a, b, where) in enumerate(bounds):
        leaf[rows[where >> 1, a:b]] = j
    return leaf


# -- the bound oracle ---------------------------------------------------------------------


def _label_view(dataset: lgb.Dataset, n: int) -> np.ndarray | None:
    """A writable float32 view of the labels LightGBM keeps for a constructed ``dataset``,
    or None if they cannot be reached.

    LightGBM's squared loss reads its labels from this buffer at every iteration, and
    ``Dataset.set_field("label", ...)`` only overwrites it in place; writing the view
    is that call without its copy (0.1 to 0.2 ms a query at n = 100,000).  Valid while
    ``dataset`` lives.
    """
    ptr = ctypes.c_void_p()
    length = ctypes.c_int(0)
    dtype = ctypes.c_int(-1)
    try:
        _lgb().basic._safe_call(
            _lgb().basic._LIB.LGBM_DatasetGetField(
                dataset._handle, b"label", ctypes.byref(length), ctypes.byref(ptr),
                ctypes.byref(dtype),
            )
        )
    except (AttributeError, _lgb().basic.LightGBMError):  # pragma: no cover - other builds
        return None
    if not ptr.value or length.value != n or dtype.value != 0:  # 0: C_API_DTYPE_FLOAT32
        return None  # pragma: no cover
    return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(n,))


_UNIT_WEIGHTS = np.empty(0)  # the kernels' "all weights are one"


class _BoundLightGBM(BoundOracle):
    def __init__(self, oracle: LightGBMOracle, X: np.ndarray, params: dict[str, Any],
                 categorical: tuple[int, ...] | None = None):
        super().__init__(oracle, X.shape[0])
        n, d = X.shape
        self._sparse = sp.issparse(X)
        if self._sparse:
            # Kept as given (CSR or CSC, which LightGBM reads): the rows' leaves are
            # LightGBM's own walk, predict(pred_leaf=True), on it (see _answer).
            self._XT = self._has_nan = None
            self.X = X
        else:
            # Feature-major for the leaf kernel, which reads a node's column at
            # increasing rows (a copy of X unless X is float64 in Fortran order).
            self._XT = _feature_major(X)
            self.X = self._XT.T
            self._has_nan = _nan_features(self._XT)  # missing values, by feature
        self.params = params
        self.num_threads = max(0, int(params.get("num_threads", 0)))
        self.n_datasets_built = 0
        self.n_boosters_built = 0
        self.n_trees_grown = 0
        # Labels are the unweighted queries' centred targets (overwritten in place by
        # each query); they must exist before a booster's objective reads them.
        self._label = np.zeros(n, dtype=np.float32)
        with _lightgbm_threads(self.num_threads):
            # Binned from X as given (LightGBM reads C or Fortran order without
            # copying); X itself is not kept.
            self.dataset = _lgb().Dataset(
                X, label=self._label, params=params, free_raw_data=True,
                categorical_feature=list(categorical) if categorical else "auto",
            ).construct()
        self.n_datasets_built += 1
        self._lightgbm_labels = _label_view(self.dataset, n)
        # Features LightGBM can split on (others are trivial or pre-filtered because no
        # split of them leaves min_data_in_leaf rows on both sides).
        self.n_usable_features = sum(self.dataset.feature_num_bin(j) > 1 for j in range(d))
        # Buffers reused by every query (a bound oracle answers one query at a time:
        # _project holds this lock).
        self._lock = threading.Lock()
        self._grad = np.empty(n, dtype=np.float32)
        self._hess = np.empty(n, dtype=np.float32)
        self._rows = np.empty((2, n), dtype=np.int32)
        threads = min(_lightgbm_thread_count(self.num_threads), max_threads())
        self._n_parts = max(1, min(threads, n // _MIN_ROWS_PER_THREAD))
        # Weighted queries: custom gradients.  Unweighted queries: LightGBM's own squared
        # loss on the centred target, whose constant Hessian LightGBM exploits (about 15%
        # faster histograms); made at the first such query.
        self.booster: lgb.Booster | None = None
        self.unit_booster: lgb.Booster | None = None
        if self.n_usable_features > 0:
            self._new_booster(unit=False)

    def _new_booster(self, unit: bool) -> lgb.Booster:
        params = dict(self.params)
        if unit:
            params.update(objective="regression", reg_sqrt=False, metric="None")
        with _lightgbm_threads(self.num_threads):
            booster = _lgb().Booster(params=params, train_set=self.dataset)
        self.n_boosters_built += 1
        if unit:
            self.unit_booster = booster
        else:
            self.booster = booster
        return booster

    def _objective(self, preds, train_data):
        return self._grad, self._hess

    # -- queries ----------------------------------------------------------------------------
    def _correlate(self, r, random_state):
        # Closed under scaling: the best direction on a partition is the LS fit of r.
        return self._project(r, None, random_state)

    def _project(self, target, sample_weight, random_state):
        # One query at a time: a query writes the Dataset's labels or the gradient
        # buffers, grows a tree on a booster and may replace the booster.  Two threads
        # sharing a bound oracle used to mix each other's gradients (18 of 40 correlate
        # and 33 of 40 project answers wrong) or crash inside LightGBM.
        with self._lock:
            return self._answer(target, sample_weight)

    def _answer(self, target, sample_weight):
        n, d = self.X.shape
        if self.n_usable_features == 0:
            return self._constant(target, sample_weight)
        target = np.ascontiguousarray(target)
        unit = sample_weight is None
        w = _UNIT_WEIGHTS if unit else np.ascontiguousarray(sample_weight)
        booster = self._grow(target, w)
        k = -1 if booster is None else booster.num_trees() - 1
        model_str = None if booster is None else booster.model_to_string(
            start_iteration=k, num_iteration=1
        )
        n_leaves = 0 if model_str is None else _num_leaves(model_str)
        if n_leaves < 2:
            # No split was possible: LightGBM dropped the tree, or (on a booster's first
            # iteration) kept a one-leaf tree that it will not roll back, and with its
            # own objective added the label mean to the training scores.  Start a fresh
            # booster on the same Dataset (about a millisecond, no re-binning).
            self._new_booster(unit=unit)
            return self._constant(target, sample_weight)
        tree = _parse_tree(model_str)
        if tree.categorical or self._sparse:
            # Categorical splits, or a sparse X (the kernel reads dense columns):
            # LightGBM's own walk, the leaves the kernel finds on dense X.
            with _lightgbm_threads(self.num_threads):
                leaf = booster.predict(
                    self.X, pred_leaf=True, start_iteration=k, num_iteration=1,
                    num_threads=self.num_threads,
                )
            leaf = np.asarray(leaf, dtype=np.intp).reshape(n)
            values = _leaf_means(leaf, target, np.ones(n) if unit else w, n_leaves)
            out = values[leaf]
        else:
            values, out = _leaf_values(tree, self._XT, target, w, self._n_parts, self._rows,
                                       self._has_nan)
        model_str = _with_leaf_values(model_str, values)
        h = LightGBMTree(model_str, d, n_leaves, num_threads=self.num_threads)
        h.train_output = out
        return h

    def _grow(self, target: np.ndarray, w: np.ndarray) -> lgb.Booster | None:
        """Grow one tree fitting ``target`` with weights ``w`` from a zero score; return
        the booster whose last tree it is (None if LightGBM dropped it).

        The split search sees the squared-loss gradients at zero of the centred target
        (split gains do not change under a shift, and centring keeps LightGBM's float32
        gradients accurate) with the weights rescaled to mean one.  Both boosters run
        with a learning rate so small that LightGBM's shrinkage rounds every leaf
        output to 0, so their training scores stay exactly 0.
        """
        if w is _UNIT_WEIGHTS:
            # LightGBM's own squared loss: gradient score - label = -(t - t_bar), Hessian 1.
            if self._lightgbm_labels is not None:  # written where the objective reads them
                kernels.centred_target(target, self._lightgbm_labels)
            else:  # pragma: no cover - LightGBM without the label buffer
                kernels.centred_target(target, self._label)
                self.dataset.set_field("label", self._label)
            booster = self.unit_booster
            if booster is None:
                booster = self._new_booster(unit=True)
            fobj = None
        else:
            kernels.centred_gradients(target, w, self._grad, self._hess)
            booster = self.booster
            if booster is None:  # pragma: no cover - made at bind, replaced when dropped
                booster = self._new_booster(unit=False)
            fobj = self._objective
        k = booster.num_trees()
        with _lightgbm_threads(self.num_threads):
            booster.update(fobj=fobj)
        self.n_trees_grown += 1
        # After its first iteration LightGBM drops a tree without splits.
        return booster if booster.num_trees() == k + 1 else None

    def _constant(self, target, sample_weight) -> LightGBMTree:
        w = np.ones(self.n_samples) if sample_weight is None else sample_weight
        w_sum = math.fsum(w)
        c = math.fsum(w * target) / w_sum if w_sum > 0 else 0.0
        h = LightGBMTree(None, self.X.shape[1], 1, constant=c, num_threads=self.num_threads)
        h.train_output = np.full(self.n_samples, c)
        return h


def _leaf_means(leaf: np.ndarray, target: np.ndarray, w: np.ndarray, n_leaves: int) -> np.ndarray:
    """Weighted mean of ``target`` per leaf, in float64; 0 for weightless leaves (and
    for means within LightGBM's ``kZeroThreshold`` of 0, as ``set_leaf_output`` stores)."""
    sw = np.bincount(leaf, weights=w, minlength=n_leaves)
    swt = np.bincount(leaf, weights=w * target, minlength=n_leaves)
    values = np.divide(swt, sw, out=np.zeros(n_leaves), where=sw > 0)
    values[np.abs(values) <= kernels.K_ZERO_THRESHOLD] = 0.0
    return values


# -- the oracle -----------------------------------------------------------------------------


class LightGBMOracle(Oracle):
    """Regression trees grown by LightGBM: one exact weighted least-squares tree per query.

    ``bind(X)`` builds one ``lightgbm.Dataset`` and reuses it, and its boosters, for
    every query.  ``project(target, sample_weight)`` grows one tree on the squared-loss
    gradients of the centred target at zero (weights rescaled to sum to ``n``): custom
    gradients for weighted queries, LightGBM's own squared loss for unweighted ones.
    It then finds every training row's leaf with a compiled walk (the leaves of
    ``predict(pred_leaf=True)``) and refits every leaf value in float64 as the exact
    weighted mean of ``target`` in that leaf (Grubb & Bagnell 2011, eq. 4, on the
    partition found by LightGBM, Ke et al. 2017).  ``correlate(r)`` is ``project(r)``:
    the class is closed under scaling.  See the module docstring for the details.

    Parameters
    ----------
    num_leaves : int, default=31
        Maximum number of leaves of a tree (LightGBM grows leaf-wise).
    max_depth : int, default=-1
        Maximum depth; ``-1`` for no limit.
    min_data_in_leaf : int, default=20
        Minimum number of training rows in a leaf.  For weighted queries LightGBM
        estimates a leaf's count from its share of the Hessians, ``n · Σ_leaf w / Σ w``
        (it keeps no row counts in its histograms), so rows of small weight count for
        less: a leaf of 50 rows weighing 0.01 each, among 150 rows of weight 1, counts
        as less than one row.
    max_bin : int, default=255
        Maximum number of histogram bins per feature (fixed at ``bind``).
    lambda_l2 : float, default=0.0
        L2 penalty in LightGBM's split gain, on the centred target with weights of mean
        one.  It influences only which splits are chosen: leaf values are always the
        exact weighted means.
    min_gain_to_split : float, default=0.0
        Minimum decrease of the weighted squared error (weights of mean one) for a split.
    random_state : int or None, default=None
        Passed to LightGBM as ``seed``.  Tree growth is deterministic, so it matters
        only for LightGBM's own bin construction on very large data.
    params : dict or None, default=None
        Extra LightGBM parameters, merged last: they may override the parameters above
        and the oracle's fixed settings (e.g. ``num_threads``, ``force_row_wise``), except
        ``learning_rate`` and ``boost_from_average``, which keep the boosters' training
        scores at 0 (and do not change the trees): other values are refused at ``bind``
        (the step is the booster's ``learning_rate``).
        Aliases are resolved to LightGBM's canonical names.  Settings that would make
        answers random or depend on earlier queries, or that the exact refit would
        undo, are refused at ``bind``, by the name given: bagging, feature sampling,
        ``extra_trees``, GOSS, ``linear_tree``, quantized gradients, other boosting
        types, another ``objective`` or ``num_class``; monotone constraints
        (``monotone_constraints``, ``monotone_constraints_method``,
        ``monotone_penalty``: the refit of the leaves undoes LightGBM's bounds on
        them, and a booster's negative step would reverse them), ``max_delta_step``
        (a bound on the leaf values, which the refit replaces), and the
        cost-efficient penalties LightGBM charges once over all trees
        (``cegb_penalty_feature_lazy``, ``cegb_penalty_feature_coupled``).
        Regularisers of LightGBM's split gain (``lambda_l1``, ``path_smooth``,
        ``cegb_penalty_split``) only influence the split search, as ``lambda_l2``
        does; structural settings (``interaction_constraints``, forced splits, bins)
        shape the trees as in LightGBM, and the refit keeps them.

    Notes
    -----
    Weights below about ``1e-38`` relative to their mean underflow in LightGBM's float32
    Hessians and do not guide the split search; the float64 refit still uses them.  With
    one weight far above the others (``1e4`` times, at 60 rows) no leaf without that row
    holds enough of the weight to count as a row (see ``min_data_in_leaf``): the trees
    have no split and the answer is the weighted mean of the target, a constant, which
    a booster may still step along.

    Threads: LightGBM grows every tree on ``params["num_threads"]`` threads (0, the
    default: OpenMP's default, ``OMP_NUM_THREADS`` if set), and the leaves of the
    training rows are found on as many (at most ``NUMBA_NUM_THREADS``).  The oracle
    leaves LightGBM's process-wide thread count as it finds it.

    Examples
    --------
    One tree per query, its leaves refitted to the exact weighted means of the target:

    >>> import numpy as np
    >>> from oracleboost.oracles import LightGBMOracle
    >>> X = np.repeat([[0.0], [1.0], [2.0], [3.0]], 10, axis=0)
    >>> oracle = LightGBMOracle(num_leaves=3, min_data_in_leaf=5, params={"num_threads": 1})
    >>> bound = oracle.bind(X)
    >>> tree = bound.project(np.repeat([0.0, 0.0, 2.0, 4.0], 10))
    >>> tree
    LightGBMTree(n_leaves=3, n_features=1)
    >>> tree.predict(np.array([[0.5], [2.0], [3.0]]))
    array([0., 2., 4.])
    """

    def __init__(
        self,
        num_leaves: int = 31,
        max_depth: int = -1,
        min_data_in_leaf: int = 20,
        max_bin: int = 255,
        lambda_l2: float = 0.0,
        min_gain_to_split: float = 0.0,
        random_state: int | None = None,
        params: dict | None = None,
    ) -> None:
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_data_in_leaf = min_data_in_leaf
        self.max_bin = max_bin
        self.lambda_l2 = lambda_l2
        self.min_gain_to_split = min_gain_to_split
        self.random_state = random_state
        self.params = params

    @property
    def capabilities(self) -> Capabilities:
        # one query at a time: the boosters, labels and buffers are state (see _project)
        # NaN in X: LightGBM's missing values (use_missing, zero_as_missing), routed by
        # the leaf kernel as LightGBM's NumericalDecision routes them
        # categorical: bind(X, categorical_features=...) makes them LightGBM's categorical
        # features (splits by sets of categories)
        # sparse_input: LightGBM bins and predicts scipy CSR/CSC itself (as X.toarray())
        return Capabilities(correlate=True, project=True, stochastic=False,
                            parallel_queries=False, allow_nan=True, categorical=True,
                            sparse_input=True)

    def lightgbm_params(self) -> dict[str, Any]:
        """The full LightGBM parameter dict ``bind`` uses (validated)."""
        name = type(self).__name__
        _check_int(self.num_leaves, "num_leaves", 2)
        _check_int(self.max_depth, "max_depth", -1)
        if self.max_depth == 0:
            raise ValueError(f"{name}: max_depth must be -1 (no limit) or positive; got 0")
        _check_int(self.min_data_in_leaf, "min_data_in_leaf", 0)
        _check_int(self.max_bin, "max_bin", 2)
        _check_float(self.lambda_l2, "lambda_l2")
        _check_float(self.min_gain_to_split, "min_gain_to_split")
        if self.random_state is not None and not (
            isinstance(self.random_state, numbers.Integral)
            and not isinstance(self.random_state, bool)
        ):
            raise TypeError(
                f"{name}: random_state must be an int or None (it becomes LightGBM's seed); "
                f"got {type(self.random_state).__name__}"
            )
        if self.params is not None and not isinstance(self.params, dict):
            raise TypeError(
                f"{name}: params must be a dict or None; got {type(self.params).__name__}"
            )

        params: dict[str, Any] = dict(_FIXED_PARAMS)
        params.update(
            num_leaves=int(self.num_leaves),
            max_depth=int(self.max_depth),
            min_data_in_leaf=int(self.min_data_in_leaf),
            max_bin=int(self.max_bin),
            lambda_l2=float(self.lambda_l2),
            min_gain_to_split=float(self.min_gain_to_split),
        )
        if self.random_state is not None:
            params["seed"] = int(self.random_state)
        extra = _canonical(self.params or {})
        given = {_alias_table().get(key, key): key for key in self.params or {}}
        for key, value in extra.items():
            why = _unsupported(key, value)
            if why is not None:
                as_given = given[key] if given[key] == key else f"{given[key]} ({key})"
                raise ValueError(f"{name} cannot use params {as_given}={value!r}: {why}")
        if "force_row_wise" in extra and _truthy(extra["force_row_wise"]):
            params["force_col_wise"] = False
        params.update(extra)
        params.update(_ZERO_SCORE_PARAMS)
        return params

    def bind(self, X: ArrayLike, *,
             categorical_features: tuple[int, ...] | None = None) -> BoundOracle:
        """Bin X into one ``lightgbm.Dataset`` and return the bound oracle.

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n_samples, n_features)
            Finite or NaN (a missing value).  A CSR or CSC matrix is binned by LightGBM
            as it is (never made dense) into the bins of ``X.toarray()``, and the
            training rows' leaves are read back with LightGBM's
            ``predict(pred_leaf=True)`` on it (slower than the compiled walk on dense
            X: about 11 ms against 1.5 ms a tree at 100,000 x 50, measured on dense
            rows); the trees and every answer are those of ``X.toarray()``.
        categorical_features : tuple of int or None, default=None
            Columns of X holding category codes (integers ≥ 0 as floats, NaN for
            missing): LightGBM's ``categorical_feature``, split by sets of categories
            with LightGBM's settings for them (``max_cat_to_onehot``, ``cat_smooth``,
            ``cat_l2``, ``min_data_per_group``, ``max_cat_threshold``: its defaults, or
            ``params``).  A booster passes the codes of a DataFrame's ``category``
            columns here.  ``params`` may name categorical features instead (for codes
            in a NumPy X), not both.
        """
        # NaN: LightGBM's missing values.  Sparse X: LightGBM bins CSR and CSC itself
        # into the bins of X.toarray(): its C API (LGBM_DatasetCreateFromMats, ...CSR,
        # ...CSC) draws the same sample of rows (CreateSampleIndices) and keeps the
        # same values of it in the same order (|v| > kZeroThreshold or NaN);
        # tests/test_sparse_trees.py compares the trees
        X = _as_lightgbm_input(check_X(X, allow_nan=True, accept_sparse=True,
                                       who="LightGBMOracle"))
        if X.shape[0] < 2:
            raise ValueError(  # (scikit-learn's words: n_samples=1)
                f"{type(self).__name__} needs at least 2 training rows to grow a tree; "
                f"got n_samples={X.shape[0]}"
            )
        params = self.lightgbm_params()
        categorical = None
        if categorical_features is not None and len(categorical_features) > 0:
            categorical = check_categorical_features(X, categorical_features)
            if "categorical_feature" in params:
                raise ValueError(
                    f"{type(self).__name__}: params sets categorical_feature="
                    f"{params['categorical_feature']!r} and bind was given "
                    f"categorical_features={categorical}; name the categorical columns "
                    "one way (a DataFrame's category columns, or params for a NumPy X)"
                )
        return _BoundLightGBM(self, X, params, categorical)


def _check_int(value, name: str, minimum: int) -> None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"LightGBMOracle: {name} must be an int; got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"LightGBMOracle: {name} must be >= {minimum}; got {value}")


def _check_float(value, name: str) -> None:
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"LightGBMOracle: {name} must be a real number; got {type(value).__name__}")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"LightGBMOracle: {name} must be finite and >= 0; got {value}")
