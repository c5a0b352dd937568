"""The scripts in examples/ run, in-process through ``main(argv)`` and once as
``python examples/NAME.py`` from the repository root, and show what they claim."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def load(name: str):
    """Import ``examples/NAME.py`` as a module (registered, so its classes pickle)."""
    module_name = f"oracleboost_example_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def empty_cwd(tmp_path, monkeypatch):
    """Run in an empty directory, to check that a default run writes no file there."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    assert list(tmp_path.iterdir()) == []


def test_every_example_has_a_docstring_and_main():
    scripts = sorted(EXAMPLES.glob("*.py"))
    names = {p.stem for p in scripts}
    assert {
        "swap_weak_learner", "boost_any_regressor", "cache_oracle_calls", "watch_margins_and_gap",
        "experiment_grid_dask", "early_stopping", "fit_on_dask_array", "explain_with_shap",
    } <= names
    readme = (EXAMPLES / "README.md").read_text()
    for path in scripts:
        text = path.read_text()
        assert text.startswith('"""'), path.name
        assert 'if __name__ == "__main__":\n    main()' in text, path.name
        assert f"`{path.name}`" in readme, path.name


def test_swap_weak_learner_every_class_learns(empty_cwd, capsys):
    results = load("swap_weak_learner").main([])
    out = capsys.readouterr().out
    assert len(results) == 7
    for name, row in results.items():
        assert name in out
        assert row["rounds"] == 100
        # the majority class errs on 0.374 of the test rows; the prior's log-loss is 0.66
        assert row["test_error"] < 0.15, (name, row)
        assert row["train_loss"] < 0.4, (name, row)
    queries = {name: row["query"] for name, row in results.items()}
    assert queries.pop("SklearnOracle(GaussianNB())") == "correlate"
    assert set(queries.values()) == {"project"}


def test_boost_any_regressor_absolute_loss_decreases(empty_cwd, capsys):
    results = load("boost_any_regressor").main([])
    out = capsys.readouterr().out
    for name, loss in results["loss"].items():
        assert len(loss) == 200
        assert loss[-1] < 0.75 * results["initial_loss"][name], name
        assert loss[-1] < loss[0], name
        assert loss[-20:].mean() < loss[:20].mean(), name
        assert results["test_loss"][name] < results["constant_test_loss"], name
    # KNeighborsRegressor has no sample_weight: unweighted fits work, a weighted one is
    # refused with a message naming it
    assert results["weighted"].startswith("TypeError: KNeighborsRegressor")
    assert "weighted fit with KNeighborsRegressor: TypeError" in out


def test_boost_any_regressor_quantile_and_plot(empty_cwd, capsys):
    pytest.importorskip("matplotlib")
    results = load("boost_any_regressor").main(
        ["--loss", "quantile", "--alpha", "0.9", "--rounds", "30", "--plot", "curves.png"]
    )
    assert (empty_cwd / "curves.png").stat().st_size > 0
    (empty_cwd / "curves.png").unlink()
    assert "0.9-quantile" in capsys.readouterr().out
    for name, loss in results["loss"].items():
        assert loss[-1] < results["initial_loss"][name], name


