"""The soft-margin LP over the hypotheses so far, solved incrementally by HiGHS: the
restricted master problem of LPBoost's column generation (Demiriz, Bennett &
Shawe-Taylor 2002).

With ``u_j = y ∘ h_j(X) / ‖h_j‖`` the columns so far (entries in [−1, 1]), row costs
``c_i = s_i / s̄`` (sample weights over their mean; 1 for unweighted rows) and the
capping ``ν ∈ [1, N]``, the primal and its dual are::

    max_{w, ρ, ξ}  ρ − (1/ν) Σ_i c_i ξ_i        min_{d, γ}  γ
    s.t.  Σ_j w_j u_ij ≥ ρ − ξ_i  (∀ i)          s.t.  Σ_i d_i u_ij ≤ γ  (∀ j)
          Σ_j w_j = 1,  w ≥ 0,  ξ ≥ 0                  Σ_i d_i = 1,  0 ≤ d_i ≤ c_i / ν

HiGHS solves the primal (minimising its negation); the dual distribution ``d`` is the
margin rows' duals and ``γ`` the simplex row's.  A new hypothesis is one new column:
:meth:`SoftMarginLP.add_column` adds it to the model HiGHS holds, whose last basis
stays primal feasible, so the simplex method goes on from it (a warm start) instead of
solving from scratch.

Every solution is checked before it is used (:meth:`SoftMarginLP.solve`): the model
status is optimal, ``w`` and ``d`` are feasible to a tolerance, the primal and dual
objectives agree, and ``γ`` is the largest edge ``d · u_j`` of the columns; a solution
that fails raises :class:`LPSolveError`, which the booster turns into a named stop
that keeps its last good model.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Any

import numpy as np

__all__ = ["SoftMarginLP", "LPSolution", "LPSolveError", "FEASIBILITY_TOL"]

#: How far from feasible (and from the primal objective, for the dual's) a solution may
#: be: HiGHS's own default primal and dual feasibility tolerances are 1e-7.
FEASIBILITY_TOL = 1e-6


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


class LPSolveError(RuntimeError):
    """HiGHS did not return a solution that passes the checks."""


class LPSolution:
    """One checked solution of the restricted LP.

    Attributes
    ----------
    w : ndarray of shape (t,)
        The columns' weights (on the simplex).
    d : ndarray of shape (N,)
        The dual distribution over the rows (capped simplex).
    value : float
        The LP's optimum ``ρ − (1/ν) Σ c ξ``, equal to ``γ = max_j d · u_j``.
    rho : float
        The soft margin ρ.
    seconds : float
        HiGHS's time for this solve.
    iterations : int
        Simplex iterations of this solve.
    """

    def __init__(self, w: np.ndarray, d: np.ndarray, value: float, rho: float,
                 seconds: float, iterations: int) -> None:
        self.w, self.d, self.value, self.rho = w, d, value, rho
        self.seconds, self.iterations = seconds, iterations


class SoftMarginLP:
    """The restricted soft-margin LP, one column per hypothesis, kept in a HiGHS model
    between solves (see the module docstring).

    Parameters
    ----------
    cost : ndarray of shape (N,)
        ``c_i``, the rows' weights over their mean (all 1 for unweighted rows).
    nu : float
        The capping ``ν ∈ [1, N]`` (``d_i ≤ c_i / ν``); 1 is the hard margin.

    A pickle keeps the columns, not HiGHS's model: the model is built again, from every
    column, at the next solve.  A deep copy takes the model along (see
    :meth:`__deepcopy__`).
    """

    def __init__(self, cost: np.ndarray, nu: float) -> None:
        self.cost = np.asarray(cost, dtype=np.float64)
        self.nu = float(nu)
        self.columns: list[np.ndarray] = []
        self._highs: Any = None
        self._in_model = 0  # columns HiGHS holds

    @property
    def n_rows(self) -> int:
        return int(self.cost.shape[0])

    @property
    def n_columns(self) -> int:
        return len(self.columns)

    def __getstate__(self) -> dict:
        return {"cost": self.cost, "nu": self.nu, "columns": self.columns}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._highs, self._in_model = None, 0

    def __deepcopy__(self, memo: dict) -> SoftMarginLP:
        """A copy that takes HiGHS's model with it: ``warm_start`` continues from a
        copy of the fitted state (so that a failed continuation leaves the fit as it
        was), and a continuation on the very model and basis the fit ended with gives
        the bits of one longer fit.  This LP builds the model again if it is solved
        after that (after a continuation that failed)."""
        new = SoftMarginLP(self.cost, self.nu)
        new.columns = list(self.columns)  # the arrays are never written to
        new._highs, new._in_model = self._highs, self._in_model
        self._highs, self._in_model = None, 0
        return new

    def add_column(self, u: np.ndarray) -> None:
        """A new hypothesis' column ``u = y ∘ h(X) / ‖h‖``."""
        u = np.asarray(u, dtype=np.float64)
        if u.shape != (self.n_rows,):
            raise ValueError(f"a column has {self.n_rows} rows; got shape {u.shape}")
        self.columns.append(u)

    # -- HiGHS ---------------------------------------------------------------------------
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
            # no presolve: it would rebuild the problem each solve and lose the basis
            h.setOptionValue("presolve", "off")
            N, inf = self.n_rows, highspy.kHighsInf
            # variables: ρ (free), then ξ_i ≥ 0; minimise −ρ + (1/ν) Σ c_i ξ_i
            h.addCol(-1.0, -inf, inf, 0, np.empty(0, np.int32), np.empty(0))
            costs = self.cost / self.nu
            for i in range(N):
                h.addCol(float(costs[i]), 0.0, inf, 0, np.empty(0, np.int32), np.empty(0))
            # rows 0..N−1: −ρ + ξ_i + Σ_j u_ij w_j ≥ 0; row N: Σ_j w_j = 1
            for i in range(N):
                h.addRow(0.0, inf, 2, np.array([0, 1 + i], np.int32), np.array([-1.0, 1.0]))
            h.addRow(1.0, 1.0, 0, np.empty(0, np.int32), np.empty(0))
            self._highs, self._in_model = h, 0
        h = self._highs
        N = self.n_rows
        rows = np.arange(N + 1, dtype=np.int32)
        for u in self.columns[self._in_model:]:
            h.addCol(0.0, 0.0, math.inf, N + 1, rows, np.append(u, 1.0))
        self._in_model = len(self.columns)
        return h

    def solve(self) -> LPSolution:
        """Solve the LP over the columns so far, from the last basis, and check the
        answer (see the module docstring).

        Raises
        ------
        LPSolveError
            HiGHS's status is not optimal, or the solution fails a check.
        """
        if not self.columns:
            raise LPSolveError("the LP has no column yet")
        h = self._model()  # (says how to install highspy where it is missing)
        import highspy

        start = time.perf_counter()
        h.run()
        seconds = time.perf_counter() - start
        status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise LPSolveError(f"HiGHS ended with status {h.modelStatusToString(status)}")
        solution = h.getSolution()
        x = np.asarray(solution.col_value, dtype=np.float64)
        duals = np.asarray(solution.row_dual, dtype=np.float64)
        N = self.n_rows
        rho, xi, w = float(x[0]), x[1:N + 1], x[N + 1:]
        d, gamma = duals[:N], -float(duals[N])
        value = -float(h.getInfo().objective_function_value)
        self._check(w, xi, d, gamma, value, rho)
        iterations = int(h.getInfo().simplex_iteration_count)
        # clip rounding outside the feasible sets (checked above to be within the tolerance)
        w = np.clip(w, 0.0, None)
        d = np.clip(d, 0.0, self.cost / self.nu)
        return LPSolution(w, d, value, rho, seconds, iterations)

    def _check(self, w, xi, d, gamma, value, rho) -> None:
        tol = FEASIBILITY_TOL
        problems = []
        if not (np.isfinite(w).all() and np.isfinite(d).all() and math.isfinite(value)):
            problems.append("a value is not finite")
        else:
            if w.min() < -tol or abs(math.fsum(w) - 1.0) > tol:
                problems.append(f"w is off the simplex (min {w.min():.3g}, sum {math.fsum(w)})")
            if xi.min() < -tol:
                problems.append(f"a slack is negative ({xi.min():.3g})")
            cap = self.cost / self.nu
            if d.min() < -tol or (d - cap).max() > tol or abs(math.fsum(d) - 1.0) > tol:
                problems.append("d is off the capped simplex")
            if abs(gamma - value) > tol * (1 + abs(value)):
                problems.append(f"the dual objective {gamma!r} is not the primal's {value!r}")
            edges = [math.fsum(d * u) for u in self.columns]
            if max(edges) > gamma + tol:
                problems.append(f"an edge {max(edges)!r} exceeds γ = {gamma!r}")
            soft = rho - math.fsum(self.cost * xi) / self.nu
            if abs(soft - value) > tol * (1 + abs(value)):
                problems.append(f"ρ − Σ c ξ / ν = {soft!r} is not the optimum {value!r}")
        if problems:
            raise LPSolveError("HiGHS's solution fails its checks: " + "; ".join(problems))
