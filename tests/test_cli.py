"""The command line's main job: ``oracleboost reproduce NAME… | all`` and what it writes.

Only the quickest registered experiments run here (measured on 2 cores, quick mode,
figure included: grubb2011-counterexample about 0.5 s, telgarsky2013-figure2 about
1.5 s); the rest of the behaviour is checked on a fake experiment registered for the
duration of a test.  ``reproduce all`` is not run here (too slow for this file).
"""

from __future__ import annotations

import csv
import functools
import inspect
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import oracleboost
from oracleboost.cli import UnknownExperimentError, main, resolve_names
from oracleboost.experiments import EXPERIMENTS, Curves
from oracleboost.experiments.claims import CLAIMS, first_sentence

# The counterexample's non-smooth loss rises on purpose (its booster says so); not news here.
pytestmark = pytest.mark.filterwarnings("ignore:.*the loss rose to:UserWarning")

PNG = b"\x89PNG\r\n\x1a\n"
FAST = "grubb2011-counterexample"  # has aux arrays; takes no random_state
FAST2 = "telgarsky2013-figure2"


def _recording(monkeypatch, name: str) -> list[Curves]:
    """Replace ``EXPERIMENTS[name]`` by a wrapper that keeps every result it returns."""
    fn = EXPERIMENTS[name]
    results: list[Curves] = []

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        results.append(fn(*args, **kwargs))
        return results[-1]

    monkeypatch.setitem(EXPERIMENTS, name, wrapper)
    return results


def _read_csv(path: Path) -> tuple[list[str], np.ndarray]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], np.array(rows[1:], dtype=float)


