"""Regression trees grown by LightGBM, one tree per oracle query.

Design
------
``LightGBMOracle.bind(X)`` does the expensive, per-dataset work once: it bins ``X`` into
**one** ``lightgbm.Dataset`` (constructed immediately) and creates **one**
``lightgbm.Booster`` on it.  Every later query reuses both; nothing is re-binned.

Each ``project(target, sample_weight)`` grows exactly one tree through
``Booster.update(fobj=...)`` with a custom objective whose gradient and Hessian make the
tree a weighted least-squares fit of ``target`` *from zero*::

    grad_i = -w_i * (t_i - t_bar),    hess_i = w_i,

the squared-loss derivatives at a zero prediction, so the tree does not depend on the
trees grown before (the booster's running scores are ignored).  ``t_bar`` is the
weighted mean of the target: least-squares split gains are invariant to shifting the
target, and centring keeps LightGBM's float32 gradients accurate.  The booster runs
with learning rate 1, ``boost_from_average=False`` and ``min_sum_hessian_in_leaf=0``;
the weights are rescaled to sum to ``n`` (mean 1), so that neither LightGBM's Hessian
thresholds nor its float32 arithmetic block splits when the weights are tiny (boosting
weights spanning many orders of magnitude are the normal case).

LightGBM computes leaf values from float32 gradient sums.  After growing, the training
rows' leaves are read back (``predict(pred_leaf=True)``) and every leaf value is
recomputed in float64 as the exact weighted mean of the target over the rows in that leaf (float64
sums by ``np.bincount``); a leaf with zero total weight gets 0.  The values are written
back with ``Booster.set_leaf_output``, so the returned tree is the exact weighted
least-squares fit on its partition: the least-squares projection of Grubb & Bagnell
(2011, eq. 4) restricted to the partition LightGBM's greedy, histogram-based,
leaf-wise growth (Ke et al., 2017) found.  Its model string is the
:class:`LightGBMTree`.  Trees stay in the booster (rolling each back cost about a
millisecond a tree): they are independent of each other, since the objective ignores
the running scores.  (A NumPy walk of the splits instead of ``pred_leaf`` measured no
faster in the whole loop, and needed a transposed copy of X to get even.)

``correlate(r)``: the class is closed under scaling, so the hypothesis maximising
``<r, h> / ||h||`` on a given partition is the least-squares fit of ``r`` with unit
weights; ``correlate(r)`` is ``project(r)``.  Multiclass ``(n, K)`` queries are not
supported (one tree has one output).

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

import functools
import hashlib
import math
import numbers
from typing import Any

import lightgbm as lgb  # the library (absolute import; this module is oracleboost.oracles.lightgbm)
import numpy as np

from .base import BoundOracle, Capabilities, Hypothesis, Oracle, check_X

__all__ = ["LightGBMOracle", "LightGBMTree"]


# -- LightGBM parameters ----------------------------------------------------------------

#: Parameters the oracle fixes; ``LightGBMOracle.params`` is merged after them.
_FIXED_PARAMS: dict[str, Any] = {
    "objective": "none",  # gradients come from the custom objective in _project
    "boosting": "gbdt",
    "learning_rate": 1.0,
    "boost_from_average": False,
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
    return None


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
    """

    def __init__(self, model_str: str | None, n_features: int, n_leaves: int, constant=0.0):
        self.model_str = model_str
        self.n_features = int(n_features)
        self.n_leaves = int(n_leaves)
        self.constant = float(constant)
        self._booster: lgb.Booster | None = None
        content = model_str if model_str is not None else repr(self.constant)
        self.key = ("lightgbm_tree", hashlib.sha256(content.encode()).hexdigest())

    def predict(self, X) -> np.ndarray:
        X = check_X(X)
        if X.shape[1] != self.n_features:
            raise ValueError(
                f"X has {X.shape[1]} features but the LightGBM tree was grown on {self.n_features}"
            )
        if self.model_str is None:
            return np.full(X.shape[0], self.constant)
        if self._booster is None:
            self._booster = lgb.Booster(model_str=self.model_str)
        return np.asarray(self._booster.predict(X, raw_score=True), dtype=np.float64)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_booster"] = None
        return state

    def __repr__(self) -> str:
        return f"LightGBMTree(n_leaves={self.n_leaves}, n_features={self.n_features})"


# -- the bound oracle ---------------------------------------------------------------------


