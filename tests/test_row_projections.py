"""MABoost's projections as row stages (:mod:`oracleboost.optim.row_projections`).

* **The same bits** for ``n_jobs`` 1 and 2, for any cut of the rows into partitions (an
  in-process stand-in for a cluster, :class:`SplitBlocks`), and on a ``LocalCluster``
  of 2 worker processes; with the module's constants as shipped and with constants that
  force several rounds of refinement and hash-thinned samples.
* **The same projections** as the sort-based implementations this module replaced
  (copied below from ``projections.py`` as of the commit before, as the reference):
  measured on the inputs of these tests (``pytest -s`` prints it: about 1 and 0.6) and on
  10,000 hypothesis examples (sizes to 768, scales 1e-300 to 1e5 n, ties, several
  rounds of refinement), Euclidean ``|Δw| ≤ 4 ulp(max(|z|, w))`` (asserted to 8) and KL
  ``|Δw_i| ≤ 1.5 ε w_i (1 + |log w_i| + log2(n)/F)`` (``w_i`` the larger of the two,
  ``F`` the free mass; asserted to 4): ``w_i = z_i − τ`` is exact to the ulps of ``z``
  only (τ itself differs by an ulp or two), ``exp`` turns the rounding of ``log w_i``
  (a few ulps of ``|log w_i|``) into a relative error, and the free mass
  ``1 − Σ_capped cap`` carries the rounding of a sum of caps (the reference's, pairwise:
  ``log2(n) ε``; here exact), large relative to ``F`` when the caps take nearly all the
  mass.  ``Σ w`` is 1 to an ulp or two, as the reference's (the Newton step's residual
  is summed exactly).
* Ties, exact zeros, ``-inf``, scalar and per-row caps with ``inf`` and 0, 1 and 2 rows,
  ``n`` not a multiple of the block, tight and infeasible caps; the number of passes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_projections import discrepancy_recorder

from oracleboost.distributed.cluster import WorkerBlocks
from oracleboost.optim import row_projections as rp
from oracleboost.optim.projections import euclidean_capped_simplex, kl_capped_simplex
from oracleboost.optim.row_projections import euclidean_simplex_rows, kl_simplex_rows
from oracleboost.rows.blocks import RowBlocks
from oracleboost.rows.partitioned import Partitioned

EPS = float(np.finfo(np.float64).eps)

# ---------------------------------------------------------------------------------------
# the reference: the sort-based projections of projections.py before issue 21
# ---------------------------------------------------------------------------------------

_TIGHT = 8.0 * EPS


def _cap_total(c):
    s = float(c.sum())
    if math.isfinite(s) and abs(s - 1.0) < 1e-8:
        s = math.fsum(c)
    return s


def ref_euclidean_simplex(z):
    u = np.sort(z)[::-1]
    css = np.cumsum(u)
    j = np.arange(1, z.size + 1)
    support = u - (css - 1.0) / j > 0
    rho = int(np.flatnonzero(support)[-1]) + 1
    tau = (float(u[:rho].sum()) - 1.0) / rho
    w = np.maximum(z - tau, 0.0)
    free = w > 0
    r = 1.0 - float(w.sum())
    if r != 0.0:
        tau -= r / int(free.sum())
        w = np.maximum(z - tau, 0.0)
    return w


def ref_euclidean_capped_simplex(z, cap):
    c = np.broadcast_to(np.asarray(cap, dtype=float), z.shape).copy()
    if _cap_total(c) <= 1.0 + _TIGHT:
        return c
    w = np.zeros(z.size)
    act = c > 0
    za, ca = z[act], c[act]
    tau = _ref_euclidean_tau(za, ca)
    wa = np.clip(za - tau, 0.0, ca)
    free = (wa > 0) & (wa < ca)
    r = 1.0 - float(wa.sum())
    nfree = int(free.sum())
    if r != 0.0 and nfree:
        tau -= r / nfree
        wa = np.clip(za - tau, 0.0, ca)
    w[act] = wa
    return w


def _ref_euclidean_tau(z, c):
    n = z.size
    zs = np.sort(z)
    z_suffix = np.append(np.cumsum(zs[::-1])[::-1], 0.0)
    fin = np.isfinite(c)
    low = z[fin] - c[fin]
    order = np.argsort(low)
    ls, cs, zcs = low[order], c[fin][order], z[fin][order]
    c_suffix = np.append(np.cumsum(cs[::-1])[::-1], 0.0)
    zc_suffix = np.append(np.cumsum(zcs[::-1])[::-1], 0.0)

    def g(t):
        i_pos = int(np.searchsorted(zs, t, side="right"))
        i_cap = int(np.searchsorted(ls, t, side="left"))
        n_free = (n - i_pos) - (ls.size - i_cap)
        return float(c_suffix[i_cap] + (z_suffix[i_pos] - zc_suffix[i_cap]) - t * n_free)

    t = np.sort(np.concatenate([zs, ls]))
    if g(t[0]) >= 1.0:
        lo, hi = 0, t.size - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if g(t[mid]) >= 1.0:
                lo = mid
            else:
                hi = mid
        left, right = t[lo], t[lo + 1]
        zero = z <= left
        capped = fin & (z - c >= right)
    else:
        left, right = -np.inf, t[0]
        zero = np.zeros(n, dtype=bool)
        capped = fin.copy()
    free = ~zero & ~capped
    nfree = int(free.sum())
    if nfree == 0:
        return float(left)
    tau = (float(z[free].sum()) + float(c[capped].sum()) - 1.0) / nfree
    return float(min(max(tau, left), right))


def ref_kl_simplex(lz):
    w = np.exp(lz - float(lz.max()))
    return w / w.sum()


def ref_kl_capped_simplex(lz, cap):
    c = np.broadcast_to(np.asarray(cap, dtype=float), lz.shape).copy()
    pos = lz > -np.inf
    total = _cap_total(c[pos])
    w = np.zeros(lz.size)
    if total <= 1.0 + _TIGHT:
        w[pos] = c[pos]
        return w
    act = pos & (c > 0)
    la, ca = lz[act], c[act]
    with np.errstate(divide="ignore"):
        log_ca = np.log(ca)
    log_c_rel, m, capped = _ref_kl_log_c(la, ca, log_ca)
    lam = la - m
    wa = _ref_min_cap_exp(log_c_rel + lam, ca, log_ca)
    s_free = float(wa[~capped].sum())
    r = 1.0 - float(wa.sum())
    if r != 0.0 and abs(r) < 0.5 * s_free:
        log_c_rel += math.log1p(r / s_free)
        wa = _ref_min_cap_exp(log_c_rel + lam, ca, log_ca)
    w[act] = wa
    return w


def _ref_min_cap_exp(t, ca, log_ca):
    w = ca.copy()
    below = t < log_ca
    w[below] = np.minimum(ca[below], np.exp(t[below]))
    return w


def _ref_kl_log_c(la, ca, log_ca):
    ratio = log_ca - la
    order = np.argsort(ratio, kind="stable")
    rs, ls, cs = ratio[order], la[order], ca[order]
    n = rs.size
    lse_suffix = np.empty(n)
    lse_suffix[:-1] = np.logaddexp.accumulate(ls[:0:-1])[::-1]
    lse_suffix[-1] = -np.inf
    prefix = np.cumsum(cs)
    nfin = int(np.isfinite(rs).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (prefix[:nfin] <= 1.0) & (
            rs[:nfin] + lse_suffix[:nfin] <= np.log1p(-np.minimum(prefix[:nfin], 1.0))
        )
    below = np.flatnonzero(ok)
    capped_sorted = np.zeros(n, dtype=bool)
    if below.size:
        k = min(int(below[-1]), n - 2)
        capped_sorted[: k + 1] = True
        mass = 1.0 - float(cs[: k + 1].sum())
        if mass <= 0.0:
            mass = 1.0 - float(prefix[k])
    else:
        mass = 1.0
    free_ls = ls[~capped_sorted]
    m = float(free_ls.max())
    log_c_rel = math.log(mass) - math.log(float(np.exp(free_ls - m).sum()))
    capped = np.empty(n, dtype=bool)
    capped[order] = capped_sorted
    return log_c_rel, m, capped


def reference(kind, x, cap):
    if kind == "euclidean":
        return ref_euclidean_simplex(x) if cap is None else ref_euclidean_capped_simplex(x, cap)
    return ref_kl_simplex(x) if cap is None else ref_kl_capped_simplex(x, cap)


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


class SplitBlocks(RowBlocks):
    """Rows cut into partitions of the given sizes (multiples of the lane, but the
    last), each stage run once per partition on a worker's blocks, in process: what
    :class:`~oracleboost.distributed.cluster.ClusterBlocks` does, without a cluster."""

    in_place = False

    def __init__(self, n: int, block_size: int, sizes) -> None:
        super().__init__(n, block_size, n_jobs=1)
        assert sum(sizes) == n and all(k % self.lane == 0 for k in sizes[:-1])
        self.sizes = tuple(sizes)

    def lane_map(self, fn):  # pragma: no cover - a stage never calls it on these
        raise AssertionError("the partitions' blocks run the lanes")

    def map(self, stage, *rows, **consts):
        outs, stats, start = [], [], 0
        for k in self.sizes:
            part = [r[start:start + k] if isinstance(r, np.ndarray) and r.shape == (self.n,)
                    else r for r in rows]
            o, s = stage(WorkerBlocks(k, self.block_size), *part, **consts)
            outs.append(o)
            stats.append(s)
            start += k
        return tuple(np.concatenate(x) for x in zip(*outs, strict=True)), stats


class CountingBlocks(RowBlocks):
    """Counts the passes over the rows (``map`` calls)."""

    passes = 0

    def map(self, stage, *rows, **consts):
        self.passes += 1
        return super().map(stage, *rows, **consts)


def project(blocks, kind, x, cap=None):
    fn = euclidean_simplex_rows if kind == "euclidean" else kl_simplex_rows
    return fn(blocks, x, cap)


def same_bits(a, b):
    np.testing.assert_array_equal(np.asarray(a).view(np.uint64), np.asarray(b).view(np.uint64))


def problem(kind: str, caps: str, n: int, seed: int, ties: bool = False):
    """A point (``z``, or ``log z`` with some ``-inf``) and caps of the kind asked."""
    rng = np.random.default_rng(seed)
    if kind == "euclidean":
        x = (rng.normal(size=n) + 1.0) / n
        if ties:
            x = np.round(x * n * 4) / (n * 4)  # a handful of distinct values
    else:
        x = rng.normal(scale=3.0, size=n)
        if ties:
            x = np.round(x)
        x[rng.random(n) < 0.1] = -np.inf
        x[0] = 0.0
    if caps == "none":
        return x, None
    if caps == "scalar":
        return x, 2.5 / n
    c = rng.uniform(0.5, 3.0, size=n) / n
    c[rng.random(n) < 0.2] = np.inf
    c[rng.random(n) < 0.1] = 0.0
    c[0] = np.inf
    return x, c


def check_reference(kind, x, cap, w):
    """Agreement with the sort-based reference, to the tolerance measured (see the
    module's docstring)."""
    ref = reference(kind, x, cap)
    assert w.dtype == np.float64 and w.shape == ref.shape
    capb = np.broadcast_to(np.inf if cap is None else cap, w.shape)
    forced = (capb == 0) | (x == -np.inf if kind == "kl" else False)
    assert (w[forced] == 0).all() and (w >= 0).all() and (w <= capb).all()
    # Σ w = 1 to rounding: w_i = z_i − τ lies on the grid of ulp(z_i) (Euclidean)
    grain = np.count_nonzero(w) * np.spacing(np.abs(x).max()) if kind == "euclidean" else 0
    assert abs(math.fsum(w) - 1.0) <= 2 * EPS + grain
    d = np.abs(w - ref)
    if kind == "euclidean":  # w = z − τ: to the ulps of the larger of z and τ (~ w)
        ulp = np.spacing(max(np.abs(x).max(), ref.max()))
        _record(kind, d.max() / ulp)
        assert d.max() <= 8 * ulp, d.max() / ulp
        return
    # the free mass of the result in which the row is free (which rows sit exactly at
    # their caps can turn on the last ulp when the caps take all the mass)
    free_new, free_ref = float(w[w < capb].sum()), float(ref[ref < capb].sum())
    free_mass = np.where(ref < capb, free_ref, free_new)
    # ε w (1 + |log w| + log2(n) / F), w the larger of the two: exp turns the rounding
    # of log w into a relative error; the free mass 1 − Σ_capped cap has the rounding of
    # a sum of n caps (pairwise in the reference: log2(n) ε), relative to F
    top = np.maximum(w, ref)
    with np.errstate(divide="ignore"):
        unit = EPS * top * (1 + np.abs(np.log(np.where(top > 0, top, 1.0)))
                            + np.log2(w.size + 1) / np.where(free_mass > 0, free_mass, np.inf))
    ratio = float(np.max(d / np.where(unit > 0, unit, 1.0)))
    _record(kind, ratio)
    assert ratio <= 4, ratio


# The largest discrepancy against the reference seen by the tests, in the units of the
# tolerance.
_record, _report_discrepancy = discrepancy_recorder(
    "max discrepancy against the sort-based reference (Euclidean: ulps of max(|z|, w); "
    "KL: ε w (1 + |log w| + log2(n)/F))", ".2f")


@pytest.fixture
def many_rounds(monkeypatch):
    """Constants that make small problems refine over several rounds: 8 pivots a pass,
    a sample of 64 values, at most 256 breakpoints gathered (all client-side, so that
    a cluster's workers need no patch)."""
    monkeypatch.setattr(rp, "GATHER", 256)
    monkeypatch.setattr(rp, "SAMPLE", 64)
    monkeypatch.setattr(rp, "LANE_BUDGET", 1)


KINDS = ("euclidean", "kl")
CAPS = ("none", "scalar", "rows")

# ---------------------------------------------------------------------------------------
# the same bits on any threads and partitions
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("rounds", ["shipped", "many"])
@pytest.mark.parametrize("caps", CAPS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_same_bits_on_threads_and_partitions(kind, caps, seed, rounds, request):
    """n = 140,001 rows (two threads' worth; not a multiple of the block): n_jobs 1 and
    2 and three cuts into partitions give the same bits."""
    if rounds == "many":
        request.getfixturevalue("many_rounds")
    n = 140_001
    x, cap = problem(kind, caps, n, seed, ties=seed == 1)
    w1 = project(RowBlocks(n, n_jobs=1), kind, x, cap)
    same_bits(project(RowBlocks(n, n_jobs=2), kind, x, cap), w1)
    lane = RowBlocks(n).lane
    for sizes in ([n], [lane, n - lane], [7 * lane, 20 * lane, n - 27 * lane]):
        same_bits(project(SplitBlocks(n, RowBlocks(n).block_size, sizes), kind, x, cap), w1)
    check_reference(kind, x, cap, w1)


@pytest.mark.parametrize("kind", KINDS)
def test_sparse_samples_same_bits(kind, monkeypatch):
    """A sample of 2 values a pass: lanes sampled one row each and thinned by the hash,
    empty samples answered by denser ones; still the same bits and the same answer."""
    monkeypatch.setattr(rp, "GATHER", 64)
    monkeypatch.setattr(rp, "SAMPLE", 2)
    monkeypatch.setattr(rp, "LANE_BUDGET", 1)
    n, block = 20_000, 64
    for caps in CAPS:
        x, cap = problem(kind, caps, n, 5)
        w = project(RowBlocks(n, block), kind, x, cap)
        same_bits(project(SplitBlocks(n, block, [64 * 37, n - 64 * 37]), kind, x, cap), w)
        check_reference(kind, x, cap, w)


def test_sample_is_the_rows_bottom_keep(monkeypatch):
    """The sample of a pass is the rows' own ``KEEP`` smallest (hash, value) pairs: the
    same set on any threads and cuts, and the same when a run's buffer overflowed and
    was compacted on the way (``KEEP`` small here)."""
    n = 140_001
    x, cap = problem("euclidean", "rows", n, 4, ties=True)
    kw = dict(cap=np.inf, first=False, a=-np.inf, b=np.inf, piv=rp._NO_PIVOTS,
              stride=1, thr=rp._ALL, gathering=False, limit=0)
    monkeypatch.setattr(rp, "KEEP", 1 << 20)  # every breakpoint kept: no compaction
    full = rp._run(RowBlocks(n, n_jobs=1), rp._eu_pass, x, cap, **kw)
    assert full.sample.size > 100_000  # distinct (hash, value) pairs (ties repeat some)
    lane = RowBlocks(n).lane
    monkeypatch.setattr(rp, "KEEP", 1000)  # 2,000-item buffers: compacted many times
    for blocks in (RowBlocks(n, n_jobs=1), RowBlocks(n, n_jobs=2),
                   SplitBlocks(n, RowBlocks(n).block_size, [5 * lane, n - 5 * lane])):
        small = rp._run(blocks, rp._eu_pass, x, cap, **kw)
        same_bits(small.keys, full.keys[:1000])
        same_bits(small.sample, full.sample[:1000])


# ---------------------------------------------------------------------------------------
# the same projections as before
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 17, 1000, 4097, 70_001])
@pytest.mark.parametrize("caps", CAPS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_sort_based(kind, caps, n, seed):
    x, cap = problem(kind, caps, n, 10 + seed)
    if kind == "kl" and n <= 3:
        x[x == -np.inf] = 0.0  # keep the support
    capb = np.broadcast_to(np.inf if cap is None else cap, x.shape)
    if kind == "euclidean" and capb.sum() < 1.0 + 1e-9:
        cap = None
    if kind == "kl" and capb[x > -np.inf].sum() < 1.0 + 1e-9:
        cap = None
    check_reference(kind, x, cap, project(RowBlocks(n, 256), kind, x, cap))


@pytest.mark.parametrize("caps", CAPS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [5, 3000, 100_000])
def test_ties(kind, caps, n, many_rounds):
    """A handful of distinct values (as after a few rounds of boosting with stumps):
    pivots fall on the ties and settle them; the same answer as the reference."""
    x, cap = problem(kind, caps, n, 3, ties=True)
    w = project(RowBlocks(n, 512), kind, x, cap)
    check_reference(kind, x, cap, w)
    same_bits(project(SplitBlocks(n, 512, [512, n - 512]) if n > 512 else RowBlocks(n, 512),
                      kind, x, cap), w)


def test_all_equal_and_exact_zeros(many_rounds):
    n = 50_000
    z = np.full(n, 0.3)
    w = euclidean_simplex_rows(RowBlocks(n), z)
    assert (w == w[0]).all()  # w = 0.3 − τ: 1/n to the ulp of 0.3
    check_reference("euclidean", z, None, w)
    for kind, x, cap in [("euclidean", np.zeros(n), None), ("euclidean", z, 2.0 / n),
                         ("kl", np.zeros(n), 2.0 / n), ("kl", np.zeros(n), None)]:
        w = project(RowBlocks(n), kind, x, cap)
        # all equal, 1/n up to the grid of ulp(z) that z − τ lies on
        assert (w == w[0]).all()
        assert abs(w[0] * n - 1.0) <= 4 * EPS + n * np.spacing(np.abs(x).max())
        check_reference(kind, x, cap, w)
    # one large entry takes everything; the rest are exact zeros
    z[123] = 5.0
    w = euclidean_simplex_rows(RowBlocks(n), z)
    assert w[123] == 1.0 and np.count_nonzero(w) == 1
    lz = np.full(n, -np.inf)
    lz[[7, 9]] = [1000.0, 999.0]
    w = kl_simplex_rows(RowBlocks(n), lz)
    np.testing.assert_allclose(w[[7, 9]], [1 / (1 + np.exp(-1.0)), 1 / (1 + np.e)],
                               rtol=1e-15)
    assert np.count_nonzero(w) == 2
    w = kl_simplex_rows(RowBlocks(n), lz, np.where(np.arange(n) == 7, 0.6, np.inf))
    np.testing.assert_array_equal(w[[7, 9]], [0.6, 0.4])
    assert np.count_nonzero(w) == 2


@pytest.mark.parametrize("n", [1, 2])
def test_tiny(n):
    same_bits(euclidean_simplex_rows(RowBlocks(n), np.arange(n, dtype=float)),
              [1.0] if n == 1 else [0.0, 1.0])
    same_bits(euclidean_simplex_rows(RowBlocks(n), np.zeros(n)), np.full(n, 1.0 / n))
    same_bits(kl_simplex_rows(RowBlocks(n), np.zeros(n)), np.full(n, 1.0 / n))
    if n == 2:
        same_bits(euclidean_simplex_rows(RowBlocks(2), np.array([3.0, 0.0]), 0.75),
                  [0.75, 0.25])
        same_bits(kl_simplex_rows(RowBlocks(2), np.array([3.0, 0.0]), 0.75), [0.75, 0.25])
        same_bits(kl_simplex_rows(RowBlocks(2), np.array([3.0, -np.inf]), 1.0), [1.0, 0.0])


def test_tight_caps_and_errors():
    """Σ cap = 1: w = cap (on the support of z for KL); the public functions' errors."""
    n = 10_000
    caps = np.full(n, 1.0 / n)
    z = np.random.default_rng(0).normal(size=n)
    same_bits(euclidean_simplex_rows(RowBlocks(n), z, caps), caps)
    same_bits(euclidean_simplex_rows(RowBlocks(n), z, 1.0 / n), caps)
    same_bits(kl_simplex_rows(RowBlocks(n), z, caps), caps)
    lz = z.copy()
    lz[:10] = -np.inf
    c = np.full(n, 1.0 / (n - 10))
    w = kl_simplex_rows(RowBlocks(n), lz, c)
    same_bits(w, np.where(lz > -np.inf, c, 0.0))
    blocks = RowBlocks(3)
    for call, public in [
        (lambda: euclidean_simplex_rows(blocks, np.array([1.0, np.nan, 0.0])),
         lambda: euclidean_capped_simplex([1.0, np.nan, 0.0], np.inf)),
        (lambda: euclidean_simplex_rows(blocks, np.array([1.0, np.inf, 0.0])),
         lambda: euclidean_capped_simplex([1.0, np.inf, 0.0], np.inf)),
        (lambda: euclidean_simplex_rows(blocks, np.zeros(3), 0.3),
         lambda: euclidean_capped_simplex(np.zeros(3), 0.3)),
        (lambda: euclidean_simplex_rows(blocks, np.zeros(3), np.array([1.0, -1.0, 1.0])),
         lambda: euclidean_capped_simplex(np.zeros(3), [1.0, -1.0, 1.0])),
        (lambda: euclidean_simplex_rows(blocks, np.zeros(3), np.array([1.0, np.nan, 1.0])),
         lambda: euclidean_capped_simplex(np.zeros(3), [1.0, np.nan, 1.0])),
        (lambda: kl_simplex_rows(blocks, np.array([0.0, np.nan, 0.0])),
         lambda: kl_capped_simplex([0.0, np.nan, 0.0], 1.0)),
        (lambda: kl_simplex_rows(blocks, np.array([0.0, np.inf, 0.0])),
         lambda: kl_capped_simplex([0.0, np.inf, 0.0], 1.0)),
        (lambda: kl_simplex_rows(blocks, np.full(3, -np.inf), 1.0),
         lambda: kl_capped_simplex(np.full(3, -np.inf), 1.0)),
        (lambda: kl_simplex_rows(blocks, np.zeros(3), 0.3),
         lambda: kl_capped_simplex(np.zeros(3), 0.3)),
        (lambda: kl_simplex_rows(blocks, np.array([0.0, -np.inf, -np.inf]), 0.6),
         lambda: kl_capped_simplex([0.0, -np.inf, -np.inf], 0.6)),
    ]:
        with pytest.raises(ValueError) as row_error:
            call()
        with pytest.raises(ValueError) as public_error:
            public()
        assert str(row_error.value) == str(public_error.value)
    with pytest.raises(ValueError, match="there is nothing to normalise"):
        kl_simplex_rows(blocks, np.full(3, -np.inf))
    with pytest.raises(ValueError, match="shape"):
        euclidean_simplex_rows(blocks, np.zeros(4))


@pytest.mark.parametrize("kind, caps, n, passes", [
    ("euclidean", "none", 1000, {3}), ("euclidean", "rows", 1000, {3}),
    ("euclidean", "none", 100_000, {5}), ("euclidean", "scalar", 100_000, {5}),
    ("kl", "none", 100_000, {3}), ("kl", "rows", 1000, {2, 3}),
    ("kl", "scalar", 100_000, {4, 5}),
])
def test_passes(kind, caps, n, passes):
    """The passes of the module's docstring: the first (which gathers every breakpoint
    when they fit in GATHER), one refinement up to about 4 million breakpoints, the
    gather, and 2 to finish (KL: the second only when the Newton step moves); the
    softmax's 3."""
    x, cap = problem(kind, caps, n, 0)
    blocks = CountingBlocks(n)
    project(blocks, kind, x, cap)
    assert blocks.passes in passes


# ---------------------------------------------------------------------------------------
# property: random sizes, blocks and cuts
# ---------------------------------------------------------------------------------------


@st.composite
def _cut_problem(draw):
    kind = draw(st.sampled_from(KINDS))
    caps = draw(st.sampled_from(CAPS))
    block = draw(st.integers(1, 64))
    n_lanes = draw(st.integers(1, 12))
    n = draw(st.integers((n_lanes - 1) * block + 1, n_lanes * block))
    cut = draw(st.integers(0, n_lanes - 1)) * block
    seed = draw(st.integers(0, 2**16))
    return kind, caps, block, n, [cut, n - cut] if 0 < cut < n else [n], seed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cut_problem(), st.sampled_from([(8, 4), (64, 16), (rp.GATHER, rp.SAMPLE)]))
