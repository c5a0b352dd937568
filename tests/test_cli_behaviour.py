"""The command line behaves as well-made tools do: usage errors blamed on the subcommand,
suggestions for mistyped names, a missing optional package named with its extra before
any work, no traceback on a closed pipe or a full device, one run at a time in an output
folder, terminal lines within 100 columns, and ``--help`` without the heavy imports.

Every check runs in seconds: fakes registered for the duration of a test, the quickest
registered experiment, or a child process that stops at once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from oracleboost._cli_support import did_you_mean, missing_modules
from oracleboost.cli import main
from oracleboost.experiments import EXPERIMENTS, Curves, runner
from oracleboost.experiments.runner import MissingExtraError, reproduce, terminal_text

pytestmark = pytest.mark.filterwarnings("ignore:.*the loss rose to:UserWarning")

FAST = "grubb2011-counterexample"
WIDTH = 100


def _run(*args: str, stdout=subprocess.PIPE, code: str | None = None,
         timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m oracleboost ARGS`` (or ``python -c CODE ARGS``) in a child."""
    cmd = [sys.executable, *(["-c", code] if code else ["-m", "oracleboost"]), *args]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=timeout, env=env)


@pytest.fixture
def fake(monkeypatch):
    """An instant experiment ``zz-fake``; the list records its calls."""
    calls: list[bool] = []

    def zz_fake(quick: bool = False) -> Curves:
        """A fake experiment for the command-line tests."""
        calls.append(quick)
        return Curves("fake", "round t", "value", np.arange(1, 4), {"a": np.ones(3)})

    monkeypatch.setitem(EXPERIMENTS, "zz-fake", zz_fake)
    return calls


