"""The Oracle protocol: the only way a booster talks to a weak-learner class.

An :class:`Oracle` is a configured hypothesis class: cheap to build, picklable, with
scikit-learn-style parameters (``get_params``/``set_params``/``clone`` work).
``oracle.bind(X)`` does the per-dataset work once (binning, sorting, a LightGBM
``Dataset``) and returns a :class:`BoundOracle` over those ``n`` training points, which
answers the two queries of the papers:

``correlate(r)``
    weighted classification / maximum inner product.  ``r`` has shape ``(n,)`` (or
    ``(n, K)`` for multiclass) and the answer is the hypothesis that (approximately)
    maximises ``<r, h> / ||h||`` over the class.  For ±1 hypotheses this is weighted
    classification with labels ``sign(r)`` and weights ``|r|`` (Grubb & Bagnell 2011,
    eq. 3 and Theorem 1; Telgarsky 2012/2013, the weak-learning oracle).
``project(target, sample_weight=None)``
    least-squares projection: the ``h`` minimising
    ``sum_i w_i ||target_i - h(x_i)||^2`` (Grubb & Bagnell 2011, eq. 4).

Both return a :class:`Hypothesis` that predicts new data and carries its outputs on
the bound training points (``train_output``), so boosters never re-predict the
training set.  What an oracle can answer is declared in :class:`Capabilities`; a
booster reads the declaration and never imports a concrete oracle.

Prediction: an ensemble adds many rounds of one class at once through the class method
:meth:`Hypothesis.predict_sum` (``out += coef[r] * h_r(X)`` for every round, bit for
bit the loop of single predictions; compiled for stumps), which raises
:class:`NonFiniteOutput` where a hypothesis predicts NaN or ±inf.

Randomness: each query takes ``random_state`` (an int seed or ``None``) drawn by the
booster from its own generator, as scikit-learn's ensembles seed their base
estimators.  A query is therefore a pure function of (bound data, query arrays,
parameters, seed), which is what makes :class:`~oracleboost.oracles.CachedOracle`
exact.

Threads: a bound oracle may be shared between threads (a grid on joblib's threading
backend, row blocks run on threads), and every answer equals the answer to the same
query asked in sequence.  ``StumpOracle``, ``TreeOracle``, ``SklearnOracle``,
``MLPOracle``, ``MatrixOracle`` and ``LinearOracle`` keep no state between queries
(scikit-learn estimators are cloned per query) and answer concurrently;
``LightGBMOracle`` keeps its LightGBM boosters, the Dataset's labels and its gradient
buffers between queries, so its bound oracle serialises queries with a lock;
``CachedOracle`` and ``ApproximateOracle`` are as the class they wrap (the cache binds
it, lazily, once, under a lock).  ``Capabilities.parallel_queries`` says which.

Weights at the boundary: the least-squares fit of ``project`` does not depend on the
scale of ``sample_weight``, so neither may its answer.  :meth:`BoundOracle.project`
scales the weights, once, by the power of two that brings their mean into [1, 2)
(:func:`~oracleboost._validation.normalise_weights`; exact, so weights 2**k times
others give the same answer bit for bit, unit and integer weights are used as given,
and wrappers that hand the weights on change nothing) before any oracle sees them.
Weights 1e300 or 1e-300 times others thus give the answer of the others (to its last
bits).  ``correlate(r)`` takes ``r`` as it comes: its answer is a ±1 hypothesis or, for a
scale-free class, a direction whose scale follows ``r``'s (boosters rescale it), and
boosters ask it with distributions that sum to 1.  An oracle's own arithmetic may still
limit how far apart weights may be (see :class:`~oracleboost.oracles.TreeOracle` and
:class:`~oracleboost.oracles.LightGBMOracle` for one weight far above the others).

Feature subsets: an oracle that declares ``Capabilities.feature_subsets`` takes
``features=`` in ``correlate`` and ``project``: sorted distinct column indices of the
bound X, and answers with the best hypothesis of the class that splits only on those
columns (stochastic boosting's ``colsample_bytree``).  Every other oracle refuses the
keyword with an :class:`OracleCapabilityError` naming it.

Categorical features: an oracle that declares ``Capabilities.categorical`` takes
``bind(X, *, categorical_features=indices)``, ``indices`` a sorted tuple of the columns
of X that hold category codes (non-negative integers as float64, NaN where the category
is missing); its hypotheses predict on such codes.  Boosters pass the keyword only to
such an oracle and only when there are such columns, so every other oracle's ``bind``
keeps its one argument.  Wrappers (``CachedOracle``, ``ApproximateOracle``) declare
what they wrap declares and pass the indices on (the cache keys on them).
"""

from __future__ import annotations

import copy
import functools
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array

from oracleboost._numerics import largest_row_norm
from oracleboost._typing import ArrayLike
from oracleboost._validation import (
    check_finite_array,
    check_query,
    check_sample_weight,
    normalise_weights,
)
from oracleboost.oracles.trees import TreeStructure

__all__ = [
    "Capabilities",
    "Oracle",
    "BoundOracle",
    "Hypothesis",
    "NonFiniteOutput",
    "OracleCapabilityError",
    "canonical_sparse",
    "check_X",
    "check_categorical_features",
    "check_features",
    "class_runs",
    "predict_validated",
]


class OracleCapabilityError(TypeError):
    """An oracle was asked a query its hypothesis class cannot answer."""


