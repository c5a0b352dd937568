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
:mod:`.maps` holding ∇R, its projections, L and Theorem 1's bound.  With the
entropy map, the lazy update and no cap, (c), (d) and the next query are one pass over
the rows: (d)'s normaliser ``log Σ z_{t+1} = log Σ z_t + log Σ w_t e^(−η_t u)`` comes
from the column's two masses, as AdaBoost's Z_t does (:func:`.passes.entropy_step`).
``learning_rate`` ν multiplies η_t, as the authors' R package ``maboost`` does with
``nu``.  The round is :mod:`.algorithm`'s; each variant is an object of
:mod:`.variants` (its η_t a rule of :mod:`oracleboost.optim.steps`:
``MirrorAscentStep``, ``SparseBoostStep``, ``MadaBoostStep``), the updates (c) and the
projections (d) are objects of :mod:`.updates`, all chosen once when a fit sets up.
The variants:

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
from collections.abc import Callable, Iterator, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from oracleboost._typing import ArrayLike, RandomStateLike
from oracleboost.boosters.mirror import cells as mirror_cells
from oracleboost.boosters.mirror import passes as mirror_passes
from oracleboost.boosters.mirror.algorithm import (
    MirrorProblem,
    MirrorState,
    binary_round,
    initial_state,
    multiclass_round,
    start,
)
from oracleboost.boosters.mirror.maps import MIRROR_MAPS, MirrorMap, get_mirror_map
from oracleboost.boosters.mirror.updates import default_projection
from oracleboost.boosters.mirror.variants import VARIANTS, MABoost, Variant, make_variant
from oracleboost.engine.backends import backend_for, equal_weights
from oracleboost.engine.base import BaseBooster, fit_context
from oracleboost.engine.classifier import (
    ScoreClassifierMixin,
    weighted_error,
)
from oracleboost.engine.eval_sets import documented, eval_parameters_doc
from oracleboost.engine.fit_data import fit_backend
from oracleboost.engine.input import data_signature
from oracleboost.engine.inspection import num_iteration_doc
from oracleboost.engine.rounds import seed_generator
from oracleboost.export.methods import ExportMixin
from oracleboost.optim import row_passes
from oracleboost.optim.votes import ArgmaxVote, predicted_index, vote_margins, vote_share
from oracleboost.oracles.base import BinaryOnlyOracleError, Oracle
from oracleboost.rows.blocks import DEFAULT_BLOCK_SIZE, RowBlocks
from oracleboost.rows.partitioned import Rows
from oracleboost.rows.subsample import PARAMETERS_DOC as _STOCHASTIC_PARAMETERS
from oracleboost.rows.subsample import RoundDraws, with_draw_seed

__all__ = ["MirrorBoostingClassifier", "ArgmaxVote"]

UPDATES = ("auto", "lazy", "active")


