"""``oracleboost reproduce … --cache DIR``: the experiments' oracle calls cached on disk.

Every experiment builds its oracles through
:func:`oracleboost.experiments.base.cached`, which wraps them in a ``CachedOracle``
inside :func:`~oracleboost.experiments.base.oracle_cache` (what ``--cache`` enters).
A second run with the same cache answers every cached query from disk: it binds no
wrapped oracle and asks it nothing, and writes the same numbers as the first run and
as a run without the cache.

Four quick experiments, one per oracle kind (measured on 2 cores with one BLAS thread,
each of the three passes about 0.3–2 s per experiment, the whole file about 15 s):
``telgarsky2012-lower-bound`` (MatrixOracle, ``correlate`` and ``columns``),
``grubb2011-figure2`` (StumpOracle, ``project``), ``grubb2011-figure1`` (MLPOracle:
stochastic, keyed on the booster's seeds) and ``ji2021-figure1`` (LinearOracle).  The
last one's booster asks for ``correlation_vector`` and ``combine`` every step, which
``CachedOracle`` passes through uncached by design (a product with the matrix is cheaper
than a disk read), so on its second run the oracle is still bound and asked those
products; only the cached queries are required to vanish there.
"""

from __future__ import annotations

import collections
import io
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from oracleboost.cli import main, reproduce
from oracleboost.experiments.base import active_oracle_cache, cached, oracle_cache
from oracleboost.oracles import CachedOracle, MatrixOracle, StumpOracle
from oracleboost.oracles.base import BoundOracle

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(autouse=True)
def one_blas_thread():
    """One BLAS thread: the 5-unit nets' tiny products are many times slower with
    several threads on a busy machine (grubb2011-figure1 took 10–45 s instead of 1.6 s).
    Every run of a test shares the setting, so the comparisons are unaffected."""
    with threadpool_limits(limits=1):
        yield

#: The queries CachedOracle caches, and the ones it passes through to the wrapped oracle.
CACHED_QUERIES = ("correlate", "project", "columns", "column_hypothesis")
PASSED_THROUGH = ("correlation_vector", "combine")

FULL_HITS = ("telgarsky2012-lower-bound", "grubb2011-figure2", "grubb2011-figure1")
PASS_THROUGH = "ji2021-figure1"
NAMES = (*FULL_HITS, PASS_THROUGH)


class Counter:
    """Counts, per experiment, the queries that reach a wrapped (inner) oracle and the
    inner binds of every ``CachedOracle`` bound during the run."""

    def __init__(self, monkeypatch):
        self.calls: collections.Counter = collections.Counter()
        self.cached_bounds: list = []
        for query in CACHED_QUERIES + PASSED_THROUGH:
            self._count(monkeypatch, query)
        bind = CachedOracle.bind

        def counted_bind(oracle, X):
            bound = bind(oracle, X)
            self.cached_bounds.append(bound)
            return bound

        monkeypatch.setattr(CachedOracle, "bind", counted_bind)

    def _count(self, monkeypatch, query):
        method = getattr(BoundOracle, query)
        counter = self.calls

        def counted(bound, *args, **kwargs):
            if not isinstance(bound.oracle, CachedOracle):  # the inner oracle answers
                counter[query] += 1
            return method(bound, *args, **kwargs)

        monkeypatch.setattr(BoundOracle, query, counted)

    def reset(self):
        self.calls.clear()
        self.cached_bounds.clear()

    @property
    def inner_binds(self) -> int:
        return sum(b.n_inner_binds for b in self.cached_bounds)


def _run(counter, name, out_dir, cache=None):
    """One experiment through the CLI (with ``--cache`` when given); the counts."""
    counter.reset()
    argv = ["reproduce", name, "--quick", "--out", str(out_dir)]
    if cache is not None:
        argv += ["--cache", str(cache)]
    assert main(argv) == 0
    return dict(counter.calls), counter.inner_binds, len(counter.cached_bounds)


def _files(out_dir: Path, name: str) -> dict[str, bytes]:
    folder = out_dir / name
    return {f: (folder / f).read_bytes() for f in ("curves.csv", "aux.csv")
            if (folder / f).exists()}


@pytest.mark.parametrize("name", NAMES)
def test_second_cached_run_calls_no_oracle_and_gives_the_same_numbers(
    name, tmp_path, monkeypatch, capsys
):
    counter = Counter(monkeypatch)
    cache = tmp_path / "cache"

    calls1, binds1, wrapped1 = _run(counter, name, tmp_path / "first", cache)
    assert wrapped1 > 0 and binds1 > 0  # cached oracles were built, and missed
    assert sum(calls1.get(q, 0) for q in CACHED_QUERIES) > 0
    assert any(cache.rglob("*.pkl")), "nothing was written to the cache"

    calls2, binds2, wrapped2 = _run(counter, name, tmp_path / "second", cache)
    assert wrapped2 == wrapped1
    for query in CACHED_QUERIES:
        assert calls2.get(query, 0) == 0, (query, calls2)
    if name in FULL_HITS:
        assert calls2 == {} and binds2 == 0  # no oracle bound or asked anything
    else:  # correlation_vector / combine pass through: they still reach the oracle
        assert set(calls2) <= set(PASSED_THROUGH) and calls2
        assert calls2 == {q: calls1[q] for q in calls2}

    calls0, binds0, wrapped0 = _run(counter, name, tmp_path / "plain")  # no --cache
    assert wrapped0 == 0 and binds0 == 0  # the oracles are used unwrapped
    assert sum(calls0.values()) > 0

    first, second, plain = (_files(tmp_path / d, name) for d in ("first", "second", "plain"))
    assert "curves.csv" in plain
    assert first == plain and second == plain  # byte for byte

    summary = (tmp_path / "second" / name / "summary.md").read_text(encoding="utf-8")
    assert f"- oracle cache: `{cache}`" in summary
    assert f"--cache {cache}" in summary  # the command line
    plain_summary = (tmp_path / "plain" / name / "summary.md").read_text(encoding="utf-8")
    assert "oracle cache" not in plain_summary
    capsys.readouterr()


def test_reproduce_cache_parameter_records_the_equivalent_command(tmp_path):
    cache = tmp_path / "c"
    reproduce(["grubb2011-counterexample"], quick=True, out_dir=tmp_path / "out",
              out=io.StringIO(), cache=cache)
    summary = (tmp_path / "out" / "grubb2011-counterexample" / "summary.md").read_text(
        encoding="utf-8")
    assert f"- oracle cache: `{cache}`" in summary
    assert f"--cache {cache}" in summary
    assert any(cache.rglob("*.pkl"))
    assert active_oracle_cache() is None  # restored after the run


def test_cached_hook_wraps_only_inside_oracle_cache(tmp_path):
    stump = StumpOracle()
    assert active_oracle_cache() is None
    assert cached(stump) is stump
    with oracle_cache(tmp_path) as where:
        assert where == str(tmp_path) == active_oracle_cache()
        wrapped = cached(stump)
        assert isinstance(wrapped, CachedOracle)
        assert wrapped.oracle is stump and wrapped.memory == str(tmp_path)
        assert cached(wrapped) is wrapped  # never wrapped twice
        with oracle_cache(None):
            matrix = MatrixOracle([[1.0]])
            assert cached(matrix) is matrix
        assert isinstance(cached(matrix), CachedOracle)
    assert active_oracle_cache() is None and cached(stump) is stump


def test_cache_option_is_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    assert "--cache DIR" in capsys.readouterr().out
