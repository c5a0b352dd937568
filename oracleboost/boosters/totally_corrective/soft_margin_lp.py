"""The soft-margin LP over the hypotheses so far, solved incrementally by HiGHS in its
dual form: the restricted master problem of LPBoost's column generation (Demiriz,
Bennett & Shawe-Taylor 2002, their LP (4) and its dual (5)).

With ``u_j = y ∘ h_j(X) / ‖h_j‖`` the columns so far (entries in [−1, 1]), row costs
``c_i = s_i / s̄`` (sample weights over their mean; 1 for unweighted rows) and the
capping ``ν ∈ [1, N]``, the primal and its dual are::

    max_{w, ρ, ξ}  ρ − (1/ν) Σ_i c_i ξ_i        min_{d, γ}  γ
    s.t.  Σ_j w_j u_ij ≥ ρ − ξ_i  (∀ i)          s.t.  Σ_i d_i u_ij ≤ γ  (∀ j)
          Σ_j w_j = 1,  w ≥ 0,  ξ ≥ 0                  Σ_i d_i = 1,  0 ≤ d_i ≤ c_i / ν

**HiGHS holds the dual** (LPBoost's own form): the N + 1 variables ``d`` (box bounds,
not rows) and ``γ`` (free), the row ``Σ d_i = 1`` (row 0), and per column ``j`` a
variable ``σ_j ≥ 0`` (column N + 1 + j) and one row (row j + 1) that makes ``σ_j`` the
slack ``γ − d · u_j`` of the constraint ``d · u_j ≤ γ``.  Its basis has t + 1 rows for
t columns, where the primal's has N + 1: with N rows in the thousands and t in the
hundreds, each simplex iteration is that much cheaper.  A new hypothesis is one new row
and its ``σ`` (:meth:`SoftMarginLP.add_column`): the last basis stays dual feasible
(the new row's slack joins it), so the dual simplex method goes on from it (a warm
start; LPBoost adds exactly the row that the current ``d`` violates) instead of solving
from scratch.

**Each row is written sparse** (:func:`row_code`), since each dual simplex iteration
prices the rows' nonzeros on ``d`` and fewer of them make it cheaper; the LP and its
solutions are the same, only the duals are read back through the encoding (below):

* **by an offset**: on the capped simplex ``Σ d = 1``, so ``d · u_j = v_j + d · (u_j −
  v_j)`` for any number ``v_j``, and the row is ``γ − σ_j − d · (u_j − v_j) = v_j`` with
  ``v_j`` the value most of ``u_j``'s entries take (:func:`row_offset`).  A stump's
  column ``y ∘ h / ‖h‖`` has two values, and its row then holds only the rows the stump
  gets wrong.  Replaying one fit's 200 stump columns over 2,000 rows, one solve per
  column: ν = N/10 took 3.0 s in all against 8.3 s written dense (the degenerate LP also
  took far fewer iterations: 7–37 a row against 59–106), ν = N/2 took 9.1 s against
  14.3 s with the same iterations;
* **or as a difference from an earlier row** ``k``, where that is sparser: ``d · u_j = s
  d · u_k + d · (u_j − s u_k)`` for ``s = ±1`` gives ``(1 − s) γ + s σ_k − σ_j − d ·
  (u_j − s u_k) = 0``.  Two stumps on one feature with near thresholds differ on the
  rows between them only, and LPBoost's columns come back to the same few features:
  over 3,000 rows, a fit's 150 stump columns (ν = N/10) have 1,440 nonzeros each by
  their offsets and 481 by the sparsest of both (120 columns at ν = N/2: 1,438 and
  547).  Replaying them beside a test run, the solves took 1.5–1.9 s in all against
  2.1–2.3 s (ν = N/10; the last ten rounds' median 12–16 ms against 31–33 ms; on a quiet
  machine 1.28 s against 1.59 s) and 4.1 s against 5.7–6.7 s (ν = N/2), with 12 %
  (ν = N/10) and 3 % more iterations.

**The primal from the duals.**  HiGHS minimises, and the multiplier of ``σ_j ≥ 0`` (its
reduced cost, ``≥ 0`` at optimality) is that of ``d · u_j ≤ γ``: ``w_j`` (the
Lagrangian ``γ + ρ (1 − Σ d) + Σ_j w_j (d · u_j − γ)`` gives ``Σ_j w_j = 1`` by
stationarity in γ).  Row 0's dual is ``ρ`` less the offset rows' share: each used
``Σ d = 1`` to write ``v_j`` on its right-hand side, so ``ρ = y_0 + Σ_j v_j y_j`` over
the rows' duals ``y`` (0 for a difference row, whose ``v_j`` is 0).  The bounds on
``d`` give ``ξ_i = max(0, ρ − Σ_j w_j u_ij)`` from the margins.

Every solution is checked before it is used (:meth:`SoftMarginLP.solve`): the model
status is optimal, ``w`` is on the simplex and ``d`` on the capped simplex to a
tolerance, no column's edge ``d · u_j`` exceeds ``γ``, and the primal objective
``ρ − (1/ν) Σ c ξ`` of ``(w, ρ)`` (ξ from the margins) equals ``γ``: weak duality then
makes both optimal.  A solution that fails raises :class:`LPSolveError`, which the
booster turns into a named stop that keeps its last good model.

**Never the zero vote when another is optimal.**  With a column and its negation both
held, the zero vote (equal weights on the two) has soft margin 0, so it is optimal
whenever the LP's value is 0: the hard margin on rows the class cannot separate, and a
small ν for many rounds.  HiGHS may return it, a model that predicts nothing.  When the
dual's ``w`` is the zero vote on the rows, a second LP (:func:`largest_mean_margin`)
takes, among the optimal votes, one of largest mean margin; every non-zero optimal vote
has a positive one, so the zero vote comes back only when it is the only optimum.  The
second LP changes ``w`` only: ``d``, ``γ`` and so the pricing, the certificate and a
continued fit's path are the dual's.  It is solved from scratch (a pure function of the
columns and γ: a pickled fit continues with the same votes), in the rounds whose dual
answer is the zero vote from a degenerate basis only (a nondegenerate optimal basis has
the only optimal ``w``).

Why not the primal (which this module solved before, one column per hypothesis and
N + 1 rows): on the same sequence of 300 stump columns over 2,000 rows (ν = N/10) the
dual's solves took about a third of the primal's time in all (its iterations are many
more, but each costs far less); on a ±1 matrix of 300 × 300 about half; with many more
columns than rows (60 × 300) the two were within the noise of a loaded machine.  No case
was found where the primal is clearly better, so one form serves every case.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Any, NamedTuple

import numpy as np

from oracleboost._running_state import stored_as

__all__ = ["SoftMarginLP", "LPSolution", "LPSolveError", "FEASIBILITY_TOL",
           "largest_mean_margin"]

#: How far from feasible (and from the dual's objective, for the primal's) a solution
#: may be: HiGHS's own default primal and dual feasibility tolerances are 1e-7.
FEASIBILITY_TOL = 1e-6

_NO_LIMIT = 2**31 - 1  # HiGHS's default simplex_iteration_limit


def row_offset(u: np.ndarray) -> float:
    """The value that most of the column ``u``'s entries take (0 where no value is
    more common than 0; the smallest such value on a tie): the offset its row of
    HiGHS's model is written with, which zeroes those entries (module docstring)."""
    values, counts = np.unique(u, return_counts=True)
    best = int(np.argmax(counts))
    zero = counts[values == 0.0]
    if zero.size and zero[0] >= counts[best]:
        return 0.0
    return float(values[best])


