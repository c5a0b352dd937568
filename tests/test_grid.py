"""Experiment grids (:mod:`oracleboost.grid`, ``oracleboost grid``) and ``reproduce
--n-jobs``: one process, loky workers and a Dask cluster give the same numbers.

The grid here is 2 boosters × 2 data sets × 2 seeds at 8 rounds.  One
``distributed.LocalCluster`` (2 single-threaded worker processes) serves every Dask test
of the module; the Dask tests are skipped only when dask cannot be imported (the README's
test command installs it: ``.[test,dask]``).
"""

from __future__ import annotations

import csv
import re
import sys

import pytest

from oracleboost import grid
from oracleboost.cli import main
from oracleboost.grid import DATASETS, FIELDS, default_boosters, run_grid, write_grid

# The counterexample's non-smooth loss rises on purpose (its booster says so); not news here.
pytestmark = pytest.mark.filterwarnings("ignore:.*the loss rose to:UserWarning")

BOOSTERS = ("adaboost", "maboost")
SETS = ("breast_cancer", "digits_3v5")
ROUNDS = 8
GRID_ARGS = ["grid", "--boosters", ",".join(BOOSTERS), "--datasets", ",".join(SETS),
             "--seeds", "2", "--rounds", str(ROUNDS)]


def small_grid(**kwargs) -> list[dict]:
    boosters = {name: default_boosters(ROUNDS)[name] for name in BOOSTERS}
    return run_grid(boosters, {name: DATASETS[name] for name in SETS}, [0, 1], **kwargs)


def numbers(rows) -> list[list[str]]:
    """Every field but ``seconds``, floats as their exact repr (so NaN equals NaN)."""
    return [[repr(row[k]) if isinstance(row[k], float) else str(row[k])
             for k in FIELDS if k != "seconds"] for row in rows]


def csv_numbers(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and list(rows[0]) == list(FIELDS)
    return [[row[k] for k in FIELDS if k != "seconds"] for row in rows]


@pytest.fixture(scope="module")
def reference():
    """The grid run in this process (``n_jobs=1``)."""
    return small_grid(n_jobs=1)


@pytest.fixture(scope="module")
def reference_csv(reference, tmp_path_factory):
    csv_path, _ = write_grid(reference, tmp_path_factory.mktemp("reference"))
    return csv_numbers(csv_path)


@pytest.fixture(scope="module")
def dask_cluster():
    """One local Dask cluster, 2 worker processes of 1 thread each, for the module."""
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError as exc:
        pytest.skip(f"dask/distributed cannot be imported ({exc}); the README's test "
                    'command installs them: pip install -e ".[test,dask]"')
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    try:
        yield cluster
    finally:
        cluster.close()


def test_rows_are_in_grid_order_and_sensible(reference):
    assert [(r["booster"], r["dataset"], r["seed"]) for r in reference] == [
        (b, d, s) for b in BOOSTERS for d in SETS for s in (0, 1)]
    for row in reference:
        assert set(row) == set(FIELDS)
        assert row["rounds"] == ROUNDS and row["stop_reason"] == "max_rounds"
        assert row["n_train"] + row["n_test"] in (569, 365)
        assert 0.0 <= row["test_error"] < 0.15, row
        assert row["train_loss"] >= 0.0 and -1.0 <= row["margin"] <= 1.0
        assert row["seconds"] > 0.0
    # the seed splits the data: the two seeds of a cell differ
    assert reference[0]["test_error"] != reference[1]["test_error"]


def test_same_numbers_on_one_process_again(reference):
    assert numbers(small_grid()) == numbers(reference)


@pytest.mark.parametrize("backend", [None, "threading"])
def test_two_workers_give_the_same_numbers(reference, backend):
    rows = small_grid(n_jobs=2, backend=backend)
    assert numbers(rows) == numbers(reference)


def test_cli_grid_writes_csv_and_markdown(tmp_path, capsys, reference_csv):
    assert main([*GRID_ARGS, "--out", str(tmp_path), "--n-jobs", "2"]) == 0
    captured = capsys.readouterr()
    assert "2 boosters × 2 data sets × 2 seeds = 8 cells" in captured.err  # what runs where
    assert "| adaboost | breast_cancer | 2 |" in captured.out  # the results
    assert "cells" not in captured.out
    assert csv_numbers(tmp_path / "grid.csv") == reference_csv
    md = (tmp_path / "grid.md").read_text(encoding="utf-8")
    assert "## Over the seeds" in md and "## Every cell" in md
    assert md.count("| maboost | digits_3v5 |") == 3  # one summary row, two cells


def test_cli_grid_on_a_dask_cluster_by_address(tmp_path, capsys, dask_cluster, reference_csv):
    transitions = dask_cluster.scheduler.transition_counter
    main([*GRID_ARGS, "--out", str(tmp_path), "--backend", "dask",
          "--scheduler", dask_cluster.scheduler_address])
    assert f"dask ({dask_cluster.scheduler_address})" in capsys.readouterr().err
    assert csv_numbers(tmp_path / "grid.csv") == reference_csv
    assert dask_cluster.scheduler.transition_counter > transitions  # the cluster did the work


def test_dask_scheduler_from_the_environment(tmp_path, monkeypatch, dask_cluster, reference,
                                             reference_csv):
    import distributed

    def no_local_cluster(*args, **kwargs):
        raise AssertionError("the address in the environment was not used")

    monkeypatch.setattr(distributed, "LocalCluster", no_local_cluster)
    monkeypatch.setenv(grid.DASK_SCHEDULER_ENV, dask_cluster.scheduler_address)
    transitions = dask_cluster.scheduler.transition_counter
    assert numbers(small_grid(backend="dask")) == numbers(reference)
    main([*GRID_ARGS, "--out", str(tmp_path), "--backend", "dask"])
    assert csv_numbers(tmp_path / "grid.csv") == reference_csv
    assert dask_cluster.scheduler.transition_counter > transitions


def test_missing_dask_names_the_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    with pytest.raises(grid.DaskNotInstalledError, match=r"oracleboost\[dask\]"):
        small_grid(backend="dask")
    with pytest.raises(SystemExit):
        main([*GRID_ARGS, "--backend", "dask"])
    assert 'pip install "oracleboost[dask]"' in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--scheduler", "tcp://localhost:8786"], "--backend dask"),
    (["--n-jobs", "0"], "--n-jobs"),
    (["--boosters", "adaboost,xgboost"], "unknown booster(s): xgboost"),
    (["--datasets", "mnist"], "unknown data set(s): mnist"),
])
def test_cli_grid_rejects_bad_arguments(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["grid", "--out", str(tmp_path), *argv])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "grid.csv").exists()