@documented(stochastic_parameters=_STOCHASTIC_PARAMETERS)
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
    <class weight parameters>
    <stochastic parameters>

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    ensemble_ : Ensemble
        Hypotheses with their vote weights η_t.
    intercept_ : float or ndarray of shape (n_classes,)
        0 (or zeros, one a class): the vote starts empty.
    weights_ : ndarray of shape (n_samples,) or (n_samples, n_classes − 1), or None
        The distribution w_{T+1} the next round would use (SparseBoost: y/‖y‖₁); None
        after a fit on a dask array or on the GPU (the weights stay where the rows are,
        and are freed).
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
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "subsample": [Interval(Real, 0, 1, closed="right")],
        "colsample_bytree": [Interval(Real, 0, 1, closed="right")],
    }

    #: Its multiclass rounds run on the GPU (the cells' passes have device twins:
    #: :mod:`oracleboost.cuda.class_stages`).
    _scores_by_class_on_device = True

    # The loss is the 0-1 training error: bounded, and not monotone under any variant's
    # theory (the bounds are regret bounds), so it is not watched for divergence.
    _watch_divergence = False

    #: why ``fit`` takes no ``init_score`` (:func:`.fit_context` refuses it with this)
    _no_offset_reason = (
        "mirror ascent moves a distribution over the examples that starts uniform, and "
        "its guarantees and recorded margin are those of its own vote, normalised by "
        "the sum of its steps, which a per-row starting score would not scale with; "
        "CoordinateBoostingClassifier and FunctionalGradientClassifier take one")

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
        class_weight: dict | str | None = None,
        subsample: float = 1.0,
        colsample_bytree: float = 1.0,
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
        self.class_weight = class_weight
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # SparseBoost and the MadaBoost-type variant are binary (Algorithms 2 and 3), and
        # so is MABoost over an oracle without label-coded answers (K > 2 asks for them)
        tags.classifier_tags.multi_class = (
            VARIANTS.get(self.variant, MABoost).algorithm_1
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

    def _variant(self) -> Variant:
        """The variant object ``variant`` names (:mod:`.variants`), with its step rule.

        The one place the box's step (b) is chosen: a subclass may return another
        variant, e.g. ``MABoost(rule=...)`` with a rule giving η_t = ν artanh(γ_t),
        which turns the entropy map into AdaBoost."""
        return make_variant(self.variant, self.smoothness, self.sparsity)

    def _resolved_update(self, mirror: MirrorMap) -> str:
        if self.update != "auto":
            return self.update
        return self._variant().default_update or mirror.default_update

    def _check_options(self, mirror: MirrorMap, K: int, grouped: bool) -> None:
        name = type(self).__name__
        update = self._resolved_update(mirror)
        variant = self._variant()
        if not variant.accepts(mirror, update):  # SparseBoost, the MadaBoost variant
            raise ValueError(
                f"{name}: variant={self.variant!r} is {variant.box}; use "
                f"mirror={variant.mirror_type.name!r} (and update='auto' or "
                f"{variant.default_update!r}); got mirror={self.mirror!r}, "
                f"update={self.update!r}"
            )
        if (variant.capped or grouped) and self.smoothness is None:
            what = f"variant={self.variant!r}" if variant.capped else "sample_group"
            raise ValueError(f"{name}: {what} needs smoothness=k (weights capped at k/N)")
        if self.smoothness is not None and not (variant.capped or grouped):
            raise ValueError(
                f"{name}: smoothness={self.smoothness} caps weights only with "
                "variant='smooth' or with fit(..., sample_group=...); got "
                f"variant={self.variant!r} and no sample_group"
            )
        if self.sparsity is not None and "sparsity" not in variant.parameters:
            raise ValueError(
                f"{name}: sparsity={self.sparsity} is SparseBoost's; it needs "
                f"variant='sparse', got {self.variant!r}"
            )
        if grouped and not variant.algorithm_1:
            raise ValueError(
                f"{name}: sample_group (the dataset-combining set S_c) works with the "
                f"standard, smooth and max_margin variants; got variant={self.variant!r}"
            )
        if K > 2 and not variant.algorithm_1:
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

    def _setup(self, X, y, sample_weight, sample_group) -> MirrorProblem:
        backend = fit_backend(X, self._oracle())
        self._refuse_warm_start_on(backend)
        mirror = get_mirror_map(self.mirror)
        self._check_options(mirror, 2, sample_group is not None)  # (before any data moves)
        data = backend.classification_data(self, X, y, sample_weight, self.block_size,
                                           labels="auto", sample_group=sample_group)
        blocks, group, K = data.rows.blocks, data.group, len(self.classes_)
        signature = (data_signature(data.rows.X, data.ypm, data.s, group)
                     if backend.can("all_rows") else None)
        draws = RoundDraws.of(self.subsample, self.colsample_bytree, data.rows.X.shape[1])
        if draws is not None:
            draws.check_oracle(self._oracle())
        if K > 2:
            self._check_options(mirror, K, group is not None)
            problem = self._multiclass_problem(
                data.ypm, data.s, K, group, mirror,
                self._bind_rows(data.rows, "multiclass_correlate"), blocks, signature)
            problem.draws = draws
            return problem
        cap = None
        if self.smoothness is not None and (self._variant().capped or group is not None):
            cap = float(self.smoothness) / blocks.n
            if group is not None:  # only the secondary set's weights (§3.2)
                cap = mirror_passes.group_caps(blocks, group, cap)
        problem = self._binary_problem(data.ypm, None if equal_weights(data.s) else data.s,
                                       cap, mirror, self._bind_rows(data.rows, "correlate"),
                                       group, blocks, signature)
        problem.draws = draws
        return problem

    def _multiclass_problem(self, a: Rows, s: Rows | None, K: int, secondary: Rows | None,
                            mirror: MirrorMap, bound, blocks: RowBlocks,
                            signature: str | None) -> MirrorProblem:
        """The multiclass problem (in memory or on a cluster: ``blocks``): the cells'
        blocks, the starting distribution over the cells and their caps."""
        n, width = blocks.n, K - 1
        cells = mirror_cells.cell_blocks(blocks, width)
        s_total = float(n) if s is None else row_passes.total(blocks, s)
        cap = None
        if self.smoothness is not None and (self._variant().capped or secondary is not None):
            w1 = start(blocks, s, s_total, K)
            cell_cap = float(self.smoothness) / n / width
            if secondary is None:
                cap = cell_cap
                self._check_cap(mirror_cells.extremes(cells, w1)[0] > cap)
            else:
                cap = mirror_cells.cell_caps(blocks, secondary, cell_cap, width)
                self._check_cap(mirror_passes.any_above(cells, w1, cap))
        return MirrorProblem(
            a=a, s=s, s_total=s_total, K=K, cap=cap, mirror=mirror,
            L=mirror.constant(n * width), **self._pieces(mirror, cap, True), bound=bound,
            bounded=bound.capabilities.bounded, secondary=secondary,
            signature=signature, blocks=blocks, cells=cells,
            vote=functools.partial(ArgmaxVote, n_classes=K),
        )

    def _check_cap(self, exceeded: bool) -> None:
        if exceeded:
            raise ValueError(
                f"smoothness={self.smoothness}: the starting distribution (from "
                "sample_weight) already exceeds the cap k/N; raise smoothness"
            )

    def _binary_problem(self, a, s, cap, mirror: MirrorMap, bound, secondary, blocks,
                        signature) -> MirrorProblem:
        """The binary problem from rows in memory or on a cluster (``blocks``): ``s``
        None means equal weights, and then w_1 is exactly 1/N."""
        n = blocks.n
        s_total = float(n) if s is None else row_passes.total(blocks, s)
        if cap is not None:
            w1 = start(blocks, s, s_total)
            self._check_cap(row_passes.peak(blocks, w1) > cap if isinstance(cap, float)
                            else mirror_passes.any_above(blocks, w1, cap))
        pieces = self._pieces(mirror, cap, False)
        return MirrorProblem(
            a=a, s=s, s_total=s_total, K=2, cap=cap, mirror=mirror,
            L=mirror.constant(n), **pieces, bound=bound,
            bounded=bound.capabilities.bounded, secondary=secondary, signature=signature,
            blocks=blocks,
            # the MadaBoost variant projects log s + min(0, log z) (equal weights cancel)
            log_s=(row_passes.log(blocks, s) if s is not None and pieces["update"].log_weights
                   else None),
        )

    def _pieces(self, mirror: MirrorMap, cap: object, multiclass: bool) -> dict[str, Any]:
        """The box's pieces, made once a fit: the variant (b), its update (c) and the
        projection (d) (:mod:`.variants`, :mod:`.updates`), and ν."""
        variant = self._variant()
        update = variant.update(self._resolved_update(mirror) == "lazy")
        # over the cells the round projects by the map (no predicted softmax)
        projection = default_projection(mirror) if multiclass else update.projection(mirror, cap)
        return {"variant": variant, "update": update, "projection": projection,
                "nu": float(self.learning_rate)}

    def _history_keys(self, problem: MirrorProblem) -> tuple[str, ...]:
        return (
            "loss", "train_error", "edge", "step", "eta", "margin", "max_weight",
            "n_zero_weights", "bound", "time",
        )

    def _initial_state(self, problem: MirrorProblem):
        state, intercept = initial_state(problem, seed_generator(self.random_state))
        return self._resumed(problem, state), intercept

    def _resumed(self, problem: MirrorProblem, state: MirrorState) -> MirrorState:
        """``state`` with the seed of stochastic boosting's draws (a warm start goes on
        with the seed of the fit it continues)."""
        return with_draw_seed(state, problem.draws, self.random_state)

    # -- one round: Algorithm 1 (algorithm.py) ----------------------------------------------
    def _round(self, problem: MirrorProblem, state: MirrorState, ensemble, t: int, budget: int):
        if problem.K > 2:
            return multiclass_round(problem, state, ensemble, t)
        return binary_round(problem, state, ensemble, budget, t)

    # -- records --------------------------------------------------------------------------
    @staticmethod
    def _vote_margins(a: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The vote's margins (a f, or f_a − max_{k≠a} f_k) and where ``predict`` errs."""
        truth = a if f.ndim == 2 else (a > 0)
        return vote_margins(a, f), predicted_index(f) != truth

    def _eval_target(self, problem: MirrorProblem, y, extra, where: str):
        index = self._class_index(y, where)
        a = np.where(index == 1, 1.0, -1.0) if problem.K == 2 else index
        return a, self._eval_weight(extra, y.shape[0], where)

    def _eval_metrics(self, problem: MirrorProblem, target, weight, scores):
        margins, wrong = self._vote_margins(target, scores)
        return {"loss": weighted_error(margins <= 0, weight),
                "error": weighted_error(wrong, weight)}

    def _boost(self, problem, evals=(), fit_data=None):
        super()._boost(problem, evals, fit_data)
        if self._state_ is None:  # a fit on a cluster or a GPU: the weights stayed there
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
        if (backend := backend_for(X)) is not None:
            return backend.predict(
                self, functools.partial(self.predict_proba, num_iteration=num_iteration), X)
        model = self._model_at(num_iteration)
        return vote_share(self._raw_of(model, X), model.l1_norm())

    def staged_predict_proba(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """:meth:`predict_proba` after each round.

        Yields
        ------
        ndarray of shape (n_samples, n_classes)
        """
        if (backend := backend_for(X)) is not None:
            yield from backend.predict(self, self.staged_predict_proba, X, staged=True)
            return
        check_is_fitted(self, "ensemble_")  # (before the norms: NotFittedError, as elsewhere)
        for f, l1 in zip(self._staged_raw(X), self.ensemble_.l1_norms(), strict=True):
            yield vote_share(f, l1)