class RowCode(NamedTuple):
    """How one hypothesis' row is written in HiGHS's model (module docstring): by its
    offset ``v`` (``parent`` −1: ``γ − σ_j − d · (u_j − v) = v``) or as a difference
    from an earlier row ``parent = k`` (``(1 − s) γ + s σ_k − σ_j − d · (u_j − s u_k)
    = 0``, ``s = sign``).  ``entries`` are the row's entries on ``d``: ``u_j − v`` or
    ``u_j − s u_k``."""

    parent: int
    sign: float
    offset: float
    entries: np.ndarray


def row_code(u: np.ndarray, earlier: list[np.ndarray]) -> RowCode:
    """The sparsest way to write the column ``u``'s row: by its offset
    (:func:`row_offset`) or as ``u − s u_k`` for the earlier column ``u_k`` and sign
    ``s = ±1`` that leave the fewest nonzero entries (exact comparisons: the same
    choice on every machine; on a tie the offset, then the earliest ``k``, then
    ``s = +1``)."""
    v = row_offset(u)
    best = RowCode(-1, 0.0, v, u - v)
    fewest = int(np.count_nonzero(best.entries))
    negated = -u
    for k, earlier_u in enumerate(earlier):
        if fewest == 0:
            break
        for sign, target in ((1.0, u), (-1.0, negated)):
            # the entries where u_k ≠ s u (s = ±1: exactly where u − s u_k ≠ 0)
            count = int(np.count_nonzero(earlier_u != target))
            if count < fewest:
                fewest, best = count, RowCode(k, sign, 0.0, u - sign * earlier_u)
    return best