def test_api_rejects_bad_arguments():
    with pytest.raises(ValueError, match="backend"):
        small_grid(backend="spark")
    with pytest.raises(ValueError, match="scheduler"):
        small_grid(scheduler="tcp://localhost:8786")
    with pytest.raises(ValueError, match="n_jobs"):
        small_grid(n_jobs=0)


def _files_and_tables(tmp_path, capsys, n_jobs: str):
    out_dir = tmp_path / f"n_jobs_{n_jobs}"
    names = ["telgarsky2012-lower-bound", "grubb2011-counterexample"]
    assert main(["reproduce", *names, "--quick", "--out", str(out_dir),
                 "--n-jobs", n_jobs]) == 0
    captured = capsys.readouterr()
    # the tables, and the progress lines, with the output folder's own name taken out
    text = (captured.out + captured.err).replace(str(out_dir), "DIR")
    csvs = {p.relative_to(out_dir).as_posix(): p.read_bytes()
            for p in sorted(out_dir.glob("*/*.csv"))}
    # everything printed but timings and paths
    kept = [line for line in text.splitlines()
            if not line.lstrip().startswith(("files:", "index:", "runtime:"))]
    return csvs, kept


def test_reproduce_n_jobs_2_gives_the_sequential_files_and_tables(tmp_path, capsys):
    seq_csvs, seq_text = _files_and_tables(tmp_path, capsys, "1")
    par_csvs, par_text = _files_and_tables(tmp_path, capsys, "2")
    assert set(seq_csvs) >= {"telgarsky2012-lower-bound/curves.csv",
                             "grubb2011-counterexample/aux.csv"}
    assert par_csvs == seq_csvs
    assert par_text == seq_text
    heads = [line for line in par_text if line.startswith("== ")]
    assert [re.sub(r" \(.*", "", h) for h in heads] == [
        "== telgarsky2012-lower-bound", "== grubb2011-counterexample"]  # registry order


def test_example_runs_on_the_cluster(dask_cluster, capsys, monkeypatch, tmp_path):
    import importlib.util
    from pathlib import Path

    monkeypatch.chdir(tmp_path)  # writes no file unless asked
    path = Path(__file__).resolve().parents[1] / "examples" / "experiment_grid_dask.py"
    spec = importlib.util.spec_from_file_location("oracleboost_example_grid_dask", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    result = example.main(["--scheduler", dask_cluster.scheduler_address, "--seeds", "2",
                           "--rounds", str(ROUNDS)])
    out = capsys.readouterr().out
    assert result["same"] and "same numbers as in this process: True" in out
    assert result["workers"] == 2 and len(result["rows"]) == 3 * 2 * 2
    assert list(tmp_path.iterdir()) == []


def test_grid_help_names_every_default_booster_and_data_set():
    from oracleboost.cli import _grid_epilog

    epilog = _grid_epilog()
    assert max(map(len, epilog.splitlines())) <= 100
    # each list's lines: the labelled one and its indented continuations, joined
    joined = re.sub(r"\n  ", " ", epilog)
    listed = re.findall(r"^(?:boosters|data sets): (.*?) ?(?:\(.*)?;?$", joined, re.M)
    names = [[n.strip(" ;.") for n in line.split(",")] for line in listed]
    assert names == [list(default_boosters()), list(DATASETS)]
