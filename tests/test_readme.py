"""The README as a newcomer meets it: short, its first program runs and prints, and its
links resolve in a clone.

The anchors' READMEs (LightGBM, scikit-learn, optax) are 5-12 KB; the details live on the
documentation site, so the README stays within 10 KB.  Its first ```python block is a
whole program a reader pastes into a file: it runs in a fresh interpreter, outside the
repository, and prints its result.  Every relative link and image names a file that git
tracks, so it resolves in a fresh clone (nothing that only a run of the main job makes).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_BYTES = 10 * 1024

#: Markdown inline links and images: [text](target) and ![alt](target "title").
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
#: Reference-style definitions: [label]: target
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
#: HTML <img src=...> and <a href=...>, which GitHub renders too.
_HTML = re.compile(r"<(?:img|a)\b[^>]*\b(?:src|href)\s*=\s*[\"']([^\"']+)[\"']", re.I)


def _text() -> str:
    return README.read_text(encoding="utf-8")


def _tracked() -> set[str]:
    """The paths git tracks; empty where this is not a git checkout."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {p for p in out.decode("utf-8").split("\0") if p}


def _relative_targets(text: str) -> list[str]:
    """Every link target in the README that is a path in the repository (no scheme, no
    host, not a bare #anchor), without its #fragment or ?query."""
    # code blocks and inline code are not links: drop them first
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    targets = _LINK.findall(prose) + _REFERENCE.findall(prose) + _HTML.findall(prose)
    paths = []
    for target in targets:
        parts = urlsplit(target)
        if parts.scheme or parts.netloc or not parts.path:
            continue
        paths.append(unquote(parts.path))
    return paths


def test_the_readme_is_at_most_10_kb():
    size = README.stat().st_size
    assert size <= MAX_BYTES, (
        f"README.md is {size} bytes, more than {MAX_BYTES}: move details to a page of docs/")


@pytest.fixture(scope="module")
def first_program(tmp_path_factory) -> tuple[str, subprocess.CompletedProcess]:
    """The README's first ```python block, pasted into a file and run from an empty
    folder in a fresh interpreter (a few seconds: 100 AdaBoost rounds on stumps, the
    compiled kernels loaded from numba's disk cache after their first compilation)."""
    blocks = re.findall(r"^```python\n(.*?)^```", _text(), flags=re.S | re.M)
    assert blocks, "README.md has no ```python code block"
    folder = tmp_path_factory.mktemp("first_fit")
    program = folder / "first_fit.py"
    program.write_text(blocks[0], encoding="utf-8")
    result = subprocess.run([sys.executable, str(program)], cwd=folder,
                            capture_output=True, text=True, timeout=600)
    return blocks[0], result


def test_the_first_python_block_is_a_program_that_runs_and_prints(first_program):
    _, result = first_program
    assert result.returncode == 0, (
        f"README.md's first Python block exits with {result.returncode}:\n"
        f"{result.stderr[-3000:]}")
    assert result.stdout.strip(), "README.md's first Python block prints nothing"


def test_the_first_program_prints_a_fitted_accuracy(first_program):
    """What it prints is a result: the test accuracy of a fitted booster on the
    breast-cancer data (the majority class scores 0.63)."""
    block, result = first_program
    if "accuracy" not in block:
        pytest.skip("the first program does not report an accuracy")
    found = re.search(r"accuracy\D*([01]\.\d+)", result.stdout)
    assert found, f"no accuracy in the first program's output:\n{result.stdout}"
    assert float(found.group(1)) > 0.9, result.stdout


def test_every_relative_link_resolves_in_a_clone():
    """Each relative link names a file git tracks, or a folder holding one; outside a git
    checkout (an unpacked source archive), a path that exists."""
    tracked = _tracked()
    folders = {str(parent) for path in tracked for parent in Path(path).parents}
    missing = []
    for target in _relative_targets(_text()):
        path = target.strip("/")
        if tracked:
            found = path in tracked or path in folders
        else:
            found = (ROOT / path).exists()
        if not found:
            missing.append(target)
    assert not missing, (
        f"README.md links to paths a fresh clone does not have: {missing} (link only to "
        "files git tracks; results/ is made by the main job)")


def test_the_link_check_sees_the_links():
    """The link check above would pass vacuously if it found no link: it finds the
    README's links to the documentation pages, and it would flag a missing file."""
    targets = _relative_targets(_text())
    assert "docs/getting_started.rst" in targets, targets
    assert _relative_targets("see [x](results/a/figure.png) and ![y](img.png \"t\")") == [
        "results/a/figure.png", "img.png"]
    assert _relative_targets("[web](https://example.org) [top](#install)") == []


def test_the_readme_speaks_to_users():
    """No word of how the work was organised: issues, implementers' notes, sessions."""
    text = _text()
    found = [m.group(0) for m in re.finditer(
        r"\bissues?\b|\bnote P\d*|\bsessions?\b|\.\./shared\b", text, flags=re.I)]
    assert not found, f"README.md mentions {sorted(set(found))}"


def test_the_readme_has_the_newcomers_sections():
    """Install (with an offline line), a first fit, the two tables, the commands, the docs."""
    text = _text()
    for heading in ("## Install", "## A first fit", "## Boosters", "## Documentation"):
        assert re.search(rf"^{re.escape(heading)}", text, flags=re.M), heading
    assert "--no-index --find-links" in text, "no offline install line"
    for name in ("CoordinateBoostingClassifier", "FunctionalGradientRegressor",
                 "MirrorBoostingClassifier", "AcceleratedMarginClassifier",
                 "TotallyCorrectiveClassifier", "StumpOracle", "HistTreeOracle", "TreeOracle",
                 "LightGBMOracle", "SklearnOracle", "MLPOracle", "MatrixOracle",
                 "LinearOracle", "TreeEnsembleOracle", "CachedOracle", "ApproximateOracle"):
        assert f"`{name}" in text, f"{name} is missing from the README's tables"