def _quiet_highs(highspy: Any) -> Any:
    """A new ``highspy.Highs()``: its constructor writes HiGHS's banner to the process's
    standard output (file descriptor 1) before any option can be set, so that
    descriptor points at the null device meanwhile."""
    sys.stdout.flush()
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        return highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


#: HiGHS's options for the warm-started solves, and its defaults they replace.  This LP
#: is highly degenerate (most ``d_i`` sit at 0 or at their cap, and with ν = N/10 on
#: noisy rows its optimum is 0 from the second round on), and HiGHS's defaults (random
#: cost perturbation, then primal clean-up; dual steepest edge) spent some 200 dual
#: simplex iterations on each new row of stump columns over 3,000 rows, each one a
#: pricing pass over every entry of the dense rows so far (ν = N/10).  Without the
#: perturbation and with Devex pricing it took some 25, about a tenth of the time, when
#: replaying that fit's first 150 rows.  A fit of its own takes other columns (the
#: degenerate LP's vertices differ): at rounds 100, 200 and 300 it took 92, 184 and 390
#: iterations against the defaults' 207, 309 and 346 in theirs (warm solves 2.6, 1.7 and
#: 0.5 times as fast, on a loaded machine).  With ν = N/2 both settings took some 200 on
#: replay: a new row moves ``d`` far there.  The perturbation is HiGHS's guard against
#: cycling at degenerate vertices: a warm solve that reaches :func:`_iteration_guard`
#: iterations goes on from where it stopped with the defaults (:meth:`solve`).  A cold
#: start (a model built again) runs with the defaults too: without the perturbation it
#: took several times their iterations.
_FAST = {"dual_simplex_cost_perturbation_multiplier": 0.0,
         "simplex_dual_edge_weight_strategy": 1}
_DEFAULTS = {"dual_simplex_cost_perturbation_multiplier": 1.0,
             "simplex_dual_edge_weight_strategy": -1}


def _iteration_guard(n_hypothesis_rows: int) -> int:
    """Iterations one warm-started solve may take with :data:`_FAST` before it goes on
    with HiGHS's defaults: far above what a new row needs (tens), far below a cycle's
    endless run."""
    return 1000 + 10 * n_hypothesis_rows


def _run(h: Any, options: dict, iteration_limit: int) -> tuple[Any, int]:
    """HiGHS's run with ``options`` and an iteration limit: its model status and its
    simplex iterations."""
    for name, value in options.items():
        h.setOptionValue(name, value)
    h.setOptionValue("simplex_iteration_limit", iteration_limit)
    h.run()
    return h.getModelStatus(), int(h.getInfo().simplex_iteration_count)


class LPSolveError(RuntimeError):
    """HiGHS did not return a solution that passes the checks."""


