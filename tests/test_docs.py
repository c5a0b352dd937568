"""The documentation builds, warnings as errors, and its internal links resolve (issue 23).

The build is the README's command, ``python -m sphinx -W -b html docs docs/_build/html``,
into a temporary directory (Sphinx's ``linkcheck`` builder needs the network, so the
links are checked here by reading the built HTML: every relative ``href`` and ``src``
names a file that exists, and every ``#anchor`` an ``id`` in it).  Two parts of the full
build are cut to fit the test command's budget (the build alone takes about 30 s on 2
cores, a minute on a loaded machine):

* the gallery is built without running its scripts (``-D plot_gallery=0``): running
  them adds about 25 s; ``tests/test_gallery.py`` runs each with the gallery's
  arguments, as sphinx-gallery does, instead;
* the reproductions' pages are built from a run of one experiment
  (``grubb2011-counterexample``, a few seconds) made here, not from ``oracleboost
  reproduce all --quick`` (minutes): its page is checked against its ``summary.md``,
  and the other pages against the note they carry when a result is missing.

The tests that read the build are marked ``slow``: CI runs them in a step of their own
(``pytest -m slow``), and the README's test command leaves them out.  The file's tests
share one xdist group, so that the build is made once, by one worker.  It is skipped when
the ``docs`` extra is not installed.
"""

from __future__ import annotations

import html
import importlib
import os
import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

for _package in ("sphinx", "pydata_sphinx_theme", "numpydoc", "sphinx_gallery", "matplotlib"):
    pytest.importorskip(_package, reason=f"the docs extra is not installed ({_package})")

sys.path.insert(0, str(DOCS / "_ext"))
import docs_gallery  # noqa: E402
import docs_markdown  # noqa: E402
import docs_reproductions  # noqa: E402

# one worker reads the module's build (pytest-xdist's loadgroup): it is made once
pytestmark = pytest.mark.xdist_group("docs-build")

#: The one experiment the test build's reproductions come from.
RUN = "grubb2011-counterexample"


_BUILD = textwrap.dedent("""
    import io, subprocess, sys
    from pathlib import Path
    from oracleboost.experiments.runner import reproduce

    folder, run = Path(sys.argv[1]), sys.argv[2]
    reproduce([run], quick=True, out_dir=folder / "results", out=io.StringIO(),
              err=io.StringIO())
    sys.exit(subprocess.run(sys.argv[3:]).returncode)  # (cwd and PYTHONPATH: the parent's)
""")