class _BoundLightGBM(BoundOracle):
    def __init__(self, oracle: LightGBMOracle, X: np.ndarray, params: dict[str, Any]):
        super().__init__(oracle, X.shape[0])
        self.X = X
        self.params = params
        self.n_datasets_built = 0
        self.n_boosters_built = 0
        self.n_trees_grown = 0
        self.dataset = lgb.Dataset(X, params=params, free_raw_data=True).construct()
        self.n_datasets_built += 1
        # Features LightGBM can split on (others are trivial or pre-filtered because no
        # split of them leaves min_data_in_leaf rows on both sides).
        self.n_usable_features = sum(self.dataset.feature_num_bin(j) > 1 for j in range(X.shape[1]))
        self.booster: lgb.Booster | None = None
        if self.n_usable_features > 0:
            self._new_booster()

    def _new_booster(self) -> None:
        self.booster = lgb.Booster(params=dict(self.params), train_set=self.dataset)
        self.n_boosters_built += 1

    # -- queries ----------------------------------------------------------------------------
    def _correlate(self, r, random_state):
        # Closed under scaling: the best direction on a partition is the LS fit of r.
        return self._project(r, None, random_state)

    def _project(self, target, sample_weight, random_state):
        n, d = self.X.shape
        w = np.ones(n) if sample_weight is None else sample_weight
        if self.booster is None:
            return self._constant(target, w)

        w_sum = float(np.sum(w))
        w_scaled = w * (n / w_sum)  # mean 1: keeps LightGBM's thresholds and float32 sane
        # np.sum, not np.dot: a BLAS call here wakes OpenBLAS's threads, whose spin-wait
        # then competes with LightGBM's OpenMP threads (measured on 2 cores: 104 ms a
        # tree instead of 12 ms at n = 20,000).  Only centres the float32 gradients.
        t_bar = float(np.sum(w * target)) / w_sum
        grad = (-(w_scaled * (target - t_bar))).astype(np.float32)
        hess = w_scaled.astype(np.float32)

        booster = self.booster
        k = booster.num_trees()
        booster.update(fobj=lambda preds, train_data: (grad, hess))
        self.n_trees_grown += 1
        model_str = (
            booster.model_to_string(start_iteration=k, num_iteration=1)
            if booster.num_trees() == k + 1 else None
        )
        n_leaves = 0 if model_str is None else _num_leaves(model_str)
        if n_leaves < 2:
            # No split was possible: LightGBM dropped the tree, or (on its first
            # iteration) kept a one-leaf tree that it will not roll back.  Start a fresh
            # booster on the same Dataset (about a millisecond, no re-binning).
            self._new_booster()
            return self._constant(target, w)
        leaf = booster.predict(self.X, pred_leaf=True, start_iteration=k, num_iteration=1)
        leaf = np.asarray(leaf, dtype=np.intp).reshape(n)
        values = _leaf_means(leaf, target, w, n_leaves)
        for j, v in enumerate(values):
            booster.set_leaf_output(k, j, float(v))
        model_str = booster.model_to_string(start_iteration=k, num_iteration=1)
        h = LightGBMTree(model_str, d, n_leaves)
        h.train_output = values[leaf]
        return h

    def _constant(self, target, w) -> LightGBMTree:
        w_sum = math.fsum(w)
        c = math.fsum(w * target) / w_sum if w_sum > 0 else 0.0
        h = LightGBMTree(None, self.X.shape[1], 1, constant=c)
        h.train_output = np.full(self.n_samples, c)
        return h


def _leaf_means(leaf: np.ndarray, target: np.ndarray, w: np.ndarray, n_leaves: int) -> np.ndarray:
    """Weighted mean of ``target`` per leaf, in float64; 0 for weightless leaves."""
    sw = np.bincount(leaf, weights=w, minlength=n_leaves)
    swt = np.bincount(leaf, weights=w * target, minlength=n_leaves)
    return np.divide(swt, sw, out=np.zeros(n_leaves), where=sw > 0)


def _num_leaves(model_str: str) -> int:
    """``num_leaves`` of the (first) tree block of a model string, not of its header."""
    start = model_str.index("\nnum_leaves=", model_str.index("\nTree=")) + len("\nnum_leaves=")
    return int(model_str[start : model_str.index("\n", start)])


# -- the oracle -----------------------------------------------------------------------------


class LightGBMOracle(Oracle):
    """Regression trees grown by LightGBM: one exact weighted least-squares tree per query.

    ``bind(X)`` builds one ``lightgbm.Dataset`` and one ``lightgbm.Booster`` and reuses
    them for every query.  ``project(target, sample_weight)`` grows one tree through
    ``Booster.update`` with a custom squared-loss objective evaluated at zero (learning
    rate 1, ``boost_from_average=False``, weights rescaled to sum to ``n``), then refits
    every leaf value in float64 as the exact weighted mean of ``target`` in that leaf
    (Grubb & Bagnell 2011, eq. 4, on the partition found by LightGBM, Ke et al. 2017).
    ``correlate(r)`` is ``project(r)``: the class is closed under scaling.  See the
    module docstring for the details.

    Parameters
    ----------
    num_leaves : int, default=31
        Maximum number of leaves of a tree (LightGBM grows leaf-wise).
    max_depth : int, default=-1
        Maximum depth; ``-1`` for no limit.
    min_data_in_leaf : int, default=20
        Minimum number of training rows in a leaf, counted regardless of their weights.
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
        and the oracle's fixed settings (e.g. ``num_threads``, ``force_row_wise``).
        Aliases are resolved to LightGBM's canonical names.  Settings that would make
        answers random or break the exact refit are refused at ``bind``: bagging,
        feature sampling, ``extra_trees``, GOSS, ``linear_tree``, quantized gradients,
        other boosting types, another ``objective`` or ``num_class``.  Parameters that
        act on leaf outputs (``lambda_l1``, ``max_delta_step``, ``path_smooth``,
        monotone constraints) only influence the split search, as ``lambda_l2`` does.

    Notes
    -----
    Weights below about ``1e-38`` relative to their mean underflow in LightGBM's float32
    Hessians and do not guide the split search; the float64 refit still uses them.
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
    ):
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
        return Capabilities(correlate=True, project=True, stochastic=False)

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
        for key, value in extra.items():
            why = _unsupported(key, value)
            if why is not None:
                raise ValueError(f"{name} cannot use params {key}={value!r}: {why}")
        if "force_row_wise" in extra and _truthy(extra["force_row_wise"]):
            params["force_col_wise"] = False
        params.update(extra)
        return params

    def bind(self, X) -> BoundOracle:
        X = np.ascontiguousarray(check_X(X))
        if X.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 training rows to grow a tree; "
                f"got {X.shape[0]}"
            )
        return _BoundLightGBM(self, X, self.lightgbm_params())


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