def _usage(argv, capsys, code: int = 2) -> list[str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.out == ""
    return captured.err.splitlines()


# --------------------------------------------------------------------------------------
# --help without the heavy imports
# --------------------------------------------------------------------------------------


def test_the_command_line_module_adds_no_heavy_import():
    """What ``import oracleboost.cli`` adds to ``import oracleboost`` is the standard
    library and the command line's own light modules (``--help`` needs nothing more)."""
    code = textwrap.dedent("""
        import sys
        import oracleboost
        before = set(sys.modules)
        import oracleboost.cli
        print("\\n".join(sorted(set(sys.modules) - before)))
    """)
    added = _run(code=code).stdout.split()
    heavy = [m for m in added if m.split(".")[0] in ("numpy", "scipy", "sklearn", "joblib",
                                                     "lightgbm", "numba", "matplotlib")
             or m.startswith(("oracleboost.experiments", "oracleboost.boosters",
                              "oracleboost.oracles", "oracleboost.grid"))]
    assert "oracleboost.cli" in added and heavy == []


def test_help_lists_the_commands_and_exits_0():
    result = _run("--help")
    assert result.returncode == 0 and result.stderr == ""
    for command in ("demo", "list", "reproduce", "grid"):
        assert command in result.stdout


def test_the_lazy_names_of_the_module_still_resolve():
    import oracleboost.cli as cli

    assert cli.reproduce is reproduce and cli.resolve_names is runner.resolve_names
    with pytest.raises(AttributeError, match="no_such_name"):
        cli.no_such_name  # noqa: B018


# --------------------------------------------------------------------------------------
# Usage: a bare reproduce, errors blamed on the subcommand, did you mean
# --------------------------------------------------------------------------------------


def test_a_bare_reproduce_prints_its_usage_and_runs_nothing(tmp_path, monkeypatch, capsys,
                                                            fake):
    monkeypatch.chdir(tmp_path)
    err = _usage(["reproduce"], capsys)
    assert err[0].startswith("usage: oracleboost reproduce ")
    assert "oracleboost reproduce: error: name the experiments to run, or 'all'" in err[-2]
    assert "`oracleboost reproduce all --quick`" in err[-1]
    assert fake == [] and list(tmp_path.iterdir()) == []  # no results folder made
    assert max(len(line) for line in err) <= WIDTH


@pytest.mark.parametrize("argv, first", [
    (["reproduce", "--quik"], "oracleboost reproduce: error: unrecognized arguments: --quik "
                              "(did you mean --quick?)"),
    (["reproduce", FAST, "--seeed", "3"], "oracleboost reproduce: error: unrecognized "
                                          "arguments: --seeed 3 (did you mean --seed?)"),
    (["demo", "--rouns=3"], "oracleboost demo: error: unrecognized arguments: --rouns=3 "
                               "(did you mean --rounds?)"),
    (["grid", "--booster", "adaboost", "--xyz"], "oracleboost grid: error: unrecognized "
                                                 "arguments: --xyz"),
])
def test_an_unknown_option_is_blamed_on_its_subcommand(capsys, argv, first):
    err = _usage(argv, capsys)
    assert err == [first, f"Try 'oracleboost {argv[0]} --help' for more."]


def test_the_top_level_still_reports_its_own_errors(capsys):
    err = _usage(["reproduc"], capsys)
    assert err[0].startswith("oracleboost: error: argument command: invalid choice: 'reproduc'")


@pytest.mark.parametrize("option, typo, meant, what", [
    ("--boosters", "adaboots", "adaboost", "booster"),
    ("--boosters", "lp-boost", "lpboost", "booster"),
    ("--datasets", "breast", "breast_cancer", "data set"),
])
def test_grid_suggests_close_booster_and_data_set_names(tmp_path, capsys, option, typo,
                                                        meant, what):
    err = _usage(["grid", option, typo, "--out", str(tmp_path / "g")], capsys)
    assert err[0].startswith(f"oracleboost grid: error: unknown {what}(s): {typo} "
                             f"(did you mean {meant}")
    assert err[1] == "Try 'oracleboost grid --help' for every name."
    assert not (tmp_path / "g").exists()


def test_did_you_mean_offers_only_close_names():
    names = ["telgarsky2013-figure2", "telgarsky2013-figure3", "grubb2011-counterexample",
             "grubb2011-figure3-satimage", "swap-weak-learner"]
    assert did_you_mean("telgarsky2013-figur2", names) == names[:2]  # as close, both
    assert did_you_mean("grubb2011-counterexampel", names) == [names[2]]  # a clear winner
    assert did_you_mean("swap", names) == ["swap-weak-learner"]
    assert did_you_mean("zz", names) == [] and did_you_mean("nothing-alike", names) == []


# --------------------------------------------------------------------------------------
# Optional packages, checked before any work
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("hidden", [("matplotlib",), ("matplotlib", "tqdm"), ("highspy",)])
def test_a_missing_extra_is_named_in_one_line_before_any_work(tmp_path, monkeypatch,
                                                              capsys, fake, hidden):
    for module in hidden:
        monkeypatch.setitem(sys.modules, module, None)  # `import module` fails
    assert missing_modules(hidden) == list(hidden)
    out = tmp_path / "r"
    err = _usage(["reproduce", "zz-fake", "--quick", "--out", str(out)], capsys, code=1)
    names = " and ".join(hidden)
    assert err == [f"oracleboost reproduce: error: {names} {'are' if len(hidden) > 1 else 'is'}"
                   " not installed (the reproductions draw figures and solve LPs): pip "
                   'install "oracleboost[experiments]"']
    assert fake == [] and not out.exists()  # nothing ran, nothing was made
    with pytest.raises(MissingExtraError) as exc:  # the library function checks it too
        reproduce(["zz-fake"], out_dir=out)
    assert exc.value.missing == list(hidden) and isinstance(exc.value, ImportError)
    assert fake == [] and not out.exists()


def test_a_plain_install_stops_at_once_with_the_extra_to_install(tmp_path):
    """``reproduce all --quick`` where matplotlib and tqdm cannot be found (their spec
    lookup fails, as for packages never installed): exit 1, one line, no experiment run."""
    code = textwrap.dedent("""
        import importlib.abc, sys

        class _Hide(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("matplotlib", "tqdm"):
                    raise ModuleNotFoundError(f"No module named {name!r}")
                return None

        sys.meta_path.insert(0, _Hide())
        from oracleboost.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    out = tmp_path / "results"
    result = _run("reproduce", "all", "--quick", "--out", str(out), code=code)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        "oracleboost reproduce: error: matplotlib and tqdm are not installed (the "
        'reproductions draw figures and solve LPs): pip install "oracleboost[experiments]"']
    assert result.stdout == "" and not out.exists()


def test_grid_names_the_dask_and_lp_extras(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)
    err = _usage(["grid", "--quick", "--boosters", "adaboost", "--backend", "dask",
                  "--out", str(tmp_path)], capsys, code=1)
    assert len(err) == 1 and err[0].startswith("oracleboost grid: error: distributed is not "
                                               "installed")
    assert err[0].endswith('pip install "oracleboost[dask]"')
    monkeypatch.setitem(sys.modules, "highspy", None)
    err = _usage(["grid", "--quick", "--boosters", "adaboost,lpboost",
                  "--out", str(tmp_path)], capsys, code=1)
    assert err == ["oracleboost grid: error: highspy is not installed (lpboost solves LPs; "
                   'or leave them out with --boosters): pip install "oracleboost[lp]"']
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------
# A closed pipe, a full device
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["list"], ["demo", "--rounds", "3"]])
def test_a_closed_pipe_ends_quietly_with_141(command):
    """``oracleboost list | head -1``: the reader is gone before the output is written
    (its end of the pipe is closed at once), so every write fails with EPIPE."""
    child = subprocess.Popen([sys.executable, "-m", "oracleboost", *command],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child.stdout.close()
    err = child.stderr.read()
    child.stderr.close()
    assert child.wait(timeout=120) == 141, err
    assert err == ""  # no traceback, nothing for a reader that left


def test_reproduce_into_a_closed_pipe_stops_with_the_index_written(tmp_path):
    """``oracleboost reproduce A B | head -1`` once the reader has gone: the first
    experiment's folder is complete, the second never runs, the index says so, 141."""
    out = tmp_path / "r"
    child = subprocess.Popen([sys.executable, "-m", "oracleboost", "reproduce", FAST,
                              "telgarsky2013-figure2", "--quick", "--out", str(out)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONWARNINGS": "ignore"})
    child.stdout.close()
    err = child.stderr.read()
    child.stderr.close()
    assert child.wait(timeout=300) == 141, err
    assert "Traceback" not in err
    assert (out / FAST / "summary.md").is_file() and not (out / "telgarsky2013-figure2").exists()
    index = (out / "index.md").read_text(encoding="utf-8")
    assert f"[{FAST}]({FAST}/summary.md)" in index and "- telgarsky2013-figure2" in index
    assert "stopped: the output was closed" in index
    assert [p.name for p in out.iterdir() if ".partial-" in p.name] == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("command", [["list"], ["demo", "--rounds", "3"]])
def test_a_full_device_is_one_line_and_status_1(command):
    with open("/dev/full", "w") as full:
        result = _run(*command, stdout=full)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"oracleboost {command[0]}: error: cannot write the output: No space left on device"]


def test_sigterm_outside_reproduce_is_taken_as_ctrl_c_with_143():
    """``demo`` (any command) stopped by SIGTERM: one line, status 143, no traceback."""
    child = subprocess.Popen([sys.executable, "-u", "-m", "oracleboost", "demo",
                              "--rounds", "1000000"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().startswith("AdaBoost on")  # the fit has begun
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 143 and err == "oracleboost: terminated\n"


def test_sigterm_ends_the_process_even_with_a_thread_that_never_ends():
    """A worker thread that an interrupt orphaned (it waits forever, and Python's exit
    joins it) does not keep a terminated command alive: it ends, 143, after a grace."""
    code = textwrap.dedent("""
        import sys, threading
        threading.Thread(target=threading.Event().wait, daemon=False).start()
        from oracleboost.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    child = subprocess.Popen([sys.executable, "-u", "-c", code, "demo", "--rounds",
                              "1000000"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().startswith("AdaBoost on")
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)  # without the watchdog: never
    assert child.returncode == 143 and err == "oracleboost: terminated\n"


# --------------------------------------------------------------------------------------
# One run at a time in an output folder
# --------------------------------------------------------------------------------------


def test_a_second_run_into_the_same_folder_is_refused(tmp_path, capsys, fake):
    out = tmp_path / "r"
    out.mkdir()
    # another run holds the folder (a second open file: its lock conflicts in-process too)
    with runner._folder_lock(out):
        code = main(["reproduce", "zz-fake", "--out", str(out)])
        err = capsys.readouterr().err.splitlines()
        assert code == 1 and fake == []
        assert err == [f"oracleboost reproduce: error: --out {out}: another oracleboost "
                       f"reproduce (process {os.getpid()}) is writing there; wait for it "
                       "to end, or choose another --out"]
        assert not (out / runner.LOG_NAME).exists()  # its log is not touched
    assert main(["reproduce", "zz-fake", "--out", str(out), "-q"]) == 0  # freed: it runs
    assert fake == [False] and (out / "zz-fake" / "summary.md").is_file()


def test_the_lock_is_freed_when_its_process_dies(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    code = textwrap.dedent("""
        import os, sys
        from pathlib import Path
        from oracleboost.experiments.runner import _folder_lock
        with _folder_lock(Path(sys.argv[1])):
            os._exit(9)  # killed while holding it: no clean-up runs
    """)
    assert _run(str(out), code=code).returncode == 9
    with runner._folder_lock(out):  # no stale lock to remove by hand
        assert (out / runner.LOCK_NAME).read_text().strip() == str(os.getpid())


# --------------------------------------------------------------------------------------
# 100 columns
# --------------------------------------------------------------------------------------


def test_a_wide_table_is_fitted_to_100_columns():
    x = np.arange(1, 41)
    series = {f"booster number {k} on data set {k % 7}": np.sqrt(x + k) for k in range(30)}
    series["all nan"] = np.full(40, np.nan)
    curves = Curves("wide", "round t", "error", x, series, {"a reference line": 0.5},
                    notes="a long note " * 20 + "\n  an indented line " * 2,
                    mathtext={"booster number 0 on data set 0": r"$b_0$"})
    text = terminal_text(curves)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= WIDTH
    assert max(len(line) for line in curves.to_text().splitlines()) > WIDTH  # it was wide
    header = lines[1].split("  ")
    shown = [name for name in series if name in lines[1]]
    assert shown == list(series)[: len(shown)] and 1 <= len(shown) < len(series)
    assert "all nan" not in lines[1] and header
    left = text[text.index("not shown ("):]
    assert "in curves.csv" in left and "all nan" in left
    assert all(name in " ".join(left.split()) for name in series if name not in shown)
    assert "reference a reference line: 0.5" in text
    assert "  an indented line" in text


def test_a_narrow_table_is_printed_as_it_is():
    curves = Curves("narrow", "round t", "value", np.arange(1, 5),
                    {"a": np.arange(4.0), "b": np.ones(4)}, notes="short")
    assert terminal_text(curves) == curves.to_text()


def test_a_quick_experiment_prints_within_100_columns(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # a short --out, as a user types it
    assert main(["reproduce", FAST, "--quick", "--out", "results"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines() + captured.err.splitlines()
    assert len(lines) > 10 and "files:" in captured.out
    too_wide = [line for line in lines if len(line) > WIDTH]
    assert too_wide == []


def test_an_interrupt_message_wraps_long_lists(tmp_path, monkeypatch, capsys):
    names = [f"zz-fake-experiment-number-{k}" for k in range(8)]

    def interrupted(quick: bool = False) -> Curves:
        """A fake experiment that is interrupted."""
        raise KeyboardInterrupt

    for name in names:
        monkeypatch.setitem(EXPERIMENTS, name, interrupted)
    assert main(["reproduce", *names, "--out", str(tmp_path)]) == 130
    err = capsys.readouterr().err.splitlines()
    at = err.index(f"oracleboost reproduce: interrupted during {names[0]}")
    assert err[at + 1] == "  finished: none" and err[at + 2].startswith("  not run: ")
    assert len(err) > at + 3 and all(line.startswith("    ") for line in err[at + 3:])
    assert all(len(line) <= WIDTH for line in err)
    listed = " ".join(line.strip() for line in err[at + 2:]).split("not run: ")[1]
    assert listed.split(", ") == names[1:]
