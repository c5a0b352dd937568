"""What every booster shares: the round loop, the ensemble, the history, stop reasons.

A booster file holds what its paper's algorithm box says and nothing else: how to set up
a fit (``_setup``: validate, bind the oracle), the initial state (``_initial_state``) and
one round (``_round``), which asks the oracle (``correlate`` or ``project``), chooses a
step, computes the new running training scores (never re-predicting old hypotheses) and
returns a :class:`RoundResult`: the new state, the terms to add to the ensemble, the
round's history records and a stop reason or ``None``.

:class:`BaseBooster` owns the loop around it (``fit`` = validate → initial state →
repeated round → finish) and with it the policies every booster shares:

* **timing, history and reporting**: ``history_`` (one record per weak learner, the
  shared keys ``loss``, ``edge``, ``step``, ``margin``, ``time`` (seconds of the round),
  ``cumulative_time`` (seconds since the first round, across warm starts) and
  ``train_error`` for classifiers), ``verbose`` progress lines and ``stop_reason_``;
* **interrupts**: ``KeyboardInterrupt`` keeps every completed round; the estimator is
  fitted and usable with ``stop_reason_ = "interrupted"`` and a warning.  A round is
  committed to the model, the history and the state as one step, with SIGINT held back
  for those few statements, so an interrupt never leaves them out of step.  Code that
  runs fits on a user's behalf (``oracleboost reproduce``) wraps them in
  :func:`reraise_interrupts`: there the interrupt propagates (the fit is rolled back) so
  that Ctrl-C stops the whole command;
* **refits**: any other exception (from an oracle, a loss, bad input) leaves the estimator
  exactly as it was before ``fit`` (unfitted, or the previous model whole) and re-raises;
* **warm_start**: as in scikit-learn's gradient boosting, raising ``n_estimators`` and
  refitting on the same data continues from the fitted rounds, with the saved state
  (running scores, the seed generator), so a deterministic oracle gives exactly one
  longer fit;
* **validation curves and early stopping** (:mod:`.validation`): ``fit(eval_set=...)``
  records each set's loss (and error) after every weak learner from running scores, and
  ``n_iter_no_change`` holds out rows, stops when their loss stalls and cuts the model
  back to its best round;
* **non-finite and diverging losses**: a round whose loss is not finite is discarded and
  the fit stops (``"non_finite"``); a loss that grows past :data:`DIVERGENCE_FACTOR`
  times its best value stops the fit (``"diverged"``) where the booster's theory
  promises descent, and warns once where its step rule allows growth (subgradient steps,
  decreasing schedules).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import math
import signal
import sys
import threading
import time
import warnings
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum
from numbers import Integral, Real
from typing import Any

import joblib
import numpy as np
from sklearn.base import BaseEstimator, is_classifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from .._numerics import logsumexp
from .._validation import check_sample_weight, normalise_weights
from ..oracles.base import Hypothesis, Oracle, OracleCapabilityError
from . import _column_kernels as column_kernels
from .validation import EarlyStopping, EvalSet, held_out_split

__all__ = [
    "StopReason",
    "Ensemble",
    "History",
    "RoundResult",
    "BaseBooster",
    "BoostingWarning",
    "ScoreClassifierMixin",
    "DIVERGENCE_FACTOR",
    "draw_seed",
    "seed_generator",
    "reraise_interrupts",
    "validate_input",
]

#: A loss above this multiple of its best value so far counts as diverging (see
#: :class:`BaseBooster`).  Descent methods never leave their best value behind by such a
#: factor; a factor of 2 catches a slow drift (residual projection with a constant step
#: doubles its loss within a few hundred rounds of its best) well before it explodes.
DIVERGENCE_FACTOR = 2.0


class BoostingWarning(UserWarning):
    """A fit ended or went on in a way the user should know about (interrupt, divergence)."""

_MAX_SEED = np.iinfo(np.int32).max


class StopReason(str, Enum):
    """Why fitting ended; kept as ``stop_reason_`` on every fitted booster."""

    MAX_ROUNDS = "max_rounds"  # the round budget n_estimators was used up
    ZERO_EDGE = "zero_edge"  # the oracle's best hypothesis has no correlation: stationary point
    PERFECT_HYPOTHESIS = "perfect_hypothesis"  # a hypothesis classifies every example right
    ZERO_HYPOTHESIS = "zero_hypothesis"  # the oracle returned h = 0 on the training points
    ZERO_GRADIENT = "zero_gradient"  # the loss is at its minimum on the training points
    INFINITE_STEP = "infinite_step"  # no example is hurt by h: the exact step is unbounded
    ZERO_STEP = "zero_step"  # the step rule gave 0 (e.g. the quadratic step, C_t^4 overflowing)
    INTERRUPTED = "interrupted"  # KeyboardInterrupt: the completed rounds are kept
    NON_FINITE = "non_finite"  # the next round's loss was NaN or infinite; it was discarded
    DIVERGED = "diverged"  # the loss grew past DIVERGENCE_FACTOR times its best value
    ZERO_WEIGHTS = "zero_weights"  # SparseBoost: every example's weight is exactly 0
    ZERO_TRAINING_ERROR = "zero_training_error"  # MadaBoost-type: ε_t = 0 makes η_t = 0
    GAP_CLOSED = "gap_closed"  # the margin certificate's gap fell below tol
    EARLY_STOPPING = "early_stopping"  # n_iter_no_change rounds without validation progress
    NOT_SEPARABLE = "not_separable"  # the upper bound on the max margin fell below tol

    def __str__(self) -> str:
        return self.value

    @property
    def resumable(self) -> bool:
        """Whether ``warm_start`` may run more rounds after a fit that stopped here."""
        return self in (StopReason.MAX_ROUNDS, StopReason.INTERRUPTED, StopReason.EARLY_STOPPING)


class NonFinitePrediction(FloatingPointError):
    """A weak learner of a fitted ensemble predicted NaN or inf on new rows (its training
    outputs were finite: the oracle checks those).  Raised instead of a silent NaN."""

    def __init__(self, h: Hypothesis, pred: np.ndarray, n_rounds: int, where: str = ""):
        self.h, self.pred, self.n_rounds = h, pred, n_rounds
        bad = ~np.isfinite(pred)
        rows = int(bad.any(axis=tuple(range(1, pred.ndim))).sum()) if pred.ndim else 1
        what = "NaN" if np.isnan(pred).any() else "inf"
        super().__init__(
            f"{where or 'a weak learner'} ({type(h).__name__}) predicted {what} on {rows} of "
            f"{len(pred)} rows of X, so the ensemble's prediction is not defined there; "
            "check X for values the weak learner cannot handle"
        )

    def naming(self, booster) -> NonFinitePrediction:
        """The same error, naming the booster and its oracle."""
        oracle = getattr(booster, "oracle", None)
        name = repr(oracle) if oracle is not None else "its default oracle"
        where = f"{type(booster).__name__}: a weak learner of {name}"
        return NonFinitePrediction(self.h, self.pred, self.n_rounds, where)


def seed_generator(random_state) -> np.random.RandomState | None:
    """The generator of a booster's oracle seeds, made once per fit from its
    ``random_state``: ``None`` when no seed was asked for (``random_state=None``, or
    numpy's global generator, which ``check_random_state(None)`` returns), else
    ``check_random_state(random_state)``.  Kept in the booster's state, so a warm start
    or an unpickled model goes on drawing the same way."""
    rng = check_random_state(random_state)
    return None if rng is np.random.mtrand._rand else rng


def draw_seed(rng: np.random.RandomState | None) -> int | None:
    """The ``random_state`` of one oracle call, from :func:`seed_generator`'s ``rng``.

    A seeded generator gives an int seed, drawn as
    ``sklearn.ensemble._base._set_random_states`` does, so a fixed ``random_state`` gives
    the same seeds, query by query.  ``None`` (the booster's ``random_state`` is None)
    gives ``None``: the oracle draws fresh randomness itself (scikit-learn's meaning of
    ``None``), and a :class:`~oracleboost.oracles.CachedOracle` keys the query as "any
    draw" and reuses a stored answer, as ``joblib.Memory`` does for any function.
    """
    return None if rng is None else int(rng.randint(_MAX_SEED))


class Ensemble:
    """``f(x) = intercept + Σ_j coef_j h_j(x)`` built round by round.

    Hypotheses with the same ``key`` (the same function up to ``scale``) share one
    coefficient, so ``l1_norm`` is ``||λ||_1`` over distinct functions, as in the ℓ1
    margin of Telgarsky (2013, §1).  ``norms[j]`` is ``max_i |h_j(x_i)|`` on the training
    points: λ is measured on columns scaled into [−1, 1].
    """

    def __init__(self, intercept: float | np.ndarray = 0.0):
        self.intercept = intercept
        self.hypotheses: list[Hypothesis] = []
        self.coef: list[float] = []
        self.norms: list[float] = []
        self.round_index: list[int] = []  # which hypothesis each round touched
        self.round_delta: list[float] = []  # and by how much its coefficient moved
        self._by_key: dict[Hashable, int] = {}

    def copy(self) -> Ensemble:
        """A copy that can grow without changing this one (hypotheses are shared)."""
        new = copy.copy(self)
        new.hypotheses = list(self.hypotheses)
        new.coef = list(self.coef)
        new.norms = list(self.norms)
        new.round_index = list(self.round_index)
        new.round_delta = list(self.round_delta)
        new._by_key = dict(self._by_key)
        return new

    def add(self, h: Hypothesis, coef: float, norm: float) -> int:
        """Add ``coef · h`` (``h`` already detached); return the hypothesis' index."""
        j = self._by_key.get(h.key) if h.key is not None else None
        if j is None:
            j = len(self.hypotheses)
            self.hypotheses.append(h)
            self.coef.append(0.0)
            self.norms.append(float(norm))
            if h.key is not None:
                self._by_key[h.key] = j
        else:
            # h = (h.scale / first.scale) · first: fold the ratio into the coefficient.
            coef = coef * h.scale / self.hypotheses[j].scale
        self.coef[j] += coef
        self.round_index.append(j)
        self.round_delta.append(coef)
        return j

    @property
    def n_rounds(self) -> int:
        return len(self.round_index)

    def l1_norm(self, pending: Sequence[tuple[Hypothesis, float, float]] = ()) -> float:
        """``||λ||_1`` over distinct functions, after adding the ``pending`` terms
        ``(h, coef, norm)`` (a round computes its margin before it is committed)."""
        if not pending:
            return float((np.abs(self.coef) * np.asarray(self.norms)).sum())
        trial = self.copy()
        for h, c, norm in pending:
            trial.add(h, c, norm)
        return trial.l1_norm()

    def truncate(self, n_rounds: int) -> None:
        """Keep the first ``n_rounds`` rounds (early stopping's best round).

        The coefficients are summed again from the kept rounds' deltas in the order
        ``add`` summed them, so they equal those of a fit that stopped there, bit for bit;
        hypotheses are numbered by first use, so the kept ones are a prefix.
        """
        if n_rounds >= self.n_rounds:
            return
        self.round_index = self.round_index[:n_rounds]
        self.round_delta = self.round_delta[:n_rounds]
        used = max(self.round_index, default=-1) + 1
        self.hypotheses = self.hypotheses[:used]
        self.norms = self.norms[:used]
        self.coef = [0.0] * used
        for j, delta in zip(self.round_index, self.round_delta, strict=True):
            self.coef[j] += delta
        self._by_key = {h.key: j for j, h in enumerate(self.hypotheses) if h.key is not None}

    def decision_function(self, X) -> np.ndarray:
        """``f(x)``, summed round by round exactly as :meth:`staged_decision_function`
        sums it, so the last staged value equals this bit for bit (as scikit-learn's
        gradient boosting guarantees)."""
        return self.running_scores(X).catch_up(self)

    def staged_decision_function(self, X) -> Iterator[np.ndarray]:
        """Yield the decision after each round, adding one term to a running array."""
        for out in self.running_scores(X).advance(self):
            yield out.copy()

    def running_scores(self, X) -> RunningScores:
        """The decision on ``X`` kept up to date as rounds are added: the fit's
        validation curves and the staged predictions are the same sums."""
        return RunningScores(X, self.intercept)


class RunningScores:
    """``intercept + Σ_{r ≤ t} δ_r h_{j_r}(X)`` for a growing :class:`Ensemble`, one new
    round at a time: each round predicts its hypothesis on ``X`` once (a recurring one
    comes from a cache) and adds it to a running array.

    ``staged_decision_function``, ``decision_function`` and the validation curves of
    ``fit(eval_set=...)`` all sum through this class, so they agree bit for bit.
    """

    #: Predictions of recurring hypotheses kept while summing, at most this many floats
    #: (256 MiB); past it a recurring hypothesis is predicted again.
    CACHE_FLOATS = 2**25

    def __init__(self, X, intercept: float | np.ndarray):
        self.X = X
        self.intercept = intercept
        self.done = 0  # rounds summed so far
        self.out: np.ndarray | None = None
        self._cached: dict[int, np.ndarray] = {}
        self._room = self.CACHE_FLOATS

    def advance(self, ensemble: Ensemble) -> Iterator[np.ndarray]:
        """Add the ensemble's rounds not summed yet; yield the running array (the same
        array, updated in place) after each."""
        while self.done < ensemble.n_rounds:
            j = ensemble.round_index[self.done]
            delta = ensemble.round_delta[self.done]
            h = ensemble.hypotheses[j]
            pred = self._cached.get(j)
            if pred is None:
                pred = h.predict(self.X)
                if not np.isfinite(pred).all():
                    raise NonFinitePrediction(h, pred, ensemble.n_rounds)
                # only hypotheses that can recur are worth keeping
                if h.key is not None and pred.size <= self._room:
                    self._cached[j] = pred
                    self._room -= pred.size
            if self.out is None:
                self.out = delta * pred + self.intercept
            else:
                self.out += delta * pred
            self.done += 1
            yield self.out

    def catch_up(self, ensemble: Ensemble) -> np.ndarray:
        """The decision after every round of ``ensemble`` (the running array itself)."""
        for _ in self.advance(ensemble):
            pass
        if self.out is None:
            return np.zeros((len(self.X),) + np.shape(self.intercept)) + self.intercept
        return self.out


class History:
    """Per-round records gathered as lists, exposed as a dict of equal-length arrays."""

    def __init__(self, keys: tuple[str, ...] = ()):
        # Declared keys exist (empty) even when no round ran, e.g. a stop at round 1.
        self._rows: dict[str, list[float]] = {k: [] for k in keys}

    def append(self, **record: float) -> None:
        """Add one row; a key the row lacks gets NaN, and a key new to the history (a
        warm start that adds an ``eval_set``) gets NaN for the earlier rows."""
        n = len(self)
        for k, v in record.items():
            self._rows.setdefault(k, [math.nan] * n).append(float(v))
        for column in self._rows.values():
            if len(column) == n:
                column.append(math.nan)

    def declare(self, *keys: str) -> None:
        """Columns that exist (NaN for rows so far) even before a row sets them."""
        for k in keys:
            self._rows.setdefault(k, [math.nan] * len(self))

    def truncate(self, n_rows: int) -> None:
        for k in self._rows:
            del self._rows[k][n_rows:]

    @classmethod
    def from_dict(cls, rows: dict[str, np.ndarray]) -> History:
        """Continue a fitted ``history_`` (warm start)."""
        new = cls()
        new._rows = {k: [float(v) for v in values] for k, values in rows.items()}
        return new

    def __len__(self) -> int:
        return len(next(iter(self._rows.values()), []))

    def keys(self) -> list[str]:
        return list(self._rows)

    def column(self, key: str) -> list[float]:
        return self._rows.get(key, [])

    def as_dict(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v, dtype=np.float64) for k, v in self._rows.items()}


@dataclass(frozen=True)
class RoundResult:
    """What one round of a booster returns to the loop.

    Attributes
    ----------
    state : object
        The booster's state after the round (what ``warm_start`` continues from).
    terms : tuple of (Hypothesis, float, float)
        ``(h, coef, norm)`` to add to the ensemble (``h`` already detached); empty when
        the round stopped before taking a step.
    records : tuple of dict
        One history record per weak learner the round used (repeated projection uses
        several); the loop adds ``time`` when a record has none.
    stop : StopReason or None
        Why fitting ends after this round, or ``None`` to go on.
    """

    state: Any
    terms: tuple[tuple[Hypothesis, float, float], ...] = ()
    records: tuple[dict[str, float], ...] = ()
    stop: StopReason | None = None


@dataclass
class Problem:
    """What a fit's rounds read and never change: the data inside, the bound oracle, the
    resolved loss and options.  Boosters subclass it; ``signature`` identifies the data
    (``warm_start`` continues only on the same data)."""

    signature: str = field(default="", kw_only=True)


@contextmanager
def _sigint_held():
    """Hold SIGINT back while a round is committed, then deliver it.

    Only the main thread receives signals; elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    except (ValueError, OSError):  # no signal support here (e.g. an embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            if callable(previous):
                previous(signal.SIGINT, None)
            else:
                raise KeyboardInterrupt




#: Whether a KeyboardInterrupt in ``fit`` keeps the completed rounds (the default) or
#: propagates (inside :func:`reraise_interrupts`).
_KEEP_ROUNDS_ON_INTERRUPT: ContextVar[bool] = ContextVar(
    "oracleboost_keep_rounds_on_interrupt", default=True)


@contextmanager
def reraise_interrupts() -> Iterator[None]:
    """Within the block, Ctrl-C in a booster's ``fit`` propagates instead of keeping rounds.

    A user's own ``fit`` keeps its completed rounds when interrupted
    (``stop_reason_ = "interrupted"``): the user asked for that model and can continue
    it.  A program that runs fits for the user (an experiment, a grid) must instead stop
    when the user presses Ctrl-C, not finish with a partly fitted model recorded as a
    result: it runs them inside this block, where ``KeyboardInterrupt`` leaves the
    estimator as it was before ``fit`` (the loop's transaction) and propagates.  The
    setting is a context variable: it holds in this thread (and in the tasks it starts
    with a copy of its context), nests, and is restored on exit.
    """
    token = _KEEP_ROUNDS_ON_INTERRUPT.set(False)
    try:
        yield
    finally:
        _KEEP_ROUNDS_ON_INTERRUPT.reset(token)


#: The ids of the estimators whose ``fit`` is running (in any thread), and its lock.
_FITTING: set[int] = set()
_FITTING_LOCK = threading.Lock()


@contextmanager
def _one_fit_at_a_time(estimator):
    """Refuse a second concurrent ``fit`` of one estimator with a ``RuntimeError``.

    Two fits of one estimator on two threads each commit their own attributes, so the
    estimator could end with the ensemble of one fit and the ``classes_`` of the other
    (measured: 6 runs of 10, predicting "yes"/"no" for the first fit's 0/1 data without
    an error).  scikit-learn promises nothing here; a fit that is already a transaction
    can at least refuse.  The running fits are kept in a registry keyed by the
    estimator's id, not on the estimator: a lock is not picklable, and ``clone``,
    ``get_params`` and pickling see the estimator as it is.  Non-blocking: the second
    fit fails at once, before it changes anything.
    """
    key = id(estimator)
    with _FITTING_LOCK:
        if key in _FITTING:
            raise RuntimeError(
                f"{type(estimator).__name__} (id {key:#x}) is already being fitted in another "
                "thread; one estimator runs one fit at a time. Fit a clone in each thread "
                "(sklearn.base.clone(estimator))"
            )
        _FITTING.add(key)
    try:
        yield
    finally:
        with _FITTING_LOCK:
            _FITTING.discard(key)


def validate_input(estimator, X, y="no_validation", *, y_numeric: bool = False, reset=True):
    """scikit-learn's ``validate_data(estimator, X, y)`` (which sets, or with
    ``reset=False`` checks, ``n_features_in_`` and ``feature_names_in_``), X as float64
    (and y with ``y_numeric``), with errors that name the argument at fault; without y
    (scikit-learn's ``"no_validation"``), X alone.

    scikit-learn reports a value that is not a number, in X or in y, as NumPy's bare
    "could not convert string to float: 'abc'".  Here the error says which argument
    (and for a DataFrame, which columns) holds it.  A categorical column is read as
    scikit-learn reads it: numeric categories as their values, as the same column of
    floats would be; other categories are refused, naming X and the column (their codes
    would impose an order and distances the categories do not have: encode them first).
    X is asked for as float64 (what every oracle computes in): with scikit-learn's
    default, "numeric", a DataFrame with such a column came back as an object array and
    failed later, in the oracle, without a name.
    """
    kw = dict(reset=reset, dtype=np.float64, ensure_all_finite=True)
    try:
        if isinstance(y, str) and y == "no_validation":
            return validate_data(estimator, X, **kw)
        X, y = validate_data(estimator, X, y, y_numeric=y_numeric, **kw)
        # scikit-learn converts only an object y; strings stay strings
        return X, (y.astype(np.float64) if y_numeric else y)
    except (TypeError, ValueError) as exc:
        # the same type (scikit-learn's checks expect NumPy's TypeError for an object
        # that is no number), with a message that names the argument
        columns = _non_numeric_columns(X)
        if columns is not None:
            raise type(exc)(
                f"X must be numeric for {type(estimator).__name__}; {columns}: {exc}"
            ) from exc
        if y_numeric and not _converts(y):
            raise type(exc)(
                f"y must be numeric for {type(estimator).__name__} (a regression or "
                f"ranking target); it holds values that are not numbers ({exc}). For "
                "class labels use a classifier"
            ) from exc
        raise


def _converts(a) -> bool:
    """Whether ``a`` converts to float64 as scikit-learn converts it (pandas' missing
    values become NaN; finiteness is checked elsewhere)."""
    try:
        check_array(a, dtype=np.float64, ensure_all_finite=False, ensure_2d=False,
                    ensure_min_samples=0, allow_nd=True)
    except (TypeError, ValueError):
        return False
    return True


def _non_numeric_columns(X) -> str | None:
    """Where X holds values that are not numbers (None if it converts): the columns of a
    DataFrame by name, categorical ones called so, else the array as a whole."""
    if _converts(X):
        return None
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        return "it holds values that are not numbers"
    bad = [(name, dtype) for name, dtype in dtypes.items() if not _converts(X[name])]
    described = [
        f"{name!r} (categorical with categories that are not numbers: encode it first, "
        "e.g. with OrdinalEncoder or OneHotEncoder)" if str(dtype) == "category"
        else f"{name!r} ({dtype})"
        for name, dtype in bad
    ]
    many = len(bad) > 1
    return (f"column{'s' if many else ''} {', '.join(described)} hold{'' if many else 's'} "
            "values that are not numbers")


def data_signature(*arrays) -> str:
    """A fingerprint of the fit's data (``warm_start`` continues only on the same data).

    Arrays are hashed from their bytes by SHA-1 (not for security: hardware SHA makes it
    3 times faster than joblib's MD5, 0.08 s for a 1,000,000 × 20 X); anything else
    by ``joblib.hash``.
    """
    digest = hashlib.sha1()
    for a in arrays:
        if isinstance(a, np.ndarray):
            a = np.ascontiguousarray(a)
            digest.update(f"{a.dtype.str}{a.shape}".encode())
            digest.update(a.data if a.dtype != object else joblib.hash(a).encode())
        else:
            digest.update(joblib.hash(a).encode())
    return digest.hexdigest()


#: How errors name early stopping's held-out rows.
_HELD_OUT = "its held-out rows"


class BaseBooster(BaseEstimator):
    """Estimator plumbing and the round loop shared by every booster.

    Subclasses implement ``_setup`` (validate the data, set ``classes_`` and the like,
    bind the oracle; return a :class:`Problem`), ``_initial_state`` (the state before
    round 1 and the ensemble's intercept), ``_round`` (one round of the algorithm box),
    ``_history_keys`` and ``_growth_allowed``, and call :meth:`_fit_rounds` from ``fit``.
    After ``fit``: ``ensemble_``, ``history_``, ``stop_reason_``.
    """

    _parameter_constraints: dict = {
        "oracle": [HasMethods(["bind"]), None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither"), None],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    #: The per-row arguments of ``fit`` after X and y, in order (split with the rows when
    #: early stopping holds some out), and which of them an ``eval_set`` entry takes from
    #: its parallel list (``eval_sample_weight``; the ranker's ``eval_qid``).
    _row_args: tuple[str, ...] = ("sample_weight",)
    _eval_row_arg = "sample_weight"
    #: The per-row argument whose groups a held-out split keeps whole (the ranker's qid).
    _split_groups_arg: str | None = None

    # -- fitted model ------------------------------------------------------------------
    @property
    def estimators_(self) -> list[Hypothesis]:
        """The distinct hypotheses of the ensemble."""
        check_is_fitted(self, "ensemble_")
        return self.ensemble_.hypotheses

    @property
    def coef_(self) -> np.ndarray:
        """Coefficient of each hypothesis in ``estimators_``."""
        check_is_fitted(self, "ensemble_")
        return np.asarray(self.ensemble_.coef)

    @property
    def n_estimators_(self) -> int:
        """Rounds actually run (fewer than ``n_estimators`` after an early stop)."""
        check_is_fitted(self, "ensemble_")
        return self.ensemble_.n_rounds

    @property
    def feature_importances_(self) -> np.ndarray:
        """Impurity-style importances of the input features, summing to 1.

        ``Σ_t |δ_t| · ||h_t||_∞ · imp(h_t)``, normalised: each round's term weighted by its
        size on the training rows (its coefficient times the hypothesis' largest output)
        times the hypothesis' own importances (a stump: its split feature; a scikit-learn
        tree: its ``feature_importances_``; a LightGBM tree: its split gains; a linear
        coordinate: its feature).  Ensembles of hypotheses that do not know their
        features (columns of a fixed matrix, neural nets) have none: the attribute
        raises ``AttributeError`` saying why, so ``hasattr`` is False.
        """
        check_is_fitted(self, "ensemble_")
        ensemble = self.ensemble_
        if not isinstance(ensemble, Ensemble):
            raise AttributeError(
                f"{type(self).__name__} fits a {type(ensemble).__name__}, not an ensemble of "
                "weak learners: it has no feature_importances_ (see coef_)"
            )
        d = int(self.n_features_in_)
        own = [h.feature_importances(d) for h in ensemble.hypotheses]
        unknown = sorted({type(h).__name__ for h, imp in zip(ensemble.hypotheses, own,
                                                              strict=True) if imp is None})
        if unknown:
            raise AttributeError(
                f"{type(self).__name__} has no feature_importances_: its weak learners "
                f"({', '.join(unknown)}) do not say which input features they use"
            )
        total = np.zeros(d)
        for j, delta in zip(ensemble.round_index, ensemble.round_delta, strict=True):
            total += abs(delta) * ensemble.norms[j] * np.asarray(own[j], dtype=np.float64)
        mass = total.sum()
        return total / mass if mass > 0 else total

    def _raw(self, X) -> np.ndarray:
        check_is_fitted(self, "ensemble_")
        X = validate_input(self, X, reset=False)
        try:
            return self.ensemble_.decision_function(X)
        except NonFinitePrediction as exc:
            raise exc.naming(self) from None

    def _staged_raw(self, X) -> Iterator[np.ndarray]:
        check_is_fitted(self, "ensemble_")
        X = validate_input(self, X, reset=False)
        try:
            yield from self.ensemble_.staged_decision_function(X)
        except NonFinitePrediction as exc:
            raise exc.naming(self) from None

    # -- hooks ---------------------------------------------------------------------------
    def _setup(self, *args, **kwargs) -> Problem:
        raise NotImplementedError

    def _initial_state(self, problem: Problem) -> tuple[Any, float | np.ndarray]:
        raise NotImplementedError

    def _round(
        self, problem: Problem, state: Any, ensemble: Ensemble, t: int, budget: int
    ) -> RoundResult:
        """Round ``t + 1`` (``t`` weak learners used so far, ``budget`` left)."""
        raise NotImplementedError

    def _history_keys(self, problem: Problem) -> tuple[str, ...]:
        raise NotImplementedError

    def _new_model(self, problem: Problem, intercept):
        """The model the rounds add to: an :class:`Ensemble` of hypotheses (a linear
        model for the margin classifier).  It needs ``add(*term)``, ``copy``,
        ``n_rounds``, ``l1_norm`` where margins use it, and the decision functions."""
        return Ensemble(intercept=intercept)

    #: Whether the loop watches ``loss`` for divergence (False for boosters whose recorded
    #: loss is bounded, e.g. a training error).
    _watch_divergence = True

    def _growth_allowed(self, problem: Problem) -> bool:
        """Whether the loss may legitimately rise above its best (then growth past
        :data:`DIVERGENCE_FACTOR` warns instead of stopping)."""
        return False

    def _eval_target(self, problem: Problem, y: np.ndarray, extra, where: str):
        """An eval set's ``(target, weight)`` in the booster's own encoding; ``extra`` is
        its entry of ``eval_sample_weight`` (the ranker: ``eval_qid``)."""
        raise NotImplementedError

    def _eval_metrics(self, problem: Problem, target, weight: np.ndarray,
                      scores: np.ndarray) -> dict[str, float]:
        """``{"loss": …}`` (and ``"error"`` for classifiers) of the running ``scores``
        (what ``decision_function`` would return before any class mapping)."""
        raise NotImplementedError

    def _early_stopping_tol(self) -> float:
        return float(self.tol)

    # -- the loop ------------------------------------------------------------------------
    def _fit_rounds(self, X, y, *rows, eval_set=None, eval_rows=None):
        """``fit``: validate → initial state → repeated round → finish, as one transaction.

        ``rows`` are the per-row arguments named by ``_row_args``; ``eval_set`` is a list
        of ``(X, y)`` pairs and ``eval_rows`` the parallel list of their
        ``_eval_row_arg`` (or None).  Any exception but a ``KeyboardInterrupt`` after a
        completed round restores the estimator as it was before the call and re-raises.
        A second ``fit`` of the same estimator while one runs (another thread) raises a
        ``RuntimeError`` before touching anything (see :func:`_one_fit_at_a_time`).
        """
        with _one_fit_at_a_time(self):
            before = dict(vars(self))
            try:
                X, y, rows, held = self._hold_out(X, y, rows)
                problem = self._setup(X, y, *rows)
                evals = self._eval_sets(problem, eval_set, eval_rows, held)
                self._boost(problem, evals)
            except BaseException:
                vars(self).clear()
                vars(self).update(before)
                raise
        return self

    def _early_stopping_on(self) -> bool:
        return self.n_iter_no_change is not None

    def _hold_out(self, X, y, rows):
        """Early stopping's held-out split: ``(X, y, rows)`` to train on and the
        held-out ``(X, y, extra)``, or the arguments unchanged and None."""
        if not self._early_stopping_on() or self.validation_fraction is None:
            return X, y, rows, None
        X, y = validate_input(self, X, y)
        n = X.shape[0]
        arrays = [
            None if a is None else self._row_array(name, a, n)
            for name, a in zip(self._row_args, rows, strict=True)
        ]
        named = dict(zip(self._row_args, arrays, strict=True))
        groups = named.get(self._split_groups_arg) if self._split_groups_arg else None
        stratify = None
        if groups is None and is_classifier(self):
            check_classification_targets(y)  # "continuous" labels get sklearn's message
            try:
                if len(np.unique(y)) >= 2:  # one class: fit's own check says so
                    stratify = y
            except TypeError:  # unorderable labels: fit's own check says so
                pass
        # kept, so that a warm start on the same data holds out the same rows (also when
        # random_state is None)
        signature = data_signature(X, y, *arrays)
        saved = getattr(self, "_held_out_", None)
        if saved is not None and saved[0] == signature:
            train, held = saved[1], saved[2]  # warm start: the same split again
        else:
            train, held = held_out_split(
                n, float(self.validation_fraction), self.random_state,
                stratify=stratify, groups=groups,
            )
        self._held_out_ = (signature, train, held)
        rows = tuple(None if a is None else a[train] for a in arrays)
        extra = named.get(self._eval_row_arg)
        return X[train], y[train], rows, (X[held], y[held], None if extra is None
                                            else extra[held])

    def _row_array(self, name: str, a, n: int) -> np.ndarray:
        """A per-row argument of ``fit`` (``_row_args``) as an array of ``n`` rows; the
        ranker checks its ``qid`` here."""
        a = np.asarray(a)
        if a.shape[:1] != (n,):
            raise ValueError(f"{name} has shape {a.shape}; X has {n} rows")
        return a

    def _eval_sets(self, problem: Problem, eval_set, eval_rows, held) -> list[EvalSet]:
        """Check the watched sets against the fitted data (features, classes) and put
        them in the booster's encoding; errors name ``eval_set[i]``."""
        evals = []
        if held is not None:
            Xh, yh, extra = held
            target, weight = self._eval_target(problem, yh, extra, _HELD_OUT)
            evals.append(EvalSet("heldout", "", Xh, target, weight))
        if eval_set is None:
            if eval_rows is not None:
                raise ValueError(f"eval_{self._eval_row_arg} is given but eval_set is not")
            return evals
        if isinstance(eval_set, tuple) or not isinstance(eval_set, Sequence | Iterator):
            raise TypeError(
                "eval_set must be a list of (X, y) pairs, e.g. eval_set=[(X_val, y_val)]; "
                f"got {type(eval_set).__name__}"
            )
        eval_set = list(eval_set)
        extras = [None] * len(eval_set) if eval_rows is None else list(eval_rows)
        if len(extras) != len(eval_set):
            raise ValueError(
                f"eval_{self._eval_row_arg} has {len(extras)} entries but eval_set has "
                f"{len(eval_set)}; give one per set (None for none)"
            )
        for i, (pair, extra) in enumerate(zip(eval_set, extras, strict=True)):
            where = f"eval_set[{i}]"
            if not isinstance(pair, Sequence) or len(pair) != 2:
                raise TypeError(f"{where} must be an (X, y) pair; got {type(pair).__name__}")
            try:
                Xv = validate_input(self, pair[0], reset=False)
            except ValueError as exc:
                raise ValueError(f"{where}: X: {exc}") from exc
            yv = np.asarray(pair[1])
            if yv.shape != (Xv.shape[0],):
                raise ValueError(
                    f"{where}: y has shape {yv.shape}; its X has {Xv.shape[0]} rows"
                )
            target, weight = self._eval_target(problem, yv, extra, where)
            evals.append(EvalSet("val", f"_{i}", Xv, target, weight))
        return evals

    def _eval_weight(self, extra, n: int, where: str) -> np.ndarray:
        """An eval set's weights, named in errors by the argument they came from, and
        normalised as the training weights are."""
        name = f"sample_weight ({where})" if where == _HELD_OUT else (
            f"eval_sample_weight ({where})"
        )
        w = check_sample_weight(extra, n, name=name)
        return normalise_weights(w) if self._scale_free_weights else w

    def _class_index(self, y: np.ndarray, where: str) -> np.ndarray:
        """Indices of ``y``'s labels in ``classes_``; labels unseen in training raise."""
        try:
            index = np.searchsorted(self.classes_, y)
            known = (index < len(self.classes_)) & (
                self.classes_.take(np.minimum(index, len(self.classes_) - 1)) == y
            )
        except TypeError as exc:
            raise ValueError(f"{where}: y's labels cannot be compared with classes_") from exc
        if not known.all():
            raise ValueError(
                f"{where}: y has labels not seen in training: {np.unique(y[~known])[:5]} "
                f"(classes_ = {self.classes_})"
            )
        return index

    @staticmethod
    def _numeric_target(y: np.ndarray, where: str) -> np.ndarray:
        try:
            yv = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: y must be numeric; got {y.dtype}") from exc
        if not np.isfinite(yv).all():
            raise ValueError(f"{where}: y contains NaN or inf")
        return yv

    def _boost(self, problem: Problem, evals: Sequence[EvalSet] = ()) -> None:
        resume = self.warm_start and hasattr(self, "_state_")
        if resume:
            if self._signature_ != problem.signature:
                raise ValueError(
                    "warm_start=True continues a fit on the same data, but X, y or "
                    "sample_weight differ from those of the fitted model; set "
                    "warm_start=False to fit anew"
                )
            done = len(History.from_dict(self.history_))
            if self.n_estimators < done:
                raise ValueError(
                    f"n_estimators={self.n_estimators} must be at least the number of "
                    f"rounds already fitted ({done}) when warm_start=True"
                )
            # Copies: a failed continuation must leave the fitted model as it was.
            state = copy.deepcopy(self._state_)
            ensemble = self.ensemble_.copy()
            history = History.from_dict(self.history_)
            stop = None if self.stop_reason_.resumable else self.stop_reason_
        else:
            state, intercept = self._initial_state(problem)
            ensemble = self._new_model(problem, intercept)
            history = History(self._history_keys(problem) + ("cumulative_time",))
            stop = None
        metrics = ("loss", "error") if is_classifier(self) else ("loss",)
        for ev in evals:
            history.declare(*(ev.key(m) for m in metrics))
            ev.scores = ensemble.running_scores(ev.X)
            ev.scores.catch_up(ensemble)  # a warm start: its rounds so far, once
        monitor = None
        if self._early_stopping_on():
            key = evals[0].key("loss") if evals else "loss"
            seen = history.column(key)
            monitor = EarlyStopping(
                key, self.n_iter_no_change, self._early_stopping_tol(),
                seen[-1] if seen else math.inf, len(history), ensemble.n_rounds, state,
            )
            # one value per round; a continuation extends the curve up to its best round
            before = getattr(self, "validation_loss_", ()) if resume else ()
            curve = list(before[: int(np.argmin(before)) + 1] if len(before) else ())

        # Divergence is judged on log(loss): the log-space boosters record it directly
        # (their risk underflows), the others' losses are positive or exactly 0.
        log_key = "log_loss" if "log_loss" in history.keys() else None
        best = min(map(self._log_loss_of, history.column(log_key or "loss"),
                       [bool(log_key)] * len(history)), default=math.inf)
        growth_allowed = self._growth_allowed(problem)
        warned_growth = False
        start = time.perf_counter()
        try:
            while stop is None and len(history) < self.n_estimators:
                t = len(history)
                t0 = time.perf_counter()
                result = self._round(problem, state, ensemble, t, self.n_estimators - t)
                elapsed = time.perf_counter() - t0
                records = result.records
                if records and not self._finite_loss(records[-1]):
                    stop = StopReason.NON_FINITE
                    warnings.warn(
                        f"{type(self).__name__}: the loss after round {t + 1} is not finite "
                        f"({records[-1].get('loss')}); that round was discarded and fitting "
                        f"stopped after {t} rounds (stop_reason_='non_finite')",
                        BoostingWarning,
                        stacklevel=4,
                    )
                    break
                with _sigint_held():
                    for term in result.terms:
                        ensemble.add(*term)
                    self._evaluate(problem, evals, ensemble, records)
                    for record in records:
                        record.setdefault("time", elapsed / len(records))
                        done = history.column("cumulative_time")
                        record["cumulative_time"] = (done[-1] if done else 0.0) + record["time"]
                        history.append(**record)
                    state = result.state
                for i, record in enumerate(records):
                    self._report(t + i, record, start)
                stop = result.stop
                if records:
                    value = self._log_loss_of(records[-1][log_key or "loss"], bool(log_key))
                    if (
                        stop is None
                        and self._watch_divergence
                        and math.isfinite(best)
                        and value > best + math.log(DIVERGENCE_FACTOR)
                    ):
                        what = (
                            f"{type(self).__name__}: the loss rose to {records[-1]['loss']:.6g}, "
                            f"more than {DIVERGENCE_FACTOR:g} times its best value "
                            f"({math.exp(best):.6g}), at round {len(history)}"
                        )
                        if not growth_allowed:
                            stop = StopReason.DIVERGED
                            warnings.warn(
                                f"{what}; fitting stopped (stop_reason_='diverged'). "
                                f"{self._divergence_hint(problem)}",
                                BoostingWarning,
                                stacklevel=4,
                            )
                        elif not warned_growth:
                            warned_growth = True
                            warnings.warn(
                                f"{what}; this step rule allows the loss to rise, so "
                                "fitting goes on (history_['loss'] shows the curve)",
                                BoostingWarning,
                                stacklevel=4,
                            )
                    best = min(best, value)
                if monitor is not None and records:
                    curve.append(records[-1][monitor.key])
                    patience_out = monitor.update(
                        records[-1][monitor.key], len(history), ensemble.n_rounds, state
                    )
                    if patience_out and stop is None:
                        stop = StopReason.EARLY_STOPPING
        except KeyboardInterrupt:
            if len(history) == 0 or not _KEEP_ROUNDS_ON_INTERRUPT.get():
                raise  # _fit_rounds restores the estimator as it was
            stop = StopReason.INTERRUPTED
            warnings.warn(
                f"{type(self).__name__}: interrupted; the model keeps the {len(history)} "
                "completed rounds (stop_reason_='interrupted'; warm_start=True continues)",
                BoostingWarning,
                stacklevel=4,
            )
        if monitor is not None and monitor.rows < len(history):
            # keep the best model the fit saw (LightGBM's best_iteration)
            ran = len(history)
            ensemble.truncate(monitor.rounds)
            history.truncate(monitor.rows)
            state = monitor.state
            if self.verbose:
                print(f"kept the first {monitor.rows} of {ran} weak learners, where "
                      f"{monitor.key} was least ({monitor.best:.6g})", file=sys.stdout)
        self.validation_loss_ = np.asarray(curve if monitor is not None else [], dtype=float)
        self.best_iteration_ = len(history) if monitor is not None else None
        self.ensemble_ = ensemble
        self.history_ = history.as_dict()
        self.stop_reason_ = StopReason.MAX_ROUNDS if stop is None else stop
        self._state_ = state
        self._signature_ = problem.signature

    def _evaluate(self, problem: Problem, evals: Sequence[EvalSet], model, records) -> None:
        """Add each watched set's loss (and error) after the round's new terms to the
        round's records: one value per weak learner when the round used several."""
        for ev in evals:
            values = [
                self._eval_metrics(problem, ev.target, ev.weight, scores)
                for scores in ev.scores.advance(model)
            ]
            # one model round per record (RoundResult: one record per weak learner)
            for record, value in zip(records, values, strict=True):
                for metric, v in value.items():
                    record[ev.key(metric)] = v

    def _divergence_hint(self, problem: Problem) -> str:
        return "A smaller learning_rate may help."

    @staticmethod
    def _log_loss_of(value: float, is_log: bool) -> float:
        """log(loss); −inf for a loss of 0 or below (no ratio to its best is defined)."""
        if is_log:
            return float(value)
        return math.log(value) if value > 0 else -math.inf

    @staticmethod
    def _finite_loss(record: dict[str, float]) -> bool:
        # The log-space boosters' risk may underflow to 0; its log must stay finite.
        return math.isfinite(record["log_loss"] if "log_loss" in record else record["loss"])

    # -- helpers for fit ------------------------------------------------------------------
    #: Whether the booster's risk is a weighted mean of its rows' losses, so that the
    #: weights' scale is normalised away at ``fit`` (see ``_positive_weight_rows``).
    #: False where the weights' scale is part of the problem (a risk that sums them).
    _scale_free_weights = True

    def _positive_weight_rows(self, X, y, s, *rows):
        """Keep the rows with positive weight, and normalise their weights.

        Rows of weight 0 add nothing to any risk, and binding them would still move
        data-dependent choices such as stump thresholds (fitting with weight 0 must
        equal fitting without the row).  Every risk is a weighted mean, so the fit does
        not depend on the weights' scale; with the weights scaled here, once, by a power
        of two to a mean in [1, 2), neither does its arithmetic (see
        :func:`~oracleboost._validation.normalise_weights`: weights 1e300 or 1e-300
        times the given ones fit as they do, and a power of two times them bit for
        bit), unless ``_scale_free_weights`` is False.  ``rows`` are further per-row
        arrays (or None) cut with them.
        """
        keep = s > 0
        if not keep.all():
            X, y, s = X[keep], y[keep], s[keep]
            rows = tuple(None if a is None else a[keep] for a in rows)
        return (X, y, normalise_weights(s) if self._scale_free_weights else s, *rows)

    def _bind(self, X, default: Oracle, need: str):
        oracle = default if self.oracle is None else self.oracle
        bound = oracle.bind(X)
        if not getattr(bound.capabilities, need):
            raise OracleCapabilityError(
                f"{type(self).__name__} needs an oracle that answers {need}; "
                f"{type(oracle).__name__} does not (capabilities: {bound.capabilities})"
            )
        return bound

    def _report(self, t: int, record: dict[str, float], start: float) -> None:
        """Progress on long runs: a line every ~10% of the budget (every round if verbose > 1)."""
        if not self.verbose:
            return
        every = 1 if self.verbose > 1 else max(1, self.n_estimators // 10)
        if t == 0:
            print(f"{'round':>7} " + " ".join(f"{k:>12}" for k in record), file=sys.stdout)
        if t % every == 0 or t == self.n_estimators - 1:
            cols = " ".join(f"{v:12.6g}" for v in record.values())
            print(f"{t + 1:7d} {cols}   ({time.perf_counter() - start:.1f}s)", file=sys.stdout)


class ScoreClassifierMixin:
    """Prediction for classifiers whose model sums scores: ``decision_function`` is the
    model's f — shape (n,) for two classes, positive meaning ``classes_[1]``, or (n, K)
    class scores — and ``predict`` its sign or argmax (ties to the lowest class)."""

    def decision_function(self, X) -> np.ndarray:
        """The summed scores f(x): shape (n,) for two classes (positive means
        ``classes_[1]``), else (n, K); what they sum is in the class docstring."""
        return self._raw(X)

    def staged_decision_function(self, X) -> Iterator[np.ndarray]:
        """Yield f after each round (one term added to a running array per round)."""
        yield from self._staged_raw(X)

    def _labels(self, f: np.ndarray) -> np.ndarray:
        idx = (f > 0).astype(int) if f.ndim == 1 else np.argmax(f, axis=1)
        return self.classes_.take(idx)

    def predict(self, X) -> np.ndarray:
        return self._labels(self.decision_function(X))

    def staged_predict(self, X) -> Iterator[np.ndarray]:
        for f in self.staged_decision_function(X):
            yield self._labels(f)


@dataclass(frozen=True)
class SignedColumn:
    """A ±1-label booster's view of an oracle answer ``h`` on distribution ``w``: the
    column ``u_i = sign · y_i h(x_i) / norm`` in [−1, 1], its edge ``γ = Σ_i w_i u_i ≥ 0``
    and the sign that makes it non-negative (the class is taken closed under negation).

    ``norm`` is ``max |h|`` for scale-free classes (regressors: rescaled to max |h| = 1)
    and ``max(max |h|, 1)`` for ``bounded`` ones (values in [−1, 1] used as they are:
    Telgarsky's A, MABoost's h ∈ [−1, 1]).

    The reductions come from two compiled passes over the rows
    (:mod:`._column_kernels`); the column ``u`` itself is built only when a step rule
    or booster reads it.  ``agreement`` and ``disagreement`` are ``Σ_i w_i (1 ± u_i)``
    (the AdaBoost step's sums, of non-negative terms), ``u_min`` and ``u_max`` are
    ``min_i u_i`` (1 when the column is right on every row with full confidence) and
    ``max_i u_i``.
    """

    a: np.ndarray
    y: np.ndarray
    edge: float
    sign: float
    norm: float
    agreement: float
    disagreement: float
    u_min: float
    u_max: float

    @classmethod
    def of(cls, h: Hypothesis, y: np.ndarray, w: np.ndarray, bounded: bool):
        """The signed column, or a stop reason: ``ZERO_HYPOTHESIS`` (h = 0 on the
        training points) or ``ZERO_EDGE``."""
        a = h.train_output
        # A bounded class's norm is 1 unless it overshoots: one pass finds out.
        sums = column_kernels.signed_sums(a, y, w, 1.0) if bounded else None
        top = float(sums[-1] if bounded else column_kernels.peak(a))
        if top == 0.0:
            return StopReason.ZERO_HYPOTHESIS
        norm = max(top, 1.0) if bounded else top
        if sums is None or norm != 1.0:
            sums = column_kernels.signed_sums(a, y, w, norm)
        corr, plus, minus, lo, hi, _ = sums
        if corr == 0.0:
            return StopReason.ZERO_EDGE
        if corr > 0:
            return cls(a, y, corr, 1.0, norm, plus, minus, lo, hi)
        return cls(a, y, -corr, -1.0, norm, minus, plus, -hi, -lo)

    @functools.cached_property
    def u(self) -> np.ndarray:
        u = self.y * self.a / self.norm
        u *= self.sign
        return u


def margin_record(margins: np.ndarray, l1_norm: float) -> float:
    """The ℓ1 margin ``min_i y_i f(x_i) / ||λ||_1`` from the running margins (NaN before
    any weight is placed)."""
    if not l1_norm > 0.0:
        return math.nan
    return float(margins.min() / l1_norm)


def weighted_mean_of_logs(log_values: np.ndarray, weight: np.ndarray) -> float:
    """``Σ_i s_i e^{v_i} / Σ_i s_i`` from ``v = log`` of each row's loss, in log space (the
    exponential risk of a large margin underflows term by term)."""
    with np.errstate(divide="ignore"):  # a zero weight is a row that does not count
        log_s = np.log(weight)
    return math.exp(float(logsumexp(log_s + log_values)) - math.log(float(weight.sum())))


def weighted_error(wrong: np.ndarray, weight: np.ndarray) -> float:
    """``Σ_i s_i [wrong_i] / Σ_i s_i`` (unit weights: the fraction, exactly as
    ``np.mean(predict(X) != y)``)."""
    return float(weight[wrong].sum() / weight.sum())


def margin_metrics(loss, ypm: np.ndarray, f: np.ndarray, weight: np.ndarray) -> dict[str, float]:
    """A binary margin classifier's loss ``Σ s φ(y f) / Σ s`` and error (``predict``
    says ``classes_[1]`` when ``f > 0``, so a tie is wrong on a positive row only)."""
    return {
        "loss": weighted_mean_of_logs(loss.log_phi(ypm * f), weight),
        "error": weighted_error((f > 0) != (ypm > 0), weight),
    }
