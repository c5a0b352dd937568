"""Totally corrective boosting: column generation over any oracle (LPBoost, ERLPBoost,
SoftBoost, TotalBoost).

Corrective boosters add one hypothesis a round and never revisit earlier
coefficients.  Totally corrective ones re-solve every coefficient each round over the
hypotheses chosen so far: column generation, whose pricing step is the oracle's
``correlate``.  This module has LPBoost (Demiriz, Bennett & Shawe-Taylor, *Linear
programming boosting via column generation*, Machine Learning 46, 2002).

Notation: N rows, labels ±1, sample weights ``s`` (``c_i = s_i / s̄``), the column of a
hypothesis ``u_j = y ∘ h_j(X) / ‖h_j‖`` in [−1, 1] (the class taken closed under
negation: the sign that makes its edge positive), its edge under a distribution d,
``d · u_j``, and the capping ``ν ∈ [1, N]``: ``d_i ≤ c_i / ν``.  LPBoost, one round::

    h_t = the oracle's answer to correlate(d_{t−1} ∘ y)          (pricing)
    edge_t = d_{t−1} · u_t
    if edge_t ≤ γ_{t−1} + tol: stop ("gap_closed")
    add the column u_t;  solve the restricted LP (soft_margin_lp):
        (w_t, ρ_t) = argmax ρ − (1/ν) Σ_i c_i ξ_i  s.t.  Σ_j w_j u_ij ≥ ρ − ξ_i,
                     w on the simplex, ξ ≥ 0
        (d_t, γ_t) = its dual: min γ s.t. d · u_j ≤ γ ∀ j, d on the capped simplex
    f_t = Σ_j w_tj · sign_j h_j / ‖h_j‖

with ``d_0 = c / Σ c`` (uniform for unweighted rows) and ``γ_0 = −∞``.

**Certificate.**  Over the whole class, the soft-margin optimum ``P*`` satisfies
``γ_{t−1} ≤ P* ≤ edge_t``: the restricted LP's optimum can only grow with more columns
(lower bound), and ``d_{t−1}`` is feasible for the full dual, whose value there is the
best edge of any hypothesis (upper bound; exact when the oracle answers exactly, as
``StumpOracle`` and ``MatrixOracle`` do).  ``history_["lp_value"]`` is γ_t (after the
round's solve; γ_t ≥ γ_{t−1} is a lower bound too), ``history_["upper_bound"]`` the
least edge_s so far and ``history_["gap"]`` their difference.  Every method records it.

**ERLPBoost** (Warmuth, Glocer & Vishwanathan, *Entropy regularized LPBoost*, ALT 2008).
The papers are not on disk: what follows is what this code relies on, derived here and
checked numerically in ``tests/test_entropy_boosting.py``.  With ``d⁰ = c/N``,
``Δ(d, d⁰) = Σ d_i log(d_i/d⁰_i) ∈ [0, ln(N/ν)]`` on the capped simplex S and
``η = (2/ε) ln(N/ν)``, so that ``Δ/η ≤ ε/2``::

    P^t(d) = max_{q ≤ t} d·u_q + Δ(d, d⁰)/η,      d^t = argmin_{d ∈ S} P^t(d)
    round t: h_t priced under d^{t−1};  δ_t = min_{q ≤ t} P^q(d^{q−1}) − P^{t−1}(d^{t−1})
             if δ_t ≤ ε/2: stop ("gap_closed"; h_t does not join)
             else add u_t, solve for d^t (entropy_duals.solve_regularized) and the LP

``P^q(d^{q−1}) = max(edge_q, max_{r<q} d^{q−1}·u_r) + Δ(d^{q−1})/η`` is evaluated at a
point (exact); ``P^{t−1}(d^{t−1})`` is taken as the solve's certified dual value, a
lower bound, so the rule never stops early.  *Guarantee:* with an exact oracle
``min_q P^q(d^{q−1}) ≥ P*``, and the LP over the columns chosen has value at least
``min_d P^{t−1}(d) − ε/2 ≥ P* − ε`` at the stop.  *Bound:* ``P^{t−1}`` is
(1/η)-strongly convex in ℓ1 (Pinsker) and minimised at d^{t−1}, and the new column's
term ``d·u_t − max_{q<t} d·u_q`` is 2-Lipschitz in ℓ1, so
``P^t(d^t) − P^{t−1}(d^{t−1}) ≥ min(δ_t²/(8η), δ_t/2)``; since ``δ_{t+1} ≤ δ_t −`` that
rise and ``δ_2 ≤ 2``, ``1/δ`` grows by ``1/(8η)`` a round and the rule fires within
``1 + ⌈32 ln(N/ν)/ε² − 8 ln(N/ν)/ε⌉`` hypotheses (:func:`erlpboost_round_bound`, which
also counts the halving regime when ``η < 1/2``): the paper's ``O(ln(N/ν)/ε²)``, with
the constant 32 that MiniBoosts also uses.  Recorded as ``round_bound_``.

**SoftBoost** (Warmuth, Glocer & Rätsch, *Boosting algorithms for maximizing the soft
margin*, NIPS 2007); **TotalBoost** (Warmuth, Liao & Rätsch, ICML 2006) is SoftBoost
with ν = 1::

    round t: h_t priced under d^{t−1};  γ̂_t = min_{q ≤ t} edge_q
             add u_t (a column held already adds nothing: only γ̂ moved) and solve the LP
             if min_{d ∈ S} max_q d·u_q (the LP's value) ≥ γ̂_t − ε − INFEASIBLE_SLACK:
                 stop ("infeasible"; h_t joins the final LP)
             d^t = argmin_{d ∈ S} Δ(d, d⁰) s.t. d·u_q ≤ γ̂_t − ε ∀ q ≤ t
                 (entropy_duals.solve_projection)

*Guarantee:* at the stop the LP over the columns is at least ``γ̂_t − ε ≥ P* − ε`` (with
an exact oracle every edge_q is at least P*), less ``INFEASIBLE_SLACK = 1e-9``.
*Bound:* the constraint sets shrink, d^{t−1} violates the new constraint by at least ε,
so by the generalised Pythagorean theorem and Pinsker
``Δ(d^t, d⁰) ≥ Δ(d^{t−1}, d⁰) + ε²/2``; with ``Δ ≤ ln(N/ν)`` at most ``2 ln(N/ν)/ε²``
projections succeed, and the rounds are at most ``⌊2 ln(N/ν)/ε²⌋ + 1``
(:func:`softboost_round_bound`; the papers' ``⌈2 ln(N/ν)/ε²⌉``).  This bound holds for
any oracle; only the ε-guarantee needs an exact one.

Each method ends with the soft-margin LP over the hypotheses it chose, as the papers
do: here that LP is solved every round (HiGHS, warm-started: the certificate above and
the model of every round), so the last round's LP gives the final coefficients.
Each method is an object of :mod:`.algorithm` (:data:`.algorithm.BOXES`: its round, the
history it records and its bound on the rounds), chosen once when the problem is made.

**Multiclass** (K > 2 classes; derived here, the papers are binary) through MABoost's
construction (:mod:`.mirror`, :mod:`.mirror_cells`): the LP's rows are the N(K − 1)
*cells* (i, k), row i and a class ``k ≠ y_i``, flat row by row (:mod:`.vote_cells`).

* *A column.*  A hypothesis h enters as the vote for its argmax class,
  ``p_i = argmax_k h(x_i)_k`` (ties to the lowest class; ``ArgmaxVote``, as MABoost's
  vote), and its column is the vote's pairwise margin on each cell,
  ``u_(i,k) = [p_i = y_i] − [p_i = k]`` ∈ {−1, 0, 1}.  The model
  ``f = Σ_j w_j e_(p_j)`` (w on the simplex) has ``Σ_j w_j u_(i,k)j = f_(y_i) − f_k``, so
  the LP's margin of a row is the multiclass margin ``f_y − max_(k≠y) f_k`` taken cell
  by cell::

      max ρ − (1/ν) Σ_(i,k) c_i ξ_(i,k)  s.t.  f_(y_i)(x_i) − f_k(x_i) ≥ ρ − ξ_(i,k),
          w on the simplex, ξ ≥ 0
      dual: min γ s.t. d · u_j ≤ γ ∀ j,  Σ d = 1,  0 ≤ d_(i,k) ≤ c_i/ν

  the binary LP with cells for rows: :mod:`.soft_margin_lp` and :mod:`.entropy_duals`
  run unchanged on them.
* *ν counts cells*, ``ν ∈ [1, N(K − 1)]``: the caps stay box bounds on d (bounded
  variables for HiGHS, the KL projection onto the capped simplex for the entropy
  methods), where a cap per row would couple a row's cells.  At most about ν cells
  violate the margin; to allow ν' rows with every wrong class, take ``ν = ν'(K − 1)``.
* *Sample weights* spread over a row's cells: each cell of row i costs ``c_i = s_i/s̄``
  (the cells' costs have mean 1, as the rows' do), so ``d⁰ = c/Σc`` gives row i the
  mass ``s_i/Σs`` shared equally by its K − 1 cells: MABoost's starting distribution.
* *Pricing.*  The edge of h's vote under d is
  ``d · u = Σ_i (q_i [p_i = y_i] − d_(i,p_i) [p_i ≠ y_i])``, ``q_i = Σ_k d_(i,k)``
  (MABoost's edge ``−Σ W ∘ D``): the vote for class c scores ``R_(i,c)`` on row i, with
  ``R_(i,y_i) = q_i`` and ``R_(i,k) = −d_(i,k)`` (:func:`.vote_cells.pricing_query`).  The
  oracle is asked ``correlate(R)``, R of shape (N, K): the query MABoost asks,
  ``q e_y`` (the row sums of the cell distribution on the true class), with the wrong
  classes' cells charged as well, so any oracle that answers MABoost's multiclass
  queries (``multiclass_correlate``) answers these.  Each row of R sums to 0, so for a
  label-coded answer (1 on its class c, ``−1/(K − 1)`` elsewhere: ``StumpOracle``'s)
  ``<R_i, h(x_i)> = K/(K − 1) · R_(i,c)``, and for a one-hot answer ``R_(i,c)``: an
  oracle that maximises ``<R, h>`` exactly over such a class returns the column of
  largest edge, and the certificate ``γ_(t−1) ≤ P* ≤ edge_t`` holds as for two classes
  (P* the LP over the class's votes).  (MABoost's ``q e_y`` alone would maximise the
  weighted accuracy, not the edge.)  For score-valued answers (vector leaves, trees)
  ``<R, h> = Σ d_(i,k) (h_(y_i) − h_k)`` is the score differences' edge, a surrogate for
  the vote's: the LP is still solved over the votes chosen, but the upper bound is then
  only as good as the oracle's vote.  A column is named by its votes on the training
  rows, so a vote held already is not added again.
* *Bounds.*  Δ(d, d⁰) ≤ ln(N(K − 1)/ν) on the capped simplex over the cells, so
  ERLPBoost's η and both round bounds read N(K − 1) for N (``round_bound_``); the
  derivations above hold verbatim over the cells.
* *K = 2* is the binary path: one cell a row, and for ±1 hypotheses
  ``u_i = [p_i = y_i] − [p_i ≠ y_i] = y_i h(x_i)``, the binary column, with the same
  costs and caps; R's row is ``d_i (e_(y_i) − e_(other))``, whose inner product with a
  label-coded (±1) stump is twice the binary query's ``Σ d_i y_i h(x_i)``
  (tests/test_totally_corrective_multiclass.py runs the cells at K = 2 against it).
  Two classes keep the binary path (it also takes real-valued hypotheses, as
  ``y h/‖h‖``: the score difference scaled into [−1, 1]).

The model's scores are the votes' shares ``f_k ∈ [0, 1]`` (summing to 1):
``decision_function`` has shape (n, K), ``predict_proba`` is f.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from numbers import Integral, Real

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions

from oracleboost._typing import ArrayLike, RandomStateLike
from oracleboost.boosters.totally_corrective import vote_cells
from oracleboost.boosters.totally_corrective.algorithm import (
    BOXES,
    INFEASIBLE_SLACK,  # noqa: F401  (the module docstring's SoftBoost slack, by its name)
    Entropic,
    TCProblem,
    TCState,
    erlpboost_round_bound,
    softboost_round_bound,
    vote_metrics,
)
from oracleboost.boosters.totally_corrective.entropy_duals import ColumnStore
from oracleboost.boosters.totally_corrective.soft_margin_lp import FEASIBILITY_TOL, SoftMarginLP
from oracleboost.engine.base import BaseBooster, fit_context
from oracleboost.engine.classifier import ScoreClassifierMixin, classification_data
from oracleboost.engine.eval_sets import documented, eval_parameters_doc
from oracleboost.engine.fit_data import fit_backend
from oracleboost.engine.input import data_signature
from oracleboost.engine.monitors import Divergence
from oracleboost.engine.rounds import seed_generator
from oracleboost.export.methods import ExportMixin
from oracleboost.optim import row_passes
from oracleboost.optim.votes import vote_share
from oracleboost.oracles.base import Oracle
from oracleboost.rows.blocks import DEFAULT_BLOCK_SIZE, RowBlocks

__all__ = ["TotallyCorrectiveClassifier", "METHODS", "erlpboost_round_bound",
           "softboost_round_bound"]

METHODS = ("lpboost", "erlpboost", "softboost", "totalboost")
_ENTROPIC = ("erlpboost", "softboost", "totalboost")
#: ``tol`` when it is None: LPBoost's certificate gap, and the others' ε.
_DEFAULT_TOL = {"lpboost": 1e-6, "erlpboost": 0.01, "softboost": 0.01, "totalboost": 0.01}


def _require_clarabel() -> None:
    """The entropy methods' harder solves start from Clarabel (:mod:`.entropy_duals`):
    refuse to start a fit that could need it without it."""
    try:
        import clarabel  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "ERLPBoost, SoftBoost and TotalBoost start their harder entropy solves from "
            "Clarabel: pip install clarabel (or oracleboost[lp])") from exc


@documented(
    "validation_tol", " (scikit-learn's ``tol``; here ``tol`` is the certificate's gap)"
)
class TotallyCorrectiveClassifier(ExportMixin, ScoreClassifierMixin, ClassifierMixin,
                                  BaseBooster):
    """Totally corrective boosting by column generation (LPBoost, Demiriz, Bennett &
    Shawe-Taylor 2002; ERLPBoost, Warmuth, Glocer & Vishwanathan 2008; SoftBoost,
    Warmuth, Glocer & Rätsch 2007; TotalBoost, Warmuth, Liao & Rätsch 2006), over any
    oracle that answers ``correlate``.

    Each round the oracle prices a new hypothesis under the dual distribution, and the
    soft-margin LP over every hypothesis so far is solved again (HiGHS, warm-started
    from the last basis): every coefficient changes each round.  Stops when no
    hypothesis has an edge above the restricted LP's value (the certificate's gap
    below ``tol``).  ERLPBoost and SoftBoost choose their distributions by entropy
    regularisation instead (:mod:`.entropy_duals`) and stop by their own rules within
    ``round_bound_`` rounds, ε = ``tol`` below the optimum.  See the module docstring for
    the algorithm boxes, the certificate and the bounds.  More than two classes go
    through the N × (K − 1) cells (row, wrong class) of MABoost's construction, each
    hypothesis as the vote for its argmax class (module docstring, "Multiclass").

    Parameters
    ----------
    oracle : Oracle, default=None
        Any class that answers ``correlate`` (``None``: ``StumpOracle()``); more than
        two classes need ``multiclass_correlate``, as MABoost's (stumps: label-coded
        answers).  The certificate's upper bound is exact when the oracle's answer is
        the best hypothesis of its class.
    method : {"lpboost", "erlpboost", "softboost", "totalboost"}, default="lpboost"
        The algorithm.  The entropy methods need ``clarabel`` (the ``lp`` extra);
        ``"totalboost"`` is SoftBoost with ``nu=1`` (other values are refused).
    nu : float or None, default=None
        The capping ``ν``, as a count in ``[1, N]`` (N the rows of positive weight):
        ``d_i ≤ c_i / ν``, so at most about ν rows may violate the soft margin.  1 is
        the hard margin.  With K > 2 classes ν counts cells (row, wrong class), in
        ``[1, N(K − 1)]``.  None: ``N/2`` (at least 1; 1 for ``"totalboost"``), the
        fraction ``ν/N = 1/2`` of the ν-property (Schölkopf et al., *New support vector
        algorithms*, Neural Computation 12, 2000; scikit-learn's ``NuSVC`` default),
        which Demiriz, Bennett & Shawe-Taylor (2002, §3) write as the cost
        ``D = 1/(νN)`` for a fraction ν: at most half the rows are margin errors.  The
        hard margin's optimum is 0 on rows the class cannot separate, and a small ν
        leaves the restricted LP at a value of at most 0 for many rounds (its vote at
        chance, or the zero vote); measured on ``make_hastie_10_2`` (700 rows, stumps),
        ν = N/2 closed the certificate in about 180 rounds at a test error of 0.14–0.18,
        while ν = 5 was at chance after 30 rounds and ν = N/10 at 0.30–0.35 after 200.
        On rows the class nearly separates a smaller ν does better: N/2's optimum is
        then reached by a few hypotheses (breast cancer, 30 rounds: 0.076–0.111 against
        ν = 5's 0.047–0.053; digits 3 against 5: 0.055–0.064 against 0.018); choose ν
        by validation there.  The value used is ``nu_``.
    tol : float or None, default=None
        LPBoost: stop (``"gap_closed"``) when the best edge exceeds the restricted LP's
        value by at most this much (None: 1e-6).  The others: their accuracy ε > 0
        (None: 0.01); the final soft margin is within ε of the optimum.
    n_estimators : int, default=100
        The round budget (each round adds at most one hypothesis).
    random_state : int, RandomState instance or None, default=None
        Seeds the oracle's queries.
    verbose : int, default=0
    n_jobs : int or None, default=None
        Threads of the passes over the rows (the answer does not depend on it).
    block_size : int, default=65536
    warm_start : bool, default=False
        Continue column generation from the fitted state: the LP goes on from HiGHS's
        model and basis as the fit left them, and the entropy methods from their
        columns, multipliers and bounds, so that fitting n rounds and then continuing to
        m equals one fit of m rounds bit for bit.  A pickle or skops file keeps the
        columns and HiGHS's basis, so a loaded fit continues as the stored one would,
        bit for bit, when it was fitted with ``warm_start=True``; fitted without, the
        file holds the model alone, and a warm start after loading fits anew, with a
        ``BoostingWarning``.
    <early stopping parameters>
    <importance parameters>
    <class weight parameters>

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    ensemble_ : Ensemble
        The hypotheses and their coefficients, set anew each round (``Refit``).
    history_ : dict of ndarray
        Per round: ``loss`` (the weighted share of training rows whose vote margin
        ``y f``, or ``f_y − max_{k≠y} f_k`` for K > 2, is at most 0: ties count
        against, as MABoost's ``loss``; the curve early stopping watches on held-out
        rows), ``lp_value``
        (γ_t, a lower bound on the full LP's optimum P*), ``edge`` (the new hypothesis'
        edge under d_{t−1}), ``upper_bound`` (the least such edge so far: P* is at most
        it when the oracle is exact), ``gap`` (upper_bound − lp_value), ``margin`` (the
        ℓ1 margin of f_t; NaN for the zero vote, which has no ℓ1 norm),
        ``train_error``, ``step`` (the new column's weight),
        ``n_nonzero`` (columns with positive weight), ``solver_time`` and
        ``solver_iterations``, ``time``.  An eval set's ``val_loss_i`` is the same
        share on it.  The entropy methods add ``objective`` (the
        entropy problem's value: ERLPBoost's certified lower value of ``P^t(d^t)``,
        SoftBoost's ``Δ(d^t, d⁰)``), ``relative_entropy`` (``Δ(d^t, d⁰)``),
        ``solver_gap`` (the solve's certified gap), ``lp_time`` (of ``solver_time``,
        the rest the entropy solve's; ``solver_iterations`` are its Newton steps),
        ``conic_start`` (1 when the solve started from Clarabel), and ERLPBoost
        ``regularized_upper`` (``min_q P^q(d^{q−1})``) and ``regularized_gap`` (δ_t,
        its stopping quantity), SoftBoost ``bound`` (``γ̂_t − ε``); the infeasible
        round's entropy entries are NaN (no projection).
    lp_value_, upper_bound_ : float
        The certificate as the fit ends: ``lp_value_ ≤ P* ≤ upper_bound_``, the upper
        bound including the stopping round's pricing (whose hypothesis did not enter).
    tol_ : float
        The tolerance used (``tol``, or its default for the method).
    nu_ : float
        The capping used (``nu``, or its default ``N/2``).
    round_bound_ : int or None
        The method's bound on the rounds (None for LPBoost): compare it with
        ``n_estimators_`` (see the module docstring).
    stop_reason_ : StopReason
        ``"gap_closed"`` (LPBoost, ERLPBoost), ``"infeasible"`` (SoftBoost, TotalBoost),
        ``"max_rounds"``, ``"solver_failed"`` (the last good model kept; a warning
        gives the solver's status), ``"zero_hypothesis"``, ``"zero_edge"`` (the entropy
        methods, when the best hypothesis has no edge), or the early-stopping and
        interruption reasons.
    <validation attributes>

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from oracleboost.boosters import TotallyCorrectiveClassifier
    >>> X, y = make_classification(200, 5, random_state=0)
    >>> model = TotallyCorrectiveClassifier(nu=10, n_estimators=200).fit(X, y)
    >>> str(model.stop_reason_)
    'gap_closed'
    >>> bool(model.upper_bound_ - model.lp_value_ <= model.tol_)
    True

    Three classes, over the N × 2 cells (ν counts cells):

    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> model = TotallyCorrectiveClassifier(nu=30, n_estimators=200).fit(X, y)
    >>> str(model.stop_reason_), model.predict_proba(X[:1]).shape
    ('gap_closed', (1, 3))
    """

    _parameter_constraints: dict = {
        **BaseBooster._parameter_constraints,
        "method": [StrOptions(set(METHODS))],
        "nu": [Interval(Real, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_jobs": [Integral, None],
        "block_size": [Interval(Integral, 1, None, closed="left")],
        "validation_tol": [Interval(Real, 0, None, closed="left")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }
    _parameter_constraints.pop("learning_rate", None)

    #: why ``fit`` takes no ``init_score`` (:func:`.fit_context` refuses it with this)
    _no_offset_reason = (
        "its linear programs maximise the soft margin of its own convex combination "
        "(coefficients on the simplex), which a per-row starting score would not scale "
        "with; CoordinateBoostingClassifier and FunctionalGradientClassifier take one")

    def __init__(
        self,
        oracle: Oracle | None = None,
        method: str = "lpboost",
        nu: float | None = None,
        tol: float | None = None,
        n_estimators: int = 100,
        random_state: RandomStateLike = None,
        verbose: int = 0,
        n_jobs: int | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        warm_start: bool = False,
        n_iter_no_change: int | None = None,
        validation_fraction: float | None = 0.1,
        validation_tol: float = 1e-4,
        importance_type: str = "weight",
        class_weight: dict | str | None = None,
    ) -> None:
        self.oracle = oracle
        self.method = method
        self.nu = nu
        self.tol = tol
        self.n_estimators = n_estimators
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.block_size = block_size
        self.warm_start = warm_start
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.validation_tol = validation_tol
        self.importance_type = importance_type
        self.class_weight = class_weight

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True  # K > 2: over the N × (K − 1) cells
        return tags

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
    ) -> TotallyCorrectiveClassifier:
        """Fit by column generation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes, or more (through the cells: see the module docstring).
        sample_weight : array-like of shape (n_samples,), default=None
            Each row's weight in the soft margin's slack cost (``c_i = s_i / s̄``; with
            K > 2 classes every cell of row i costs ``c_i``).
        eval_set : list of (X, y) pairs, default=None
            Sets whose loss and error are recorded after every round, as
            ``history_["val_loss_0"]``, ``history_["val_error_0"]``, …
            In a ``Pipeline`` (with metadata routing) the sets reach the booster as
            given, not through the steps before it, as LightGBM's do: their curves are
            then those of untransformed rows.  Transform them first, or hold out rows
            with ``validation_fraction`` (split after the steps).
        eval_sample_weight : list of array-like or None, default=None
            The weights of each eval set's loss and error.
        <eval parameters>
        """
        self._fit_rounds(X, y, sample_weight, eval_set=eval_set,
                         eval_rows=eval_sample_weight, eval_metric=eval_metric,
                         eval_names=eval_names)
        # the certificate as the fit ends: the last LP's value, and the least best edge
        # of every pricing (the stopping one's included)
        self._state_.lp_as_left()
        self.lp_value_ = float(self._state_.gamma)
        self.upper_bound_ = float(self._state_.upper)
        self.tol_ = self._resolved_tol()
        self.nu_ = float(self._state_.lp.nu)
        self.round_bound_ = self._round_bound()
        if self._is_zero_function():
            n_held = len(self.ensemble_.hypotheses)
            why = (f"the soft-margin LP over its {n_held} hypotheses has value "
                   f"{self.lp_value_ + 0.0:.3g}, and no other vote attains it") if n_held \
                else f"it holds no hypothesis (stop_reason_={str(self.stop_reason_)!r})"
            self._warn(
                f"method={self.method!r}, nu={self.nu_:g}: the fit ends with the zero "
                f"vote: {why}, so the model predicts no class (decision 0, probability "
                "1/2).  A larger "
                "nu (None: half the rows) or more rounds (n_estimators) give the LP a "
                "positive value")
        return self

    def _is_zero_function(self) -> bool:
        """Whether the fitted vote is 0 everywhere: its coefficients' ℓ1 norm on the
        training rows, ``Σ_j |coef_j| max_i |h_j(x_i)|``, within the LP's accuracy of 0
        (no hypothesis, or a column and its negation in equal weights)."""
        return self.ensemble_.l1_norm() <= FEASIBILITY_TOL

    @property
    def feature_importances_(self) -> np.ndarray:
        """Importances of the input features (see :class:`BaseBooster`), all 0 when the
        fitted vote is the zero function: its rounds moved coefficients that cancel."""
        importances = super().feature_importances_
        return np.zeros_like(importances) if self._is_zero_function() else importances

    def _resolved_tol(self) -> float:
        return _DEFAULT_TOL[self.method] if self.tol is None else float(self.tol)

    def _round_bound(self) -> int | None:
        """The method's bound on the rounds it can use (None for LPBoost): ERLPBoost's
        hypotheses, SoftBoost's rounds, the infeasible one included."""
        return BOXES[self.method].round_bound(float(self._state_.lp.n_rows), self.nu_,
                                              self.tol_)

    def _early_stopping_tol(self) -> float:
        return float(self.validation_tol)

    # -- the problem ---------------------------------------------------------------------
    def _setup(self, X, y, sample_weight) -> TCProblem:
        backend = fit_backend(X, self._oracle())  # its LP is over every row at once
        backend.refuse("all_rows", "TotallyCorrectiveClassifier", "fit a NumPy array")
        data = classification_data(self, X, y, sample_weight)
        K = data.n_classes
        cells = self._uses_cells(K)
        ypm = data.y_index if cells else data.signs()
        n = ypm.shape[0]
        n_cells = n * (K - 1) if cells else n  # the LP's rows
        nu = self._resolved_nu(n_cells)
        if nu > n_cells:
            what = f"the {n} rows of positive weight" if not cells else (
                f"the {n_cells} cells (rows of positive weight × {K - 1} wrong classes)")
            raise ValueError(
                f"nu={self.nu!r} exceeds {what}: the capped simplex d_i <= c_i/nu is "
                "then empty"
            )
        blocks = RowBlocks(n, self.block_size, self.n_jobs)
        s = data.s
        s_total = row_passes.total(blocks, s)
        cost = s / (s_total / n)
        if cells:  # every cell of row i costs c_i (vote_cells.cell_costs)
            cost = vote_cells.cell_costs(cost, K)
            n = n_cells
        method = self.method
        tol = self._resolved_tol()
        entropic = {}
        if method in _ENTROPIC:
            if method == "totalboost" and nu != 1:
                raise ValueError(
                    f"nu={self.nu!r}: TotalBoost is the hard margin (nu=1); "
                    "method='softboost' caps the distribution")
            if not tol > 0:
                raise ValueError(f"tol={self.tol!r}: {method}'s accuracy ε must be > 0")
            _require_clarabel()
            # d⁰ = c/N and the caps c/ν; ln(N/ν) bounds Δ(d, d⁰) on the capped simplex
            L = math.log(n / nu) if n > nu else 0.0
            entropic = {"log_d0": np.log(cost) - math.log(n), "caps": cost / nu,
                        # L = 0: the capped simplex is one point, and η does not matter
                        "eta": 2.0 * L / tol if L > 0 else 1.0}
        bound = self._bind(data.X, "multiclass_correlate" if cells else "correlate")
        return TCProblem(signature=data_signature(data.X, ypm, s), y=ypm, s=s,
                        s_total=s_total, cost=cost, bound=bound,
                        bounded=bound.capabilities.bounded, blocks=blocks, method=method,
                        tol=tol, nu=nu, K=K, cells=cells, **entropic)

    def _resolved_nu(self, n_cells: int) -> float:
        """``nu``, or its default: half the LP's rows (the ν-property's fraction 1/2,
        see the class docstring), at least 1; TotalBoost's hard margin 1."""
        if self.nu is not None:
            return float(self.nu)
        if self.method == "totalboost":
            return 1.0
        return max(1.0, n_cells / 2.0)

    @staticmethod
    def _uses_cells(K: int) -> bool:
        """Whether K classes go through the cells (K > 2); two classes take the binary
        path, which is the cells' construction at K = 2 (module docstring)."""
        return K > 2

    def _history_keys(self, problem: TCProblem) -> tuple[str, ...]:
        lp = ("loss", "lp_value", "edge", "upper_bound", "gap", "margin", "train_error",
              "step", "n_nonzero", "solver_time", "solver_iterations", "time")
        if not problem.box.entropic:
            return lp
        return (*lp, "objective", "relative_entropy", "solver_gap", "lp_time",
                "conic_start", *problem.box.extra_keys)

    def _initial_state(self, problem: TCProblem):
        p = problem
        d0 = p.cost / math.fsum(p.cost)
        lp = SoftMarginLP(p.cost, p.nu)
        entropic = None
        if p.box.entropic:
            entropic = Entropic(store=ColumnStore(d0.shape[0]), n=0, alpha=np.zeros(0),
                                 edges_max=-math.inf, entropy=0.0, lower=-math.inf,
                                 reg_upper=math.inf, coef=np.zeros(0))
        return TCState(lp=lp, d=d0, gamma=-math.inf, upper=math.inf, held=(), factors=(),
                       slots=(), seen=frozenset(), rng=seed_generator(self.random_state),
                       entropic=entropic), (np.zeros(p.K) if p.cells else 0.0)

    def _monitors(self, problem: TCProblem, evals, resume: bool) -> list:
        # ``loss`` is the vote's share of rows at margin ≤ 0, which these methods do not
        # minimise (they maximise the soft margin: ``lp_value`` never falls): its
        # rising is no divergence
        return [m for m in super()._monitors(problem, evals, resume)
                if not isinstance(m, Divergence)]

    # -- one round: the method's (algorithm.py) ---------------------------------------------
    def _round(self, problem: TCProblem, state: TCState, ensemble, t: int, budget: int):
        return problem.box.round(problem, state, ensemble, t, self._warn)

    # -- eval sets ------------------------------------------------------------------------
    def _eval_target(self, problem: TCProblem, y, extra, where: str):
        index = self._class_index(y, where)
        target = index if problem.cells else np.where(index == 1, 1.0, -1.0)
        return target, self._eval_weight(extra, y.shape[0], where)

    def _eval_metrics(self, problem: TCProblem, target, weight, scores):
        """An eval set's ``loss``, the weighted share of rows whose vote margin is at
        most 0 (ties count against; MABoost's ``loss``), and ``error``, that of
        ``predict`` (ties to the lowest class).

        Not the randomized vote's error ``(1 − y f)/2`` (an earlier ``loss``): that is
        the w-weighted mean of the columns' own errors, never below the best column's,
        so on the training rows no round beat round 1 and early stopping kept the first
        round (measured: lowest at round 1 on 2,000 held-out rows while the vote's
        error fell until round 97)."""
        return vote_metrics(target, weight, scores)

    def _proba(self, f: np.ndarray) -> np.ndarray:
        """No link to probabilities: the LP's combination is a vote with weights on the
        simplex; ``predict_proba`` maps its score f ∈ [−1, 1] to ``(1 + f) / 2``, the
        share of the vote for ``classes_[1]``.  K > 2: f holds each class's share of the
        vote (rows summing to 1; uniform before any round), as MABoost's."""
        if f.ndim == 2:
            return vote_share(f, 1.0)
        p = np.clip((1.0 + f) / 2.0, 0.0, 1.0)
        return np.column_stack([1.0 - p, p])