class LPSolution:
    """One checked solution of the restricted LP.

    Attributes
    ----------
    w : ndarray of shape (t,)
        The columns' weights (on the simplex): the hypothesis rows' duals, negated; or,
        when those are the zero vote, an optimal vote of largest mean margin
        (:func:`largest_mean_margin`; ``rho`` stays the dual's).
    d : ndarray of shape (N,)
        The distribution over the rows (capped simplex).
    value : float
        The LP's optimum ``γ = max_j d · u_j``, equal to ``ρ − (1/ν) Σ c ξ``.
    rho : float
        The soft margin ρ (the dual of the row ``Σ d = 1``).
    seconds : float
        This solve's time in all: the new rows into HiGHS's model, HiGHS's run, and
        reading and checking the solution.
    iterations : int
        Simplex iterations of this solve.
    """

    def __init__(self, w: np.ndarray, d: np.ndarray, value: float, rho: float,
                 seconds: float, iterations: int) -> None:
        self.w, self.d, self.value, self.rho = w, d, value, rho
        self.seconds, self.iterations = seconds, iterations


@stored_as("SoftMarginLP")
class SoftMarginLP:
    """The restricted soft-margin LP, one row of HiGHS's dual model per hypothesis,
    kept between solves (see the module docstring).

    Parameters
    ----------
    cost : ndarray of shape (N,)
        ``c_i``, the rows' weights over their mean (all 1 for unweighted rows).
    nu : float
        The capping ``ν ∈ [1, N]`` (``d_i ≤ c_i / ν``); 1 is the hard margin.

    A pickle keeps the columns and HiGHS's last basis (its variables' and rows'
    statuses, as integers), not HiGHS's model: the model is built again, from every
    column, at the next solve, and starts from that basis.  A deep copy takes the model
    along (see :meth:`__deepcopy__`).
    """

    def __init__(self, cost: np.ndarray, nu: float) -> None:
        self.cost = np.asarray(cost, dtype=np.float64)
        self.nu = float(nu)
        self.columns: list[np.ndarray] = []
        self._drop_model()  # no HiGHS model until the first solve
        # (columns, HiGHS's basis) before the last rows were added: what truncate
        # restores when it takes exactly those rows away (a discarded round)
        self._before_last: tuple[int, Any] | None = None
        self._warm = False  # whether HiGHS's model has a basis from an earlier solve

    @property
    def n_rows(self) -> int:
        return int(self.cost.shape[0])

    @property
    def n_columns(self) -> int:
        return len(self.columns)

    def __getstate__(self) -> dict:
        state = {"cost": self.cost, "nu": self.nu, "columns": self.columns}
        basis = self._stored_basis
        if self._highs is not None and self._warm and self._in_model == self.n_columns:
            b = self._highs.getBasis()
            basis = (np.array([int(v) for v in b.col_status], dtype=np.int8),
                     np.array([int(v) for v in b.row_status], dtype=np.int8)) \
                if b.valid else None
        if basis is not None:
            state["basis"] = basis
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        basis = state.pop("basis", None)
        self.__dict__.update(state)
        self._drop_model()
        # the basis of the stored model: the model built again starts from it, so that a
        # continued fit pivots from where the stored one would (HiGHS's defaults from
        # scratch may end at another of a degenerate LP's optima)
        self._stored_basis = basis

    def __deepcopy__(self, memo: dict) -> SoftMarginLP:
        """A copy that takes HiGHS's model with it: ``warm_start`` continues from a
        copy of the fitted state (so that a failed continuation leaves the fit as it
        was), and a continuation on the very model and basis the fit ended with gives
        the bits of one longer fit.  This LP builds the model again if it is solved
        after that (after a continuation that failed)."""
        new = SoftMarginLP(self.cost, self.nu)
        new.columns = list(self.columns)  # the arrays are never written to
        new._highs, new._in_model = self._highs, self._in_model
        new._offsets = self._offsets
        new._before_last, new._warm = self._before_last, self._warm
        new._stored_basis = self._stored_basis
        self._drop_model()
        return new

    def add_column(self, u: np.ndarray) -> None:
        """A new hypothesis' column ``u = y ∘ h(X) / ‖h‖`` (a row of HiGHS's model at
        the next solve)."""
        u = np.asarray(u, dtype=np.float64)
        if u.shape != (self.n_rows,):
            raise ValueError(f"a column has {self.n_rows} rows; got shape {u.shape}")
        self.columns.append(u)

    def truncate(self, n_columns: int) -> None:
        """Keep the first ``n_columns`` columns only, taking the others' rows out of
        HiGHS's model: the LP as it was before they were added (a round the loop
        discarded, an interrupted one, or early stopping's return to an earlier
        round).  When exactly the rows of the last addition go, the basis from before
        it comes back; otherwise HiGHS repairs the basis left at the next solve."""
        if not 0 <= n_columns <= self.n_columns:
            raise ValueError(f"n_columns={n_columns!r}: the LP holds {self.n_columns} columns")
        del self.columns[n_columns:]
        if self._highs is None or self._in_model <= n_columns:
            return
        h, gone = self._highs, self._in_model - n_columns
        # (the rows left refer to earlier rows' σ only: the model stays whole)
        h.deleteRows(gone, np.arange(n_columns + 1, self._in_model + 1, dtype=np.int32))
        first_sigma = self.n_rows + 1 + n_columns
        h.deleteCols(gone, np.arange(first_sigma, first_sigma + gone, dtype=np.int32))
        if self._before_last is not None and self._before_last[0] == n_columns:
            h.setBasis(self._before_last[1])
        del self._offsets[n_columns:]
        self._in_model, self._before_last = n_columns, None

    # -- HiGHS ---------------------------------------------------------------------------
    def _drop_model(self) -> None:
        self._highs, self._in_model, self._before_last = None, 0, None
        self._stored_basis: tuple[np.ndarray, np.ndarray] | None = None
        self._offsets: list[float] = []  # v_j of the model's rows 1 … _in_model (0: chained)
        self._warm = False  # whether HiGHS's model has a basis from an earlier solve

    def _model(self) -> Any:
        """HiGHS's model with every column added so far (built on first use)."""
        if self._highs is None:
            try:
                import highspy
            except ImportError as exc:  # pragma: no cover - the lp extra installs it
                raise ImportError(
                    "totally corrective boosting solves its LPs with HiGHS: pip install "
                    "highspy (or oracleboost[lp])"
                ) from exc
            h = _quiet_highs(highspy)
            h.setOptionValue("output_flag", False)
            # one thread and a fixed strategy: the same pivots on every machine and run
            h.setOptionValue("threads", 1)
            h.setOptionValue("random_seed", 0)
            # the dual simplex method: a new row leaves the last basis dual feasible
            h.setOptionValue("solver", "simplex")
            h.setOptionValue("simplex_strategy", 1)
            # no presolve: it would rebuild the problem each solve and lose the basis
            h.setOptionValue("presolve", "off")
            N, inf = self.n_rows, highspy.kHighsInf
            # variables d_0 … d_{N−1} in [0, c_i/ν], then γ (free); minimise γ
            h.addVars(N + 1, np.append(np.zeros(N), -inf), np.append(self.cost / self.nu, inf))
            h.changeColsCost(1, np.array([N], np.int32), np.array([1.0]))
            # row 0: Σ_i d_i = 1
            h.addRow(1.0, 1.0, N, np.arange(N, dtype=np.int32), np.ones(N))
            self._highs, self._in_model, self._before_last = h, 0, None
        h = self._highs
        if self._stored_basis is not None and self._in_model == 0:
            # a model built again after a pickle: first the stored columns, from the
            # stored basis; then the later ones as the stored model would add them
            stored = self._stored_basis[1].size - 1
            if 0 < stored <= self.n_columns:
                self._add_rows(h, stored)
                self._restore_basis(h)
            self._stored_basis = None
        if len(self.columns) > self._in_model:
            basis = h.getBasis()
            self._before_last = (self._in_model, basis) if basis.valid else None
            self._add_rows(h, len(self.columns))
        return h

    def _add_rows(self, h: Any, upto: int) -> None:
        """The rows of the columns ``_in_model … upto − 1`` into HiGHS's model."""
        first, k = self._in_model, upto - self._in_model
        N = self.n_rows
        # σ_j ≥ 0 for the new rows: variables N + 1 + j
        h.addVars(k, np.zeros(k), np.full(k, math.inf))
        starts, index, value, rhs, filled = [], [], [], [], 0
        for j in range(first, first + k):
            code = row_code(self.columns[j], self.columns[:j])
            on_d = np.flatnonzero(code.entries)
            # (1 − s) γ + s σ_k − σ_j − d · entries = rhs  (offset rows: s = 0)
            extra_index, extra_value = [N + 1 + j], [-1.0]
            if code.parent >= 0:
                extra_index.append(N + 1 + code.parent)
                extra_value.append(code.sign)
            if code.sign != 1.0:
                extra_index.append(N)
                extra_value.append(1.0 - code.sign)
            starts.append(filled)
            index.append(np.append(on_d, extra_index))
            filled += index[-1].size
            value.append(np.append(-code.entries[on_d], extra_value))
            rhs.append(code.offset)
            self._offsets.append(code.offset)
        bounds = np.array(rhs)
        index_all, value_all = np.concatenate(index), np.concatenate(value)
        h.addRows(k, bounds, bounds, index_all.size, np.array(starts, np.int32),
                  index_all.astype(np.int32), value_all)
        self._in_model = upto

    def _restore_basis(self, h: Any) -> None:
        """Give a model built again from the stored columns the basis a pickle stored
        with them (:meth:`__setstate__`), when its sizes are the model's: its next solve
        then starts from it, with the warm solves' settings, as the stored model's
        would."""
        import highspy

        cols, rows = self._stored_basis
        if cols.size != self.n_rows + 1 + self._in_model or rows.size != 1 + self._in_model:
            return
        b = highspy.HighsBasis()
        status = highspy.HighsBasisStatus
        b.col_status = [status(int(v)) for v in cols]
        b.row_status = [status(int(v)) for v in rows]
        b.valid = True
        if h.setBasis(b) == highspy.HighsStatus.kOk:
            self._warm = True

    def solve(self) -> LPSolution:
        """Solve the LP over the columns so far, from the last basis, and check the
        answer (see the module docstring).  After a failure the model is dropped: the
        next solve builds it again from the columns.

        Raises
        ------
        LPSolveError
            HiGHS's status is not optimal, or the solution fails a check.
        """
        if not self.columns:
            raise LPSolveError("the LP has no column yet")
        start = time.perf_counter()
        h = self._model()  # (says how to install highspy where it is missing)
        import highspy

        try:
            # a model built with one hypothesis row (a fit's first round) runs with the
            # warm solves' settings too, as a re-solve of that LP after truncate does: a
            # continuation after early stopping then retraces the fit (test_totally_
            # corrective's test_early_stopping_cuts_the_lp_back_with_the_model)
            if self._warm or self._in_model == 1:
                # from the last basis after new rows: the fast settings, guarded
                status, iterations = _run(h, _FAST, _iteration_guard(self._in_model))
                if status == highspy.HighsModelStatus.kIterationLimit:
                    # possibly cycling: on from this basis with HiGHS's defaults
                    status, more = _run(h, _DEFAULTS, _NO_LIMIT)
                    iterations += more
            else:  # a model built again (a pickle, a failure): HiGHS's defaults suit
                status, iterations = _run(h, _DEFAULTS, _NO_LIMIT)
            if status != highspy.HighsModelStatus.kOptimal:
                raise LPSolveError(f"HiGHS ended with status {h.modelStatusToString(status)}")
            solution = h.getSolution()
            if not solution.dual_valid:
                raise LPSolveError("HiGHS returned no row duals")
            N = self.n_rows
            x = np.asarray(solution.col_value, dtype=np.float64)
            duals = np.asarray(solution.row_dual, dtype=np.float64)
            d, gamma = x[:N], float(x[N])
            # w_j: the reduced cost of σ_j ≥ 0, the multiplier of d · u_j ≤ γ
            w = np.asarray(solution.col_dual, dtype=np.float64)[N + 1:]
            # (row 0's dual is ρ less the offset rows' share: they moved v_j Σ d into it)
            offsets = np.asarray(self._offsets)
            rho = float(duals[0]) + math.fsum((duals[1:] * offsets).tolist())
            self._check(w, d, gamma, rho)
        except LPSolveError:
            self._drop_model()
            raise
        self._warm = True
        # clip rounding outside the feasible sets (checked above to be within the tolerance)
        w = np.clip(w, 0.0, None)
        d = np.clip(d, 0.0, self.cost / self.nu)
        if is_zero_vote(self.margins(w)) and not self._nondegenerate(h, x):
            # the zero vote is optimal (the value is at most 0) and may not be the only
            # optimal w: another optimal vote if any (d, γ and the certificate are the
            # dual's, unchanged)
            untied = largest_mean_margin(self.columns, self.cost, self.nu, gamma)
            w = w if untied is None else untied
        return LPSolution(w, d, gamma, rho, time.perf_counter() - start, iterations)

    def _nondegenerate(self, h: Any, x: np.ndarray) -> bool:
        """Whether HiGHS's optimal basis is nondegenerate: every basic variable strictly
        inside its bounds (by more than :data:`FEASIBILITY_TOL`) and no (equality) row
        basic.  Then the multipliers ``w`` are the only optimal ones (a nondegenerate
        optimal basis has a unique dual solution), so no other vote ties with the zero
        vote and the second LP is not needed: on 1,400 rows of ``make_hastie_10_2`` at
        ν = N/10 every round's zero vote was of this kind, and the second LP took some
        3–6 s a round at 200 columns."""
        import highspy

        basis = h.getBasis()
        if not basis.valid:
            return False
        basic = highspy.HighsBasisStatus.kBasic
        if any(status == basic for status in basis.row_status):
            return False
        is_basic = np.array([status == basic for status in basis.col_status])
        N = self.n_rows
        lower = np.concatenate([np.zeros(N), [-math.inf], np.zeros(x.size - N - 1)])
        upper = np.concatenate([self.cost / self.nu, [math.inf], np.full(x.size - N - 1,
                                                                            math.inf)])
        inside = (x - lower > FEASIBILITY_TOL) & (upper - x > FEASIBILITY_TOL)
        return bool(inside[is_basic].all())

    def margins(self, w: np.ndarray) -> np.ndarray:
        """The vote's margins on the LP's rows (:func:`vote_margins`)."""
        return vote_margins(w, self.columns, self.n_rows)

    def _check(self, w: np.ndarray, d: np.ndarray, gamma: float, rho: float) -> None:
        """Feasibility of ``w`` and ``d``, and the two objectives' agreement (weak
        duality: a feasible pair with equal objectives is optimal).  Sums over rows are
        numpy's pairwise sums in a fixed order (not BLAS)."""
        tol = FEASIBILITY_TOL
        problems = []
        values = (gamma, rho)
        if not (np.isfinite(w).all() and np.isfinite(d).all() and np.isfinite(values).all()):
            problems.append("a value is not finite")
        else:
            if w.min() < -tol or abs(math.fsum(w) - 1.0) > tol:
                problems.append(f"w is off the simplex (min {w.min():.3g}, sum {math.fsum(w)})")
            cap = self.cost / self.nu
            if d.min() < -tol or (d - cap).max() > tol or abs(math.fsum(d) - 1.0) > tol:
                problems.append("d is off the capped simplex")
            edge = max(float(np.add.reduce(d * u)) for u in self.columns)
            if edge > gamma + tol:
                problems.append(f"an edge {edge!r} exceeds γ = {gamma!r}")
            soft = soft_objective(rho, self.margins(w), self.cost, self.nu)
            if abs(soft - gamma) > tol * (1 + abs(gamma)):
                problems.append(f"the primal objective ρ − Σ c ξ / ν = {soft!r} (ξ from the "
                                f"margins of w) is not the dual's γ = {gamma!r}")
        if problems:
            raise LPSolveError("HiGHS's solution fails its checks: " + "; ".join(problems))