def test_property_any_cut(case, constants):
    """Any block size, cut and number of rows; few or many rounds of refinement."""
    kind, caps, block, n, sizes, seed = case
    x, cap = problem(kind, caps, n, seed, ties=seed % 2 == 0)
    capb = np.broadcast_to(np.inf if cap is None else cap, x.shape)
    support = x > -np.inf if kind == "kl" else np.ones(n, dtype=bool)
    if capb[support].sum() < 1.0 + 1e-9:
        cap = None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rp, "GATHER", constants[0])
        mp.setattr(rp, "SAMPLE", constants[1])
        mp.setattr(rp, "LANE_BUDGET", 1)
        w = project(RowBlocks(n, block), kind, x, cap)
        same_bits(project(SplitBlocks(n, block, sizes), kind, x, cap), w)
    check_reference(kind, x, cap, w)


# ---------------------------------------------------------------------------------------
# on a cluster: 2 worker processes
# ---------------------------------------------------------------------------------------

BLOCK = 256  # partitions of 16 blocks: 4,096 rows


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _scatter(client, a, sizes):
    cuts = np.cumsum([0, *sizes])
    # hash=False: a new key each time (equal arrays scattered again under the same key
    # race with the release of the earlier futures: "lost dependencies")
    futures = client.scatter([a[i:j] for i, j in zip(cuts[:-1], cuts[1:], strict=True)],
                             hash=False)
    return Partitioned(tuple((f, None) for f in futures), tuple(sizes))