def test_cache_second_fit_makes_no_inner_fit(empty_cwd, capsys):
    results = load("cache_oracle_calls").main([])
    out = capsys.readouterr().out
    rounds = results["rounds"]
    # every round of the first fit is a miss, the second fit is served from disk, and a
    # longer fit fits only its new rounds
    assert results["fits"] == (rounds, 0, rounds // 2)
    assert results["identical"]
    assert "identical predictions: True" in out


def test_cache_dir_is_kept_between_runs(empty_cwd, tmp_path_factory):
    cachedir = tmp_path_factory.mktemp("cache")
    argv = ["--cache", str(cachedir), "--rounds", "6", "--samples", "300", "--features", "8"]
    example = load("cache_oracle_calls")
    assert example.main(argv)["fits"] == (6, 0, 3)
    assert any(p.is_file() for p in cachedir.rglob("*"))
    # a second run of the script finds every answer on disk, even for its first fit
    assert example.main(argv)["fits"] == (0, 0, 0)


def test_watch_margins_gap_nonnegative_and_decreasing(empty_cwd, capsys):
    results = load("watch_margins_and_gap").main([])
    out = capsys.readouterr().out
    assert "Telgarsky 2012" in out and "Ji, Srebro & Telgarsky 2021" in out

    h = results["telgarsky"]
    gap = h["gap"]
    assert len(gap) == 2000
    assert np.all(gap >= 0.0)
    # Wolfe steps decrease the risk every round, so the gap never rises
    assert np.all(np.diff(gap) <= 1e-12)
    assert gap[-1] < gap[0] / 50
    t = np.arange(1, len(gap) + 1)
    assert (t * gap)[-1] < 1.5 * (t * gap)[499]  # O(1/t): t·gap levels off
    assert np.all(h["margin"] < 0)  # the hard core is never separated

    h = results["ji"]
    gap, upper, margin = h["gap"], h["margin_upper_bound"], h["margin"]
    assert np.all(gap >= 0.0)
    np.testing.assert_allclose(gap, upper - margin, rtol=1e-9, atol=1e-12)
    assert np.all(np.diff(upper) <= 0.0)  # a running minimum of upper bounds
    assert margin[-1] > 0 and gap[-1] < 1e-3 * gap[0]
    t = np.arange(1, len(gap) + 1)
    assert (t**2 * gap)[-1] < 2.0 * (t**2 * gap)[499]  # Õ(1/t²)


def test_watch_margins_plot(empty_cwd):
    pytest.importorskip("matplotlib")
    load("watch_margins_and_gap").main(
        ["--rounds", "30", "--accelerated-rounds", "30", "--plot", "gap.png"]
    )
    assert (empty_cwd / "gap.png").stat().st_size > 0
    (empty_cwd / "gap.png").unlink()


# -- every example at its defaults, as a user runs it: ``python examples/NAME.py`` ----------

#: The examples run at their defaults, each in a fresh interpreter, with what each must
#: print; the Dask ones start a LocalCluster and are run by the cluster tests.
DEFAULT_RUNS: dict[str, str] = {
    "watch_margins_and_gap.py": "1. Telgarsky 2012",
    "swap_weak_learner.py": "stumps (StumpOracle)",
    "boost_any_regressor.py": "weighted fit with KNeighborsRegressor: TypeError",
    "early_stopping.py": "stop_reason_='early_stopping'",
    "cache_oracle_calls.py": "identical predictions: True",
    "explain_with_shap.py": "bit for bit: yes",
    "plot_history_importance_margins.py": "LPBoost (nu=1)",
    "optuna_pruning_callback.py": "trials pruned",
    "mlflow_log_history.py": "bit for bit: yes",
}
#: The optional package an example needs (the example says so in one line without it).
NEEDS = {"explain_with_shap.py": "shap", "experiment_grid_dask.py": "distributed",
         "fit_on_dask_array.py": "distributed", "optuna_pruning_callback.py": "optuna",
         "mlflow_log_history.py": "mlflow"}
#: Run by the cluster tests (they start a Dask LocalCluster).
CLUSTER_EXAMPLES = ("experiment_grid_dask.py", "fit_on_dask_array.py")

def test_every_example_is_run_at_its_defaults():
    scripts = {p.name for p in EXAMPLES.glob("*.py")}
    assert scripts == set(DEFAULT_RUNS) | set(CLUSTER_EXAMPLES)
    assert not set(DEFAULT_RUNS) & set(CLUSTER_EXAMPLES)


@pytest.mark.slow  # (the six together: about 60 s on an idle 2-core machine)
@pytest.mark.parametrize("name", list(DEFAULT_RUNS))
def test_the_example_runs_at_its_defaults(name, tmp_path):
    if name in NEEDS and importlib.util.find_spec(NEEDS[name]) is None:
        pytest.skip(f"{name} needs {NEEDS[name]}, which is not installed")
    # as a user runs it, from an empty folder: a default run writes no file there
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert len(lines) >= 5, done.stdout
    assert DEFAULT_RUNS[name] in done.stdout, done.stdout
    assert list(tmp_path.iterdir()) == []  # no file unless asked (--plot, --cache)
    if name == "watch_margins_and_gap.py":
        assert lines[0].startswith("1. Telgarsky 2012")
        assert sum(line.strip() == "stop: max_rounds" for line in lines) == 2


@pytest.mark.cluster
def test_experiment_grid_dask_runs_at_its_defaults(empty_cwd):
    pytest.importorskip("distributed")
    done = subprocess.run([sys.executable, str(EXAMPLES / "experiment_grid_dask.py")],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(done.stdout.splitlines()) >= 5, done.stdout


#: Runs an example with an optional package made unimportable, as where it is missing.
_WITHOUT = """
import runpy, sys
sys.modules[sys.argv[1]] = None  # import raises ImportError, as for a missing package
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.parametrize(("name", "package", "message"), [
    ("explain_with_shap.py", "shap", "this example needs shap: pip install shap"),
    ("experiment_grid_dask.py", "distributed",
     'this example needs dask: pip install "oracleboost[dask]"'),
    ("optuna_pruning_callback.py", "optuna", "this example needs optuna: pip install optuna"),
    ("mlflow_log_history.py", "mlflow",
     "this example needs mlflow and skops: pip install mlflow-skinny skops"),
])
def test_an_example_without_its_extra_says_what_to_install(empty_cwd, name, package,
                                                           message):
    done = subprocess.run([sys.executable, "-c", _WITHOUT, package, str(EXAMPLES / name)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == message  # one line, no traceback
    assert done.stdout == ""


def test_early_stopping_stops_early_and_keeps_a_better_model(empty_cwd, capsys):
    from oracleboost.boosters import StopReason

    results = load("early_stopping").main([])
    out = capsys.readouterr().out
    assert "stop_reason_='early_stopping'" in out and "test error: early-stopped" in out
    long, early = results["long"], results["early"]
    X_test, y_test = results["X_test"], results["y_test"]
    errors = results["test_error"]
    # Every threshold below held for the seeds 0-49 (--seed), with identical figures under
    # OPENBLAS_CORETYPE=Haswell and SkylakeX; the seed-by-seed margins are in the comments.

    # the long run overfits: the training loss keeps falling while the test loss is least
    # early (by round 17) and then grows (at least 6.2-fold), and the test error rises
    # above its least value (by at least 0.0225)
    h = long.history_
    assert len(h["loss"]) == 1000 and long.stop_reason_ == StopReason.MAX_ROUNDS
    assert h["loss"][-1] < 0.5 * h["loss"][0]  # 0.21 or less, from about 0.9
    assert np.argmin(h["val_loss_0"]) < 50
    assert h["val_loss_0"][-1] > 3 * h["val_loss_0"].min()
    assert errors["long_last"] == h["val_error_0"][-1]
    assert errors["long_best"] == h["val_error_0"].min()
    assert errors["long_best_round"] == np.argmin(h["val_error_0"]) + 1 <= 100
    assert errors["long_last"] > errors["long_best"] + 0.01

    # early stopping stops within a few dozen rounds (21-38) of the 1000 and keeps the
    # round of least held-out loss, at most n_iter_no_change = 20 rounds before the end
    assert early.stop_reason_ == StopReason.EARLY_STOPPING
    ran, kept = results["rounds_run"], results["rounds_kept"]
    assert ran == len(early.validation_loss_) < 100
    assert kept == early.best_iteration_ == early.n_estimators_ == len(early.history_["loss"])
    assert 1 <= kept < ran and ran - kept <= 20
    assert kept == np.argmin(early.validation_loss_) + 1
    assert early.history_["heldout_loss"][-1] == early.validation_loss_.min()

    # the kept model on the test rows: its test loss was at most 0.16 of the long run's
    # last on every seed; its test error was lower than the long run's last on 47 of the
    # 50 seeds and higher by at most 0.009 on the other three
    e = early.history_
    ypm = np.where(y_test == early.classes_[1], 1.0, -1.0)
    test_loss = np.mean(np.exp(-ypm * early.decision_function(X_test)))
    np.testing.assert_allclose(e["val_loss_0"][-1], test_loss, rtol=1e-10)
    assert e["val_loss_0"][-1] < 0.25 * h["val_loss_0"][-1]
    assert errors["early"] == np.mean(early.predict(X_test) != y_test) == e["val_error_0"][-1]
    assert errors["early"] <= errors["long_last"] + 0.02

    # the test curves are what staged_predict gives, round by round (the same count over
    # the same rows: equal, not close)
    for model in (early, long):
        staged = [np.mean(p != y_test) for p in model.staged_predict(X_test)]
        np.testing.assert_array_equal(model.history_["val_error_0"], staged)


def test_early_stopping_plot(empty_cwd):
    pytest.importorskip("matplotlib")
    results = load("early_stopping").main(["--rounds", "60", "--plot", "curves.png"])
    assert (empty_cwd / "curves.png").stat().st_size > 0
    (empty_cwd / "curves.png").unlink()
    assert results["rounds_kept"] < results["rounds_run"] < 60


@pytest.mark.cluster
def test_fit_on_dask_array_equals_the_fit_here(empty_cwd):
    """Run as a user runs it, in a fresh interpreter: its LocalCluster and Client are
    the only ones there (in this process, earlier tests' Dask clients stay registered)."""
    pytest.importorskip("distributed")
    script = EXAMPLES / "fit_on_dask_array.py"
    done = subprocess.run(
        [sys.executable, str(script), "--rows", "300000", "--features", "6", "--rounds", "3",
         "--mirror", "euclidean", "--check"], capture_output=True, text=True, timeout=600,
        check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "the same fit in this process: True" in done.stdout
    assert "3 rounds (max_rounds)" in done.stdout


def test_explain_with_shap_adds_up(empty_cwd, capsys):
    pytest.importorskip("shap")
    results = load("explain_with_shap").main(["--rounds", "60"])
    out = capsys.readouterr().out
    assert results["same"] and "bit for bit: yes" in out
    # float64 rounding of sums of 61 trees' terms: as test_export's bound
    scale = 1 + max(results["largest_decision"], abs(results["expected_value"]))
    assert results["additivity"] <= 1e-12 * scale
    assert abs(results["expected_value"] - results["mean_train_decision"]) <= 1e-12 * scale
    assert len(results["top"]) == 8


def test_explain_with_shap_plot(empty_cwd):
    pytest.importorskip("shap")
    load("explain_with_shap").main(["--rounds", "20", "--plot", "shap.png"])
    assert (empty_cwd / "shap.png").stat().st_size > 0
    (empty_cwd / "shap.png").unlink()


def test_plot_example_draws_margins_that_grow(empty_cwd, capsys):
    pytest.importorskip("matplotlib")
    from oracleboost.plotting import staged_normalised_margins

    results = load("plot_history_importance_margins").main(
        ["--rounds", "100", "--plot", "pictures.png"])
    assert (empty_cwd / "pictures.png").stat().st_size > 0
    (empty_cwd / "pictures.png").unlink()
    assert "LPBoost (nu=1)" in capsys.readouterr().out
    ada, lpboost, margins = results["ada"], results["lpboost"], results["margins"]
    assert list(margins) == [5, 50, 100]
    # the smallest training margin rises stage by stage (on the splits of seeds 0-4: by
    # at least 0.026 from 50 to 100 rounds), and is the history's margin at that round
    least = [m.min() for m in margins.values()]
    assert least[0] < least[1] < least[2]
    assert least[-1] == pytest.approx(ada.history_["margin"][-1], rel=1e-12)
    # LPBoost's bracket: lower <= upper every round; closed when it stopped on the gap
    h = lpboost.history_
    assert np.all(h["lp_value"] <= h["upper_bound"] + 1e-12)
    # weak duality: no vote of these stumps has a larger margin than the least edge of
    # any distribution, so AdaBoost's margin is below LPBoost's upper bound
    assert least[-1] <= lpboost.upper_bound_ + 1e-12
    assert staged_normalised_margins(ada, *results["train"], [100])[100].min() == least[-1]


def test_optuna_pruning_callback_reports_every_round_and_stops_pruned_fits(empty_cwd):
    optuna = pytest.importorskip("optuna")
    from oracleboost.boosters import StopReason

    results = load("optuna_pruning_callback").main(["--trials", "10", "--rounds", "30"])
    study, models = results["study"], results["models"]
    assert results["pruned"] >= 1  # (2 of the 10 with these arguments)
    for trial in study.trials:
        model = models[trial.number]
        curve = model.history_["val_loss_0"]
        # the callback reported the validation loss after every round the fit ran
        assert trial.intermediate_values == {t + 1: curve[t] for t in range(len(curve))}
        if trial.state == optuna.trial.TrialState.PRUNED:
            assert model.stop_reason_ == StopReason.CALLBACK
            assert model.n_estimators_ < 30
        else:
            assert model.stop_reason_ == StopReason.MAX_ROUNDS
            assert trial.value == curve[-1]


@pytest.mark.slow  # (importing MLflow alone takes seconds)
def test_mlflow_example_round_trips_the_model_and_the_history(empty_cwd):
    pytest.importorskip("mlflow")
    pytest.importorskip("skops")
    results = load("mlflow_log_history").main(["--rounds", "30"])
    assert results["same"] and results["same_pyfunc"] and results["same_curve"]
    model = results["model"]
    finite = sum(int(np.isfinite(model.history_[k]).sum())
                 for k in load("mlflow_log_history").CURVES if k in model.history_)
    assert results["n_metrics"] == finite