class BinaryOnlyOracleError(OracleCapabilityError, ValueError):
    """A booster asked for K > 2 classes over an oracle that answers binary queries only:
    an :class:`OracleCapabilityError`, and a ``ValueError`` as scikit-learn's binary
    classifiers raise for such a ``y`` ("Only binary classification is supported")."""


class NonFiniteOutput(FloatingPointError):
    """A hypothesis predicted NaN or ±inf on new rows (its training outputs are finite:
    :class:`BoundOracle` checks those), so a sum of predictions is not defined there.

    Raised by :meth:`Hypothesis.predict_sum` instead of a silent NaN.  Boosters (which
    this module does not import) wrap it to name themselves and their oracle.

    Parameters
    ----------
    h : Hypothesis
        The hypothesis that predicted a non-finite value (``self.h``).
    pred : ndarray
        Its prediction, of shape ``(n,)`` or ``(n, K)`` (``self.pred``).
    where : str, default=""
        Who the message names; empty: "a weak learner".
    """

    def __init__(self, h: Hypothesis, pred: np.ndarray, where: str = "") -> None:
        self.h, self.pred = h, pred
        bad = ~np.isfinite(pred)
        rows = int(bad.any(axis=tuple(range(1, pred.ndim))).sum()) if pred.ndim else 1
        what = "NaN" if np.isnan(pred).any() else "inf"
        super().__init__(
            f"{where or 'a weak learner'} ({_name(h)}) predicted {what} on {rows} of "
            f"{len(pred)} rows of X, so the ensemble's prediction is not defined there; "
            "check X for values the weak learner cannot handle"
        )


def _name(h: object) -> str:
    """``repr(h)`` where its class writes one (a stump's feature, threshold and leaves),
    else its class name (not an address); at most 200 characters."""
    text = repr(h) if type(h).__repr__ is not object.__repr__ else type(h).__name__
    return text if len(text) <= 200 else text[:199] + "…"


@dataclass(frozen=True)
class Capabilities:
    """What a bound oracle can answer.

    Attributes
    ----------
    correlate : bool
        Answers ``correlate(r)`` for ``r`` of shape ``(n,)``.
    project : bool
        Answers ``project(target, sample_weight)`` for targets of shape ``(n,)``.
    multiclass_correlate, multiclass_project : bool
        The same queries for arrays of shape ``(n, K)`` (vector-valued hypotheses).
    correlation_vector : bool
        A finite class with explicit columns: gives the whole vector ``H^T r`` at once
        (:meth:`BoundOracle.correlation_vector`), the column matrix on the training
        points (:meth:`BoundOracle.columns`) and the hypothesis of any column
        (:meth:`BoundOracle.column_hypothesis`).  Needed by dual-averaging boosters,
        duality gaps and approximate-oracle experiments.
    stochastic : bool
        Answers depend on the ``random_state`` seed of the query (so a cache must key on it).
    bounded : bool
        ``correlate`` answers take values in [−1, 1] and their scale is part of the class
        (±1 classifiers, a matrix with entries in [−1, 1]), as Telgarsky's analysis
        assumes.  Boosters use such columns as they are; answers of scale-free classes
        (regressors used through ``correlate``) are rescaled to ``max |h| = 1``.
    parallel_queries : bool
        Queries asked of one bound oracle from several threads run at the same time
        (True), or one at a time behind the bound oracle's lock (False: it keeps state
        between queries, as LightGBM's boosters).  Either way a bound oracle may be
        shared between threads and answers exactly as the same queries in sequence.
    allow_nan : bool
        X may hold NaN, read as missing values: ``bind`` takes it and the hypotheses
        predict it (LightGBM's trees and the stumps of ``StumpOracle``, which learn
        where a missing value goes at each split).  Every other class refuses NaN in
        X.  A booster takes NaN exactly when its oracle does, and says so in
        scikit-learn's ``input_tags.allow_nan``.
        Infinite values are refused either way.
    sparse_input : bool
        ``bind`` and the answers' ``predict`` take scipy sparse X (CSR or CSC matrices
        and arrays) and give exactly what they give on ``X.toarray()`` (stumps, linear
        coordinates, scikit-learn and LightGBM trees; ``SklearnOracle`` is the
        exception: it takes sparse X where its estimator's tags do, and gives what the
        estimator computes on it); False: they refuse it with a ``TypeError`` naming X
        (:func:`check_X`).  Boosters accept sparse X exactly when their oracle declares
        it.
    categorical : bool
        ``bind`` takes the keyword ``categorical_features``: the columns of X that hold
        category codes, not numbers on a line (LightGBM's trees, which split a
        categorical feature by sets of categories).  A booster encodes a pandas
        DataFrame's ``category`` columns to codes, and passes their indices, only to
        an oracle that declares this (every other oracle is bound as ``bind(X)``, and
        reads such a column as scikit-learn does: numeric categories as their values,
        others refused).
    feature_subsets : bool
        ``correlate`` and ``project`` take ``features=``, the columns of X an answer may
        use (sorted distinct indices), and answer with the best hypothesis of the class
        on those columns alone (stumps: the best split among them).
    closed_under_negation : bool
        With every answer h the class holds −h, so a booster may step along an answer
        with either sign (a negative coefficient is a step along −h).  False for a
        monotone-constrained class, where −h would reverse a constraint: its answers
        come with an edge ≥ 0 on the query's rows, and a booster keeps their
        coefficients ≥ 0 by stepping on those same rows (stochastic boosting's row
        samples, whose step is taken on every row, are refused with such a class).
    per_class_weights : bool
        ``project`` of an ``(n, K)`` target also takes ``sample_weight`` of shape
        ``(n, K)``: each output column fitted with its own weights
        (:class:`~oracleboost.oracles.PerClassOracle`, one fit a class; Newton's
        multiclass query, whose weights are each class's hessian).  Every other oracle
        takes one weight a row.
    """

    correlate: bool = True
    project: bool = True
    multiclass_correlate: bool = False
    multiclass_project: bool = False
    correlation_vector: bool = False
    stochastic: bool = False
    bounded: bool = False
    parallel_queries: bool = True
    allow_nan: bool = False
    sparse_input: bool = False
    categorical: bool = False
    feature_subsets: bool = False
    closed_under_negation: bool = True
    per_class_weights: bool = False