@pytest.fixture(scope="module")
def _build(tmp_path_factory) -> Path:
    """``oracleboost reproduce grubb2011-counterexample --quick --out folder/results``,
    then one ``-W`` build of the docs into ``folder/html`` with a fresh doctree cache
    (nothing is reused), in a child process (Sphinx's extensions and the reproduction
    import their modules into a clean interpreter, as the README's command does)."""
    folder = tmp_path_factory.mktemp("docs-build")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cmd = [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html",
           "-D", "plot_gallery=0", "-D", f"reproductions_results={folder / 'results'}",
           "-d", str(folder / "doctrees"), str(DOCS), str(folder / "html")]
    done = subprocess.run([sys.executable, "-c", _BUILD, str(folder), RUN, *cmd], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, \
        f"reproduce or sphinx -W failed:\n{done.stdout}\n{done.stderr}"
    return folder


@pytest.fixture(scope="module")
def results(_build) -> Path:
    """``oracleboost reproduce grubb2011-counterexample --quick``'s folder."""
    return _build / "results"


@pytest.fixture(scope="module")
def built(_build) -> Path:
    """The HTML tree of one ``-W`` build (a fresh doctree cache: nothing is reused)."""
    return _build / "html"


class _Links(HTMLParser):
    """The ``href``/``src`` values and the ``id``/``name`` anchors of one page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.anchors: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("href", "src"):
                self.links.append(value)
            elif name in ("id", "name"):
                self.anchors.add(value)


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _internal(link: str) -> bool:
    parts = urlsplit(link)
    return not (parts.scheme or parts.netloc or link.startswith(("//", "mailto:")))


@pytest.mark.slow
def test_the_build_succeeds_and_has_the_pages(built):
    for page in ("index.html", "getting_started.html", "benchmarks.html", "api/index.html",
                 "user_guide/index.html", "user_guide/oracles.html",
                 "user_guide/boosters.html", "user_guide/history.html",
                 "user_guide/early_stopping.html", "user_guide/export.html",
                 "user_guide/grids.html", "user_guide/reproducibility.html",
                 "auto_examples/index.html", "reproductions/index.html"):
        assert (built / page).is_file(), page


@pytest.mark.slow
def test_every_internal_link_resolves(built):
    # _static holds the theme's Jinja macros as a .html file, not a page
    pages = sorted(p for p in built.rglob("*.html") if "_static" not in p.relative_to(built).parts)
    assert len(pages) > 50
    anchors: dict[Path, set[str]] = {}
    broken = []
    n_links = 0
    for page in pages:
        for link in _parse(page).links:
            if not _internal(link):
                continue
            n_links += 1
            parts = urlsplit(link)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(built)}: {link} (no file)")
                continue
            fragment = unquote(parts.fragment)
            if fragment and target.suffix == ".html":
                if target not in anchors:
                    anchors[target] = _parse(target).anchors
                if fragment not in anchors[target]:
                    broken.append(f"{page.relative_to(built)}: {link} (no anchor)")
    assert n_links > 1000  # the check saw the pages' links, not an empty parse
    assert not broken, "\n".join(broken[:50])


@pytest.mark.slow
@pytest.mark.parametrize("module_name", ["oracleboost.boosters", "oracleboost.oracles",
                                         "oracleboost.losses"])
def test_every_public_name_has_an_api_page(built, module_name):
    module = importlib.import_module(module_name)
    missing = [name for name in module.__all__
               if not (built / "api" / "generated" / f"{module_name}.{name}.html").is_file()]
    assert not missing, f"{module_name}: no API page for {missing}"
    for name in ("oracleboost.export.to_lightgbm", "oracleboost.model_json.to_json",
                 "oracleboost.model_json.from_json"):
        assert (built / "api" / "generated" / f"{name}.html").is_file(), name


@pytest.mark.slow
def test_numpydoc_sections_render(built):
    page = (built / "api" / "generated"
            / "oracleboost.boosters.CoordinateBoostingClassifier.html").read_text("utf-8")
    for section in ("Parameters", "Attributes", "References", "Examples"):
        assert f">{section}<" in page, section
    # the methods inherited from the classifier mixin are documented on the class page
    for method in ("predict", "staged_predict", "predict_proba", "decision_function"):
        assert f'id="oracleboost.boosters.CoordinateBoostingClassifier.{method}"' in page


@pytest.mark.slow
def test_the_benchmarks_page_has_every_row_of_the_benchmarks_readme(built):
    readme = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(readme) if line.startswith("|"))
    rows = []
    for line in readme[start:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip().strip("`"))
    rows = rows[2:]  # the header and its rule
    assert len(rows) > 10
    page = (built / "benchmarks.html").read_text(encoding="utf-8")
    missing = [row for row in rows if f"<span class=\"pre\">{row}</span>" not in page]
    assert not missing, missing


@pytest.mark.slow
def test_getting_started_quotes_the_readme_commands(built):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"^\(?python3 -m pip install .*$", readme, flags=re.M)
    page = (built / "getting_started.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", "", page).replace("&quot;", '"').replace("&amp;", "&")
    for command in commands[:2]:  # the Quick start's two
        assert command in text, command


def test_the_first_fit_of_getting_started_runs():
    """The page's Python block runs as written (a few seconds: 100 AdaBoost rounds)."""
    source = (DOCS / "getting_started.rst").read_text(encoding="utf-8")
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", source)
    assert len(blocks) == 1
    code = "\n".join(line[3:] for line in blocks[0].splitlines())
    namespace: dict = {}
    exec(compile(code, "getting_started.rst", "exec"), namespace)  # noqa: S102 - our page
    ada = namespace["ada"]
    assert ada.stop_reason_ == "max_rounds"
    assert ada.score(namespace["X_test"], namespace["y_test"]) > 0.9


def _text(page: Path) -> str:
    """A page's text: tags dropped, entities and Sphinx's smart quotes undone, spaces
    collapsed."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))
    text = text.translate(str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"',
                                         "\u201d": '"'}))
    return " ".join(text.split())


def _markdown_text(line: str) -> str:
    """A summary.md line's text as a reader sees it (markup and escapes dropped)."""
    line = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", line)
    line = line.replace("\\|", "|").replace("`", "").replace("**", "")
    line = re.sub(r"(?<![\w*])\*([^*]+)\*", r"\1", line)
    return " ".join(line.lstrip("-#| ").split())


@pytest.mark.slow
def test_the_reproduction_page_is_its_summary(built, results):
    """Every line of text of summary.md (the claim, the measured result, the caption,
    the table's cells, the settings) is on the page; the figure is shown and the CSV
    files download as written."""
    page = built / "reproductions" / f"{RUN}.html"
    text = _text(page)
    summary = (results / RUN / "summary.md").read_text(encoding="utf-8")
    lines = [line for line in summary.splitlines()
             if line.strip() and not line.startswith(("![", "|---", "```"))]
    assert len(lines) > 15
    for line in lines:
        for cell in (line.strip("|").split(" | ") if line.startswith("|") else [line]):
            assert _markdown_text(cell) in text, cell
    source = page.read_text(encoding="utf-8")
    images = re.findall(r'<img[^>]+src="([^"]+)"', source)
    assert any((page.parent / src).read_bytes() == (results / RUN / "figure.png").read_bytes()
               for src in images), images
    for name in ("curves.csv", "aux.csv"):
        (href,) = {h for h in re.findall(r'href="([^"]+)"', source) if h.endswith(name)}
        assert (page.parent / href).read_bytes() == (results / RUN / name).read_bytes()


@pytest.mark.slow
def test_every_experiment_has_a_page(built):
    from oracleboost.experiments import EXPERIMENTS
    from oracleboost.experiments.claims import claim, first_sentence

    index = _text(built / "reproductions" / "index.html")
    assert f"1 of {len(EXPERIMENTS)} experiments have results in this build" in index
    for name in EXPERIMENTS:
        text = _text(built / "reproductions" / f"{name}.html")
        assert name in index and first_sentence(claim(name)) in index, name
        missing = "This build found no result for this experiment" in text
        assert missing == (name != RUN), name
        if missing:  # the claim is still there, and what to run
            assert " ".join(claim(name).split()) in text, name
            assert f"oracleboost reproduce {name} --quick" in text
    # the front page points at the reproductions when Telgarsky 2013's Figure 2 is missing
    assert "this build found no result for telgarsky2013-figure2" in _text(built / "index.html")


@pytest.mark.slow
def test_the_gallery_has_every_example(built):
    index = _text(built / "auto_examples" / "index.html")
    for script in sorted((ROOT / "examples").glob("*.py")):
        page = built / "auto_examples" / f"{script.stem}.html"
        title = script.read_text(encoding="utf-8").split("\n", 1)[0].strip('"')
        assert title in index and title in _text(page), script.name
    # the scripts the gallery does not run are named on its page, with the reason
    for name in docs_gallery.NOT_RUN:
        assert name in index, name


@pytest.mark.parametrize("markdown, rst", [
    ("# a title", "a title\n======="),
    ("plain *em* and **strong** and `code`x", "plain *em* and **strong** and ``code``\\ x"),
    ("a_b | c* and 2\\|f\\| --quick", "a\\_b \\| c\\* and 2\\|f\\| \\-\\-quick"),
    ("| h | k |\n|---|---|\n| `x` | 1 |",
     ".. list-table::\n   :header-rows: 1\n\n   * - h\n     - k\n   * - ``x``\n     - 1"),
    ("```text\n  a | b\n```", ".. code-block:: text\n\n     a | b"),
    ("one\ntwo\n\n- x\n- y", "one two\n\n- x\n- y"),
])
def test_the_markdown_conversion(markdown, rst):
    assert docs_markdown.to_rst(markdown) == rst + "\n"


def test_failed_experiments_are_read_from_the_index(tmp_path):
    """A failed experiment's page says it failed, with the error index.md recorded."""
    (tmp_path / "index.md").write_text(
        "# Reproductions\n\nquick · `oracleboost reproduce all`\n\n| a | b |\n|---|---|\n"
        "| x | y |\n\nFailed (tracebacks in reproduce.log):\n\n- ji2021-figure1: "
        "RuntimeError: no \\| yes\n- grubb2011-figure1: ValueError: x\n\n"
        "Not run (the run was interrupted):\n\n- swap-weak-learner\n", encoding="utf-8")
    failures = docs_reproductions._failures(tmp_path)
    assert failures == {"ji2021-figure1": "RuntimeError: no \\| yes",
                        "grubb2011-figure1": "ValueError: x"}
    page = docs_reproductions._missing_page("ji2021-figure1", "results",
                                            failures["ji2021-figure1"])
    assert "failed in that run: RuntimeError: no \\| yes" in page