def _collapse(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def fake(monkeypatch):
    """A fake, instant experiment ``zz-fake`` taking ``random_state``; records its calls."""
    calls: list[dict] = []

    def zz_fake(quick: bool = False, random_state: int = 0) -> Curves:
        """A fake experiment for the command-line tests."""
        calls.append({"quick": quick, "random_state": random_state})
        return Curves(
            "fake", "round t", "value", np.arange(1, 4),
            {"a, with comma": np.array([0.1, 1 / 3, np.nan]), "b": np.array([1.0, 2.0, 3.0])},
            {"half": 0.5}, notes="line one\n  line two", aux={"k": np.array([1, 2, 3])},
            runtime=0.001,
        )

    monkeypatch.setitem(EXPERIMENTS, "zz-fake", zz_fake)
    return calls


# --------------------------------------------------------------------------------------
# One experiment: figure, CSV, summary
# --------------------------------------------------------------------------------------


def test_reproduce_one_writes_figure_csv_and_summary(tmp_path, monkeypatch, capsys):
    results = _recording(monkeypatch, FAST)
    assert main(["reproduce", FAST, "--quick", "--out", str(tmp_path)]) == 0
    (res,) = results
    folder = tmp_path / FAST
    assert sorted(p.name for p in folder.iterdir()) == [
        "aux.csv", "curves.csv", "figure.png", "summary.md"]
    png = (folder / "figure.png").read_bytes()
    assert png[:8] == PNG and len(png) > 1000
    assert not (tmp_path / "index.md").exists()  # one experiment: no index

    header, values = _read_csv(folder / "curves.csv")
    assert header == [res.xlabel, *res.series]
    np.testing.assert_array_equal(values[:, 0], res.x)
    for k, key in enumerate(res.series, start=1):
        np.testing.assert_array_equal(values[:, k], res.series[key])  # exact: repr round-trips
    header, values = _read_csv(folder / "aux.csv")
    assert header == [res.xlabel, *res.aux]
    for k, key in enumerate(res.aux, start=1):
        np.testing.assert_array_equal(values[:, k], res.aux[key])

    text = (folder / "summary.md").read_text(encoding="utf-8")
    assert _collapse(CLAIMS[FAST]) in text
    assert _collapse(res.notes) in text
    for key, y in res.series.items():
        assert re.search(rf"\| `{re.escape(key)}` \| {float(y[-1]):.6g} \|", text), key
    for setting in ("mode: quick", f"oracleboost version: {oracleboost.__version__}",
                    "date: ", "seconds: ", "seed: not used"):
        assert setting in text, setting
    assert f"command: `oracleboost reproduce {FAST} --quick --out {tmp_path}`" in text
    assert "](figure.png)" in text and "](curves.csv)" in text

    out = capsys.readouterr()
    assert res.title in out.out and "files:" in out.out  # the table printing stays
    assert "%|" not in out.err  # no progress bar for one experiment / off a terminal


def test_out_folder_named_figures_keeps_working(tmp_path, fake):
    out = tmp_path / "figures"
    out.mkdir()
    (out / "old.png").write_bytes(PNG)  # a file from an earlier, flat run
    assert main(["reproduce", "zz-fake", "--out", str(out)]) == 0
    assert (out / "zz-fake" / "figure.png").read_bytes()[:8] == PNG
    assert (out / "old.png").read_bytes() == PNG
    assert fake == [{"quick": False, "random_state": 0}]


# --------------------------------------------------------------------------------------
# Several experiments: index.md
# --------------------------------------------------------------------------------------


def test_two_names_write_an_index_linking_both(tmp_path, capsys):
    names = [FAST2, FAST]
    assert main(["reproduce", *names, "--quick", "--out", str(tmp_path)]) == 0
    index = (tmp_path / "index.md").read_text(encoding="utf-8")
    rows = [line for line in index.splitlines() if line.startswith("| [")]
    assert len(rows) == 2
    for name, row in zip(names, rows, strict=True):
        assert f"[{name}]({name}/summary.md)" in row
        assert f"({name}/figure.png)" in row
        sentence = first_sentence(CLAIMS[name]).replace("|", "\\|")
        assert sentence in row
        assert re.search(r"\| \d+\.\d s \|", row)
    for link in re.findall(r"\]\(([^)]+)\)", index):
        assert not Path(link).is_absolute()
        assert (tmp_path / link).is_file(), link
    assert "%|" not in capsys.readouterr().err  # stderr is not a terminal: the bar stays quiet


# --------------------------------------------------------------------------------------
# Names, errors, seed, version
# --------------------------------------------------------------------------------------


def test_unknown_name_exits_2_in_two_lines_pointing_to_the_list(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "nosuchname", "--quick", "--out", str(tmp_path / "r")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.splitlines()
    # the subcommand's error, no close name to offer, and where the names are
    assert err == ["oracleboost reproduce: error: unknown experiment(s): nosuchname",
                   "Try 'oracleboost list' for every name; 'all' runs every one."]
    assert not (tmp_path / "r").exists()  # nothing ran


@pytest.mark.parametrize("typo, meant", [
    ("telgarsky2013-figur2", "telgarsky2013-figure2"),
    ("grubb2011-counterexampel", FAST),
    ("swap", "swap-weak-learner"),  # a part of a name is close enough
])
def test_a_mistyped_experiment_name_gets_a_did_you_mean(tmp_path, capsys, typo, meant):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", FAST, typo, "--quick", "--out", str(tmp_path / "r")])
    assert exc.value.code == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"oracleboost reproduce: error: unknown experiment(s): {typo} "
                            f"(did you mean {meant}")
    assert len(first) <= 140 and not (tmp_path / "r").exists()


def test_no_name_and_all_mean_every_experiment():
    assert resolve_names(None) == list(EXPERIMENTS)
    assert resolve_names([]) == list(EXPERIMENTS)
    assert resolve_names(["all"]) == list(EXPERIMENTS)
    assert resolve_names([FAST, "all"]) == list(EXPERIMENTS)
    assert resolve_names([FAST, FAST2, FAST]) == [FAST, FAST2]
    with pytest.raises(UnknownExperimentError) as exc:
        resolve_names(["all", "nope", "nope"])
    assert exc.value.unknown == ["nope"] and exc.value.valid == list(EXPERIMENTS)
    assert isinstance(exc.value, ValueError)


def test_seed_is_passed_to_experiments_that_take_random_state(tmp_path, fake, monkeypatch):
    # the second experiment takes no random_state, as FAST (a fake: instant, where FAST
    # would draw its figure once more for the same check)
    fixed_calls: list[bool] = []

    def zz_fixed(quick: bool = False) -> Curves:
        """A fake experiment that takes no random_state."""
        fixed_calls.append(quick)
        return Curves("fixed", "round t", "value", np.arange(1, 3), {"a": np.ones(2)})

    assert "random_state" not in inspect.signature(EXPERIMENTS[FAST]).parameters
    monkeypatch.setitem(EXPERIMENTS, "zz-fixed", zz_fixed)
    assert main(["reproduce", "zz-fake", "zz-fixed", "--quick", "--seed", "7",
                 "--out", str(tmp_path)]) == 0
    assert fake == [{"quick": True, "random_state": 7}]
    assert fixed_calls == [True]  # called without the seed
    used = (tmp_path / "zz-fake" / "summary.md").read_text(encoding="utf-8")
    assert "seed: 7 (passed to the experiment as random_state=7)" in used
    ignored = (tmp_path / "zz-fixed" / "summary.md").read_text(encoding="utf-8")
    assert "seed: 7 given but not used" in ignored
    assert "seed 7" in (tmp_path / "index.md").read_text(encoding="utf-8")


def test_fake_experiment_files_nan_comma_and_missing_claim(tmp_path, fake):
    main(["reproduce", "zz-fake", "--out", str(tmp_path)])
    folder = tmp_path / "zz-fake"
    header, values = _read_csv(folder / "curves.csv")
    assert header == ["round t", "a, with comma", "b"]  # quoted, read back whole
    np.testing.assert_array_equal(values[:, 1], [0.1, 1 / 3, np.nan])
    assert (folder / "aux.csv").read_text().splitlines() == ["round t,k", "1,1", "2,2", "3,3"]
    text = (folder / "summary.md").read_text(encoding="utf-8")
    assert "No claim recorded" in text
    assert "```text\nline one\n  line two\n```" in text  # notes laid out in lines keep it
    assert "| `a, with comma` | nan | 0.333333 at round t = 2 |" in text
    assert "- half: 0.5" in text
    assert "seed: not given: the experiment's default random_state=0 was used" in text
    assert "mode: full size" in text


def test_bad_seed_is_rejected(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", FAST, "--seed", "-1"])
    assert exc.value.code == 2
    assert "--seed" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"oracleboost {oracleboost.__version__}\n"


def test_python_dash_m_is_the_same_command():
    done = subprocess.run([sys.executable, "-m", "oracleboost", "--version"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"oracleboost {oracleboost.__version__}\n"


def test_list_still_lists_every_experiment(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in EXPERIMENTS:
        assert name in out


# --------------------------------------------------------------------------------------
# Curves.to_csv and the claims
# --------------------------------------------------------------------------------------


def test_to_csv_round_trips_exactly(tmp_path):
    x = np.array([0.1, 0.2, 0.3])
    curves = Curves("t", "shrinkage ν", "y", x,
                    {"a": np.array([1 / 3, -np.inf, np.nan]), "b": np.array([1e-300, 2.5, 7.0])},
                    aux={"n": np.array([1, 2, 3]), "flag": np.array([True, False, True])})
    path = tmp_path / "c.csv"
    assert curves.to_csv(path) == str(path)
    header, values = _read_csv(path)
    assert header == ["shrinkage ν", "a", "b"]
    np.testing.assert_array_equal(values, np.column_stack([x, *curves.series.values()]))
    curves.to_csv(path, which="aux")
    assert path.read_text(encoding="utf-8").splitlines() == [
        "shrinkage ν,n,flag", "0.1,1,1", "0.2,2,0", "0.3,3,1"]
    with pytest.raises(ValueError, match="which"):
        curves.to_csv(path, which="reference")


def test_every_experiment_has_a_claim():
    missing = sorted(set(EXPERIMENTS) - set(CLAIMS))
    assert not missing, f"add a claim to oracleboost/experiments/claims.py for {missing}"
    assert set(CLAIMS) <= set(EXPERIMENTS), sorted(set(CLAIMS) - set(EXPERIMENTS))
    for name, text in CLAIMS.items():
        sentence = first_sentence(text)
        assert _collapse(text).startswith(sentence) and sentence.endswith("."), name
        assert len(sentence) > 60, name
        assert re.search(r"\(\d{4}", sentence), name  # it names the paper and its year
    assert CLAIMS["naghibi2014-label-noise"].startswith("Our experiment, not the paper's")


def test_first_sentence_skips_abbreviations_and_initials():
    assert first_sentence("See Fig. 2 of Rudin et al. now.  Next one.") == (
        "See Fig. 2 of Rudin et al. now.")
    assert first_sentence("By R. E. Schapire, e.g. Thm. 3.  Then.") == (
        "By R. E. Schapire, e.g. Thm. 3.")
    assert first_sentence("No end here") == "No end here"
    assert first_sentence("Ends at 0.92.  Then more.") == "Ends at 0.92."