class Hypothesis(ABC):
    """A weak hypothesis returned by an oracle.

    Attributes
    ----------
    train_output : ndarray of shape (n_samples,) or (n_samples, K), or None
        Outputs on the training points the oracle was bound to.  Set by the oracle;
        an ensemble keeps :meth:`detach` copies without it.
    key : hashable or None
        Identity of the underlying function: two hypotheses with equal ``key`` compute
        ``scale`` times the same function, so an ensemble may merge their coefficients
        (needed for the ℓ1 norm of λ in the margin, Telgarsky 2013 §1).  ``None`` means
        "never merged".
    scale : float
        This hypothesis equals ``scale`` times the function named by ``key``.
    """

    train_output: np.ndarray | None = None
    key: Hashable | None = None
    scale: float = 1.0
    #: What the oracle kept of the query this answer was made for, for a next query
    #: made from it (:meth:`BoundOracle._project_shifted`); None for most oracles, and
    #: not stored by an ensemble (:meth:`detach`).
    query_memo: object = None
    #: Whether ``train_output`` is an array made for this answer alone, which nothing
    #: else holds or reads: a booster that has read it may write over it (the squared
    #: loss's step writes its new scores there, one n-sized array less at the fit's
    #: peak).  False unless the oracle says so: an answer that is a view of the
    #: oracle's data, or an array it keeps or hands out again, must stay as it is.
    spare_train_output: bool = False

    @abstractmethod
    def predict(self, X: ArrayLike) -> np.ndarray:
        """Outputs on new data, of shape ``(n,)`` or ``(n, K)``."""

    def _predict_validated(self, X: Any) -> np.ndarray:
        """:meth:`predict` on X that :func:`check_X` has already validated (a 2-D
        float64 ndarray, or a canonical CSR/CSC matrix), without validating it again.

        An ensemble predicts every hypothesis on one X that the estimator validated
        once: a class whose :meth:`predict` validates X (a pass over all of it) overrides
        this to skip that pass, so that predicting J hypotheses costs J passes over
        what each reads, not J passes over X.  The default calls :meth:`predict`.
        Callers go through :func:`predict_validated`."""
        return self.predict(X)

    @classmethod
    def predict_sum(
        cls, hypotheses: Sequence[Hypothesis], coef: np.ndarray, X: np.ndarray, out: np.ndarray
    ) -> None:
        """Add ``coef[r] * hypotheses[r].predict(X)`` to ``out`` in place, for r = 0, 1, … in
        order, each term rounded exactly as ``out += coef[r] * h.predict(X)`` rounds it
        (a float64 product, then a float64 sum): the result equals that loop bit for bit.

        This is how an ensemble predicts many rounds at once: a class whose hypotheses
        can be summed faster than one ``predict`` call each (compiled stumps) overrides
        it; the default is that loop.  An override must keep its bits: every row's terms
        are added in round order, each product rounded to float64 before its sum, so the
        answer depends neither on how rows are blocked nor on threads, and a model that
        adds one round at a time (``staged_decision_function``) ends on the same array.

        Parameters
        ----------
        hypotheses : sequence of Hypothesis
            The rounds' hypotheses, of classes that share this implementation (an
            ensemble groups consecutive rounds whose classes inherit the same
            ``predict_sum``; the default takes any).  One hypothesis may recur.
        coef : ndarray of shape (len(hypotheses),), float64
            The rounds' coefficients.
        X : ndarray of shape (n, n_features), float64
            Validated (finite) features, as :func:`check_X` returns them.
        out : ndarray of shape (n,) or (n, K), float64
            The running sum (e.g. the intercept), of the hypotheses' output shape;
            updated in place.

        Raises
        ------
        NonFiniteOutput
            A hypothesis predicted NaN or ±inf (carrying it and its prediction); the
            rounds before it have been added to ``out``, as the loop would have.
        """
        coef = np.asarray(coef, dtype=np.float64)  # float64 products, whatever coef was
        for h, c in zip(hypotheses, coef, strict=True):
            pred = predict_validated(h, X)
            if not np.isfinite(pred).all():
                raise NonFiniteOutput(h, pred)
            out += c * pred

    @classmethod
    def predict_columns(cls, hypotheses: Sequence[Hypothesis], X: Any) -> np.ndarray:
        """The outputs of hypotheses of scalar output on X, one column each: shape
        ``(n, len(hypotheses))``, column r equal to :func:`predict_validated`
        ``(hypotheses[r], X)`` bit for bit.

        A linear model over a finite class's columns predicts its basis on X this way
        once (then each round's coefficients are one ordered product with it).  A class
        whose columns can be read from X at once (linear coordinates) overrides it; the
        default is one :func:`predict_validated` a hypothesis.  ``X`` is as for
        :func:`predict_validated`."""
        return np.column_stack([predict_validated(h, X) for h in hypotheses])

    def feature_importances(self, n_features: int) -> np.ndarray | None:
        """How much this hypothesis uses each of the ``n_features`` input features
        (non-negative, summing to 1, or all 0 for a constant), or ``None`` when it does
        not know (a column of a fixed matrix, a neural net).  Boosters sum these,
        weighted by the size of each round's term, into ``feature_importances_``."""
        return None

    def tree_structure(self) -> TreeStructure | None:
        """This hypothesis as a tree of threshold splits
        (:class:`~oracleboost.oracles.trees.TreeStructure`), or ``None`` when it is not
        one (the default: a column of a fixed matrix, a neural net, a linear model).
        Its leaves must be exactly the numbers :meth:`predict` returns, and its splits
        route every finite row as :meth:`predict` does: an ensemble of such trees is
        exported as a LightGBM model (:mod:`oracleboost.export.lightgbm`)."""
        return None

    def detach(self) -> Hypothesis:
        """A shallow copy without ``train_output`` (what an ensemble stores)."""
        h = copy.copy(self)
        h.train_output = None
        h.query_memo = None
        h.__dict__.pop("spare_train_output", None)  # (the class's False: nothing saved)
        return h


