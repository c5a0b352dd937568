"""The models the round loop grows, behind one protocol.

A booster's rounds hand the loop *updates*; the loop applies them to the fit's model, so
that every model answers the same questions: its decision on new rows, round by round
(``staged_decision_function``) and after the last round (``decision_function``), the
running decision on a watched set (``running_scores``), and a cut back to its first
rounds (``truncate``, early stopping).

:class:`Ensemble`
    ``f = intercept + Σ_j c_j h_j`` over the hypotheses an oracle returned.  A round
    either moves one coefficient (``add``: the corrective step of AdaBoost, Telgarsky's
    coordinate descent, MABoost and gradient boosting) or sets every coefficient
    (``refit``: the totally corrective step of LPBoost and its family, which re-solve
    all coefficients each round).
:class:`LinearModel`, :class:`KernelModel`
    One coefficient vector per round over a finite class's columns, or over kernel
    sections (dual acceleration).

Exactness is part of the protocol: the decision after round t is summed the same way
whichever path asks for it (``staged_*``, ``decision_function``, the validation
curves), so they agree bit for bit; truncating to t rounds gives, bit for bit, the model
of a fit stopped at t; and nothing a round costs grows with the number of rounds before
it (no copy of the model per round: the ℓ1 norm is kept as a running, exactly rounded
sum).
"""

from __future__ import annotations

import copy
import math
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from oracleboost._typing import ArrayLike
from oracleboost.oracles._column_products import times as _times
from oracleboost.oracles.base import Hypothesis, NonFiniteOutput, predict_validated

if TYPE_CHECKING:  # pragma: no cover - base imports this module
    from oracleboost.engine.base import BaseBooster

__all__ = [
    "Model",
    "Ensemble",
    "Refit",
    "RunningScores",
    "LinearModel",
    "KernelModel",
    "ReplayScores",
    "ModelAt",
    "NonFinitePrediction",
]


class NonFinitePrediction(NonFiniteOutput):
    """A weak learner of a fitted ensemble predicted NaN or inf on new rows (its training
    outputs were finite: the oracle checks those).  Raised instead of a silent NaN; the
    booster re-raises it naming itself and its oracle (:meth:`naming`)."""

    def __init__(self, h: Hypothesis, pred: np.ndarray, n_rounds: int, where: str = "") -> None:
        super().__init__(h, pred, where)
        self.n_rounds = n_rounds

    def naming(self, booster: BaseBooster) -> NonFinitePrediction:
        """The same error, naming the booster and its oracle."""
        oracle = getattr(booster, "oracle", None)
        name = repr(oracle) if oracle is not None else "its default oracle"
        where = f"{type(booster).__name__}: a weak learner of {name}"
        return NonFinitePrediction(self.h, self.pred, self.n_rounds, where)


class Scores(Protocol):
    """A model's running decision on one set of rows (see :class:`RunningScores`)."""

    def advance(self, model) -> Iterator[np.ndarray]:
        """Sum the rounds not summed yet; yield the running decision after each."""

    def catch_up(self, model) -> np.ndarray:
        """The decision after the model's last round."""


class Model(Protocol):
    """What the round loop needs of a model (and what ``predict`` reads).

    ``add(*term)`` applies one of a round's ``terms``; ``refit(refit)`` applies a
    round's :class:`Refit` (models that only ever re-weight may not have it).  Each
    applied update is one model round; ``n_rounds`` counts them.
    """

    n_rounds: int

    def add(self, *term: Any) -> Any: ...

    def truncate(self, n_rounds: int) -> None: ...

    def running_scores(self, X: ArrayLike) -> Scores: ...

    def decision_function(self, X: ArrayLike) -> np.ndarray: ...

    def staged_decision_function(self, X: ArrayLike) -> Iterator[np.ndarray]: ...


@dataclass(frozen=True)
class Refit:
    """A totally corrective round: ``joining`` hypotheses enter the ensemble (each as
    ``(h, norm)``, after those it holds, unless its ``key`` is already there), then every
    coefficient is set to ``coef`` (one per hypothesis, in the ensemble's order, the
    joining ones last).  ``norm`` is ``max_i |h(x_i)|`` on the training rows, as in
    :meth:`Ensemble.add`.  A hypothesis whose ``key`` the ensemble already holds is not
    added again; its coefficient is then ``coef`` at its existing position (``coef``
    is as long as the ensemble after the round)."""

    coef: np.ndarray
    joining: tuple[tuple[Hypothesis, float], ...] = ()