def _fetch(client, p):
    from oracleboost.distributed.cluster import part_value

    results = client.gather([f for f, _ in p.parts])
    return np.concatenate([part_value(r, k) for r, (_, k) in zip(results, p.parts,
                                                                  strict=True)])


@pytest.mark.parametrize("kind", KINDS)
def test_cluster_same_bits(client, kind, many_rounds):
    """On a LocalCluster (4 partitions, several rounds of refinement): the same bits as
    in memory with the same blocks, for each kind of cap; rows stay on the workers."""
    from oracleboost.distributed.cluster import ClusterBlocks, rows_per_partition

    n = 3 * rows_per_partition(BLOCK) + 1234
    sizes = [rows_per_partition(BLOCK)] * 3 + [1234]
    blocks = ClusterBlocks(client, sizes, BLOCK)
    for caps in CAPS:
        x, cap = problem(kind, caps, n, 7, ties=caps == "rows")
        w_mem = project(RowBlocks(n, BLOCK), kind, x, cap)
        cap_rows = _scatter(client, cap, sizes) if caps == "rows" else cap
        w = project(blocks, kind, _scatter(client, x, sizes), cap_rows)
        assert isinstance(w, Partitioned)
        same_bits(_fetch(client, w), w_mem)
    # tight caps on the cluster: the caps themselves (on the support of z)
    support = x > -np.inf
    caps = np.where(support, 1.0 / support.sum(), 0.5)
    w = project(blocks, kind, _scatter(client, x, sizes), _scatter(client, caps, sizes))
    same_bits(_fetch(client, w), project(RowBlocks(n, BLOCK), kind, x, caps))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("cap", [None, 4.0 / 50_000])