class Oracle(BaseEstimator, ABC):
    """A configured hypothesis class.  Subclasses implement :meth:`bind`.

    Constructors only store their arguments (scikit-learn convention); checks run in
    :meth:`bind`.
    """

    def _sk_visual_block_(self) -> Any:
        """scikit-learn's HTML repr: the oracles and estimators this one wraps, drawn
        nested with their own parameters."""
        from oracleboost._html_repr import nested_block, nested_parameters

        return nested_block(self, nested_parameters(self))

    @property
    @abstractmethod
    def capabilities(self) -> Capabilities:
        """What the bound oracle answers; every class declares it (no default claims)."""

    @abstractmethod
    def bind(self, X: ArrayLike) -> BoundOracle:
        """Do the per-dataset work once and return an oracle over these ``n`` rows.

        An oracle that declares ``capabilities.categorical`` also takes
        ``bind(X, *, categorical_features=None)``: a sorted tuple of column indices of X
        whose values are category codes (non-negative integers stored as float64, NaN
        for a missing category), or None for none.  A booster passes it only to such an
        oracle and only when X has such columns; the hypotheses then predict on codes
        (the booster maps new rows' categories to the fit's codes).  Other oracles keep
        this signature.
        """

    def _bind_partitioned(self, rows: Any, backend: Any) -> BoundOracle:
        """The oracle over rows held in a backend's partitions (``rows``; ``backend``:
        an :class:`oracleboost.engine.backends.Backend`), answering queries by sums over
        the partitions.  Only classes whose answer is a sum over rows can, and each says
        which sum: stumps (:meth:`~oracleboost.engine.backends.Backend.bind_stumps`) or
        column products (:meth:`~oracleboost.engine.backends.Backend.bind_columns`);
        the others need every training row in one process."""
        from oracleboost.rows.partitioned import NotDistributedError

        raise NotDistributedError(
            f"{type(self).__name__} needs every training row in one process, so it cannot "
            f"fit on {backend.collection}; use StumpOracle (histograms summed over the "
            "workers), LinearOracle or MatrixOracle (products summed over the workers), or "
            "fit on a NumPy array"
        )


