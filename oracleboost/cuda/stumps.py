"""Decision stumps answered on the GPU: ±1 stumps (``correlate``) and least-squares
stumps (``project``).

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

``project(target, w)`` sums the target (or ``w · target``) and the weights by bins in
fixed point the same way, brings the histograms' values back (two floats a bin), and
chooses with the CPU oracle's own least-squares rule on them: its scores are ratios
``S²/W``, which the integers alone do not order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from oracleboost._validation import check_query
from oracleboost.cuda import stump_kernels as sk
from oracleboost.cuda.class_kernels import class_kernels
from oracleboost.cuda.device import cuda_module, fetch, simulated, upload
from oracleboost.cuda.reductions import Reductions
from oracleboost.cuda.row_kernels import MAX_CHANNELS, row_kernels
from oracleboost.engine.backends import is_device_array
from oracleboost.oracles.base import Hypothesis
from oracleboost.oracles.monotone import is_constrained
from oracleboost.oracles.stumps import (
    BoundStumpOracle,
    ConstantHypothesis,
    LabelCodeStump,
    RegressionStump,
    SignStump,
    StumpOracle,
    VectorStump,
    label_codes,
)

__all__ = ["DeviceStumps", "Launch", "bind_on_device"]

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


class _HostCopy:
    """A device array as the CPU oracle's refusals read it (``np.asarray``): copied to
    the host only when a query is refused, so that the checks and the messages are the
    CPU's (a NaN named as a NaN, sums that overflow float64 named with the largest
    entry), and an answer costs no copy."""

    def __init__(self, a: Any) -> None:
        self._a = a

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        host = fetch(self._a)
        return host if dtype is None else host.astype(dtype, copy=False)


def _is_device(a: Any) -> bool:
    """Whether ``a`` is a device array (not a NumPy one)."""
    return not isinstance(a, np.ndarray) and is_device_array(a)


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
    ``correlate(r)`` for ``r`` of shape (n,) with the CPU oracle's ±1 stump, and
    ``project(target, w)`` with its least-squares stump.

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
    The query is rounded to fixed point on the device as the histogram reads it (the
    integers of :func:`~oracleboost.rows.fixed_point.to_fixed` at the scale of its
    largest ``|r_i|``, made on the device by :meth:`.reductions.Reductions.settle`); a
    NumPy query is uploaded first.  Rows whose ``|r_i|`` is below half a step
    (``2^-e / 2``) count as 0, where the CPU's float sums keep them: they can decide only
    between candidates that tie to that precision.
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
        #: the CPU oracle bound to the rows: its bins, its counts and its least-squares
        #: choice rule (:meth:`project`)
        self._bound: BoundStumpOracle | None = bound
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
        self._bound = None
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
            codes=upload(codes),
            n_bins=upload(n_bins),
            hist=cuda.device_array((2, d, self.bins), dtype=np.int64),
            score=cuda.device_array(d, dtype=np.int64),
            thr=cuda.device_array(d, dtype=np.int64),
            sign=cuda.device_array(d, dtype=np.int64),
            every_feature=upload(np.ones(d, dtype=np.uint8)),
            answer=cuda.device_array(sk.ANSWER_SIZE, dtype=np.int64),
            values=cuda.device_array((2, d, self.bins)),
            nothing=cuda.device_array(0),
        )
        self._reduce = Reductions(cuda, (self.launch.row_blocks, self.launch.threads))

    # -- the queries ------------------------------------------------------------------
    def correlate(self, r: Any, *, random_state: int | None = None,
                  features: ArrayLike | None = None) -> Hypothesis:
        """The ±1 stump (or constant) maximising ``<r, h>``, chosen on the GPU.

        Parameters
        ----------
        r : array-like or device array of shape (n_samples,) or (n_samples, K)
            Finite signed weights: a NumPy array (uploaded), or a per-row array already
            on the device (a booster's query on the GPU, never copied to the host).
            ``(n, K)`` queries are answered with the CPU oracle's label-coded stump
            (Grubb & Bagnell 2011, Theorem 2), chosen by its rule from the histograms
            of the row-centred query summed on the GPU in fixed point.
        random_state : ignored
            (The answer is deterministic; the Oracle protocol passes a seed.)
        features : array-like of int or None
            Only these features' stumps are candidates (the constants always are).

        Returns
        -------
        SignStump, LabelCodeStump or ConstantHypothesis
            With ``train_output`` set, as the CPU oracle's: a NumPy array for a NumPy
            ``r``, a device array for a device ``r`` (its outputs on the training rows,
            made on the device from the codes).
        """
        if np.ndim(r) == 2:
            return self._correlate_codes(r, features)
        on_device = _is_device(r)
        if on_device:
            if r.shape != (self.n_samples,):
                raise ValueError(f"r must have shape ({self.n_samples},); got {r.shape}")
            query = r
        else:
            query = upload(check_query(r, self.n_samples, "r", multioutput=False))
        dev = self._dev
        allowed = self._allowed(features)
        L, k = self.launch, sk.kernels()
        # the query's scale, made and kept on the device; the histogram of its integers
        row_kernels().start_query[L.row_blocks, L.threads](query, self._reduce.ext, dev.hist)
        self._reduce.settle(query, 1, read=False)
        self._histogram(query, query, 1)
        k.scan_and_pick[1, L.threads](dev.hist, dev.n_bins, allowed, self._reduce.peaks,
                                      dev.score, dev.thr, dev.sign, dev.answer)
        at, _, _, t, s, finite = (int(x) for x in fetch(dev.answer))
        if not finite:
            if self._bound is not None:
                self._bound._refuse_query(_HostCopy(query), "r")
            raise ValueError("the query r must be finite; it holds a NaN or an infinity")
        h = self.hypothesis(at, t, s, outputs=not on_device)
        if on_device:
            h.train_output = self._device_outputs(at - 2 if at >= 2 else -1, t, -s, s)
        return h

    def _prefetch(self, r: Any, shifted: tuple | None = None, *, project: bool = False
                  ) -> None:
        """A booster's hint of its next query (``BoundOracle._prefetch``): nothing to do
        here, the query runs when it is asked."""

    def project(self, target: Any, sample_weight: Any = None, *,
                random_state: int | None = None, features: ArrayLike | None = None
                ) -> Hypothesis:
        """The least-squares two-leaf stump (or constant) of the CPU oracle, chosen from
        histograms summed on the GPU.

        The target (or, with weights, ``w · target``) and the weights are rounded to
        fixed point on the device, each on the scale of its largest magnitude, and
        summed by bins with integer atomics (any order, the same bits); the histograms'
        values (floats of the integers) come back, and the CPU oracle's own rule
        chooses from them (:meth:`~oracleboost.oracles.stumps.BoundStumpOracle.
        _lsq_choice`: every split's ``S_L²/W_L + S_R²/W_R``, the constant first).  The
        answer is the CPU's wherever the CPU's float sums rank the candidates as the
        integers' values do: it fails only for candidates whose scores differ by about
        the rounding.  Unweighted, ``W`` is each bin's count (exact).

        Parameters
        ----------
        target : array-like or device array of shape (n_samples,) or (n_samples, K)
            Finite values: a NumPy array (uploaded), or a per-row array on the device (a
            booster's target, never copied to the host).  An ``(n, K)`` target is
            answered with a vector-leaf stump (the CPU oracle's, each class's column
            summed by bins on its own fixed-point scale).
        sample_weight : array-like, device array or None
            Positive weights of the rows (None: every row weighs 1).  Their scale does
            not change the answer (each sum has its own fixed-point scale; the CPU
            oracle divides them by a constant first: the leaves agree to rounding).
        random_state : ignored
            (The answer is deterministic.)
        features : array-like of int or None
            Only these features' stumps are candidates (the constant always is).

        Returns
        -------
        RegressionStump, VectorStump or ConstantHypothesis
            With ``train_output`` as for :meth:`correlate`.
        """
        bound = self._require_bound("project")
        if np.ndim(target) == 2:
            return self._project_rows(bound, target, sample_weight, features)
        on_device = _is_device(target)
        t = self._on_device(target, "target")
        w = None if sample_weight is None else self._on_device(sample_weight,
                                                               "sample_weight")
        features = self._features(features)
        dev, L = self._dev, self.launch
        rows, grid = row_kernels(), (L.row_blocks, L.threads)
        channels = 1 if w is None else 2
        if w is not None and dev.weighted is None:
            dev.weighted = self._cuda.device_array(self.n_samples, dtype=np.float64)
        # the summed target's (and the weights') scales, made and kept on the device
        rows.lsq_start[grid](t, dev.nothing if w is None else w,
                             dev.nothing if w is None else dev.weighted,
                             self._reduce.ext, dev.hist)
        self._reduce.settle(t, channels, read=False)
        summed = t if w is None else dev.weighted
        self._histogram(summed, t if w is None else w, channels)
        sk.kernels().unfixed[grid](dev.hist, self._reduce.exponents, self._reduce.peaks,
                                   dev.values)
        values = fetch(dev.values)
        hist_s = values[0][:, :, None]
        host = _HostCopy(t)  # the CPU's refusals read the target only to refuse it
        S_tot = bound._query_total(hist_s, host, "target")
        hist_w, W_tot = self._weights_of(bound, None if w is None else values[1])
        split, mean = bound._lsq_choice(hist_w, hist_s, S_tot, W_tot, features, host)
        if split is None:
            h: Hypothesis = ConstantHypothesis(float(mean[0]), self.n_features)
            feature, t_bin, left, right = -1, -1, float(mean[0]), float(mean[0])
        else:
            j, t_bin, a, b, default_left = split
            left, right = float(a[0]), float(b[0])
            h = RegressionStump(j, float(self.thresholds[j][t_bin]), left, right,
                                self.n_features, default_left)
            feature = j
        if on_device:
            h.train_output = self._device_outputs(feature, t_bin, left, right)
        else:
            codes = self._codes[feature] if feature >= 0 else None
            h.train_output = np.full(self.n_samples, right) if codes is None else \
                np.where(codes > t_bin, right, left)
        return h

    def _project_rows(self, bound: BoundStumpOracle, target: Any, sample_weight: Any,
                      features: ArrayLike | None) -> Hypothesis:
        """:meth:`project` of an ``(n, K)`` target: each class's column (or ``w ·``
        it) summed by bins on its own fixed-point scale, the weights likewise, and the
        CPU oracle's least-squares rule on every class at once (``Σ_k S_k²/W``)."""
        on_device = _is_device(target)
        t = self._rows_on_device(target, "target")
        w = None if sample_weight is None else self._on_device(sample_weight,
                                                               "sample_weight")
        features = self._features(features)
        summed = t
        if w is not None:
            summed = self._cuda.device_array(t.shape, dtype=np.float64)
            class_kernels().scaled_rows[self._reduce.grid](w, t, summed)
        hist_s = self._column_sums(summed)
        host = _HostCopy(t)
        S_tot = bound._query_total(hist_s, host, "target")
        hist_w, W_tot = self._weights_of(bound, None if w is None else self._bin_sums(w))
        split, mean = bound._lsq_choice(hist_w, hist_s, S_tot, W_tot, features, host)
        if split is None:
            h: Hypothesis = ConstantHypothesis(mean, self.n_features)
            feature, t_bin, left, right = -1, -1, mean, mean
        else:
            feature, t_bin, left, right, default_left = split
            h = VectorStump(feature, float(self.thresholds[feature][t_bin]), left, right,
                            self.n_features, default_left)
        h.train_output = self._row_outputs(feature, t_bin, left, right, on_device)
        return h

    def _correlate_codes(self, r: Any, features: ArrayLike | None) -> Hypothesis:
        """:meth:`correlate` of an ``(n, K)`` query: the CPU oracle's label-coded stump
        (:meth:`~oracleboost.oracles.stumps.BoundStumpOracle._code_choice`) from the
        histograms of the row-centred query, a class a column, each summed by bins on
        its own fixed-point scale."""
        bound = self._require_bound("correlate with an (n, K) query")
        on_device = _is_device(r)
        q = self._rows_on_device(r, "r")
        features = self._features(features)
        centred = self._cuda.device_array(q.shape, dtype=np.float64)
        class_kernels().row_centred[self._reduce.grid](q, centred)
        hist = self._column_sums(centred)
        split, best = bound._code_choice(hist, bound._query_total(hist, _HostCopy(q)),
                                         features)
        K, d = q.shape[1], self.n_features
        codes = label_codes(K)
        if split is None:
            h: Hypothesis = ConstantHypothesis(codes[best], d)
            feature, t_bin, left, right = -1, -1, codes[best], codes[best]
        else:
            feature, t_bin, kl, kr, default_left = split
            h = LabelCodeStump(feature, float(self.thresholds[feature][t_bin]), kl, kr, K,
                               d, default_left)
            left, right = codes[kl], codes[kr]
        h.train_output = self._row_outputs(feature, t_bin, left, right, on_device)
        return h

    def _weights_of(self, bound: BoundStumpOracle, hist_w: np.ndarray | None
                    ) -> tuple[np.ndarray, float]:
        """The weights' histogram by bins and their total: the bins' counts without
        weights (``hist_w`` None), else ``hist_w`` (the weights' sums) checked."""
        if hist_w is None:
            return bound._counts, float(self.n_samples)
        if not np.isfinite(hist_w[0]).all() or not hist_w[0].min() >= 0.0:
            raise ValueError("sample_weight must be finite and non-negative")
        return hist_w, float(bound._total(hist_w)[0])

    def _require_bound(self, what: str) -> BoundStumpOracle:
        if self._bound is None:
            raise _refuse(f"{what} on rows given as codes (from_codes): bind a "
                          "StumpOracle to X")
        return self._bound

    def _rows_on_device(self, a: Any, name: str) -> Any:
        """``a`` of shape (n, K), K ≥ 2, as a device array: a NumPy array checked and
        uploaded."""
        if _is_device(a):
            if a.ndim != 2 or a.shape[0] != self.n_samples:
                raise ValueError(f"{name} must have shape ({self.n_samples}, K); got "
                                 f"{a.shape}")
        else:
            a = np.ascontiguousarray(check_query(a, self.n_samples, name), dtype=np.float64)
        if a.shape[1] < 2:
            raise ValueError(f"{name} of shape (n, K) needs K >= 2 classes; got K="
                             f"{a.shape[1]} (pass shape (n,) for one column)")
        return a if _is_device(a) else upload(a)

    def _bin_sums(self, v: Any) -> np.ndarray:
        """The sums of ``v`` (n,) by bins, ``(d, B)`` floats: each bin's exact sum of
        ``v`` rounded to fixed point on the scale of its largest ``|v_i|`` (NaN
        throughout where ``v`` holds a NaN or an infinity)."""
        dev, grid = self._dev, self._reduce.grid
        row_kernels().start_query[grid](v, self._reduce.ext, dev.hist)
        self._reduce.settle(v, 1, read=False)
        self._histogram(v, v, 1)
        sk.kernels().unfixed[grid](dev.hist, self._reduce.exponents, self._reduce.peaks,
                                   dev.values)
        return fetch(dev.values[0])

    def _column_sums(self, v: Any) -> np.ndarray:
        """The sums by bins of each column of the device array ``v`` (n, K), ``(d, B,
        K)`` floats: as :meth:`_bin_sums` of each column (its own fixed-point scale, the
        same bits), made for up to :data:`MAX_CHANNELS` columns at once, in one pass over
        the codes reading each row's columns together (four launches and one copy back
        a group, where a column at a time takes them a column)."""
        dev, grid, L = self._dev, self._reduce.grid, self.launch
        K = v.shape[1]
        if dev.column_hist is None:
            shape = (MAX_CHANNELS, self.n_features, self.bins)
            dev.column_hist = self._cuda.device_array(shape, dtype=np.int64)
            dev.column_values = self._cuda.device_array(shape, dtype=np.float64)
        groups = []
        for c0 in range(0, K, MAX_CHANNELS):
            k = min(MAX_CHANNELS, K - c0)
            hist, values = dev.column_hist[:k], dev.column_values[:k]
            row_kernels().start_columns[grid](v, c0, k, self._reduce.ext, hist)
            self._reduce.settle(v, k, n=self.n_samples, read=False)
            features = max(1, min(L.features_per_block,
                                  _SHARED_BYTES // (8 * k * self.bins)))
            kernel = sk.histogram_rows_kernel(self.bins, features, k)
            kernel[self._histogram_grid(features), L.threads](
                dev.codes, v, c0, self._reduce.exponents, L.rows_per_block, hist)
            sk.kernels().unfixed[grid](hist, self._reduce.exponents, self._reduce.peaks,
                                       values)
            groups.append(fetch(values))
        return np.moveaxis(np.concatenate(groups), 0, 2)

    def _row_outputs(self, feature: int, t: int, left: np.ndarray, right: np.ndarray,
                     on_device: bool) -> Any:
        """A vector stump's outputs on the training rows, ``(n, K)``: ``right`` above
        bin ``t`` of ``feature``, ``left`` at or below (``feature < 0``: ``right``); a
        device array made from the codes there, or a NumPy array from the host's."""
        leaves = np.ascontiguousarray(np.stack([left, right]), dtype=np.float64)
        if on_device:
            out = self._cuda.device_array((self.n_samples, leaves.shape[1]),
                                          dtype=np.float64)
            class_kernels().stump_rows[self._reduce.grid](self._dev.codes, feature, t,
                                                          upload(leaves), out)
            return out
        if feature < 0:
            return np.tile(leaves[1], (self.n_samples, 1))
        return np.where((self._codes[feature] > t)[:, None], leaves[1], leaves[0])

    def _on_device(self, a: Any, name: str) -> Any:
        """``a`` (shape (n,)) as a device array: a NumPy array checked and uploaded."""
        if _is_device(a):
            if a.shape != (self.n_samples,):
                raise ValueError(f"{name} must have shape ({self.n_samples},); got "
                                 f"{a.shape}")
            return a
        return upload(check_query(a, self.n_samples, name, multioutput=False))

    # -- pieces the rounds share -------------------------------------------------------
    def hypothesis(self, at: int, t: int, s: int, *, outputs: bool = True) -> Hypothesis:
        """The answer ``scan_and_pick`` names (``at``: 0 or 1 the constants ±1, ``2 + j``
        feature j's stump after bin ``t`` with sign ``s``), as the CPU oracle builds it;
        ``outputs``: with its ``train_output`` (from the host's copy of the codes)."""
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

    def _device_outputs(self, feature: int, t: int, left: float, right: float) -> Any:
        """A stump's outputs on the training rows (``right`` above bin ``t`` of
        ``feature``, ``left`` at or below; ``feature < 0``: the constant ``right``), a
        device array made from the codes on the device."""
        out = self._cuda.device_array(self.n_samples, dtype=np.float64)
        row_kernels().stump_outputs[self._reduce.grid](self._dev.codes, feature, t,
                                                      float(left), float(right), out)
        return out

    def _features(self, features: ArrayLike | None) -> np.ndarray | None:
        """``features`` checked: a non-empty 1-D array of column indices, or None."""
        if features is None:
            return None
        f = np.asarray(features)
        if f.ndim != 1 or f.size == 0 or not np.issubdtype(f.dtype, np.integer) \
                or f.min() < 0 or f.max() >= self.n_features:
            raise ValueError(f"features must be a non-empty 1-D array of column indices in "
                             f"[0, {self.n_features}); got {features!r}")
        return f

    def _allowed(self, features: ArrayLike | None) -> Any:
        f = self._features(features)
        if f is None:
            return self._dev.every_feature
        allowed = np.zeros(self.n_features, dtype=np.uint8)
        allowed[f] = 1
        return upload(allowed)

    def _histogram(self, v0: Any, v1: Any, channels: int) -> None:
        """The histograms of ``v0`` (and ``v1``) in fixed point, on the scales the last
        settle made (:meth:`.reductions.Reductions.exponents`)."""
        L, dev = self.launch, self._dev
        kernel = sk.histogram_kernel(self.bins, L.features_per_block, channels)
        kernel[self._histogram_grid(L.features_per_block), L.threads](
            dev.codes, v0, v1, self._reduce.exponents, L.rows_per_block, dev.hist)

    def _histogram_grid(self, features: int) -> tuple[int, int]:
        """A histogram kernel's grid: blocks of ``rows_per_block`` rows by groups of
        ``features`` features."""
        return (max(1, -(-self.n_samples // self.launch.rows_per_block)),
                -(-self.n_features // features))


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
    values: Any  # a least-squares query's histograms, as floats
    nothing: Any  # a per-row array of length 0: the kernels' "none"
    weighted: Any = None  # its weighted target w · t (made when weights are given)
    column_hist: Any = None  # an (n, K) query's histograms, MAX_CHANNELS columns at most
    column_values: Any = None  # ... and as floats
