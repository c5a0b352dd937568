"""Fast margin maximization by dual acceleration (Ji, Srebro & Telgarsky 2021).

Data ``z_i = −y_i x_i / s`` (rows of Z; ``s = max_i ‖x_i‖₂`` so that ‖z_i‖ ≤ 1, the
paper's assumption, undone in ``coef_``), no intercept unless asked.  Here ``x_i`` is the
vector of a finite class's columns at example i (``LinearOracle``: the features;
``MatrixOracle``: h_1(x_i), …, h_J(x_i)), read only through the oracle's products
``Z w`` and ``Zᵀ q``.  Algorithm 1 (momentum form, eq. 1.1; L94–103)::

    w_0 = g_{−1} = 0,  q_0 = uniform
    for t = 0, 1, …:
        g_t     = β_t (g_{t−1} + Zᵀ q_t)
        w_{t+1} = w_t − θ_t (g_t + Zᵀ q_t)
        q_{t+1} = ∇ψ(Z w_{t+1})          (exponential loss: softmax(Z w_{t+1}))

with θ_t = 1 and β_t = t/(t+1) (Theorem 3.1: margin gap Õ(1/t²)).  It is Nesterov's
method on the dual φ(q) = ‖Zᵀq‖²/2 over the simplex (Sec. 3.2).  The baselines:
normalized gradient descent (β ≡ 0; θ = 1 or 1/√(t+1)), gradient descent on the risk
(η = 1), the batch perceptron (w ← w − z_i for the worst example i, no projection: the
paper gives no step, and this variant did best in the note's runs), and Algorithm 2
(``method="stochastic"``: z_{i_t} with i_t ~ q_t in place of Zᵀq_t; heuristic β_t =
t/(t+1), θ = 1, or the proven β = 0, θ = √(ln n / T); L277–297).  Every method is a
:class:`MomentumMethod`: the direction that stands for Zᵀq_t, and θ_t and β_t as rules
of :mod:`.steps`; the names above are presets (:data:`METHODS`).  The round is
:func:`.algorithm.accelerated_round`.

ψ(ξ) = ℓ⁻¹(Σ_i ℓ(ξ_i)) (eq. 2.1) and q = ∇ψ(Zw) are computed in log space through the
loss' ``log_phi``/``log_neg_dphi``: norms ‖w‖ of 1e6 and more (‖w_t‖ grows like γ̄t²/4)
never overflow.  The logistic loss has ρ = n (L317): its proven step is θ = 1/n;
``learning_rate`` defaults to 1 for both losses, and the paper calls the 1/n "probably
due to the aggressive initial step size".

Certificates (weak duality, Lemma A: γ̄ = min_{q∈Δ} ‖Zᵀq‖): every round records the ℓ2
margin ``γ(w) = −max_i (Zw)_i / ‖w‖`` and the upper bound min(‖Zᵀq_t‖, 2‖g_t‖/t) on γ̄
(``2g_t/t = Zᵀμ_t``, Lemma 3.2; both divided by the dual point's mass where it is not 1:
the logistic loss, whose ∇ψ with weights below 1 has ‖∇ψ‖₁ < 1, and Algorithm 2, whose
g averages sampled rows), kept as a running minimum (every value bounds γ̄); the
fit stops when their gap falls below ``tol`` (``"gap_closed"``), and reports
``"not_separable"`` when the upper bound itself falls below ``tol`` with a margin ≤ 0.
The paper's sign slips (L152, L432: Zᵀq̄ = −γ̄ū) are fixed here as in the note.

Reference: Ji, Z., Srebro, N. & Telgarsky, M. (2021). Fast margin maximization via dual
acceleration. ICML.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from oracleboost._numerics import class_probabilities
from oracleboost._typing import ArrayLike, RandomStateLike
from oracleboost.boosters.accelerated.algorithm import (
    STEPS,
    AcceleratedProblem,
    AcceleratedState,
    accelerated_round,
)
from oracleboost.engine.backends import Backend
from oracleboost.engine.base import BaseBooster, fit_context, loss_constraint
from oracleboost.engine.classifier import (
    ScoreClassifierMixin,
    margin_metrics,
    weighted_error,
    weighted_mean_of_logs,
)
from oracleboost.engine.eval_sets import documented, eval_parameters_doc
from oracleboost.engine.fit_data import fit_backend
from oracleboost.engine.input import data_signature
from oracleboost.engine.model import KernelModel, LinearModel
from oracleboost.export.methods import ExportMixin
from oracleboost.export.schema import persisted
from oracleboost.losses import MarginLoss, get_loss
from oracleboost.optim import row_passes
from oracleboost.optim.steps import (
    ConstantMomentum,
    ConstantStep,
    HorizonStep,
    InverseSqrtStep,
    Momentum,
    NesterovMomentum,
    RoundView,
    Schedule,
    check_instance,
)
from oracleboost.oracles.base import Hypothesis, Oracle, OracleCapabilityError
from oracleboost.rows.blocks import DEFAULT_BLOCK_SIZE, RowBlocks
from oracleboost.rows.partitioned import Rows

__all__ = ["AcceleratedMarginClassifier", "MomentumMethod", "PairwiseKernel", "METHODS",
           "PROVEN_STOCHASTIC"]

#: What stands for Zᵀq_t in the momentum form (see :class:`MomentumMethod`).
DIRECTIONS = tuple(STEPS)  # ("batch", "gradient", "worst_row", "sampled_row")

@dataclass(frozen=True)
class MomentumMethod:
    """One method of the momentum form (Ji, Srebro & Telgarsky 2021, eq. 1.1; L94–103)::

        g_t     = β_t (g_{t−1} + d_t)
        w_{t+1} = w_t − θ_t (g_t + d_t)

    A frozen dataclass (picklable, equal by value, shown by ``repr``) that
    ``AcceleratedMarginClassifier(method=...)`` takes as it takes the names of
    :data:`METHODS`.

    Parameters
    ----------
    direction : {"batch", "gradient", "worst_row", "sampled_row"}, default="batch"
        d_t: ``Zᵀq_t`` (Algorithm 1, normalized gradient descent); the risk's gradient
        ``(ℓ'(ψ)/n) Zᵀq_t`` (gradient descent, without momentum); the row z_i of the
        worst example (the batch perceptron); a row i_t ~ q_t (Algorithm 2).
    theta : Schedule, default=ConstantStep()
        θ_t, from the estimator's ``learning_rate``: ``ConstantStep()`` (Theorem 3.1's
        θ = 1), ``InverseSqrtStep()`` (θ_t = 1/√(t + 1)), ``HorizonStep()`` (Theorem
        4.1's √(ln n / T)).
    beta : Momentum, default=NesterovMomentum()
        β_t: ``NesterovMomentum()`` (t/(t + 1), Theorem 3.1) or ``ConstantMomentum(β)``
        (0: no momentum).
    """

    direction: str = "batch"
    theta: Schedule = ConstantStep()
    beta: Momentum = NesterovMomentum()

    def __post_init__(self):
        if self.direction not in DIRECTIONS:
            raise ValueError(
                f"MomentumMethod: direction must be one of {DIRECTIONS}; got "
                f"{self.direction!r}"
            )
        check_instance(self, "theta", self.theta, Schedule)
        check_instance(self, "beta", self.beta, Momentum)
        if self.direction == "gradient" and self.beta != ConstantMomentum(0.0):
            raise ValueError(
                "MomentumMethod: beta must be ConstantMomentum(0.0) for "
                f"direction='gradient' (gradient descent on the risk); got {self.beta!r}"
            )


_NONE = ConstantMomentum()

#: The methods by name: Algorithm 1 and its baselines, and Algorithm 2 with the
#: heuristic parameters of Figs. 3–4 (θ = 1, β_t = t/(t + 1)).
METHODS: dict[str, MomentumMethod] = {
    "accelerated": MomentumMethod(),
    "normalized": MomentumMethod(beta=_NONE),
    "normalized_sqrt": MomentumMethod(theta=InverseSqrtStep(), beta=_NONE),
    "gradient_descent": MomentumMethod("gradient", beta=_NONE),
    "perceptron": MomentumMethod("worst_row", beta=_NONE),
    "stochastic": MomentumMethod("sampled_row"),
}

#: Algorithm 2 with Theorem 4.1's parameters (``stochastic_schedule="proven"``).
PROVEN_STOCHASTIC = MomentumMethod("sampled_row", HorizonStep(), _NONE)


@persisted
class PairwiseKernel:
    """A picklable kernel ``k(A, B)``: a callable, or a name of
    :func:`sklearn.metrics.pairwise.pairwise_kernels` with its parameters (a fitted
    kernel model's ``kernel``: stored models hold it)."""

    def __init__(self, kernel: str | Callable[..., ArrayLike], params: dict | None):
        self.kernel, self.params = kernel, dict(params or {})

    def __call__(self, A: ArrayLike, B: ArrayLike) -> np.ndarray:
        if callable(self.kernel):
            G = self.kernel(A, B, **self.params)
        else:
            from sklearn.metrics.pairwise import pairwise_kernels

            G = pairwise_kernels(A, B, metric=self.kernel, **self.params)
        return np.asarray(G, dtype=np.float64)


@documented(
    "validation_tol", " (scikit-learn's ``tol``; here ``tol`` is the certificate's gap)"
)
class AcceleratedMarginClassifier(ExportMixin, ScoreClassifierMixin, ClassifierMixin,
                                  BaseBooster):
    """ℓ2 margin maximization by dual acceleration (Ji, Srebro & Telgarsky 2021).

    ``predict_proba`` maps the scores through the loss' link: σ(2f) for the exponential
    loss, σ(f) for the logistic; the softmax of the class scores for more classes.  As
    the margin is maximised ‖w‖ grows without bound, so the probabilities tend to 0 and
    1: they describe the current iterate, not a calibrated model.

    Parameters
    ----------
    oracle : Oracle, default=None
        A finite class that answers ``Z w`` and ``Zᵀ q`` (capability
        ``correlation_vector``): ``LinearOracle()`` (the default: x's coordinates) or
        ``MatrixOracle(H)`` (the columns of H, a boosting dictionary).  Other oracles are
        refused: the method needs the whole correlation vector every step.
    method : {"accelerated", "normalized", "normalized_sqrt", "gradient_descent", \
            "perceptron", "stochastic"} or MomentumMethod, default="accelerated"
        Algorithm 1 (θ_t = 1, β_t = t/(t+1)); normalized GD with θ = 1 or θ = 1/√(t+1);
        gradient descent on the risk (η = 1); the batch perceptron; Algorithm 2.  Each
        name stands for a :class:`MomentumMethod` (:data:`METHODS`); give one for other
        θ_t and β_t, e.g. ``MomentumMethod(theta=InverseSqrtStep())``.
    loss : {"exponential", "logistic"}, default="exponential"
    n_estimators : int, default=1000
        Steps.
    learning_rate : float, default=1.0
        θ (η for gradient descent, the perceptron's step).  For the logistic loss the
        proven step is 1/n (ρ = n, L317); 1 works in practice (note §4.10).
    tol : float, default=1e-6
        Stop when the certificate's gap, upper bound − margin, is below ``tol``.
    stochastic_schedule : {"heuristic", "proven"}, default="heuristic"
        Algorithm 2's parameters when ``method="stochastic"``: β_t = t/(t+1), θ =
        ``learning_rate`` (Figs. 3–4), or β = 0, θ = √(ln n / n_estimators) (Theorem
        4.1; :data:`PROVEN_STOCHASTIC`).
    fit_intercept : bool, default=False
        Append a constant column (the paper has no bias).
    kernel : {"linear", "rbf", "poly", "sigmoid", "laplacian", "cosine"}, callable or \
            None, default=None
        The kernel form (L275, note §1.7): ``w = Zᵀa`` is held by its dual coefficients
        a, and every product with Z goes through the Gram matrix ``K_ij = y_i y_j
        k(x_i, x_j) / scale²`` (computed once: n² memory; scale² = max_i k(x_i, x_i)).
        Algorithm 2 then reads one column of K per step.  Binary only, no intercept,
        and ``oracle`` must be None.
    kernel_params : dict or None, default=None
        Parameters of a named kernel (``gamma``, ``degree``, …) or of the callable.
    random_state : int, RandomState or None, default=None
        Algorithm 2's sampling: one uniform draw u a step, and the row where the
        running mass of q_t (each lane of rows in row order, the lanes' masses added in
        order) passes u Σq.
    n_jobs : int or None, default=None
        Threads of the booster's own passes over the rows (the scores, the dual point),
        counted as LightGBM counts ``num_threads``: ``None`` is ``OMP_NUM_THREADS`` if
        set, else every CPU the process may use; ``-1`` all CPUs.  The products with the
        columns run on the oracle's own ``n_jobs`` (``LinearOracle(n_jobs=...)``).  The
        fit does not depend on it, bit for bit.
    block_size : int, default=65536
        Rows of a block (:mod:`oracleboost.rows.blocks`): sums over the rows are made by
        lanes of at most 4,096 rows, each in row order, the lanes added in order.  The
        bits of a fit depend on it (the order of the sums); they do not depend on
        ``n_jobs``.
    verbose : int, default=0
    warm_start : bool, default=False
        Continue the fitted steps up to ``n_estimators`` on the same data.  A pickle or
        skops file of the fitted booster keeps the running state a warm start continues
        from only when it was fitted with ``warm_start=True`` (otherwise a warm start
        after loading fits anew, with a ``BoostingWarning``).
    <early stopping parameters>
    <class weight parameters>

    Attributes
    ----------
    coef_ : ndarray of shape (n_columns,)
        The linear predictor in the caller's scale (features, or the columns of H).
    intercept_ : float or ndarray of shape (n_classes,)
        The bias, in the caller's scale (0 without ``fit_intercept``).
    scale_ : float
        ``max_i ‖x_i‖₂``: the algorithm runs on x / ``scale_``.
    history_ : dict of ndarray
        Per step: ``loss`` (the risk R(w), and ``log_loss``), ``edge`` ‖Zᵀq_t‖, ``step``
        θ_t, ``margin`` γ(w_{t+1}) (ℓ2, in the scaled space: multiply by ``scale_`` for
        the caller's units), ``margin_upper_bound`` (the running minimum of ‖Zᵀq_t‖ and
        2‖g_t‖/t), ``momentum_bound`` (2‖g_t‖/t = ‖Zᵀμ_t‖; NaN without momentum), ``gap``
        (upper bound − margin), ``train_error``, ``time``.
    stop_reason_ : StopReason
    <validation attributes>

    References
    ----------
    Ji, Z., Srebro, N. & Telgarsky, M. (2021). Fast margin maximization via dual
    acceleration. ICML.

    Examples
    --------
    The ℓ2 maximum margin of two digits, with its certificate closing on it:

    >>> from sklearn.datasets import load_digits
    >>> from oracleboost.boosters import AcceleratedMarginClassifier
    >>> X, y = load_digits(n_class=2, return_X_y=True)
    >>> acc = AcceleratedMarginClassifier(n_estimators=1000).fit(X, y)
    >>> h = acc.history_
    >>> round(float(h["margin"][-1]), 3), round(float(h["margin_upper_bound"][-1]), 3)
    (0.122, 0.122)
    >>> bool(h["gap"][-1] < 1e-4), acc.score(X, y)
    (True, 1.0)
    """

    _parameter_constraints: dict = {
        **BaseBooster._parameter_constraints,
        "method": [StrOptions(set(METHODS)), MomentumMethod],
        "loss": loss_constraint(MarginLoss),
        "tol": [Interval(Real, 0, None, closed="left")],
        "stochastic_schedule": [StrOptions({"heuristic", "proven"})],
        "fit_intercept": ["boolean"],
        "kernel": [StrOptions({"linear", "rbf", "poly", "sigmoid", "laplacian", "cosine"}),
                   callable, None],
        "kernel_params": [dict, None],
        "validation_tol": [Interval(Real, 0, None, closed="left")],
        "n_jobs": [Integral, None],
        "block_size": [Interval(Integral, 1, None, closed="left")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    # The margin, not the risk, is what this booster drives; the risk of the
    # accelerated method is not monotone (momentum).
    _watch_divergence = False
    _default_query = "correlation_vector"  # LinearOracle: the coordinates of x
    # its products run over the whole column matrix (bound.columns(), dense) or a Gram
    # matrix: sparse X is refused, naming X.toarray()
    _sparse_capable = False

    #: why ``fit`` takes no ``init_score`` (:func:`.fit_context` refuses it with this)
    _no_offset_reason = (
        "it maximises the l2-normalised margin of its own weights, -max_i (Zw)_i / ||w||, "
        "which a per-row starting score would not scale with; "
        "CoordinateBoostingClassifier and FunctionalGradientClassifier take one")

    def __init__(
        self,
        oracle: Oracle | None = None,
        *,
        method: str | MomentumMethod = "accelerated",
        loss: str | MarginLoss = "exponential",
        n_estimators: int = 1000,
        learning_rate: float = 1.0,
        tol: float = 1e-6,
        stochastic_schedule: str = "heuristic",
        fit_intercept: bool = False,
        kernel: str | Callable[..., ArrayLike] | None = None,
        kernel_params: dict | None = None,
        random_state: RandomStateLike = None,
        n_jobs: int | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        verbose: int = 0,
        warm_start: bool = False,
        n_iter_no_change: int | None = None,
        validation_fraction: float | None = 0.1,
        validation_tol: float = 1e-4,
        class_weight: dict | str | None = None,
    ) -> None:
        self.oracle = oracle
        self.method = method
        self.loss = loss
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.tol = tol
        self.stochastic_schedule = stochastic_schedule
        self.fit_intercept = fit_intercept
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.block_size = block_size
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.validation_tol = validation_tol
        self.class_weight = class_weight

    # -- fit ------------------------------------------------------------------------------
    @fit_context
    @eval_parameters_doc
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        eval_set: Sequence[tuple[ArrayLike, ArrayLike]] | None = None,
        eval_sample_weight: Sequence[ArrayLike | None] | None = None,
        eval_metric: str | Callable | Sequence | dict | None = None,
        eval_names: Sequence[str] | None = None,
    ) -> AcceleratedMarginClassifier:
        """Run up to ``n_estimators`` steps.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            (For ``MatrixOracle``, row indices into its matrix.)
        y : array-like of shape (n_samples,)
            Two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the risk ``Σ s_i ℓ(⟨w, z_i⟩) / Σ s_i`` and of the dual
            (q_0 ∝ s): an integer weight equals repeating the row.  They change the
            path, not the max margin (a minimum over the rows of positive weight).
        eval_set : list of (X, y) pairs, default=None
            Sets whose risk and error are recorded after every step, as
            ``history_["val_loss_0"]``, ``history_["val_error_0"]``, …
            In a ``Pipeline`` (with metadata routing) the sets reach the booster as
            given, not through the steps before it, as LightGBM's do: their curves are
            then those of untransformed rows.  Transform them first, or hold out rows
            with ``validation_fraction`` (split after the steps).
        eval_sample_weight : list of array-like or None, default=None
            The weights of each eval set's risk and error.
        <eval parameters>
        """
        return self._fit_rounds(
            X, y, sample_weight, eval_set=eval_set, eval_rows=eval_sample_weight,
            eval_metric=eval_metric, eval_names=eval_names
        )

    def _early_stopping_tol(self) -> float:
        return float(self.validation_tol)  # ``tol`` is the certificate's gap here

    def _eval_target(self, problem: AcceleratedProblem, y, extra, where: str):
        index = self._class_index(y, where)
        target = np.where(index == 1, 1.0, -1.0) if problem.K == 2 else index
        return target, self._eval_weight(extra, y.shape[0], where)

    def _eval_metrics(self, problem: AcceleratedProblem, target, weight, scores):
        """The risk of the scores (binary: Σ s ℓ(−y f); multiclass: the cells
        ℓ((f_j − f_c)/√2) of Sec. 5.2, summed per row) and ``predict``'s error."""
        if problem.K == 2:
            return margin_metrics(problem.loss, target, scores, weight)
        rows = np.arange(scores.shape[0])
        cells = (scores[rows, target][:, None] - scores) / math.sqrt(2.0)
        cells[rows, target] = np.inf  # no row of Z: φ(∞) = 0
        log_cells = problem.loss.log_phi(cells)
        top = log_cells.max(axis=1)
        safe = np.where(np.isfinite(top), top, 0.0)
        per_row = safe + np.log(np.exp(log_cells - safe[:, None]).sum(axis=1))
        return {
            "loss": weighted_mean_of_logs(per_row, weight),
            "error": weighted_error(np.argmax(scores, axis=1) != target, weight),
        }

    #: The logistic ψ = φ⁻¹(Σ s ℓ) sums the rows' losses: an integer weight is a repeated
    #: row, so the weights' scale is part of the problem (kept as given; the risk is
    #: computed in log space, which takes any scale).
    _scale_free_weights = False

    def _method(self) -> MomentumMethod:
        if isinstance(self.method, MomentumMethod):
            return self.method
        if self.method == "stochastic" and self.stochastic_schedule == "proven":
            return PROVEN_STOCHASTIC
        return METHODS[self.method]

    def _view(self, n: int) -> RoundView:
        return RoundView(nu=float(self.learning_rate), n_samples=n, horizon=self.n_estimators)

    def _setup(self, X, y, sample_weight) -> AcceleratedProblem:
        name = type(self).__name__
        theta = self._method().theta
        if theta.uses_horizon and self.warm_start and hasattr(self, "_state_"):
            if self._horizon_ != self.n_estimators:
                raise ValueError(
                    f"{name}: the step {theta!r} (stochastic_schedule='proven') is "
                    f"√(ln n / T) with the horizon T = n_estimators fixed at "
                    f"{self._horizon_} (Theorem 4.1); a warm start cannot change it. Fit "
                    "anew with the longer horizon."
                )
        self._horizon_ = self.n_estimators
        backend = fit_backend(X, self._oracle())
        if self.kernel is not None:
            backend.refuse("all_rows", f"{name}'s kernel form (the n × n Gram matrix)",
                           "use the linear form (kernel=None, LinearOracle or "
                           "MatrixOracle)")
            return self._setup_kernel(backend, X, y, sample_weight)
        self._refuse_warm_start_on(backend)
        oracle = self._oracle()
        if not oracle.capabilities.correlation_vector:
            raise OracleCapabilityError(
                f"{name} needs the whole correlation vector Zᵀq every step: an oracle of a "
                "finite class with the correlation_vector capability, such as "
                f"LinearOracle() or MatrixOracle(H); {type(oracle).__name__} is not one"
            )
        data = backend.classification_data(self, X, y, sample_weight, self.block_size,
                                           scale_free=False, labels="auto")
        blocks, ypm = data.rows.blocks, data.ypm
        bound = self._bind_rows(data.rows, "correlation_vector")
        extra = float(self.fit_intercept)
        scale = self._scale(functools.partial(bound.largest_row_norm, extra),
                            lambda: bound.peak)
        s = blocks.full(1.0) if data.s is None else data.s
        signature = (data_signature(data.rows.X, ypm, s, self.fit_intercept)
                     if backend.can("all_rows") else None)
        return self._columns_problem(ypm, len(self.classes_), s, blocks, bound, scale,
                                     bound.n_columns, lambda i: bound.row(i, ypm), signature)

    def _columns_problem(self, ypm: Rows, K: int, s: Rows, blocks: RowBlocks, bound,
                         scale: float, J: int, row_of: Callable[[int], tuple],
                         signature: str | None) -> AcceleratedProblem:
        """The problem over a finite class's columns (in memory or on a cluster)."""
        return AcceleratedProblem(
            y=ypm,
            K=K,
            s=s,
            log_s=row_passes.log(blocks, s),
            s_total=row_passes.total(blocks, s),
            n=blocks.n,
            blocks=blocks,
            bound=bound,
            scale=scale,
            fit_intercept=bool(self.fit_intercept),
            loss=get_loss(self.loss, MarginLoss),
            method=self._method(),
            view=self._view(blocks.n),
            J=J,
            row_of=row_of,
            signature=signature,
        )

    def _scale(self, norm_of: Callable[[float | None], float],
               peak_of: Callable[[], float]) -> float:
        """``scale_ = max_i ‖x_i‖₂`` (with the intercept's 1) from ``norm_of(peak)``
        (:func:`~oracleboost._numerics.largest_row_norm` of the columns) and
        ``peak_of()`` (max |x|), for rows whose squares overflow."""
        name = type(self).__name__
        scale = norm_of(None)
        if not math.isfinite(scale):
            # entries beyond ~1e154 overflow their squares: the norms of H / max|H|
            peak = peak_of()
            scale = norm_of(peak)
            if not math.isfinite(scale):
                raise OverflowError(
                    f"{name}: the rows of {type(self._oracle()).__name__}'s columns have "
                    f"norms beyond float64 (max |x| = {peak:.3g}); rescale X"
                )
        if not scale > 0.0:
            raise ValueError(f"{name}: every example is the zero vector; no margin exists")
        self.scale_ = scale
        return scale

    def _setup_kernel(self, backend: Backend, X, y, sample_weight) -> AcceleratedProblem:
        name = type(self).__name__
        if self.oracle is not None or self.fit_intercept:
            raise ValueError(
                f"{name}: kernel={self.kernel!r} replaces the oracle's columns by a kernel; "
                "oracle must be None and fit_intercept False"
            )
        data = backend.classification_data(self, X, y, sample_weight, self.block_size,
                                           scale_free=False)
        X, s = data.rows.X, data.s
        ypm = data.ypm.astype(np.float64)  # (±1: the Gram matrix's signs)
        kernel = PairwiseKernel(self.kernel, self.kernel_params)
        G = kernel(X, X)
        if G.shape != (X.shape[0],) * 2 or not np.all(np.isfinite(G)):
            raise ValueError(
                f"{name}: kernel must return a finite ({X.shape[0]}, {X.shape[0]}) Gram "
                f"matrix on X; got shape {G.shape}"
            )
        scale = math.sqrt(float(np.max(np.diag(G))))
        if not scale > 0.0:
            raise ValueError(f"{name}: k(x, x) = 0 for every example; no margin exists")
        self.scale_ = scale
        blocks = RowBlocks(X.shape[0], self.block_size, self.n_jobs)
        return AcceleratedProblem(
            y=ypm,
            K=2,
            s=s,
            log_s=row_passes.log(blocks, s),
            s_total=row_passes.total(blocks, s),
            n=X.shape[0],
            blocks=blocks,
            bound=None,
            scale=scale,
            fit_intercept=False,
            loss=get_loss(self.loss, MarginLoss),
            method=self._method(),
            view=self._view(X.shape[0]),
            gram=np.outer(ypm, ypm) * G / scale**2,
            kernel_model=KernelModel(X, ypm, kernel, scale),
            signature=data_signature(X, ypm, s, repr(self.kernel), self.kernel_params),
        )

    def _new_model(self, problem: AcceleratedProblem, intercept):
        if problem.kernel_model is not None:
            return problem.kernel_model
        J = problem.J
        columns = [problem.bound.column_hypothesis(j, 1.0).detach() for j in range(J)]
        K = problem.K if problem.multiclass else 1
        return LinearModel(columns, problem.scale, problem.fit_intercept, K)

    def _history_keys(self, problem: AcceleratedProblem) -> tuple[str, ...]:
        return (
            "loss", "log_loss", "edge", "step", "margin", "margin_upper_bound",
            "momentum_bound", "gap", "train_error", "time",
        )

    def _initial_state(self, problem: AcceleratedProblem):
        p = problem
        width = p.n if p.gram is not None else p.J + int(p.fit_intercept)
        zero = np.zeros(width) if not p.multiclass else np.zeros((width, p.K))
        Zw = p.Z(zero)
        state = AcceleratedState(
            w=zero, g=zero, Zg=None, Zw=Zw, dual=p.dual(Zw), upper=math.inf,
            rng=check_random_state(self.random_state), loss=p.loss,
        )
        return state, 0.0

    def _resumed(self, problem: AcceleratedProblem, state: AcceleratedState
                 ) -> AcceleratedState:
        # q = ∇ψ(Zw) is the loss's: a warm start with another loss continues from the
        # same iterate with its own dual point
        if state.loss == problem.loss:
            return state
        return dataclasses.replace(state, dual=problem.dual(state.Zw), loss=problem.loss)

    # -- one step: Algorithm 1 or 2 (algorithm.py) -------------------------------------------
    def _round(self, problem: AcceleratedProblem, state: AcceleratedState, model, t: int,
               budget: int):
        return accelerated_round(problem, state, t, self.tol)

    # -- the fitted model -----------------------------------------------------------------
    @property
    def coef_(self) -> np.ndarray:
        check_is_fitted(self, "ensemble_")
        if isinstance(self.ensemble_, KernelModel):
            raise AttributeError(
                "coef_ is not defined for a kernel: w = Zᵀa lives in the kernel's feature "
                "space; use dual_coef_ (f(x) = Σ_i dual_coef_[i] k(x_i, x))"
            )
        return self.ensemble_.coef()

    @property
    def dual_coef_(self) -> np.ndarray:
        """Kernel form: ``f(x) = Σ_i dual_coef_[i] k(x_i, x)``."""
        check_is_fitted(self, "ensemble_")
        if not isinstance(self.ensemble_, KernelModel):
            raise AttributeError("dual_coef_ exists for the kernel form (kernel=...) only")
        return self.ensemble_.dual_coef()

    @property
    def intercept_(self) -> float | np.ndarray:
        """The bias b of ``f(x) = coef_ · x + b``, in the caller's scale (the last entry
        of w, divided by ``scale_``).

        Returns
        -------
        float or ndarray of shape (n_classes,)
            0 without ``fit_intercept`` (the paper has no bias) and for the kernel form
            (which takes none); one entry per class for multiclass scores.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        """
        check_is_fitted(self, "ensemble_")
        if isinstance(self.ensemble_, KernelModel):
            return 0.0
        return self.ensemble_.intercept()

    @property
    def estimators_(self) -> list[Hypothesis]:
        check_is_fitted(self, "ensemble_")
        if isinstance(self.ensemble_, KernelModel):
            raise AttributeError("a kernel model has no column hypotheses; see dual_coef_")
        return self.ensemble_.columns

    def _proba(self, f: np.ndarray) -> np.ndarray:
        """The loss' link: σ(2f) (exponential) or σ(f) (logistic); the softmax of the
        class scores for more classes."""
        if f.ndim == 2:
            return class_probabilities(f)
        p = get_loss(self.loss, MarginLoss).inverse_link(f)
        return np.column_stack([1.0 - p, p])