class BoundOracle:
    """An oracle bound to ``n_samples`` training points.

    Public methods validate the query and the answer; subclasses implement
    ``_correlate``, ``_project`` and, for finite classes, ``_correlation_vector``.
    """

    #: True when ``_correlate`` notices a query with a NaN or an infinite entry itself
    #: (its sums over the rows are then not finite) and calls :meth:`_refuse_query`:
    #: ``correlate`` then makes no pass of its own over ``r`` to check it.
    _correlate_checks_query = False

    #: True when ``_correlate``'s answers have finite outputs by construction (a stump's
    #: ±1): ``correlate`` then makes no pass over the training outputs to check them.
    _correlate_outputs_finite = False

    #: True when ``_project`` notices a target with a NaN or an infinite entry itself (its
    #: sums over the rows are then not finite) and calls :meth:`_refuse_query`:
    #: ``project`` then makes no pass of its own over the target to check it.
    _project_checks_target = False

    #: True when ``_project``'s answers have finite outputs by construction and
    #: :meth:`_answer_peak` knows their largest ``|entry|`` without a pass (a stump's
    #: leaves, checked when they are made): ``project`` then makes no pass over the
    #: training outputs.
    _project_outputs_finite = False

    def __init__(self, oracle: Oracle, n_samples: int) -> None:
        self.oracle = oracle
        self.n_samples = int(n_samples)
        self.capabilities = oracle.capabilities

    def __sizeof__(self) -> int:
        """Bytes held: the object and the arrays among its attributes (also inside
        lists and tuples: a stump oracle's codes by block, its thresholds).  Dask sizes
        the data its workers hold with ``sys.getsizeof``: a bound oracle on a cluster
        holds its partition's rows (a byte a feature a row), which the object's own
        size would hide from the worker's memory accounting (what it spills, pauses
        for and reports) and from the scheduler's cost of moving a task to another
        worker (measured: a worker idle for a moment took a task over with the other
        worker's codes, 192 MiB of them, and passed its memory limit)."""
        seen: set[int] = set()
        total = object.__sizeof__(self)

        def add(a: np.ndarray) -> None:
            nonlocal total
            while isinstance(a.base, np.ndarray):  # (a view: count the array it views)
                a = a.base
            if id(a) not in seen:
                seen.add(id(a))
                total += a.nbytes

        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                add(value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, np.ndarray):
                        add(item)
        return total

    # -- public queries -------------------------------------------------------------
    def correlate(self, r: ArrayLike, *, random_state: int | None = None,
                  features: ArrayLike | None = None) -> Hypothesis:
        """The hypothesis (approximately) maximising ``<r, h> / ||h||`` over the class
        (over its hypotheses on the columns ``features`` alone, when given: see
        ``Capabilities.feature_subsets``)."""
        r = check_query(r, self.n_samples, "r", finite=not self._correlate_checks_query)
        self._require("correlate", r.ndim)
        only = self._features(features)
        return self._checked(self._correlate(r, random_state, **only), r.shape,
                             finite=self._correlate_outputs_finite)

    def _features(self, features: ArrayLike | None) -> dict[str, np.ndarray]:
        """A query's ``features`` as the hook's keyword (none when not given), checked:
        refused by an oracle that does not declare ``feature_subsets``, else sorted
        distinct non-negative column indices (each oracle checks the upper bound)."""
        if features is None:
            return {}
        if not self.capabilities.feature_subsets:
            raise OracleCapabilityError(
                f"{type(self.oracle).__name__} cannot answer a query on a subset of the "
                "features (features=, as colsample_bytree < 1 asks): its capabilities do "
                "not declare feature_subsets; use StumpOracle, or colsample_bytree=1.0"
            )
        return {"features": check_features(features, getattr(self, "n_features", None))}

    def _prefetch(self, r: Any, shifted: tuple | None = None, *, project: bool = False
                  ) -> None:
        """A hint from a booster that its next call is probably ``correlate(r)`` (or,
        with ``project``, ``project(r)`` without weights), or, given ``shifted = (memo,
        c)``, ``_project_shifted(r, memo, c)``; given before the booster waits for the stats of
        the stage that made ``r``: an oracle whose rows are on a cluster may submit its
        work on ``r`` now, so that the client waits once for both
        (:class:`~oracleboost.oracles.partitioned_stumps.PartitionedStumpOracle`).  No
        answer may depend on whether it was called.  In memory: nothing to do."""

    def _project_shifted(self, target: Any, memo: object, c: float, *,
                         random_state: int | None = None) -> Hypothesis:
        """``project(target)`` without weights, told that ``target`` is ``q − c·h`` in
        exact arithmetic, ``h`` the answer to an earlier ``project(q)`` without weights
        and ``memo`` its ``query_memo`` (the squared loss's next descent,
        Grubb & Bagnell's naive projection).  An oracle may make its answer from what it
        kept of ``q`` (the stump oracle's histograms: ``StumpOracle(histogram_refresh)``),
        the same answer in exact arithmetic.  Here: ``project(target)``."""
        return self.project(target, random_state=random_state)

    def _answer_peak(self, h: Hypothesis) -> float:
        """``max |h.train_output|`` (a pass over the outputs; see
        ``_project_outputs_finite``)."""
        return max_abs(h.train_output)

    def _refuse_query(self, r: np.ndarray, name: str = "r") -> NoReturn:
        """Raise :func:`check_query`'s error for a query (``r`` of ``correlate``, or
        ``target`` of ``project``) with a NaN or an infinite entry, or say that finite
        entries' sums overflowed (for a ``_correlate`` or ``_project`` whose sums over the
        query were not finite)."""
        check_query(r, self.n_samples, name)
        remedy = ("the answer does not depend on r's scale" if name == "r" else
                  "a booster: divide y")
        raise ValueError(
            f"{name}'s sums over the rows overflow float64 (|{name}| up to "
            f"{np.abs(r).max():.3g}); divide {name} by a power of 2 ({remedy})"
        )

    def project(
        self,
        target: ArrayLike,
        sample_weight: ArrayLike | None = None,
        *,
        random_state: int | None = None,
        features: ArrayLike | None = None,
    ) -> Hypothesis:
        """The hypothesis minimising ``sum_i w_i ||target_i - h(x_i)||^2`` (Grubb–Bagnell
        eq. 4), among those on the columns ``features`` alone when given (see
        ``Capabilities.feature_subsets``)."""
        target = check_query(target, self.n_samples, "target",
                             finite=not self._project_checks_target)
        w = None
        if sample_weight is not None:  # the answer must not depend on the weights' scale
            w = normalise_weights(check_sample_weight(sample_weight, self.n_samples))
        self._require("project", target.ndim)
        only = self._features(features)
        h = self._checked(self._project(target, w, random_state, **only), target.shape,
                          finite=self._project_outputs_finite)
        self._check_squared_norm(h, w, target)
        return h

    def correlation_vector(self, r: ArrayLike) -> np.ndarray:
        """``H^T r``: the inner product of ``r`` with every hypothesis of a finite class.

        ``r`` of shape (n,) gives shape (J,); a block of shape (n, K) gives (J, K)."""
        r = check_query(r, self.n_samples, "r")
        self._require_finite("the whole correlation vector")
        return self._representable(self._correlation_vector(r), "correlation vector Hᵀr")

    def combine(self, w: ArrayLike) -> np.ndarray:
        """``H w``: the outputs ``Σ_j w_j h_j(x_i)`` of a weighting ``w`` of a finite class
        on the training points, computed without copying ``H``."""
        self._require_finite("a weighted combination of its columns")
        w = np.asarray(w, dtype=np.float64)
        if w.ndim not in (1, 2):
            raise ValueError(f"w must have shape (J,) or (J, k); got {w.shape}")
        check_finite_array(w, "w", ndim=(1, 2))
        return self._representable(self._combine(w), "combination Hw")

    def columns(self) -> np.ndarray:
        """The finite class on the training points: ``H[i, j] = h_j(x_i)``, shape (n, J).

        A read-only view where the class holds its matrix (no copy per call)."""
        self._require_finite("columns")
        return self._columns()

    def column_hypothesis(self, j: int, scale: float = 1.0) -> Hypothesis:
        """The hypothesis ``scale · h_j`` of column ``j`` of a finite class."""
        self._require_finite("column_hypothesis")
        return self._column_hypothesis(int(j), float(scale))

    # what a booster that reads whole rows of a finite class asks (accelerated boosting);
    # a class held elsewhere answers them there (a backend's columns)
    @property
    def n_columns(self) -> int:
        """The number of hypotheses J of a finite class."""
        return int(self.columns().shape[1])

    @property
    def peak(self) -> float:
        """``max |H|`` over the training points of a finite class."""
        return max_abs(self.columns())

    def largest_row_norm(self, extra: float = 0.0, peak: float | None = None) -> float:
        """``max_i √(‖H_i‖² + extra)`` over the training points of a finite class
        (``peak``: ``max |H|``, for rows whose squares overflow)."""
        return largest_row_norm(self.columns(), extra, peak)

    def row(self, i: int, *others: np.ndarray) -> tuple:
        """Row ``i`` of a finite class on the training points, with entry ``i`` of each
        per-row array of ``others``."""
        return (self.columns()[i], *(o[i] for o in others))

    def _require_finite(self, what: str) -> None:
        if not self.capabilities.correlation_vector:
            raise OracleCapabilityError(
                f"{type(self.oracle).__name__} cannot give {what}: it is not a finite class "
                "with explicit columns (MatrixOracle, LinearOracle)"
            )

    # -- hooks --------------------------------------------------------------------------
    def _correlate(self, r: np.ndarray, random_state: int | None) -> Hypothesis:
        raise NotImplementedError

    def _project(
        self, target: np.ndarray, sample_weight: np.ndarray | None, random_state: int | None
    ) -> Hypothesis:
        raise NotImplementedError

    def _correlation_vector(self, r: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _columns(self) -> np.ndarray:
        raise NotImplementedError

    def _combine(self, w: np.ndarray) -> np.ndarray:
        return self._columns() @ w

    def _column_hypothesis(self, j: int, scale: float) -> Hypothesis:
        raise NotImplementedError

    # -- helpers ------------------------------------------------------------------------
    def _require(self, query: str, ndim: int) -> None:
        caps = self.capabilities
        ok = {
            ("correlate", 1): caps.correlate,
            ("correlate", 2): caps.multiclass_correlate,
            ("project", 1): caps.project,
            ("project", 2): caps.multiclass_project,
        }[(query, ndim)]
        if not ok:
            what = "an (n, K) multiclass " if ndim == 2 else ""
            raise OracleCapabilityError(
                f"{type(self.oracle).__name__} cannot answer {query} with {what}query: "
                f"its hypothesis class does not support it (capabilities: {caps})"
            )

    def _checked(self, h: Hypothesis, shape: tuple[int, ...], finite: bool = False) -> Hypothesis:
        """``h`` with its training outputs checked: their shape, and (unless ``finite``:
        finite by construction) their finiteness."""
        out = np.asarray(h.train_output, dtype=np.float64)
        if out.shape != shape:
            raise RuntimeError(
                f"{type(self.oracle).__name__} returned train_output of shape {out.shape}, "
                f"expected {shape}"
            )
        if not finite and not np.isfinite(out).all():
            nan = int(np.isnan(out).sum())
            raise FloatingPointError(
                f"{type(self.oracle).__name__} returned a hypothesis with non-finite outputs "
                f"(NaN on {nan} and ±inf on {int((~np.isfinite(out)).sum()) - nan} of "
                f"{out.size} training outputs); a weak learner must return finite numbers"
            )
        h.train_output = out
        return h

    def _check_squared_norm(
        self, h: Hypothesis, w: np.ndarray | None, target: np.ndarray
    ) -> None:
        """Refuse a ``project`` answer whose weighted sum of squares ``Σ w·h²`` passes
        float64's range.

        Finite outputs whose squares pass float64's range (|h| above ~1e154, and outputs
        near 1e308 in any case) break the least-squares arithmetic every consumer does
        with a projection: its squared norm ``<h, h>``, the divisor of the step
        ``<h, v>/<h, h>``, overflows to inf and the step becomes 0 or NaN, far from the
        oracle that caused it (a NaN target of the next query, a silent zero step).  Such
        an answer is no least-squares fit either: unless the target is as large,
        ``Σ w (target − h)²`` is infinite, worse than ``h = 0``.
        """
        out, peak = h.train_output, self._answer_peak(h)
        if not _squared_norm_overflows(out, w, peak):
            return
        name = type(self.oracle).__name__
        t_peak = max_abs(target)
        if _squared_norm_overflows(target, w):
            why = (
                f"the values it was asked to fit are as large (max |target| = {t_peak:.3g}): "
                "rescale y (or the loss' gradients) so that squares stay finite"
            )
        else:
            why = (
                f"it was asked to fit values of at most {t_peak:.3g}, so this answer is no "
                "least-squares fit (it is infinitely worse than h = 0): use a weak learner "
                "whose outputs stay on the scale of its targets"
            )
        raise OverflowError(
            f"{name}'s hypothesis outputs overflow float64 (max |h| = {peak:.3g}): their "
            f"weighted sum of squares Σ w·h², the squared norm a least-squares step divides "
            f"by, exceeds the float64 maximum {_FLOAT64_MAX:.3g}; {why}"
        )

    def _representable(self, out: np.ndarray, what: str) -> np.ndarray:
        """``out`` if every entry is finite, else an ``OverflowError`` naming the oracle."""
        if not np.isfinite(out).all():
            raise OverflowError(
                f"{type(self.oracle).__name__}'s {what} overflows float64 (an entry passes "
                f"±{_FLOAT64_MAX:.3g}): the columns of the class or the query vector are "
                "too large; rescale them"
            )
        return out


_FLOAT64_MAX = float(np.finfo(np.float64).max)


def max_abs(a: np.ndarray) -> float:
    """``max |a|`` (0 for an empty array) without a temporary."""
    return float(max(a.max(), -a.min())) if a.size else 0.0


def _squared_norm_overflows(a: np.ndarray, w: np.ndarray | None,
                            peak: float | None = None) -> bool:
    """Whether ``Σ_i w_i ||a_i||²`` (``w=None``: unit weights) passes float64's range, for
    finite ``a`` of shape (n,) or (n, K) and finite ``w ≥ 0`` (``peak``: ``max |a|`` when
    known, else found).

    Decided without computing it where it cannot overflow (``|a| < 2**400`` and
    ``w < 2**170``: the sum is below ``n · 2**970``), else on ``a`` scaled by a power of
    two to below 1 (exact), so that nothing overflows on the way and nothing warns.
    """
    peak = max_abs(a) if peak is None else peak
    if peak < 2.0**400 and (w is None or float(w.max()) < 2.0**170):
        return False
    e = int(np.frexp(peak)[1])  # peak < 2**e
    u = np.ldexp(a, -e)
    sq = u * u if u.ndim == 1 else np.sum(u * u, axis=1)
    with np.errstate(over="ignore"):
        total = float(np.sum(sq) if w is None else np.dot(w, sq))
        return not np.isfinite(np.ldexp(total, 2 * e))


def class_runs(hypotheses: Sequence[Hypothesis]) -> Iterator[tuple[type[Hypothesis], int, int]]:
    """``(cls, a, b)`` for each longest run ``hypotheses[a:b]`` of one class, in order.

    The calls that add an ensemble's rounds through :meth:`Hypothesis.predict_sum`::

        for cls, a, b in class_runs(hs):
            cls.predict_sum(hs[a:b], coef[a:b], X, out)
    """
    a = 0
    while a < len(hypotheses):
        cls, b = type(hypotheses[a]), a + 1
        while b < len(hypotheses) and type(hypotheses[b]) is cls:
            b += 1
        yield cls, a, b
        a = b


def wrapped_categorical_features(wrapper: Oracle, indices) -> tuple[int, ...] | None:
    """A wrapper's ``categorical_features`` to pass on: None for none, else refused
    unless the wrapped oracle takes them (``capabilities.categorical``)."""
    if indices is None or len(indices) == 0:
        return None
    if not wrapper.capabilities.categorical:
        raise TypeError(
            f"{type(wrapper).__name__}: categorical_features given, but the wrapped "
            f"{type(wrapper.oracle).__name__} does not take categorical features "
            "(capabilities.categorical is False)"
        )
    return tuple(int(j) for j in indices)


def check_features(features: ArrayLike, n_features: int | None = None,
                   name: str = "features") -> np.ndarray:
    """A query's ``features`` as sorted distinct column indices (intp, at least one),
    below ``n_features`` when given; errors name ``name``."""
    a = np.asarray(features)
    if a.ndim != 1 or a.size == 0 or a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be a non-empty 1-D array of column indices; got "
                        f"{features!r}")
    a = a.astype(np.intp)
    if (a < 0).any() or (np.diff(a) <= 0).any() or (
            n_features is not None and a[-1] >= n_features):
        bound = "" if n_features is None else f" below {n_features}"
        raise ValueError(f"{name} must be sorted distinct column indices from 0{bound}; "
                         f"got {a.tolist()[:10]}")
    return a


