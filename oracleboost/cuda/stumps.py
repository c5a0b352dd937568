"""±1 decision stumps answered on the GPU, and AdaBoost's rounds kept there.

:class:`DeviceStumps` holds a :class:`~oracleboost.oracles.StumpOracle`'s binned training
rows on the GPU (its codes, uploaded once, feature-major) and answers ``correlate(r)``
there: ``r`` rounded to fixed point (:mod:`oracleboost.rows.fixed_point`), its per-bin
histograms summed with integer atomics, every feature's best stump by the CPU oracle's
scan, and the best of the constants and the features, all on the device; six integers
come back.  The bins are the CPU oracle's (its thresholds and codes), so the candidates
are the same stumps, ranked by the same rule (constants first, ``+1`` before ``−1``,
then features, thresholds left to right, ``s = +1`` before ``s = −1``): on the integers
of the rounded query, exactly.  The answer is the CPU's whenever the CPU's float sums
rank the candidates as the exact sums of the rounded query do, which fails only for
candidates whose scores differ by about the rounding (``2^-e`` a row, ``e`` the scale:
about ``2^-52`` of the largest ``|r|`` at a thousand rows).

:func:`adaboost_on_device` runs Freund & Schapire's AdaBoost with these stumps, the
weights kept on the GPU in log space (Telgarsky 2013's coordinate descent with the
AdaBoost step, as :class:`~oracleboost.boosters.CoordinateBoostingClassifier` runs it
with ``loss="exponential", step="adaboost"``).  Only the chosen stump, the step and a
few scalars cross the bus a round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from oracleboost._validation import check_query
from oracleboost.cuda import stump_kernels as sk
from oracleboost.cuda.device import cuda_module, simulated
from oracleboost.cuda.reductions import Reductions
from oracleboost.cuda.row_kernels import row_kernels
from oracleboost.engine.model import Ensemble
from oracleboost.engine.rounds import StopReason
from oracleboost.oracles.base import Hypothesis
from oracleboost.oracles.monotone import is_constrained
from oracleboost.oracles.stumps import (
    BoundStumpOracle,
    ConstantHypothesis,
    SignStump,
    StumpOracle,
)
from oracleboost.rows.fixed_point import fixed_point_exponent, to_fixed

__all__ = ["DeviceStumps", "DeviceRounds", "Launch", "adaboost_on_device", "bind_on_device"]

_USE_CPU = "use the CPU oracle (StumpOracle's bind and correlate)"
_MISSING = "missing values (a feature with NaN: its rows' own bin)"

# Shared memory a thread block's histogram may take: 48 KiB, what every CUDA GPU gives
# a block without opting in to more.
_SHARED_BYTES = 48 * 1024


@dataclass(frozen=True)
class Launch:
    """How the kernels are launched: ``threads`` a block; the histogram's blocks take
    ``rows_per_block`` rows and ``features_per_block`` features each; the row kernels
    (weights, step) run ``row_blocks`` blocks striding over the rows.  The answers do not
    depend on any of it (integer sums, exact minima): a test varies it to check so."""

    threads: int
    rows_per_block: int
    features_per_block: int
    row_blocks: int

    @classmethod
    def default(cls, n: int, d: int, bins: int, channels: int = 2) -> Launch:
        """A GPU's: 256 threads, 16,384 rows and up to 8 features a histogram block (as
        many as 48 KiB of shared int64 bins hold), row kernels of up to 4,096 blocks.
        On the simulator (a Python thread a GPU thread, its cost a launch): 8 threads,
        two row blocks and up to three features a block, so that several blocks' global
        atomics still meet."""
        if simulated():
            return cls(threads=8, rows_per_block=max(1, -(-n // 2)),
                       features_per_block=min(3, d), row_blocks=2)
        fit = max(1, _SHARED_BYTES // (8 * channels * bins))
        return cls(threads=256, rows_per_block=16384, features_per_block=min(8, d, fit),
                   row_blocks=max(1, min(4096, -(-n // 256))))

    def check(self, bins: int, channels: int) -> None:
        """Refuse (``ValueError``, naming the field) a launch that is not positive ints,
        or whose histogram blocks would need more shared memory than a block gets."""
        for name in ("threads", "rows_per_block", "features_per_block", "row_blocks"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise ValueError(f"Launch.{name} must be a positive int; got {value!r}")
        if 8 * channels * bins * self.features_per_block > _SHARED_BYTES:
            raise ValueError(
                f"Launch.features_per_block={self.features_per_block} needs "
                f"{8 * channels * bins * self.features_per_block} bytes of shared memory a "
                f"block at {bins} bins; at most {_SHARED_BYTES}")


def _is_device(a: Any) -> bool:
    """Whether ``a`` is a per-row array on the device (numba's, or the simulator's)."""
    from oracleboost.engine.backends import is_device_array

    return is_device_array(a)


def _refuse(what: str) -> NotImplementedError:
    return NotImplementedError(f"DeviceStumps does not answer on the GPU with {what}; {_USE_CPU}")


def bind_on_device(oracle: StumpOracle, X: Any, *, categorical_features: Any = None,
                   launch: Launch | None = None) -> DeviceStumps:
    """``oracle.bind(X)`` (the CPU's bins and codes) with its rows uploaded to the GPU.

    Refuses by name what the GPU stumps do not do: sparse ``X``, categorical features
    (``categorical_features``, or a DataFrame's ``category`` columns), and what
    :class:`DeviceStumps` refuses.
    """
    if not isinstance(oracle, StumpOracle):
        raise TypeError(f"bind_on_device takes a StumpOracle; got {type(oracle).__name__}")
    if sp.issparse(X):
        raise _refuse("sparse X (dense rows only)")
    dtypes = getattr(X, "dtypes", None)
    if categorical_features is not None or (
            dtypes is not None and any(str(t) == "category" for t in np.atleast_1d(dtypes))):
        raise _refuse("categorical features")
    _refuse_parameters(oracle)
    return DeviceStumps(oracle.bind(X), launch=launch)


def _refuse_parameters(oracle: StumpOracle) -> None:
    if oracle.exact:
        raise _refuse("exact=True (every distinct value a threshold: bins past 255)")
    if is_constrained(oracle.monotone_constraints):
        raise _refuse("monotone_constraints")


class DeviceStumps:
    """A bound :class:`~oracleboost.oracles.StumpOracle`'s rows on the GPU, answering
    ``correlate(r)`` for ``r`` of shape (n,) with the CPU oracle's ±1 stump.

    Parameters
    ----------
    bound : BoundStumpOracle
        The CPU oracle bound to the training rows: its thresholds and codes are used as
        they are (the same bins, so the same candidate stumps).
    launch : Launch or None
        The kernels' launch shape (None: :meth:`Launch.default`).  The answers do not
        depend on it.

    Raises
    ------
    NotImplementedError
        The oracle's options the GPU stumps do not answer, named: missing values (a
        column with NaN, whose rows have a bin of their own), ``exact=True``,
        ``monotone_constraints``.  (Sparse X and categorical features are refused by
        :func:`bind_on_device`, which sees X.)
    NoDeviceError
        No GPU, and the simulator is off.

    Notes
    -----
    The query is rounded to fixed point on the host (:func:`~oracleboost.rows.fixed_point.
    to_fixed` at the scale of its largest ``|r_i|``) and uploaded: 8 bytes a row.  Rows
    whose ``|r_i|`` is below half a step (``2^-e / 2``) count as 0, where the CPU's float
    sums keep them: they can decide only between candidates that tie to that precision.
    """

    def __init__(self, bound: BoundStumpOracle, *, launch: Launch | None = None) -> None:
        if not isinstance(bound, BoundStumpOracle):
            raise TypeError(
                "DeviceStumps takes a StumpOracle bound in this process's memory "
                f"(StumpOracle().bind(X)); got {type(bound).__name__}")
        _refuse_parameters(bound.oracle)
        if bool(np.any(bound.missing)):
            raise _refuse(_MISSING)
        self._upload(bound.codes.T, bound.thresholds, launch)
        self.oracle = bound.oracle
        #: the CPU oracle's (a booster reads ``bounded`` and ``correlate``)
        self.capabilities = bound.capabilities

    @classmethod
    def from_codes(cls, codes: np.ndarray, thresholds: list[np.ndarray], *,
                   launch: Launch | None = None) -> DeviceStumps:
        """Rows binned elsewhere: ``codes`` uint8 of shape (n_features, n_samples),
        feature-major, ``codes[j, i] = #{t : thresholds[j][t] < X[i, j]}`` (what
        :attr:`BoundStumpOracle.codes` holds, transposed), and each feature's increasing
        thresholds.  A code past a feature's last bin (a missing value's bin) is
        refused."""
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.dtype != np.uint8 or codes.shape[0] != len(thresholds):
            raise ValueError("codes must be uint8 of shape (n_features, n_samples), one row "
                             f"a feature of thresholds; got {codes.dtype} {codes.shape} for "
                             f"{len(thresholds)} features")
        self = object.__new__(cls)
        self._upload(codes, [np.asarray(t, dtype=np.float64) for t in thresholds], launch)
        self.oracle = None
        self.capabilities = StumpOracle().capabilities
        return self

    def _upload(self, codes: np.ndarray, thresholds: list[np.ndarray],
                launch: Launch | None) -> None:
        codes = sk.as_codes(codes)  # (d, n)
        n_bins = np.array([t.size + 1 for t in thresholds], dtype=np.int64)
        if bool((codes.max(axis=1, initial=0) >= n_bins).any()):
            raise _refuse(_MISSING)
        self.n_features, self.n_samples = codes.shape
        self.n_bins = n_bins
        self.thresholds = thresholds
        self.bins = int(n_bins.max())
        self.launch = launch or Launch.default(self.n_samples, self.n_features, self.bins)
        self.launch.check(self.bins, 2)
        self._codes = codes  # the host's copy: a stump's outputs on the training rows
        cuda = cuda_module()
        d = self.n_features
        self._cuda = cuda
        self._dev = _DeviceArrays(
            codes=cuda.to_device(codes),
            n_bins=cuda.to_device(n_bins),
            hist=cuda.device_array((2, d, self.bins), dtype=np.int64),
            score=cuda.device_array(d, dtype=np.int64),
            thr=cuda.device_array(d, dtype=np.int64),
            sign=cuda.device_array(d, dtype=np.int64),
            every_feature=cuda.to_device(np.ones(d, dtype=np.uint8)),
            answer=cuda.device_array(sk.ANSWER_SIZE, dtype=np.int64),
            low=cuda.to_device(np.zeros(1)),
            query=cuda.device_array(self.n_samples, dtype=np.int64),
        )
        self._reduce = Reductions(cuda, (self.launch.row_blocks, self.launch.threads))

    # -- the queries ------------------------------------------------------------------
    def correlate(self, r: Any, *, random_state: int | None = None,
                  features: ArrayLike | None = None) -> Hypothesis:
        """The ±1 stump (or constant) maximising ``<r, h>``, chosen on the GPU.

        Parameters
        ----------
        r : array-like or device array of shape (n_samples,)
            Finite signed weights: a NumPy array (uploaded), or a per-row array already
            on the device (a booster's query on the GPU, never copied to the host).
            ``(n, K)`` queries (label-coded multiclass stumps) are refused.
        random_state : ignored
            (The answer is deterministic; the Oracle protocol passes a seed.)
        features : array-like of int or None
            Only these features' stumps are candidates (the constants always are).

        Returns
        -------
        SignStump or ConstantHypothesis
            With ``train_output`` set, as the CPU oracle's: a NumPy array for a NumPy
            ``r``, a device array for a device ``r`` (its outputs on the training rows,
            made on the device from the codes).
        """
        if np.ndim(r) == 2:
            raise _refuse("K-column queries r of shape (n, K) (label-coded multiclass stumps)")
        on_device = not isinstance(r, np.ndarray) and _is_device(r)
        if on_device:
            if r.shape != (self.n_samples,):
                raise ValueError(f"r must have shape ({self.n_samples},); got {r.shape}")
            query = r
        else:
            query = self._cuda.to_device(check_query(r, self.n_samples, "r",
                                                     multioutput=False))
        dev = self._dev
        self._reduce.fixed(query, dev.query)
        allowed = self._allowed(features)
        k = sk.kernels()
        self._zero()
        self._histogram(dev.query, dev.query, 1)
        self._scan(allowed)
        k.pick[1, 1](dev.hist, dev.score, dev.thr, dev.sign, dev.low, dev.answer)
        at, _, _, t, s, _ = (int(x) for x in dev.answer.copy_to_host())
        h = self.hypothesis(at, t, s, outputs=not on_device)
        if on_device:
            h.train_output = self._device_outputs(at, t, s)
        return h

    def project(self, *args: Any, **kwargs: Any) -> Hypothesis:
        """Refused: least-squares stumps are not answered on the GPU yet."""
        raise _refuse("project (least-squares stumps)")

    # -- pieces the rounds share -------------------------------------------------------
    def hypothesis(self, at: int, t: int, s: int, *, outputs: bool = True) -> Hypothesis:
        """The answer ``pick`` names (``at``: 0 or 1 the constants ±1, ``2 + j`` feature j's
        stump after bin ``t`` with sign ``s``), as the CPU oracle builds it; ``outputs``:
        with its ``train_output`` (from the host's copy of the codes)."""
        d = self.n_features
        if at < 2:
            h: Hypothesis = ConstantHypothesis(float(s), d)
            h.key, h.scale = ("constant",), float(s)
            if outputs:
                h.train_output = np.full(self.n_samples, float(s))
            return h
        j = at - 2
        h = SignStump(j, float(self.thresholds[j][t]), s, d, None)
        if outputs:
            h.train_output = np.where(self._codes[j] > t, float(s), -float(s))
        return h

    def _device_outputs(self, at: int, t: int, s: int) -> Any:
        """The answer's outputs on the training rows, a device array made from the codes
        on the device."""
        out = self._cuda.device_array(self.n_samples, dtype=np.float64)
        feature = at - 2 if at >= 2 else -1
        row_kernels().stump_outputs[self._reduce.grid](self._dev.codes, feature, t, s, out)
        return out

    def _allowed(self, features: ArrayLike | None) -> Any:
        if features is None:
            return self._dev.every_feature
        f = np.asarray(features)
        if f.ndim != 1 or f.size == 0 or not np.issubdtype(f.dtype, np.integer) \
                or f.min() < 0 or f.max() >= self.n_features:
            raise ValueError(f"features must be a non-empty 1-D array of column indices in "
                             f"[0, {self.n_features}); got {features!r}")
        allowed = np.zeros(self.n_features, dtype=np.uint8)
        allowed[f] = 1
        return self._cuda.to_device(allowed)

    def _zero(self) -> None:
        dev, L = self._dev, self.launch
        sk.kernels().zero[L.row_blocks, L.threads](dev.hist, dev.answer)

    def _histogram(self, v0: Any, v1: Any, channels: int) -> None:
        L, dev = self.launch, self._dev
        kernel = sk.histogram_kernel(self.bins, L.features_per_block, channels)
        grid = (max(1, -(-self.n_samples // L.rows_per_block)),
                -(-self.n_features // L.features_per_block))
        kernel[grid, L.threads](dev.codes, v0, v1, L.rows_per_block, dev.hist)

    def _scan(self, allowed: Any) -> None:
        dev, threads = self._dev, self.launch.threads
        blocks = -(-self.n_features // threads)
        sk.kernels().sign_scan[blocks, threads](dev.hist, dev.n_bins, allowed, dev.score,
                                                dev.thr, dev.sign)


@dataclass
class _DeviceArrays:
    codes: Any
    n_bins: Any
    hist: Any
    score: Any
    thr: Any
    sign: Any
    every_feature: Any
    answer: Any
    low: Any
    query: Any  # the query in fixed point


@dataclass(frozen=True)
class DeviceRounds:
    """What :func:`adaboost_on_device` returns, one entry a round: the hypotheses (as the
    CPU oracle returns them, without ``train_output``), the steps α_t, the edges γ_t, the
    ℓ1 margins ``min_i y_i f(x_i) / ‖λ‖₁`` after each round, the ensemble (predicts like a
    fitted booster's ``ensemble_``) and why the rounds ended."""

    hypotheses: list[Hypothesis]
    steps: np.ndarray
    edges: np.ndarray
    margins: np.ndarray
    ensemble: Ensemble
    stop_reason: StopReason
    #: the fixed-point scale of the weights, ``2^-e`` a unit
    exponent: int = field(default=0)


def adaboost_on_device(stumps: DeviceStumps | BoundStumpOracle, y: ArrayLike,
                       rounds: int) -> DeviceRounds:
    """Discrete AdaBoost with ±1 stumps, the weights kept on the GPU.

    A round (Telgarsky 2013, Algorithm 1 with the AdaBoost step; the module's kernels):

    1. ``w_i = exp(−m_i − top)``, ``top = −min m`` (log space, lazily normalised: the
       largest weight is 1), as integers ``round(w_i 2^e)`` with
       ``e = fixed_point_exponent(1, n)``, and ``W = Σ w``;
    2. the stump maximising ``Σ_i w_i y_i h(x_i)`` (:meth:`DeviceStumps.correlate`'s
       kernels on the query ``w ∘ y``): its score ``S`` is the edge times ``W``;
    3. ``γ = S / W``; ``S = 0`` stops (``zero_edge``), a stump right on every row stops
       after a coefficient larger than ``‖λ‖₁ + 1`` (``perfect_hypothesis``, as the CPU
       round does);
    4. ``α = ½ (ln(W + S) − ln(W − S))``: ``W ± S`` are ``Σ w (1 ± u)``, the CPU step's
       agreement and disagreement times ``W``, exact integers here;
    5. ``m_i += y_i (α h_i)`` on the device, and ``min m`` for the next round.

    Parameters
    ----------
    stumps : DeviceStumps or BoundStumpOracle
        The rows on the GPU (a bound oracle is uploaded first).
    y : array-like of shape (n_samples,)
        Labels ``−1`` or ``+1``.
    rounds : int
        The most rounds.

    Returns
    -------
    DeviceRounds

    Raises
    ------
    ArithmeticError
        The rows a stump gets wrong all have weights that round to 0 in fixed point
        (below ``2^-e / 2`` of the largest weight, a margin gap beyond about 36 at a
        thousand rows): the step would be infinite here where the CPU's is finite; fit
        on the CPU.

    Notes
    -----
    Against the CPU fit (``CoordinateBoostingClassifier(StumpOracle(...))``, whose
    defaults are AdaBoost's), the rounds differ only by rounding, for these reasons:

    * the weights are rounded to multiples of ``2^-e`` of the largest (``e = 61 −
      ⌈log2 n⌉``): each within half a step, and a weight below half a step is 0 (the
      CPU keeps it);
    * ``exp`` is the device's (CUDA's libdevice; the C library's on the simulator),
      the CPU's its own polynomial: at most an ulp apart, mostly absorbed by the
      rounding to ``2^-e``;
    * the CPU normalises its weights (by a predicted ``Z_t``, checked) and sums them as
      floats; here they are never normalised and sum exactly, so ``α`` and ``γ`` differ
      from the CPU's by about the float sums' rounding, and so do the margins after the
      first step (the step itself is the CPU's formula, bit for bit for the same ``α``);
    * the stump is the exact best on the rounded query: the CPU's too unless two
      candidates' scores differ by less than the rounding;
    * the stops: a stump right on every row is found from exact label counts (the
      CPU's ``min u >= 1``, the same rows); a zero edge is ``S = 0`` exactly, where the
      CPU tests its float sum ``Σ w u == 0``.
    """
    if isinstance(stumps, BoundStumpOracle):
        stumps = DeviceStumps(stumps)
    if not isinstance(stumps, DeviceStumps):
        raise TypeError(f"stumps must be DeviceStumps or a BoundStumpOracle; got "
                        f"{type(stumps).__name__}")
    if isinstance(rounds, bool) or not isinstance(rounds, int | np.integer) or rounds < 1:
        raise ValueError(f"rounds must be a positive int; got {rounds!r}")
    n, d = stumps.n_samples, stumps.n_features
    labels = np.asarray(y)
    if labels.shape != (n,) or not np.isin(labels, (-1, 1)).all():
        raise ValueError(f"y must hold {n} labels, each -1 or +1")
    cuda, dev, L, k = stumps._cuda, stumps._dev, stumps.launch, sk.kernels()
    positive = labels > 0
    d_y = cuda.to_device(np.where(positive, 1, -1).astype(np.int8))
    # Once: each bin's count of positive rows and of all rows, for the stop rule (a stump
    # right on every row, whatever the weights: the CPU round's min u >= 1).
    stumps._zero()
    stumps._histogram(cuda.to_device(positive.astype(np.int64)),
                      cuda.to_device(np.ones(n, dtype=np.int64)), 2)
    counts = dev.hist.copy_to_host()
    pos, every = counts[0], counts[1]
    n_pos = int(pos[0].sum()) if d else int(positive.sum())

    e = fixed_point_exponent(1.0, n)
    scale = math.ldexp(1.0, e)
    margins = cuda.to_device(np.zeros(n))
    dev.low.copy_to_device(np.zeros(1))  # min m = 0: every weight exp(0) = 1
    query = cuda.device_array(n, dtype=np.int64)
    ensemble = Ensemble()
    hypotheses, steps, edges, ell1 = [], [], [], []
    stop = StopReason.MAX_ROUNDS
    for _ in range(int(rounds)):
        # 1.-2. the weights, their histogram, every feature's scan and the pick
        stumps._zero()
        k.fixed_weights[L.row_blocks, L.threads](margins, d_y, dev.low, scale, query,
                                                 dev.answer)
        stumps._histogram(query, query, 1)
        stumps._scan(dev.every_feature)
        k.pick[1, 1](dev.hist, dev.score, dev.thr, dev.sign, dev.low, dev.answer)
        at, S, _, t, s, W = (int(x) for x in dev.answer.copy_to_host())
        # 3. the edge, and the CPU round's stops
        if S == 0:
            stop = StopReason.ZERO_EDGE
            break
        h = stumps.hypothesis(at, t, s, outputs=False)
        if _wrong_rows(at, t, s, pos, every, n, n_pos) == 0:
            alpha = ensemble.l1_norm() + 1.0
            stop = StopReason.PERFECT_HYPOTHESIS
        elif W == S:
            raise ArithmeticError(
                "adaboost_on_device: every row this round's stump gets wrong has a weight "
                f"below 2^-{e + 1} of the largest, 0 in fixed point, so the AdaBoost step "
                "is infinite on the GPU (the CPU's is finite); fit on the CPU")
        else:
            # 4. ½ ln((W + S)/(W − S)) from exact integers (Python's: W + S may pass 2^63)
            alpha = 0.5 * (math.log(W + S) - math.log(W - S))
        # 5. the step on the device (j < 0: a constant), and the margins' minimum
        j = at - 2 if at >= 2 else -1
        k.step_margins[L.row_blocks, L.threads](dev.codes, d_y, j, t, s, alpha, margins,
                                                dev.low)
        ensemble.add(h, alpha, 1.0)
        low = float(dev.low.copy_to_host()[0])
        hypotheses.append(h)
        steps.append(alpha)
        edges.append(S / W)  # Python's int division: correctly rounded
        ell1.append(low / ensemble.l1_norm())
        if stop is StopReason.PERFECT_HYPOTHESIS:
            break
    return DeviceRounds(hypotheses, np.array(steps), np.array(edges), np.array(ell1),
                        ensemble, stop, e)


def _wrong_rows(at: int, t: int, s: int, pos: np.ndarray, every: np.ndarray, n: int,
                n_pos: int) -> int:
    """Rows the answer gets wrong (from each bin's counts of positive rows and of all
    rows): a constant ``s`` is wrong on the other class; a stump outputs ``−s`` on bins
    ``<= t`` and ``s`` above."""
    if at < 2:
        return n - n_pos if s > 0 else n_pos
    j = at - 2
    left_pos, left = int(pos[j, :t + 1].sum()), int(every[j, :t + 1].sum())
    right_pos, right = n_pos - left_pos, n - left
    if s > 0:  # left says −1: its positives are wrong; right says +1: its negatives
        return left_pos + (right - right_pos)
    return (left - left_pos) + right_pos
