"""The project's own promises: the README's commands are what CI runs, and the demo runs."""

import io
import re
from pathlib import Path

import numpy as np

from oracleboost.cli import demo, main

ROOT = Path(__file__).resolve().parents[1]


def test_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    commands = re.findall(r"^(\(?python3 -m pip install .*pytest.*)$", readme, flags=re.M)
    assert len(commands) == 1, commands
    ci_lines = [line for line in ci.splitlines()
                if line.lstrip("(").startswith("python3 -m pip install")]
    assert ci_lines == commands
    # the cluster tests, left out of that command, run as a CI step of their own: the
    # README's command 3, verbatim, after the test command
    cluster = "python3 -m pytest -q -p no:cacheprovider -m cluster"
    assert re.search(rf"^{re.escape(cluster)}$", readme, flags=re.M)
    ci_lines = ci.splitlines()
    assert ci_lines.count(cluster) == 1
    assert ci_lines.index(cluster) > ci_lines.index(commands[0])


def test_every_marker_the_test_command_leaves_out_is_a_ci_step():
    """pyproject's addopts leave ``cluster`` and ``slow`` out of the README's test
    command; CI runs each as a step of its own, so that no test goes unrun."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    addopts = re.search(r'^addopts = "(.*)"$', pyproject, flags=re.M)[1]
    left_out = re.findall(r"not (\w+)", re.search(r"-m '([^']*)'", addopts)[1])
    assert left_out == ["cluster", "slow"]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    for marker in left_out:
        assert f"python3 -m pytest -q -p no:cacheprovider -m {marker}" in ci, marker


def test_an_xdist_group_runs_on_one_worker(tmp_path):
    """The suite's expensive shared results (the docs' build, the experiments' quick
    runs, a file's LocalCluster) are made once, by the one worker that takes their
    ``xdist_group``: with the groups broken (pytest-xdist 3.8 under pytest 9.2), two
    workers built the docs at once into the same folders."""
    import subprocess
    import sys

    import pytest

    pytest.importorskip("xdist")
    (tmp_path / "test_grouped.py").write_text(
        "import pytest\n"
        "pytestmark = pytest.mark.xdist_group('one')\n"
        "@pytest.mark.parametrize('i', range(8))\n"
        "def test_it(i):\n"
        "    pass\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # (not the project's addopts)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", "-n", "2",
         "--dist", "loadgroup", "test_grouped.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    workers = set(re.findall(r"\[(gw\d+)\].*PASSED", done.stdout))
    assert len(re.findall(r"PASSED", done.stdout)) >= 8
    assert len(workers) == 1, workers


def test_demo_prints_rounds_and_learns():
    out = io.StringIO()
    history = demo(n_rounds=12, every=1, out=out)
    text = out.getvalue()
    assert "edge" in text and "margin" in text
    assert len(history["loss"]) == 12
    # AdaBoost's risk falls every round; the first edge is the best stump's.
    assert np.all(np.diff(history["loss"]) < 0)
    assert history["train_error"][-1] < 0.05


def test_cli_rejects_bad_arguments(capsys):
    import pytest

    with pytest.raises(SystemExit):
        main(["demo", "--rounds", "0"])
    assert "--rounds" in capsys.readouterr().err


def test_reproduce_runs_a_registered_experiment(tmp_path):
    from oracleboost.cli import reproduce
    from oracleboost.experiments import EXPERIMENTS

    assert len(EXPERIMENTS) >= 4
    out = io.StringIO()
    results = reproduce(["telgarsky2012-lower-bound"], quick=True, out_dir=str(tmp_path), out=out)
    folder = tmp_path / "telgarsky2012-lower-bound"
    assert (folder / "figure.png").stat().st_size > 0
    assert {p.name for p in folder.iterdir()} >= {"figure.png", "curves.csv", "summary.md"}
    assert "gap" in out.getvalue()
    assert set(results) == {"telgarsky2012-lower-bound"}


def test_cli_list_and_unknown_experiment(capsys):
    import pytest

    main(["list"])
    assert "telgarsky2013-figure2" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["reproduce", "no-such-figure"])
    assert "unknown experiment" in capsys.readouterr().err