def check_categorical_features(X: np.ndarray, indices: Sequence[int],
                               name: str = "categorical_features") -> tuple[int, ...]:
    """``bind``'s ``categorical_features`` for a validated float64 X (dense, or a
    canonical sparse matrix), as a sorted tuple of
    distinct column indices whose values are category codes: NaN (missing) or integers
    in [0, 2**31 − 1) (LightGBM's range; it would read a negative code as missing and
    truncate a fraction, silently).  Errors name ``name`` and the column."""
    try:
        cols = [int(j) for j in indices]
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a sequence of column indices; got {indices!r}") from exc
    d = X.shape[1]
    if cols != sorted(set(cols)) or any(not 0 <= j < d for j in cols):
        raise ValueError(
            f"{name} must be sorted distinct column indices in [0, {d}); got {tuple(cols)}"
        )
    for j in cols:
        # a sparse X's stored values (its zeros are code 0)
        v = X[:, [j]].tocsc().data if sp.issparse(X) else X[:, j]
        v = v[~np.isnan(v)]
        bad = v[(v < 0) | (v >= 2**31 - 1) | (v != np.floor(v))]
        if bad.size:
            raise ValueError(
                f"X's column {j} is in {name}, so it must hold category codes (integers in "
                f"[0, 2**31 - 1), NaN for missing); it holds {bad[:3].tolist()}"
            )
    return tuple(cols)


