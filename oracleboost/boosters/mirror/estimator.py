"""Mirror-ascent boosting: MABoost and its variants (Naghibi & Pfister 2014).

Boosting as online learning over distributions on the examples.  Labels ``a_i = ±1``,
hypotheses ``h`` with values in [−1, 1], loss vector ``d_t = −a ∘ h_t`` (positive on
mistakes), edge ``γ_t = −w_tᵀ d_t = Σ_i w_i a_i h_t(x_i)``.  Algorithm 1 (MABoost)::

    w_1 = z_1 = uniform
    for t = 1..T:
      (a) h_t = oracle.correlate(w_t · a);  d_t = −a ∘ h_t;  γ_t = −w_tᵀ d_t
      (b) η_t = γ_t / L                       (L = 1 entropy, L = N Euclidean, eq. 8–9)
      (c) lazy:   ∇R(z_{t+1}) = ∇R(z_t) + η_t d_t
          active: ∇R(z_{t+1}) = ∇R(w_t) + η_t d_t
      (d) w_{t+1} = argmin_{w ∈ S} B_R(w, z_{t+1})      (Bregman projection, eq. 2)
    f(x) = Σ_t η_t h_t(x)                     (the vote weight is η_t itself)

with ``R = Σ w log w`` (``mirror="entropy"`` or ``EntropyMap()``: the update is
multiplicative and the projection a normalisation, AdaBoost with the step η_t = γ_t in
place of artanh γ_t) or ``R = ½‖w‖²`` (``"euclidean"`` or ``EuclideanMap()``: an
additive update and the sort-based simplex projection); a map is an object of
:mod:`.mirror_maps` holding ∇R, its projections, L and Theorem 1's bound.  With the
entropy map, the lazy update and no cap, (c), (d) and the next query are one pass over
the rows: (d)'s normaliser ``log Σ z_{t+1} = log Σ z_t + log Σ w_t e^(−η_t u)`` comes
from the column's two masses, as AdaBoost's Z_t does (:func:`.mirror_passes.entropy_step`).
``learning_rate`` ν multiplies η_t, as the authors' R package ``maboost`` does with
``nu``.  Each variant's η_t is a rule of :mod:`.steps` (``MirrorAscentStep``,
``SparseBoostStep``, ``MadaBoostStep``).  The variants:

* ``"max_margin"`` (Theorem 2): η_t = ν γ_t / (L √t).
* ``"smooth"`` (§3.1): S becomes the capped simplex S_k = {Σw = 1, 0 ≤ w_i ≤ k/N} with
  k = ``smoothness``; the output is (1 − 1/k)-accurate (Theorem 3).  Passing
  ``sample_group`` to ``fit`` caps only the secondary set's weights (§3.2, eq. 26: the
  dataset-combining set S_c).
* ``"sparse"`` (SparseBoost, Algorithm 2, Euclidean, active): an unnormalised state y,
  ``w_t = y_t/‖y_t‖₁``, ``y_{t+1} = max(0, y_t + η_t d_t − α_t η_t)`` (eq. 29) with
  ``α_t = s γ_t ‖y_t‖₁`` and ``η_t = (1 − s) γ_t ‖y_t‖₁ / N`` (eq. 36; s = ``sparsity``:
  0 is Algorithm 2's first setting, ½ its second); Theorem 4's constant is (1 − s)²
  (the supplement's 1/κ² is a typo for κ², note §1.4).  Zeros are exact; a state that
  is all zeros stops the fit (``"zero_weights"``).
* ``"madaboost"`` (Algorithm 3, entropy, lazy, double projection onto the hypercube then
  the simplex): ``w_{t+1} ∝ min(1, exp(−a ∘ H_t))``, η_t = ε_t γ_t with ε_t the training
  error of H_{t−1} (the paper's ε_t is circular as printed; note §1.6), stopping when
  ε_t = 0 (``"zero_training_error"``).

Multiclass (K > 2) follows the ``maboost`` package's construction, which the paper does
not have: a distribution W over the N × (K − 1) pairs (example, wrong class).  The weak
learner sees the row sums as example weights; with predicted class p_i, ``D_i = −1``
across row i when p_i is right, else +1 in the column of p_i; the edge is
``e = −Σ W ∘ D``; η = ν e / ((K − 1) N) (Euclidean) or ν e (entropy); W is updated and
projected as one distribution over all N(K − 1) cells.  The vote is a one-hot of each
hypothesis' argmax class.  Smooth multiclass (which the package refuses) caps each cell
at k / (N (K − 1)); no bound is proven for it.

Departures from the ``maboost`` package (CRAN 1.0-0), where it and the paper disagree:
the package's sparse ℓ1 term is min(1, ½ ν γ‖y‖₁ sf) with η not halved (here eq. 36);
its capped-simplex routine can return wrong projections (unmapped sort order, an
absolute value in its cap test, an uncapped fallback; here exact); it breaks vote ties
at random (here f = 0 predicts ``classes_[0]``); it clamps η at 0 for a negative edge
(here the hypothesis is negated, the class taken closed under negation, and a
multiclass edge ≤ 0 stops the fit); it subsamples rows and features per tree by default
(here the oracle decides).  Where they agree (η, the updates, the projections onto S and
S_k, sparse with sf = 0) this booster gives the package's weights and votes for the same
hypotheses (tests/test_mirror.py replays its rules).

Reference: Naghibi, T. & Pfister, B. (2014). A boosting framework on grounds of online
learning. NIPS 27.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from oracleboost._typing import ArrayLike, RandomStateLike
from oracleboost.boosters.mirror import cells as mirror_cells
from oracleboost.boosters.mirror import passes as mirror_passes
from oracleboost.boosters.mirror.maps import (
    MIRROR_MAPS,
    EntropyMap,
    EuclideanMap,
    MirrorMap,
    get_mirror_map,
)
from oracleboost.distributed import data as cluster_data
from oracleboost.engine.base import (
    BaseBooster,
    data_signature,
    fit_context,
    num_iteration_doc,
    on_dask,
)
from oracleboost.engine.classifier import (
    ScoreClassifierMixin,
    SignedColumn,
    classification_data,
    weighted_error,
)
from oracleboost.engine.eval_sets import documented, eval_parameters_doc
from oracleboost.engine.rounds import Problem, RoundResult, StopReason, draw_seed, seed_generator
from oracleboost.export.methods import ExportMixin
from oracleboost.export.schema import persisted
from oracleboost.optim import row_passes
from oracleboost.optim.row_projections import euclidean_simplex_rows_near, kl_softmax_rows
from oracleboost.optim.steps import (
    InverseSqrtStep,
    MadaBoostStep,
    MirrorAscentStep,
    RoundView,
    SparseBoostStep,
    StepRule,
)
from oracleboost.optim.votes import predicted_index, vote_margins, vote_share
from oracleboost.oracles.base import BinaryOnlyOracleError, Hypothesis, Oracle, predict_validated
from oracleboost.oracles.trees import TreeStructure
from oracleboost.rows.blocks import DEFAULT_BLOCK_SIZE, RowBlocks
from oracleboost.rows.partitioned import NotDistributedError, Rows, is_dask_collection

__all__ = ["MirrorBoostingClassifier", "ArgmaxVote"]

UPDATES = ("auto", "lazy", "active")
VARIANTS = ("standard", "max_margin", "smooth", "sparse", "madaboost")


@persisted
class ArgmaxVote(Hypothesis):
    """One vote for the class a multiclass hypothesis ranks first: ``e_{argmax h(x)}``."""

    def __init__(self, inner: Hypothesis, n_classes: int) -> None:
        self.inner = inner
        self.n_classes = int(n_classes)
        self.key = None if inner.key is None else ("argmax", inner.key)
        self.scale = 1.0

    def predict(self, X: ArrayLike) -> np.ndarray:
        return mirror_cells.one_hot(np.argmax(self.inner.predict(X), axis=1), self.n_classes)

    def _predict_validated(self, X) -> np.ndarray:
        # the inner hypothesis skips its own check of X as well
        return mirror_cells.one_hot(np.argmax(predict_validated(self.inner, X), axis=1),
                                    self.n_classes)

    def tree_structure(self) -> TreeStructure | None:
        """The inner hypothesis' tree with each leaf's vector replaced by the vote for
        its largest entry (the first, as ``argmax`` takes it); None when the inner
        hypothesis is not a tree."""
        tree = self.inner.tree_structure()
        if tree is None:
            return None
        return tree.with_values(mirror_cells.one_hot(np.argmax(tree.value, axis=1),
                                                     self.n_classes))

    def __repr__(self) -> str:
        return f"ArgmaxVote({self.inner!r})"


@dataclass
class _Problem(Problem):
    a: np.ndarray  # labels ±1 as int8 (binary) or class indices 0..K−1
    s: np.ndarray | None  # sample weights (binary: None when all are equal)
    s_total: float  # Σ s, summed by lanes
    K: int  # 2 for binary
    cap: object  # per-cell caps (smooth / dataset-combining: a number or rows), or None
    mirror: MirrorMap
    L: float  # the bound on ‖d‖_*², eq. 8–9: 1 (entropy), number of cells (Euclidean)
    rule: StepRule  # η_t of the variant
    lazy: bool
    bound: object
    bounded: bool
    secondary: np.ndarray | None
    blocks: RowBlocks  # the rows' blocks, in memory or on a cluster
    log_s: object = None  # log s, for the MadaBoost variant with unequal weights
    cells: RowBlocks | None = None  # multiclass: the blocks of the N × (K − 1) cells


@dataclass(frozen=True)
class _State:
    """Between rounds.  ``w`` is the distribution over cells for the next round;
    ``z`` is the lazy update's dual accumulator (log z for entropy) or, for SparseBoost,
    the unnormalised state y; ``f`` the running vote on the training points;
    ``potential`` Σ_t (η_t γ_t − L η_t²/2)-type sums behind the ``bound`` record.
    Binary fits also carry the oracle's next query ``w · a``, SparseBoost's ‖y‖₁
    (``mass``), the vote's error ε_t (``error``, the MadaBoost variant's step) and, for
    the entropy map's lazy update, ``log_norm = log Σ z`` (``w = z / Σ z``), from which
    the next round predicts its own (:func:`.mirror_passes.entropy_step`); for the
    Euclidean map, where the last projection's threshold was (``near``: the next one's
    first pivots, :func:`.row_projections.euclidean_simplex_rows_near`)."""

    w: np.ndarray
    z: np.ndarray | None
    f: np.ndarray
    t: int
    potential: float
    rng: np.random.RandomState
    query: np.ndarray | None = None
    mass: float = 1.0
    error: float = 1.0
    log_norm: float = 0.0  # log Σ z of the lazy entropy average (Σ w_1 = 1: 0)
    near: object = None  # where the Euclidean projection's threshold was (row_projections.Near)


@documented()
class MirrorBoostingClassifier(ExportMixin, ScoreClassifierMixin, ClassifierMixin,
                               BaseBooster):
    """Mirror-ascent boosting on any oracle (MABoost; Naghibi & Pfister 2014, Algorithm 1).

    The booster asks the oracle only ``correlate``, so every hypothesis class runs under
    it.  See the module docstring for the algorithm box, the variants and the
    departures from the authors' R package ``maboost``.

    Parameters
    ----------
    oracle : Oracle, default=None
        ``None`` means ``StumpOracle()`` (±1 decision stumps).  Multiclass needs an
        oracle with ``multiclass_correlate`` (e.g. stumps: label-coded answers).
    mirror : {"entropy", "euclidean"} or MirrorMap, default="entropy"
        R = Σ w log w (KL projections, L = 1; ``EntropyMap()``) or ½‖w‖² (Euclidean
        projections, L = N; ``EuclideanMap()``), see :mod:`oracleboost.boosters.mirror.maps`.
        The default is the entropy map: Theorem 1 gives it the training error
        exp(−½Σγ²) against the Euclidean map's 1/(1 + Σγ²), and its η_t = γ_t does not
        shrink with N (the package defaults to the Euclidean map).
    update : {"auto", "lazy", "active"}, default="auto"
        Algorithm 1 (c).  "auto" is the update each variant's algorithm box uses: lazy
        for the entropy map (identical to active in exact arithmetic, and its log z
        never underflows to a stuck zero) and for ``"madaboost"`` (Algorithm 3), active
        for the Euclidean map (as the package) and for ``"sparse"`` (Algorithm 2).
    variant : {"standard", "max_margin", "smooth", "sparse", "madaboost"}, default="standard"
    smoothness : float or None, default=None
        k ≥ 1: every weight is capped at k/N (``"smooth"``; Theorem 3 gives error ≤ 1/k
        once exp(−½Σγ²) is below it), or only the secondary set's weights when ``fit``
        gets ``sample_group``.  The package's ``smoothfactor`` is N/k.
    sparsity : float or None, default=None
        SparseBoost's ℓ1 weight as the fraction s ∈ [0, 1) of α_t = s γ_t ‖y_t‖₁, with
        η_t = (1 − s) γ_t ‖y_t‖₁ / N (eq. 36).  None means 0 (Algorithm 2's α = 0).
    learning_rate : float, default=1.0
        ν, multiplying η_t in the update and the vote (the package's ``nu``).
    n_estimators : int, default=100
    random_state : int, RandomState or None, default=None
        Seeds the oracle's calls (one seed per round).
    verbose : int, default=0
    n_jobs : int or None, default=None
        Threads of the passes over the rows of a binary fit (None follows
        ``OMP_NUM_THREADS``, else every core; -1 every core).  Results do not depend on
        it (:mod:`oracleboost.rows.blocks`).
    block_size : int, default=65536
        Rows of a block: the unit of the passes' sums, which decides their rounding.
    warm_start : bool, default=False
        Continue the fitted rounds up to ``n_estimators`` on the same data.  A pickle or
        skops file of the fitted booster keeps the running state a warm start continues
        from only when it was fitted with ``warm_start=True`` (otherwise a warm start
        after loading fits anew, with a ``BoostingWarning``).
    <early stopping parameters>
    <importance parameters>

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    ensemble_ : Ensemble
        Hypotheses with their vote weights η_t.
    intercept_ : float or ndarray of shape (n_classes,)
        0 (or zeros, one a class): the vote starts empty.
    weights_ : ndarray of shape (n_samples,) or (n_samples, n_classes − 1), or None
        The distribution w_{T+1} the next round would use (SparseBoost: y/‖y‖₁); None
        after a fit on a dask array (the weights stay on the workers, and are freed).
    history_ : dict of ndarray
        Per round: ``loss`` (the weighted training error of the vote, ties counted as
        errors: the quantity Theorems 1–5 bound), ``train_error`` (of ``predict``),
        ``edge`` γ_t, ``step`` and ``eta`` (η_t), ``margin`` (ℓ1: min_i a_i f(x_i)/Σ|η|),
        ``max_weight`` (max_i N w_i, or N(K − 1) max W for multiclass, of w_{t+1}),
        ``n_zero_weights`` (exact zeros of w_{t+1}), ``bound`` and ``time``.
        ``bound`` is the theorem's bound on the training error after the round, from the
        run's own η_t, γ_t: exp(−Σ(η_tγ_t − η_t²/2)) (entropy; exp(−½Σγ²) at ν = 1) and
        1/(1 + 2N Σ(η_tγ_t − Nη_t²/2)) (Euclidean; 1/(1 + Σγ²) at ν = 1), both from
        eqs. (15)/(18) with the regret bound (13); max(1/k, ·) for ``"smooth"``;
        1/(1 + 2N Σ(η_t(γ_t‖y_t‖₁ − α_t) − Nη_t²/2)) for ``"sparse"`` (Theorem 4, which
        is 1/(1 + (1 − s)² Σγ²‖y‖²) at ν = 1); and for ``"madaboost"`` √(2/Σγ_t²) at
        ν = 1, which bounds the best error so far (note §2: Theorem 5's last step
        needs ε ≥ ½ and a monotone error).  NaN where no theorem applies: multiclass,
        ``sample_group``, the Euclidean map with unequal sample weights, and madaboost
        with ν ≠ 1.
    stop_reason_ : StopReason
    <validation attributes>

    References
    ----------
    Naghibi, T. & Pfister, B. (2014). A boosting framework on grounds of online
    learning. NIPS 27.

    Examples
    --------
    The smooth variant caps every weight at k/N; Theorem 3 bounds the training error:

    >>> from sklearn.datasets import load_breast_cancer
    >>> from oracleboost.boosters import MirrorBoostingClassifier
    >>> from oracleboost.oracles import StumpOracle
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> ma = MirrorBoostingClassifier(StumpOracle(), variant="smooth", smoothness=5,
    ...                               n_estimators=50).fit(X, y)
    >>> bool(ma.history_["max_weight"].max() <= 5)
    True
    >>> bool(ma.history_["loss"][-1] <= ma.history_["bound"][-1])
    True
    """

    _parameter_constraints: dict = {
        **BaseBooster._parameter_constraints,
        "mirror": [StrOptions(set(MIRROR_MAPS)), MirrorMap],
        "update": [StrOptions(set(UPDATES))],
        "variant": [StrOptions(set(VARIANTS))],
        "smoothness": [Interval(Real, 1, None, closed="left"), None],
        "sparsity": [Interval(Real, 0, 1, closed="left"), None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "block_size": [Interval(Integral, 1, None, closed="left")],
    }

    # The loss is the 0-1 training error: bounded, and not monotone under any variant's
    # theory (the bounds are regret bounds), so it is not watched for divergence.
    _watch_divergence = False

    def __init__(
        self,
        oracle: Oracle | None = None,
        *,
        mirror: str | MirrorMap = "entropy",
        update: str = "auto",
        variant: str = "standard",
        smoothness: float | None = None,
        sparsity: float | None = None,
        learning_rate: float = 1.0,
        n_estimators: int = 100,
        random_state: RandomStateLike = None,
        verbose: int = 0,
        n_jobs: int | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        warm_start: bool = False,
        n_iter_no_change: int | None = None,
        validation_fraction: float | None = 0.1,
        tol: float = 1e-4,
        importance_type: str = "weight",
    ) -> None:
        self.oracle = oracle
        self.mirror = mirror
        self.update = update
        self.variant = variant
        self.smoothness = smoothness
        self.sparsity = sparsity
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.block_size = block_size
        self.warm_start = warm_start
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.tol = tol
        self.importance_type = importance_type

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # SparseBoost and the MadaBoost-type variant are binary (Algorithms 2 and 3), and
        # so is MABoost over an oracle without label-coded answers (K > 2 asks for them)
        tags.classifier_tags.multi_class = (
            self.variant not in ("sparse", "madaboost")
            and self._oracle().capabilities.multiclass_correlate)
        return tags

    # -- fit ----------------------------------------------------------------------------
    @fit_context
    @eval_parameters_doc
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        sample_group: ArrayLike | None = None,
        *,
        eval_set: Sequence[tuple[ArrayLike, ArrayLike]] | None = None,
        eval_sample_weight: Sequence[ArrayLike | None] | None = None,
        eval_metric: str | Callable | Sequence | dict | None = None,
        eval_names: Sequence[str] | None = None,
    ) -> MirrorBoostingClassifier:
        """Boost for up to ``n_estimators`` rounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            The starting distribution w_1 ∝ ``sample_weight`` (uniform by default).  With
            the entropy map an integer weight equals repeating the row; with the
            Euclidean map it does not (its additive update and the projection's
            threshold act per row).
        sample_group : array-like of shape (n_samples,), default=None
            1 (or True) marks the secondary data set of §3.2, whose weights are capped at
            k/N (k = ``smoothness``, required); 0 the primary set, left uncapped.  Note:
            with the cap k/N over all N rows, the secondary set's error is guaranteed to
            reach N/(k N_B), not the paper's 1/k (note §1.3).
        eval_set : list of (X, y) pairs, default=None
            Sets whose ``loss`` (the vote's error, ties counted as errors) and error (of
            ``predict``) are recorded after every round, as ``history_["val_loss_0"]``,
            ``history_["val_error_0"]``, …
            In a ``Pipeline`` (with metadata routing) the sets reach the booster as
            given, not through the steps before it, as LightGBM's do: their curves are
            then those of untransformed rows.  Transform them first, or hold out rows
            with ``validation_fraction`` (split after the steps).
        eval_sample_weight : list of array-like or None, default=None
            The weights of each eval set's loss and error.
        <eval parameters>
        """
        return self._fit_rounds(
            X, y, sample_weight, sample_group, eval_set=eval_set, eval_rows=eval_sample_weight,
            eval_metric=eval_metric, eval_names=eval_names
        )

    _row_args = ("sample_weight", "sample_group")

    def _resolved_update(self, mirror: MirrorMap) -> str:
        if self.update != "auto":
            return self.update
        if self.variant == "madaboost":
            return "lazy"
        if self.variant == "sparse":
            return "active"
        return mirror.default_update

    def _check_options(self, mirror: MirrorMap, K: int, grouped: bool) -> None:
        name = type(self).__name__
        update = self._resolved_update(mirror)
        euclidean, entropy = isinstance(mirror, EuclideanMap), isinstance(mirror, EntropyMap)
        if self.variant == "sparse" and (not euclidean or update != "active"):
            raise ValueError(
                f"{name}: variant='sparse' is SparseBoost (Algorithm 2), an active update "
                "with the Euclidean map; use mirror='euclidean' (and update='auto' or "
                f"'active'); got mirror={self.mirror!r}, update={self.update!r}"
            )
        if self.variant == "madaboost" and (not entropy or update != "lazy"):
            raise ValueError(
                f"{name}: variant='madaboost' is Algorithm 3, the lazy update with the "
                "entropy map; use mirror='entropy' (and update='auto' or 'lazy'); got "
                f"mirror={self.mirror!r}, update={self.update!r}"
            )
        if (self.variant == "smooth" or grouped) and self.smoothness is None:
            what = "variant='smooth'" if self.variant == "smooth" else "sample_group"
            raise ValueError(f"{name}: {what} needs smoothness=k (weights capped at k/N)")
        if self.smoothness is not None and not (self.variant == "smooth" or grouped):
            raise ValueError(
                f"{name}: smoothness={self.smoothness} caps weights only with "
                "variant='smooth' or with fit(..., sample_group=...); got "
                f"variant={self.variant!r} and no sample_group"
            )
        if self.sparsity is not None and self.variant != "sparse":
            raise ValueError(
                f"{name}: sparsity={self.sparsity} is SparseBoost's; it needs "
                f"variant='sparse', got {self.variant!r}"
            )
        if grouped and self.variant not in ("standard", "smooth", "max_margin"):
            raise ValueError(
                f"{name}: sample_group (the dataset-combining set S_c) works with the "
                f"standard, smooth and max_margin variants; got variant={self.variant!r}"
            )
        if K > 2 and self.variant in ("sparse", "madaboost"):
            raise ValueError(
                f"Only binary classification is supported by {name} with "
                f"variant={self.variant!r} (Algorithms 2 and 3 of the paper); y has {K} "
                "classes. The multiclass weight-matrix construction "
                "supports the standard, max_margin and smooth variants."
            )
        oracle = self._oracle()
        if K > 2 and not oracle.capabilities.multiclass_correlate:
            raise BinaryOnlyOracleError(
                f"Only binary classification is supported by {name} with "
                f"{type(oracle).__name__}: y has {K} classes, and the multiclass "
                "weight-matrix construction asks the oracle for label-coded answers "
                f"(multiclass_correlate), which {type(oracle).__name__} does not give; use "
                "an oracle that does (StumpOracle, for one)"
            )

    def _setup(self, X, y, sample_weight, sample_group) -> _Problem:
        if is_dask_collection(X):
            return self._setup_cluster(X, y, sample_weight, sample_group)
        secondary = None
        if sample_group is not None:
            g = np.asarray(sample_group)
            if g.shape != (np.shape(X)[0],):
                raise ValueError(
                    f"sample_group must have shape ({np.shape(X)[0]},); got {g.shape}"
                )
            if not np.isin(g, (0, 1)).all():
                raise ValueError("sample_group must hold 0 (primary) or 1 (secondary) per row")
            secondary = g.astype(bool)
        data = classification_data(self, X, y, sample_weight, secondary)
        X, s, (secondary,), y_idx, K = data.X, data.s, data.rows, data.y_index, data.n_classes
        mirror = get_mirror_map(self.mirror)
        self._check_options(mirror, K, secondary is not None)
        need = "correlate" if K == 2 else "multiclass_correlate"
        bound = self._bind(X, need)
        n = X.shape[0]
        capped = self.smoothness is not None and (self.variant == "smooth"
                                                  or secondary is not None)
        if K == 2:
            a = data.signs(np.int8)  # ±1: the passes read them every round (1 byte a row)
            cap = None
            if capped:
                k = float(self.smoothness) / n
                cap = k if secondary is None else np.where(secondary, k, np.inf)
            blocks = RowBlocks(n, self.block_size, self.n_jobs)
            uniform = bool((s == s[0]).all())
            return self._binary_problem(a, None if uniform else s, cap, mirror, bound,
                                        secondary, blocks, data_signature(X, a, s, secondary))
        # multiclass: a distribution over the N × (K − 1) cells
        return self._multiclass_problem(y_idx, s, K, secondary, mirror, bound,
                                        RowBlocks(n, self.block_size, self.n_jobs),
                                        data_signature(X, y_idx, s, secondary))

    def _multiclass_problem(self, a: Rows, s: Rows | None, K: int, secondary: Rows | None,
                            mirror: MirrorMap, bound, blocks: RowBlocks,
                            signature: str | None) -> _Problem:
        """The multiclass problem (in memory or on a cluster: ``blocks``): the cells'
        blocks, the starting distribution over the cells and their caps."""
        n, width = blocks.n, K - 1
        cells = mirror_cells.cell_blocks(blocks, width)
        s_total = float(n) if s is None else row_passes.total(blocks, s)
        cap = None
        if self.smoothness is not None and (self.variant == "smooth" or secondary is not None):
            w1 = self._start(blocks, s, s_total, K)
            cell_cap = float(self.smoothness) / n / width
            if secondary is None:
                cap = cell_cap
                self._check_cap(mirror_cells.extremes(cells, w1)[0] > cap)
            else:
                cap = mirror_cells.cell_caps(blocks, secondary, cell_cap, width)
                self._check_cap(mirror_passes.any_above(cells, w1, cap))
        return _Problem(
            a=a, s=s, s_total=s_total, K=K, cap=cap, mirror=mirror,
            L=mirror.constant(n * width), rule=self._eta_rule(),
            lazy=self._resolved_update(mirror) == "lazy", bound=bound,
            bounded=bound.capabilities.bounded, secondary=secondary,
            signature=signature, blocks=blocks, cells=cells,
        )

    def _check_cap(self, exceeded: bool) -> None:
        if exceeded:
            raise ValueError(
                f"smoothness={self.smoothness}: the starting distribution (from "
                "sample_weight) already exceeds the cap k/N; raise smoothness"
            )

    def _binary_problem(self, a, s, cap, mirror: MirrorMap, bound, secondary, blocks,
                        signature) -> _Problem:
        """The binary problem from rows in memory or on a cluster (``blocks``): ``s``
        None means equal weights, and then w_1 is exactly 1/N."""
        n = blocks.n
        s_total = float(n) if s is None else row_passes.total(blocks, s)
        if cap is not None:
            w1 = self._start(blocks, s, s_total)
            self._check_cap(row_passes.peak(blocks, w1) > cap if isinstance(cap, float)
                            else mirror_passes.any_above(blocks, w1, cap))
        return _Problem(
            a=a, s=s, s_total=s_total, K=2, cap=cap, mirror=mirror,
            L=mirror.constant(n), rule=self._eta_rule(),
            lazy=self._resolved_update(mirror) == "lazy", bound=bound,
            bounded=bound.capabilities.bounded, secondary=secondary, signature=signature,
            blocks=blocks,
            # the MadaBoost variant projects log s + min(0, log z) (equal weights cancel)
            log_s=(row_passes.log(blocks, s) if s is not None and self.variant == "madaboost"
                   else None),
        )

    def _setup_cluster(self, X, y, sample_weight, sample_group) -> _Problem:
        """``_setup`` for X a dask array: the rows on the workers, the same problem."""
        if self.warm_start and hasattr(self, "ensemble_"):
            raise NotDistributedError(
                "warm_start does not continue a fit on a dask array (the running state is "
                "not kept on the cluster after fit); set warm_start=False"
            )
        mirror = get_mirror_map(self.mirror)
        self._check_options(mirror, 2, sample_group is not None)
        data = cluster_data.cluster_classification_data(self, X, y, sample_weight,
                                                        self.block_size, labels="auto",
                                                        sample_group=sample_group)
        blocks = data.rows.blocks
        K = len(self.classes_)
        if K > 2:
            self._check_options(mirror, K, sample_group is not None)
            return self._multiclass_problem(
                data.ypm, data.s, K, data.group, mirror,
                self._bind_cluster(data.rows, "multiclass_correlate"), blocks, None)
        cap = None
        if self.smoothness is not None and (self.variant == "smooth"
                                            or data.group is not None):
            cap = float(self.smoothness) / blocks.n
            if data.group is not None:  # only the secondary set's weights (§3.2)
                cap = mirror_passes.group_caps(blocks, data.group, cap)
        return self._binary_problem(data.ypm, data.s, cap, mirror,
                                    self._bind_cluster(data.rows, "correlate"), data.group,
                                    blocks, None)

    def _eta_rule(self) -> StepRule:
        """η_t of each variant: Algorithm 1's ν γ_t / L (over √t for Theorem 2's
        max-margin variant), SparseBoost's eq. 36, MadaBoost's ν ε_t γ_t."""
        if self.variant == "sparse":
            return SparseBoostStep(0.0 if self.sparsity is None else float(self.sparsity))
        if self.variant == "madaboost":
            return MadaBoostStep()
        if self.variant == "max_margin":
            return MirrorAscentStep(InverseSqrtStep())
        return MirrorAscentStep()

    def _history_keys(self, problem: _Problem) -> tuple[str, ...]:
        return (
            "loss", "train_error", "edge", "step", "eta", "margin", "max_weight",
            "n_zero_weights", "bound", "time",
        )

    @staticmethod
    def _start(blocks: RowBlocks, s: Rows | None, s_total: float, K: int = 2) -> Rows:
        """w_1, the starting distribution over the cells: ``s / Σ s`` (exactly 1/N for
        equal weights), over the K − 1 cells of each row for K > 2.  Made where it is
        read, never kept in the problem: on a cluster it is a float64 array a row."""
        if K > 2:
            return mirror_cells.start(blocks, s, s_total, K - 1)
        if s is None:
            return blocks.full(1.0 / blocks.n)
        return mirror_passes.divided(blocks, s, s_total)

    def _initial_state(self, problem: _Problem):
        p = problem
        rng = seed_generator(self.random_state)
        w1 = self._start(p.blocks, p.s, p.s_total, p.K)
        if p.K > 2:
            z = mirror_passes.gradient(p.cells, p.mirror, w1) if p.lazy else None
            state = _State(w=w1, z=z, f=p.blocks.full(np.zeros(p.K)), t=0,
                           potential=0.0, rng=rng)
            return state, np.zeros(p.K)
        blocks, mass = p.blocks, 1.0
        if self.variant == "sparse":
            z, mass = w1, row_passes.total(blocks, w1)  # y_1 = w_1: the unnormalised state
        elif self.variant == "madaboost":
            z = blocks.full(0.0)  # log z = −a H_0 = 0
        elif p.lazy:
            z = mirror_passes.gradient(blocks, p.mirror, w1)  # ∇R(z_1) = ∇R(w_1)
        else:
            z = None
        query, _, _ = mirror_passes.query(blocks, w1, p.a)
        state = _State(w=w1, z=z, f=blocks.full(0.0), t=0, potential=0.0, rng=rng,
                       query=query, mass=mass, error=1.0)
        return state, 0.0

    # -- one round ------------------------------------------------------------------------
    def _round(self, problem: _Problem, state: _State, ensemble, t: int, budget: int):
        p = problem
        if p.K > 2:
            return self._multiclass_round(p, state, ensemble)
        n, blocks, nu = p.blocks.n, p.blocks, float(self.learning_rate)
        if self.variant == "madaboost" and state.error == 0.0:
            # ε_t, the training error of H_{t−1} (ties counted; ε_1 = 1), is 0: η_t = 0
            return RoundResult(state, stop=StopReason.ZERO_TRAINING_ERROR)
        # (a) the weak hypothesis on w_t (the query w_t · a came with the state), as a
        #     column u = a h / norm in [−1, 1] with γ_t = Σ w u ≥ 0 (negated if need be)
        h = p.bound.correlate(state.query, random_state=draw_seed(state.rng))
        col = SignedColumn.of(h, p.a, state.w, p.bounded, blocks)
        if isinstance(col, StopReason):
            return RoundResult(state, stop=col)
        gamma = col.edge
        # (b) the step η_t of the variant
        alpha = 0.0
        if self.variant == "sparse":
            view = RoundView(nu=nu, edge=gamma, mass=state.mass, n_samples=n)
            eta, alpha = p.rule(view, state.t), p.rule.l1(view)  # eq. 36, the ℓ1 factor
            potential = state.potential + eta * (gamma * state.mass - alpha) - n * (eta * eta) / 2
        elif self.variant == "madaboost":
            eta = p.rule(RoundView(nu=nu, edge=gamma, error=state.error), state.t)
            potential = state.potential + gamma**2
        else:
            eta = self._step(p, gamma, state.t)
            # η·η, not η**2: a float's ** raises OverflowError where · gives inf
            potential = state.potential + eta * gamma - p.L * (eta * eta) / 2
        # (c) the mirror step and the vote f += η_t h (signed, normalised)
        coef = eta * col.sign / col.norm
        mode = self.variant if self.variant in ("sparse", "madaboost") else (
            "lazy" if p.lazy else "active")
        # another round to come: the oracle may start on its query (on a cluster, the
        # histograms then come back with this pass's stats: a wait fewer a round)
        ahead = getattr(p.bound, "_prefetch", None) if budget > 1 else None
        log_norm, near = state.log_norm, state.near
        # the entropy map's lazy, uncapped round: (c), (d) and the next query in one pass,
        # the softmax's normaliser predicted from the column's two masses,
        # log Σ z_{t+1} = log Σ z_t + log Σ w_t e^(−η u)
        softmax = mode == "lazy" and p.cap is None and type(p.mirror) is EntropyMap
        log_mass = col.log_exp_mass(eta) if softmax else None
        if log_mass is not None and math.isfinite(log_norm + log_mass):
            step = mirror_passes.entropy_step(
                blocks, state.z, state.f, p.a, h.train_output, p.s, coef=coef,
                log_norm=log_norm + log_mass, prefetch=ahead)
            z, f, sums, w_next = step.z, step.f, step.sums, step.w
            query, top, zeros, log_norm = step.query, step.top, step.zeros, step.log_norm
        else:
            target, z, f, sums = mirror_passes.mirror_step(
                blocks, state.w, state.z, state.f, p.a, h.train_output, p.s,
                p.log_s, coef=coef, mode=mode, mirror=p.mirror,
                alpha_eta=alpha * eta)
            # (d) the projection back onto S (S_k): SparseBoost normalises its state y
            if self.variant == "sparse":
                w_next = (mirror_passes.divided(blocks, target, sums.mass) if sums.mass > 0.0
                          else blocks.full(0.0))
            elif softmax:  # (a column of more values: the normaliser for the next round)
                w_next, log_norm = kl_softmax_rows(blocks, target)
            elif type(p.mirror) is EuclideanMap:  # its first pivots near the last τ
                w_next, near = euclidean_simplex_rows_near(blocks, target, p.cap, near)
            else:
                w_next = p.mirror.project_rows(blocks, target,
                                               None if mode == "madaboost" else p.cap)
            query, top, zeros = mirror_passes.query(blocks, w_next, p.a, prefetch=ahead)
        term = (h.detach(), coef, col.norm)
        loss = sums.loss_mass / p.s_total
        l1 = ensemble.l1_norm(pending=(term,))
        record = {
            "loss": loss,
            "train_error": sums.wrong_mass / p.s_total,
            "edge": gamma,
            "step": eta,
            "eta": eta,
            "margin": sums.low / l1 if l1 > 0.0 else math.nan,
            "max_weight": top * n,
            "n_zero_weights": float(zeros),
            "bound": self._bound(p, potential),
        }
        stop = None
        if self.variant == "sparse" and zeros == n:
            stop = StopReason.ZERO_WEIGHTS
        elif col.u_min >= 1.0:
            # γ = 1: every example right with margin 1; the next distribution is the same
            # and so would every later hypothesis be.
            stop = StopReason.PERFECT_HYPOTHESIS
        new = _State(w=w_next, z=z, f=f, t=state.t + 1, potential=potential, rng=state.rng,
                     query=query, mass=sums.mass, error=loss, log_norm=log_norm,
                     near=near)
        return RoundResult(new, (term,), (record,), stop)

    def _step(self, p: _Problem, gamma: float, t: int) -> float:
        """Algorithm 1 (b): η_t = ν γ_t / L, over √(t + 1) for max-margin (Theorem 2),
        by the variant's :class:`~oracleboost.optim.steps.MirrorAscentStep` after t
        rounds.

        The one place Algorithm 1's step is chosen (standard, max-margin and smooth;
        binary and multiclass): η_t = artanh(γ_t) here turns the entropy map into
        AdaBoost."""
        return p.rule(RoundView(nu=float(self.learning_rate), edge=gamma, L=p.L), t)

    def _multiclass_round(self, p: _Problem, state: _State, ensemble):
        """The package's multiclass round over the cells (:mod:`.mirror_cells`)."""
        blocks, K, width = p.blocks, p.K, p.K - 1
        q, total = mirror_cells.row_masses(blocks, state.w, width)
        # the learner sees the row sums as example weights: maximise Σ q_i [h(x_i) = c_i]
        r = mirror_cells.query(blocks, q, p.a, total, K)
        h = p.bound.correlate(r, random_state=draw_seed(state.rng))
        D, pred, e, n_wrong = mirror_cells.directions(blocks, h.train_output, p.a, state.w,
                                                      width)
        if not e > 0.0:
            # No negation is available for a class vote: the weights would not move and
            # the same hypothesis would come back every round.
            return RoundResult(state, stop=StopReason.ZERO_EDGE)
        eta = self._step(p, e, state.t)
        target, z = mirror_cells.step_target(p.cells, p.mirror, state.w, state.z, D, eta,
                                             p.lazy)
        near = None
        if type(p.mirror) is EuclideanMap:  # its first pivots near the last τ
            w_next, near = euclidean_simplex_rows_near(p.cells, target, p.cap, state.near)
        else:
            w_next = p.mirror.project_rows(p.cells, target, p.cap)
        f, bad, wrong, low = mirror_cells.vote(blocks, state.f, pred, p.a, p.s, eta)
        term = (ArgmaxVote(h.detach(), K), eta, 1.0)
        l1 = ensemble.l1_norm(pending=(term,))
        top, zeros = mirror_cells.extremes(p.cells, w_next)
        record = {
            "loss": bad / p.s_total,
            "train_error": wrong / p.s_total,
            "edge": e,
            "step": eta,
            "eta": eta,
            "margin": low / l1 if l1 > 0.0 else math.nan,
            "max_weight": top * p.cells.n,
            "n_zero_weights": float(zeros),
            "bound": math.nan,
        }
        new = _State(w=w_next, z=z, f=f, t=state.t + 1, potential=math.nan, rng=state.rng,
                     near=near)
        stop = StopReason.PERFECT_HYPOTHESIS if n_wrong == 0 and e >= 1.0 else None
        return RoundResult(new, (term,), (record,), stop)

    # -- records --------------------------------------------------------------------------
    @staticmethod
    def _vote_margins(a: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The vote's margins (a f, or f_a − max_{k≠a} f_k) and where ``predict`` errs."""
        truth = a if f.ndim == 2 else (a > 0)
        return vote_margins(a, f), predicted_index(f) != truth

    def _eval_target(self, problem: _Problem, y, extra, where: str):
        index = self._class_index(y, where)
        a = np.where(index == 1, 1.0, -1.0) if problem.K == 2 else index
        return a, self._eval_weight(extra, y.shape[0], where)

    def _eval_metrics(self, problem: _Problem, target, weight, scores):
        margins, wrong = self._vote_margins(target, scores)
        return {"loss": weighted_error(margins <= 0, weight),
                "error": weighted_error(wrong, weight)}

    def _bound(self, p: _Problem, potential: float) -> float:
        """Theorems 1, 3, 4 (and 5, corrected) from the run's own η_t, γ_t."""
        if p.K > 2 or p.secondary is not None or not math.isfinite(potential):
            return math.nan
        if self.variant == "madaboost":
            if self.learning_rate != 1.0:
                return math.nan
            return min(1.0, math.sqrt(2.0 / potential)) if potential > 0 else 1.0
        # binary: s is None exactly when the weights are equal
        value = p.mirror.error_bound(potential, p.blocks.n, p.s is None)  # Theorem 1 (eqs. 15/18)
        if math.isnan(value):
            return value
        if self.variant == "smooth":
            value = max(1.0 / float(self.smoothness), value)
        return min(1.0, value)

    def _boost(self, problem, evals=(), fit_data=None):
        super()._boost(problem, evals, fit_data)
        if self._state_ is None:  # a fit on a cluster: the weights stayed on the workers
            self.weights_ = None
            return
        w = self._state_.w
        self.weights_ = w if problem.K == 2 else w.reshape(-1, problem.K - 1)

    # -- prediction (decision_function, predict: the mixin) -------------------------------
    @num_iteration_doc
    def predict_proba(self, X: ArrayLike, *, num_iteration: int | None = None) -> np.ndarray:
        """Each class's share of the weighted vote.

        Two classes: ``P(classes_[1]) = (1 + f(x)/‖λ‖₁)/2``, the fraction of the vote
        ``Σ_t η_t h_t(x)`` (each h in [−1, 1]) cast for the positive class; more
        classes: ``f_k(x) / Σ_k f_k(x)``, the share of the votes ``e_{argmax h_t(x)}``
        (uniform where no vote was cast).  A vote share, not a calibrated probability:
        wrap the booster in :class:`~sklearn.calibration.CalibratedClassifierCV` for one.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        num_iteration : int or None, default=None
            <num_iteration>

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            (A dask array when X is one.)
        """
        if is_dask_collection(X):
            return on_dask(self, functools.partial(self.predict_proba,
                                                   num_iteration=num_iteration), X)
        model = self._model_at(num_iteration)
        return vote_share(self._raw_of(model, X), model.l1_norm())

    def staged_predict_proba(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """:meth:`predict_proba` after each round.

        Yields
        ------
        ndarray of shape (n_samples, n_classes)
        """
        if is_dask_collection(X):
            yield from on_dask(self, self.staged_predict_proba, X, staged=True)
            return
        check_is_fitted(self, "ensemble_")  # (before the norms: NotFittedError, as elsewhere)
        for f, l1 in zip(self._staged_raw(X), self.ensemble_.l1_norms(), strict=True):
            yield vote_share(f, l1)