def _exact(x: float) -> int:
    """``x`` as an integer count of ``2**-1074`` (every finite float is a whole one)."""
    num, den = x.as_integer_ratio()
    return num * ((1 << 1074) // den)


def _rounded(total: int) -> float:
    """The float nearest ``total · 2**-1074`` (Python's integer division rounds
    correctly)."""
    return total / (1 << 1074)


class Ensemble:
    """``f(x) = intercept + Σ_j coef_j h_j(x)`` built round by round.

    Hypotheses with the same ``key`` (the same function up to ``scale``) share one
    coefficient, so ``l1_norm`` is ``||λ||_1`` over distinct functions, as in the ℓ1
    margin of Telgarsky (2013, §1).  ``norms[j]`` is ``max_i |h_j(x_i)|`` on the training
    points: λ is measured on columns scaled into [−1, 1].

    The rounds are kept as a log: round r moved coefficient ``round_index[r]`` by
    ``round_delta[r]`` (:meth:`add`), or set every coefficient (:meth:`refit`; then
    ``round_index[r]`` is the joining hypothesis' index, or −1, and ``round_delta[r]``
    is NaN).  ``coef`` is the log summed in order; :meth:`truncate` sums a prefix of it
    again, so a cut model equals a fit stopped there bit for bit.

    ``l1_norm()`` costs O(1): the terms ``|coef_j| · norms[j]`` are kept as an exact sum
    (integers counting ``2**-1074``) and rounded once when asked.  An exactly rounded
    sum depends only on the terms, not on the order they were added in, so a warm start,
    a truncation and a fit that stopped early agree on it bit for bit.
    """

    def __init__(self, intercept: float | np.ndarray = 0.0) -> None:
        self.intercept = intercept
        self.hypotheses: list[Hypothesis] = []
        self.coef: list[float] = []
        self.norms: list[float] = []
        self.round_index: list[int] = []  # which hypothesis each round touched
        self.round_delta: list[float] = []  # and by how much its coefficient moved
        self.refits: dict[int, np.ndarray] = {}  # round → the coefficients it set
        self._by_key: dict[Hashable, int] = {}
        self._l1_terms: list[int] = []  # exact |coef_j| · norms[j]
        self._l1_total = 0  # their exact sum

    def copy(self) -> Ensemble:
        """A copy that can grow without changing this one (hypotheses are shared)."""
        # not copy.copy: that goes through __getstate__, which leaves out the indexes
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        for name in ("hypotheses", "coef", "norms", "round_index", "round_delta", "_l1_terms"):
            setattr(new, name, list(getattr(self, name)))
        new.refits = dict(self.refits)
        new._by_key = dict(self._by_key)
        return new

    # -- persistence ---------------------------------------------------------------------
    #: What :meth:`__getstate__` leaves out: indexes that :meth:`__setstate__` rebuilds
    #: from the rest.  ``_by_key`` is a dict keyed by the hypotheses' keys (tuples, which
    #: skops cannot store as dict keys); ``_l1_terms`` and ``_l1_total`` are integers of
    #: about 1,100 bits (exact multiples of ``2**-1074``), derived from ``coef`` and
    #: ``norms``.
    _DERIVED = ("_by_key", "_l1_terms", "_l1_total")

    def __getstate__(self) -> dict[str, Any]:
        """The ensemble without its derived indexes (see :attr:`_DERIVED`): what pickle
        and ``skops.io`` store."""
        return {k: v for k, v in self.__dict__.items() if k not in self._DERIVED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a stored ensemble, rebuilding its indexes as :meth:`_place` and
        :meth:`_set_coef` built them (the first hypothesis of each key holds its
        coefficient; the ℓ1 terms are exact, so the norm is the same bit for bit)."""
        self.__dict__.update(state)
        self._by_key = {}
        for j, h in enumerate(self.hypotheses):
            if h.key is not None:
                self._by_key.setdefault(h.key, j)
        self._l1_terms = [_exact(abs(c) * n) for c, n in zip(self.coef, self.norms, strict=True)]
        self._l1_total = sum(self._l1_terms)

    # -- growing -------------------------------------------------------------------------
    def _place(self, h: Hypothesis, norm: float) -> int:
        """The index of ``h``'s function, adding ``h`` (with coefficient 0) if new."""
        j = self._by_key.get(h.key) if h.key is not None else None
        if j is None:
            j = len(self.hypotheses)
            self.hypotheses.append(h)
            self.coef.append(0.0)
            self.norms.append(float(norm))
            self._l1_terms.append(0)
            if h.key is not None:
                self._by_key[h.key] = j
        return j

    def _set_coef(self, j: int, value: float) -> None:
        self.coef[j] = value
        term = _exact(abs(value) * self.norms[j])
        self._l1_total += term - self._l1_terms[j]
        self._l1_terms[j] = term

    def add(self, h: Hypothesis, coef: float, norm: float) -> int:
        """A corrective round: add ``coef · h`` (``h`` already detached); return the
        hypothesis' index."""
        known = h.key is not None and h.key in self._by_key
        j = self._place(h, norm)
        if known:
            # h = (h.scale / first.scale) · first: fold the ratio into the coefficient.
            coef = coef * h.scale / self.hypotheses[j].scale
        self._set_coef(j, self.coef[j] + coef)
        self.round_index.append(j)
        self.round_delta.append(coef)
        return j

    def refit(self, refit: Refit) -> None:
        """A totally corrective round: the joining hypotheses enter, then every
        coefficient becomes ``refit.coef``."""
        joined = [self._place(h, norm) for h, norm in refit.joining]
        coef = np.asarray(refit.coef, dtype=np.float64)
        if coef.shape != (len(self.hypotheses),):
            raise ValueError(
                f"a Refit sets {coef.shape} coefficients; the ensemble holds "
                f"{len(self.hypotheses)} hypotheses after the round"
            )
        if not np.isfinite(coef).all():
            raise ValueError("a Refit's coefficients must be finite")
        for j, value in enumerate(coef.tolist()):
            self._set_coef(j, value)
        self.refits[len(self.round_index)] = coef.copy()
        self.round_index.append(joined[-1] if joined else -1)
        self.round_delta.append(math.nan)

    @property
    def n_rounds(self) -> int:
        """The number of rounds added (corrective terms and refits)."""
        return len(self.round_index)

    def index_of(self, h: Hypothesis) -> int | None:
        """The position of ``h``'s function among the ensemble's hypotheses, or None when
        it is new (or never merges: ``key`` None).  A totally corrective booster keeps its
        columns in this order; an answer it already holds is no new column."""
        return self._by_key.get(h.key) if h.key is not None else None

    # -- the ℓ1 norm ---------------------------------------------------------------------
    def l1_norm(self, pending: Sequence[tuple[Hypothesis, float, float]] = ()) -> float:
        """``||λ||_1 = Σ_j |coef_j| · norms[j]`` over distinct functions, exactly rounded;
        with ``pending`` terms ``(h, coef, norm)``, as it will be once they are added (a
        round computes its margin before the loop commits it).  O(1 + len(pending))."""
        if not pending:
            return _rounded(self._l1_total)
        # the coefficients the pending terms move, summed as add() will sum them
        total, moved = self._l1_total, {}  # key → [coef, norm, scale of its first h]
        for h, c, norm in pending:
            j = self._by_key.get(h.key) if h.key is not None else None
            key = j if j is not None else (("new", id(h)) if h.key is None else ("key", h.key))
            if key not in moved:
                moved[key] = ([self.coef[j], self.norms[j], self.hypotheses[j].scale]
                              if j is not None else [0.0, float(norm), h.scale])
                if j is None:
                    moved[key][0] = c
                    continue
            entry = moved[key]
            entry[0] += c * h.scale / entry[2]
        for key, (value, norm, _) in moved.items():
            before = self._l1_terms[key] if isinstance(key, int) else 0
            total += _exact(abs(value) * norm) - before
        return _rounded(total)

    # -- cutting back --------------------------------------------------------------------
    def truncate(self, n_rounds: int) -> None:
        """Keep the first ``n_rounds`` rounds (early stopping's best round).

        The coefficients are summed again from the kept rounds' log in the order
        ``add`` summed them (a refit sets them outright), so they equal those of a fit
        that stopped there, bit for bit; hypotheses are numbered by first use, so the
        kept ones are a prefix.
        """
        if n_rounds >= self.n_rounds:
            return
        self.round_index = self.round_index[:n_rounds]
        self.round_delta = self.round_delta[:n_rounds]
        self.refits = {r: c for r, c in self.refits.items() if r < n_rounds}
        used = max([j + 1 for j in self.round_index]
                   + [len(c) for c in self.refits.values()], default=0)
        self.hypotheses = self.hypotheses[:used]
        self.norms = self.norms[:used]
        self._by_key = {h.key: j for j, h in enumerate(self.hypotheses) if h.key is not None}
        last = deque(self._coef_path(), maxlen=1)  # replayed to the end
        coef = list(last[0][0]) if last else []
        self.coef = coef + [0.0] * (used - len(coef))
        self._l1_terms = [_exact(abs(c) * n) for c, n in zip(self.coef, self.norms, strict=True)]
        self._l1_total = sum(self._l1_terms)

    def _coef_path(self) -> Iterator[tuple[list[float], dict[int, float]]]:
        """Replay the log: after each round, the coefficients (one list, updated in place,
        summed exactly as :meth:`add` summed them) and what the round changed."""
        coef: list[float] = []
        for r, (j, delta) in enumerate(zip(self.round_index, self.round_delta, strict=True)):
            if r in self.refits:
                new = self.refits[r].tolist()
                old = coef + [0.0] * (len(new) - len(coef))
                changed = {k: a - b for k, (a, b) in enumerate(zip(new, old, strict=True))
                           if a != b}
                coef[:] = new
            else:
                coef.extend([0.0] * (j + 1 - len(coef)))
                coef[j] += delta
                changed = {j: delta}
            yield coef, changed

    def round_changes(self) -> Iterator[dict[int, float]]:
        """What each round changed: ``{j: new coef_j − old coef_j}`` (one entry for a
        corrective round; every changed coefficient for a refit)."""
        for _, changed in self._coef_path():
            yield changed

    def l1_norms(self) -> Iterator[float]:
        """``||λ||_1`` after each round, as :meth:`l1_norm` said then (exactly rounded)."""
        terms: list[int] = []
        total = 0
        for coef, changed in self._coef_path():
            terms.extend([0] * (len(coef) - len(terms)))
            for j in changed:
                term = _exact(abs(coef[j]) * self.norms[j])
                total += term - terms[j]
                terms[j] = term
            yield _rounded(total)

    # -- the decision --------------------------------------------------------------------
    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """``f(x)``, summed round by round exactly as :meth:`staged_decision_function`
        sums it, so the last staged value equals this bit for bit (as scikit-learn's
        gradient boosting guarantees)."""
        return self.running_scores(X).catch_up(self)

    def staged_decision_function(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Yield the decision after each round, adding one term to a running array."""
        for out in self.running_scores(X).advance(self):
            yield out.copy()

    def running_scores(self, X: ArrayLike) -> RunningScores:
        """The decision on ``X`` kept up to date as rounds are added: the fit's
        validation curves and the staged predictions are the same sums."""
        return RunningScores(X, self.intercept)


@dataclass
class RunningScores:
    """``intercept + Σ_{r ≤ t} δ_r h_{j_r}(X)`` for a growing :class:`Ensemble`, one new
    round at a time: each round predicts its hypothesis on ``X`` once (a recurring one
    comes from a cache) and adds it to a running array; a refit round sums
    ``intercept + Σ_j c_j h_j(X)`` afresh, in the order of j.

    ``staged_decision_function``, ``decision_function`` and the validation curves of
    ``fit(eval_set=...)`` all sum through this class, so they agree bit for bit.
    :meth:`catch_up` hands runs of corrective rounds whose hypotheses share a class to
    that class's :meth:`~oracleboost.oracles.Hypothesis.predict_sum` (one compiled pass
    for stumps), which adds exactly as the one-by-one sum does.
    """

    X: Any
    intercept: float | np.ndarray
    done: int = 0  # rounds summed so far
    out: np.ndarray | None = None
    _cached: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    _room: int = 2**25  # floats of recurring predictions kept (256 MiB)

    def _start(self, shape_of: np.ndarray) -> None:
        self.out = np.empty(shape_of.shape, dtype=np.float64)
        self.out[...] = self.intercept

    def _predict(self, ensemble: Ensemble, j: int) -> np.ndarray:
        pred = self._cached.get(j)
        if pred is None:
            h = ensemble.hypotheses[j]
            pred = predict_validated(h, self.X)  # X validated once, by the estimator
            if not np.isfinite(pred).all():
                raise NonFinitePrediction(h, pred, ensemble.n_rounds)
            # only hypotheses that can recur (a corrective round again, or any refit)
            # are worth keeping
            if (h.key is not None or ensemble.refits) and pred.size <= self._room:
                self._cached[j] = pred
                self._room -= pred.size
        return pred

    def _step(self, ensemble: Ensemble) -> None:
        r = self.done
        if r in ensemble.refits:
            coef = ensemble.refits[r]
            preds = [self._predict(ensemble, j) for j in range(len(coef))]
            if self.out is None:
                self._start(preds[0] if preds else np.zeros(self.X.shape[0]))
            else:
                self.out[...] = self.intercept
            for c, pred in zip(coef.tolist(), preds, strict=True):
                self.out += c * pred
        else:
            pred = self._predict(ensemble, ensemble.round_index[r])
            if self.out is None:
                self._start(pred)
            # a float64 product whatever pred's dtype, as Hypothesis.predict_sum forms it
            self.out += np.float64(ensemble.round_delta[r]) * pred
        self.done += 1

    def advance(self, ensemble: Ensemble) -> Iterator[np.ndarray]:
        """Add the ensemble's rounds not summed yet; yield the running array (the same
        array, updated in place) after each."""
        while self.done < ensemble.n_rounds:
            self._step(ensemble)
            yield self.out

    def catch_up(self, ensemble: Ensemble) -> np.ndarray:
        """The decision after every round of ``ensemble`` (the running array itself)."""
        # Rounds before the last refit do not count: it sums everything afresh.
        last_refit = max((r for r in ensemble.refits if r >= self.done), default=None)
        if last_refit is not None:
            self.done = last_refit
            self._step(ensemble)
        while self.done < ensemble.n_rounds:
            r = self.done
            if r in ensemble.refits:  # pragma: no cover - after the last refit there is none
                self._step(ensemble)
                continue
            # a run of corrective rounds whose classes share a batched implementation
            # (Hypothesis.predict_sum overridden, as compiled stumps do): one call;
            # others go one round at a time, which reuses recurring predictions
            batched = _batched_sum(type(ensemble.hypotheses[ensemble.round_index[r]]))
            end = r + 1
            while (batched is not None and end < ensemble.n_rounds
                   and end not in ensemble.refits
                   and _batched_sum(type(ensemble.hypotheses[ensemble.round_index[end]]))
                   is batched):
                end += 1
            if batched is None or end - r < 2:
                while self.done < end:
                    self._step(ensemble)
                continue
            if self.out is None:
                self._step(ensemble)  # the first round fixes the output's shape
                r += 1
            hyps = [ensemble.hypotheses[j] for j in ensemble.round_index[r:end]]
            coef = np.asarray(ensemble.round_delta[r:end], dtype=np.float64)
            try:
                type(hyps[0]).predict_sum(hyps, coef, self.X, self.out)
            except NonFiniteOutput as exc:
                raise NonFinitePrediction(exc.h, exc.pred, ensemble.n_rounds) from None
            self.done = end
        if self.out is None:
            return np.zeros((self.X.shape[0],) + np.shape(self.intercept)) + self.intercept
        return self.out


def _batched_sum(kind: type) -> Any:
    """The function behind ``kind.predict_sum`` when ``kind`` overrides the protocol's
    one-by-one default, else None."""
    func = getattr(kind.predict_sum, "__func__", None)
    return None if func is None or func is _DEFAULT_SUM else func


_DEFAULT_SUM = Hypothesis.predict_sum.__func__


class ModelAt:
    """A fit's model as it stood after its first ``n_rounds`` rounds, for a scorer of a
    watched set (``fit(eval_metric=...)``): on that set's rows ``X`` its decision is the
    running ``scores`` (a copy), which the model's exactness makes equal, bit for bit,
    to the decision of the model cut back to ``n_rounds``; so scoring a round predicts
    nothing.  Anything else (other rows, ``l1_norm``, …) is asked of the model cut back
    (the model itself when ``n_rounds`` is all of it, as during the fit's last round).
    Used only while that round is scored: the model goes on growing after it.
    """

    def __init__(self, model: Any, n_rounds: int, X: np.ndarray, scores: np.ndarray) -> None:
        self.model, self.n_rounds, self.X, self.scores = model, n_rounds, X, scores
        self._cut: Any = None

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        if X is self.X or (isinstance(X, np.ndarray) and isinstance(self.X, np.ndarray)
                           and X.shape == self.X.shape and np.array_equal(X, self.X)):
            return self.scores.copy()
        return self.cut().decision_function(X)

    def cut(self) -> Any:
        """The model after ``n_rounds`` rounds."""
        if self._cut is None:
            if self.n_rounds == self.model.n_rounds:
                self._cut = self.model
            else:
                self._cut = self.model.copy()
                self._cut.truncate(self.n_rounds)
        return self._cut

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("model", "n_rounds", "X", "scores", "_cut"):
            raise AttributeError(name)  # (copy and pickle probe dunders before __init__)
        return getattr(self.cut(), name)


def fixed_order_product(P: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``P @ w`` with each entry summed over the columns in order (a compiled loop, one
    thread): the same bits on every CPU.  BLAS's ``gemv`` sums in an order that depends
    on the CPU's kernel (OpenBLAS's Haswell and SkylakeX kernels round differently), so
    a fitted linear or kernel model would predict other last bits on another machine."""
    P = np.ascontiguousarray(P, dtype=np.float64)
    W = np.ascontiguousarray(w, dtype=np.float64)
    vector = W.ndim == 1
    W = W[:, None] if vector else W
    out = np.empty((P.shape[0], W.shape[1]))
    _times(P, W, 0, P.shape[0], out)
    return out[:, 0] if vector else out


class LinearModel:
    """``f(x) = Σ_j c_j h_j(x) + b`` over a finite class's columns h_j, one coefficient
    vector per round (so ``staged_decision_function`` replays the rounds).

    ``weights[t]`` is w_{t+1} in the scaled space of the algorithm (rows of Z of norm at
    most 1); the caller's coefficients are ``w / scale``.
    """

    def __init__(
        self, columns: list[Hypothesis], scale: float, fit_intercept: bool, n_outputs: int = 1
    ) -> None:
        self.columns = columns
        self.scale = float(scale)
        self.fit_intercept = bool(fit_intercept)
        self.n_outputs = int(n_outputs)  # K for multiclass scores, 1 for a binary score
        self.weights: list[np.ndarray] = []

    def add(self, w: np.ndarray) -> None:
        """Append a round's coefficient vector ``w`` (in the scaled space; the last
        entry is the intercept when ``fit_intercept``)."""
        self.weights.append(w)

    def copy(self) -> LinearModel:
        """A copy whose list of rounds can grow or be cut without changing this one (the
        columns and the coefficient vectors are shared)."""
        new = copy.copy(self)
        new.weights = list(self.weights)
        return new

    @property
    def n_rounds(self) -> int:
        """The number of rounds, one coefficient vector each."""
        return len(self.weights)

    def _last(self) -> np.ndarray:
        if self.weights:
            return self.weights[-1]
        width = len(self.columns) + int(self.fit_intercept)  # no step taken: w_0 = 0
        return np.zeros(width) if self.n_outputs == 1 else np.zeros((width, self.n_outputs))

    def coef(self) -> np.ndarray:
        """The last round's coefficients of the columns, in the caller's units
        (``w / scale``); zeros before any round."""
        return self._last()[: len(self.columns)] / self.scale

    def intercept(self) -> float | np.ndarray:
        """The last round's intercept in the caller's units: 0 (or zeros of shape
        ``(K,)``) without ``fit_intercept``."""
        if not self.fit_intercept:
            return 0.0 if self.n_outputs == 1 else np.zeros(self.n_outputs)
        return self._last()[-1] / self.scale

    def _features(self, X) -> np.ndarray:
        # X validated once, by the estimator; the columns of one class predicted at once
        kinds = {type(h) for h in self.columns}
        kind = kinds.pop() if len(kinds) == 1 else Hypothesis
        cols = [kind.predict_columns(self.columns, X)] if self.columns else []
        if self.fit_intercept:
            cols.append(np.ones(cols[0].shape[0] if cols else len(X)))
        return np.column_stack(cols)

    def truncate(self, n_rounds: int) -> None:
        """Keep the first ``n_rounds`` rounds (early stopping's best round)."""
        del self.weights[n_rounds:]

    def _scores(self, P: np.ndarray, w: np.ndarray) -> np.ndarray:
        return fixed_order_product(P, w) / self.scale

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """``f(x) = Σ_j c_j h_j(x) + b`` with the last round's coefficients."""
        return self._scores(self._features(X), self._last())

    def running_scores(self, X: ArrayLike) -> ReplayScores:
        """The decision on ``X`` kept up to date as rounds are added (the columns are
        predicted on ``X`` once, each round is one product)."""
        return ReplayScores(self._features(X), self._scores)

    def staged_decision_function(self, X: ArrayLike) -> Iterator[np.ndarray]:
        """Yield the decision after each round (a copy each)."""
        for f in self.running_scores(X).advance(self):
            yield f.copy()


class ReplayScores:
    """The decision on X of a model that keeps one coefficient vector per round (a
    linear or kernel model): the basis on X is computed once, and each new round costs
    one product with it.  ``staged_decision_function`` and the validation curves of
    ``fit(eval_set=...)`` both go through here, so they agree bit for bit."""

    def __init__(
        self, basis: np.ndarray, scores: Callable[[np.ndarray, np.ndarray], np.ndarray]
    ) -> None:
        self.basis, self._scores = basis, scores
        self.done = 0
        self.out: np.ndarray | None = None

    def advance(self, model: LinearModel | KernelModel) -> Iterator[np.ndarray]:
        while self.done < model.n_rounds:
            self.out = self._scores(self.basis, model.weights[self.done])
            self.done += 1
            yield self.out

    def catch_up(self, model: LinearModel | KernelModel) -> np.ndarray:
        """The decision after the model's last round (earlier rounds are skipped)."""
        if self.done < model.n_rounds:
            self.done = model.n_rounds - 1
            for _ in self.advance(model):
                pass
        return self.out


class KernelModel:
    """``f(x) = ⟨w, φ(x)⟩ / scale = −Σ_i a_i y_i k(x_i, x) / scale²`` for ``w = Zᵀa`` (the
    kernel form; the same scaling as ``LinearModel``'s ``w / scale``), one dual
    coefficient vector ``a`` per round."""

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        kernel: Callable[[ArrayLike, np.ndarray], np.ndarray],
        scale: float,
    ) -> None:
        # A copy: the model must not change when the caller later writes into the X it
        # passed to fit (validation returns the caller's own array when it is already
        # float64 and C-contiguous).
        self.X = np.array(X, copy=True)
        self.X.setflags(write=False)
        self.y, self.kernel, self.scale = y, kernel, float(scale)
        self.weights: list[np.ndarray] = []

    add = LinearModel.add
    copy = LinearModel.copy
    n_rounds = LinearModel.n_rounds
    truncate = LinearModel.truncate
    staged_decision_function = LinearModel.staged_decision_function

    def _dual(self, a: np.ndarray) -> np.ndarray:
        return -self.y * a / self.scale**2

    def dual_coef(self) -> np.ndarray:
        return self._dual(self.weights[-1] if self.weights else np.zeros(len(self.y)))

    def _scores(self, G: np.ndarray, a: np.ndarray) -> np.ndarray:
        return fixed_order_product(G, self._dual(a))

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        # (the kernel matrix itself is the kernel's: scikit-learn's pairwise kernels go
        # through BLAS, whose last bits this cannot fix)
        return fixed_order_product(self.kernel(X, self.X), self.dual_coef())

    def running_scores(self, X: ArrayLike) -> ReplayScores:
        return ReplayScores(self.kernel(X, self.X), self._scores)