def check_X(X: ArrayLike, name: str = "X", *, allow_nan: bool = False,
            accept_sparse: bool = False, who: str | None = None) -> Any:
    """Validate a feature matrix: 2-D, numeric, finite (``allow_nan``: finite or NaN, a
    missing value), float64, with at least one row.

    scikit-learn's finiteness check first sums X and looks at the sum; finite entries
    near the float64 maximum overflow that sum (an ``overflow`` or ``invalid value``
    RuntimeWarning) before it falls back to checking entry by entry, which decides.
    The warning says nothing about the data, so it is silenced here.

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n_samples, n_features)
    name : str, default="X"
        The argument's name in errors.
    allow_nan : bool, default=False
        Take NaN (a missing value) in X, dense or stored in a sparse X; infinite values
        are refused either way.
    accept_sparse : bool, default=False
        Return scipy sparse X as a canonical CSR or CSC matrix (its format kept; any
        other sparse format becomes CSR; float64 values, sorted indices, no duplicate
        entries; a copy where X is not already so, never X changed), whose stored
        values are checked finite (or NaN, with ``allow_nan``).  False: sparse X is
        refused with a ``TypeError`` naming ``name`` and ``who`` and saying to pass
        ``X.toarray()``.
    who : str or None, default=None
        Who refuses sparse X (an oracle, a hypothesis), for the error.

    Returns
    -------
    ndarray, or a scipy.sparse CSR/CSC matrix or array when ``accept_sparse``
    """
    if sp.issparse(X):
        if not accept_sparse:
            raise TypeError(
                f"{name} is a scipy sparse matrix ({X.format}), which "
                f"{who or 'this hypothesis class'} does not take; pass {name}.toarray() "
                "(dense), or use StumpOracle, TreeOracle, LightGBMOracle or LinearOracle, "
                "which take sparse X"
            )
        return canonical_sparse(X, name, allow_nan=allow_nan)
    with np.errstate(over="ignore", invalid="ignore"):
        return check_array(X, dtype=np.float64, input_name=name,
                           ensure_all_finite="allow-nan" if allow_nan else True)