def soft_objective(rho: float, margins: np.ndarray, cost: np.ndarray, nu: float) -> float:
    """The primal objective ``ρ − (1/ν) Σ_i c_i ξ_i`` of a vote with these margins, the
    slacks ``ξ_i = max(0, ρ − m_i)`` at their best for ρ: at most the vote's soft margin
    (its maximum over ρ), equal to it at an optimal ρ.  Rows summed in a fixed order."""
    xi = np.maximum(rho - margins, 0.0)
    return rho - float(np.add.reduce(cost * xi)) / nu


def vote_margins(w: np.ndarray, columns: list[np.ndarray], n_rows: int) -> np.ndarray:
    """A vote's margins ``Σ_j w_j u_j`` on the LP's rows, summed in column order."""
    margins = np.zeros(n_rows)
    for wj, u in zip(w.tolist(), columns, strict=True):
        if wj != 0.0:
            margins += wj * u
    return margins


def is_zero_vote(margins: np.ndarray) -> bool:
    """Whether a vote's margins on the LP's rows are all 0 to the LP's accuracy: the
    vote is the zero function on the training rows (a column and its negation in equal
    weights, typically)."""
    return bool(np.abs(margins).max() <= FEASIBILITY_TOL)


def largest_mean_margin(columns: list[np.ndarray], cost: np.ndarray, nu: float,
                        value: float) -> np.ndarray | None:
    """Among the optimal votes of the LP over ``columns`` (value ``value``), one of
    largest mean margin ``Σ_i c_i m_i / Σ c`` (m = Σ_j w_j u_j): the tie-break that
    keeps LPBoost from returning the zero vote when the LP's optimum is 0 and a non-zero
    vote attains it.  The LP, in the primal form (HiGHS through SciPy, from scratch: a
    pure function of its arguments)::

        max Σ_i c_i m_i   s.t.  ρ − (1/ν) Σ_i c_i ξ_i ≥ value − 1e-9,
                                m_i ≥ ρ − ξ_i,  w on the simplex,  ξ ≥ 0

    Every optimal vote has mean margin at least 0 (its ν least margins average at
    least 0), and only the zero vote has 0, so the answer is non-zero whenever a
    non-zero optimal vote exists.  Returns its ``w``, or None when the zero vote is the
    only optimum (to the solver's accuracy: a vote whose objective at the LP's ρ, per
    unit of its largest margin, is below ``value`` by more than :data:`FEASIBILITY_TOL`
    is a scaled-down non-optimal vote that the solver's tolerance let in), or when the
    LP fails.
    """
    from scipy import sparse
    from scipy.optimize import linprog

    U = np.column_stack(columns)
    N, t = U.shape
    cost = np.asarray(cost, dtype=np.float64)
    # variables (w, ρ, ξ); rows −U w + ρ − ξ ≤ 0, and −ρ + (1/ν) c·ξ ≤ −(value − 1e-9)
    margin_rows = sparse.hstack([sparse.csr_matrix(-U), sparse.csr_matrix(np.ones((N, 1))),
                                 -sparse.identity(N, format="csr")])
    optimal_row = sparse.csr_matrix(np.concatenate([np.zeros(t), [-1.0], cost / nu])[None, :])
    A_ub = sparse.vstack([margin_rows, optimal_row]).tocsr()
    b_ub = np.concatenate([np.zeros(N), [-(value - 1e-9)]])
    A_eq = sparse.csr_matrix(np.concatenate([np.ones(t), np.zeros(N + 1)])[None, :])
    # each column's Σ_i c_i u_i row by row in a fixed order (BLAS's dot rounds by CPU)
    mean = np.add.reduce(cost[:, None] * U, axis=0) / math.fsum(cost.tolist())
    objective = np.concatenate([-mean, np.zeros(N + 1)])
    bounds = [(0.0, None)] * t + [(None, None)] + [(0.0, None)] * N
    result = linprog(objective, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[1.0], bounds=bounds,
                     method="highs-ds")
    if result.status != 0:
        return None
    w = np.clip(np.asarray(result.x[:t], dtype=np.float64), 0.0, None)
    w /= math.fsum(w.tolist())
    margins = vote_margins(w, columns, N)
    if is_zero_vote(margins):
        return None
    top = float(np.abs(margins).max())
    if soft_objective(float(result.x[t]), margins, cost, nu) < value - FEASIBILITY_TOL * top:
        return None
    return w