def test_euclidean_projection_near_an_earlier_threshold(monkeypatch, seed, cap):
    """``euclidean_simplex_rows_near``: its first pass's pivots near an earlier
    projection's threshold (MABoost's next point: each row moved a little).  The
    projection is the one without them, to rounding (the same zeros and caps), in one
    selection pass fewer; a hint far off (the threshold beyond every pivot) or of no
    width falls back to the sample and is exact too."""
    n = 50_000
    rng = np.random.default_rng(seed)
    z = rng.dirichlet(np.ones(n)) + rng.normal(scale=2e-5, size=n)
    blocks = RowBlocks(n, n_jobs=1)
    w, near = rp.euclidean_simplex_rows_near(blocks, z, cap)
    assert near is not None and near.width > 0.0
    z2 = w + rng.uniform(-1e-5, 1e-5, size=n)  # the next round's point: w_t + η d
    cold = rp.euclidean_simplex_rows(blocks, z2, cap)
    passes = []
    run = rp._run

    def counted(*args, **kwargs):
        passes.append(1)
        return run(*args, **kwargs)

    monkeypatch.setattr(rp, "_run", counted)
    rp.euclidean_simplex_rows(blocks, z2, cap)
    cold_passes, passes[:] = len(passes), []
    for hint in (near, rp.Near(near.tau + 1.0, near.width), rp.Near(near.tau, 1e-300),
                 rp.Near(near.tau, 0.0)):
        warm, _ = rp.euclidean_simplex_rows_near(blocks, z2, cap, hint)
        np.testing.assert_allclose(warm, cold, rtol=1e-12, atol=1e-18)
        np.testing.assert_array_equal(warm == 0.0, cold == 0.0)
        if cap is not None:
            np.testing.assert_array_equal(warm == cap, cold == cap)
        assert abs(math.fsum(warm) - 1.0) < 1e-14
        if hint is near:
            assert len(passes) == cold_passes - 1
        passes[:] = []