def predict_validated(h: Hypothesis, X: Any) -> np.ndarray:
    """``h.predict(X)`` for X that an estimator validated (:func:`check_X`'s output, or
    scikit-learn's ``validate_data``'s with float64): X is not validated again when it
    has that form, a 2-D float64 ndarray or a canonical CSR/CSC matrix
    (:meth:`Hypothesis._predict_validated`); any other X goes through ``h.predict``,
    which validates it."""
    if _validated_form(X) and _skips_validation(type(h)):
        return h._predict_validated(X)
    return h.predict(X)


@functools.cache
def _skips_validation(kind: type) -> bool:
    """Whether ``kind``'s ``_predict_validated`` is its ``predict`` without the checks:
    defined where ``predict`` is or below it.  A subclass that overrides ``predict``
    alone (a user's) is predicted through its own ``predict``."""
    def owner(name: str) -> type:
        return next(c for c in kind.__mro__ if name in c.__dict__)

    return issubclass(owner("_predict_validated"), owner("predict"))


def _validated_form(X: Any) -> bool:
    """Whether X has the form :func:`check_X` returns (its values are not looked at)."""
    if sp.issparse(X):
        return (X.format in ("csr", "csc") and X.dtype == np.float64
                and bool(X.has_canonical_format))
    return isinstance(X, np.ndarray) and X.dtype == np.float64 and X.ndim == 2


def canonical_sparse(X: Any, name: str = "X", *, allow_nan: bool = False) -> Any:
    """Sparse ``X`` as scikit-learn's ``check_array`` validates it (2-D, at least one row,
    finite stored values, or finite and NaN with ``allow_nan``, float64), in CSR or CSC
    (the format kept; others become CSR),
    with sorted indices and no duplicate entries (duplicates add up, as ``toarray()``
    adds them), so that a pass over its structure meets each cell once, in order.
    ``X`` itself is never changed: a copy is made before canonicalising one that is not
    canonical yet."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = check_array(X, accept_sparse=["csr", "csc"], dtype=np.float64,
                          ensure_all_finite="allow-nan" if allow_nan else True,
                          input_name=name)
    if not out.has_canonical_format:
        out = out.copy() if out is X else out
        out.sum_duplicates()  # sorts the indices too
        # duplicates whose sum overflows (NaN where X holds one, with allow_nan)
        if (np.isinf(out.data) if allow_nan else ~np.isfinite(out.data)).any():
            raise ValueError(f"{name}'s duplicate entries add up beyond float64's range")
    return out
