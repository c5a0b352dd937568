"""The reproductions' pages, generated at build time from ``oracleboost reproduce`` output.

One page per registered experiment (:data:`oracleboost.experiments.EXPERIMENTS`) under
``docs/reproductions/`` (generated, never committed): the experiment's ``summary.md``
as ``oracleboost reproduce`` wrote it (the figure and its caption, the paper's claim,
the measured result, the files, the run's settings), converted to RST by
:mod:`docs_markdown`, with its figure shown and its CSV files downloadable.  The pages
are never a second copy kept by hand: they are rewritten from the results on every build.

Where the results come from (``conf.py`` or ``-D``):

* ``reproductions_results``: a folder written by ``oracleboost reproduce … --out DIR``.
  Empty (the default): ``results/`` at the repository root, the command's default.
* When that folder holds no experiment and ``reproductions_run`` is true (the default),
  the build runs ``oracleboost reproduce all --quick --out results`` first (the
  checkout's package; a few minutes on 2 cores), and later builds reuse its output.

An experiment without a ``summary.md`` in the folder (not run, or failed: ``index.md``
lists failures) still gets its page: the paper's claim and a note saying what to run.
A failed run of the reproduction step is a build warning (an error under ``-W``).
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from docs_markdown import escape, inline, to_rst
from sphinx.util import logging

logger = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
#: The generated pages' folder (in .gitignore).
OUT = DOCS / "reproductions"
QUICK_COMMAND = ["oracleboost", "reproduce", "all", "--quick"]


def _write(path: Path, text: str) -> None:
    """Write only when the text changed, so Sphinx re-reads only changed pages."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if not dst.exists() or not filecmp.cmp(src, dst, shallow=False):
        shutil.copyfile(src, dst)


def _completed(folder: Path) -> list[str]:
    """The registered experiments whose folder holds a ``summary.md``."""
    from oracleboost.experiments import EXPERIMENTS

    return [n for n in EXPERIMENTS if (folder / n / "summary.md").is_file()]


def _failures(folder: Path) -> dict[str, str]:
    """``index.md``'s list of failed experiments: name to the error's last line."""
    index = folder / "index.md"
    if not index.is_file():
        return {}
    # "Failed (tracebacks in reproduce.log):", a blank line, then "- NAME: error" lines
    section = re.search(r"^Failed\b.*\n\n((?:- .*\n?)+)", index.read_text(encoding="utf-8"),
                        flags=re.M)
    if section is None:
        return {}
    return dict(re.findall(r"^- ([\w.-]+): (.*)$", section[1], flags=re.M))


def _run_quick(folder: Path) -> None:
    """``oracleboost reproduce all --quick --out folder`` with the checkout's package."""
    logger.info("reproductions: no results in %s; running `%s --out %s` (a few minutes) ...",
                folder, " ".join(QUICK_COMMAND), folder)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cmd = [sys.executable, "-m", *QUICK_COMMAND, "--out", str(folder)]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        logger.warning("reproductions: `%s` exited with %d:\n%s", " ".join(QUICK_COMMAND),
                       done.returncode, tail)


def _experiment_page(name: str, folder: Path, shown_folder: str) -> str:
    """``folder/name/summary.md`` as an RST page; its files copied next to it."""
    source = folder / name
    for f in sorted(source.iterdir()):
        if f.is_file() and f.name != "summary.md":
            _copy(f, OUT / name / f.name)

    def link(text: str, target: str) -> str:
        if "://" not in target and (source / target).is_file():
            return f":download:`{escape(text)} <{name}/{target}>`"
        return f"`{escape(text)} <{target}>`__"

    def image(alt: str, target: str) -> list[str]:
        return [f".. image:: {name}/{target}", f"   :alt: {alt}", "   :width: 100%"]

    rst = to_rst((source / "summary.md").read_text(encoding="utf-8"), link, image)
    title, rule, rest = rst.split("\n", 2)
    note = (f"This page is ``{shown_folder}/{name}/summary.md`` as ``oracleboost reproduce`` "
            "wrote it, converted when the documentation was built (the run's settings are "
            "at the end).")
    return f"{title}\n{rule}\n\n{note}\n{rest}"


def _missing_page(name: str, shown_folder: str, failure: str | None) -> str:
    from oracleboost.experiments.claims import claim

    title = name
    why = (f"failed in that run: {inline(failure)}" if failure is not None
           else "not run")
    lines = [title, "=" * len(title), "", "The paper's claim", "-----------------", "",
             inline(" ".join(claim(name).split())) or "(no claim recorded)", "",
             ".. note::", "",
             f"   This build found no result for this experiment in ``{shown_folder}/`` "
             f"({why}).  Run ``oracleboost reproduce {name} --quick`` (or ``all``) and build "
             "the documentation again: this page then shows the figure, the measured "
             "result and the CSV.", ""]
    return "\n".join(lines)


def _index_page(folder: Path, shown_folder: str, done: list[str],
                failures: dict[str, str]) -> str:
    from oracleboost.experiments import EXPERIMENTS
    from oracleboost.experiments.claims import claim, first_sentence

    lines = ["Reproductions", "=============", "",
             "Each paper's figure, reproduced by ``oracleboost reproduce`` on built-in "
             "data: one page per experiment with the paper's claim, the measured result, "
             "the figure and its CSV.  The pages are generated when the documentation is "
             f"built, from the ``summary.md`` files in ``{shown_folder}/`` (the output of "
             "``oracleboost reproduce all --quick``, which the build runs when no results "
             "exist); nothing on them is kept by hand.", ""]
    index = folder / "index.md"
    if index.is_file():
        run = [line for line in index.read_text(encoding="utf-8").splitlines()[1:]
               if line.strip()][:1]
        if run and not run[0].startswith("|"):
            lines += [f"The run: {inline(run[0])}", ""]
    lines += [f"{len(done)} of {len(EXPERIMENTS)} experiments have results in this build.",
              ""]
    lines += [".. list-table::", "   :header-rows: 1", "   :widths: 25 60 15", "",
              "   * - experiment", "     - the paper's claim (first sentence)",
              "     - in this build"]
    for name in EXPERIMENTS:
        status = ("measured" if name in done
                  else "failed" if name in failures else "not run")
        lines += [f"   * - :doc:`{name}`",
                  f"     - {inline(first_sentence(claim(name))) or '(no claim recorded)'}",
                  f"     - {status}"]
    lines += ["", ".. toctree::", "   :hidden:", ""]
    lines += [f"   {name}" for name in EXPERIMENTS]
    return "\n".join(lines) + "\n"


#: The experiment whose figure the front page shows (as the README does).
FRONT = "telgarsky2013-figure2"


def _front_figure(done: list[str]) -> str:
    """``docs/_generated_front_figure.rst``, included by the front page: :data:`FRONT`'s
    figure from this build's results, or a pointer to the reproductions."""
    if FRONT not in done:
        return ("The papers' figures, reproduced, are on the :doc:`reproductions/index` "
                f"pages (this build found no result for ``{FRONT}``).\n")
    return ("Telgarsky 2013's Figure 2 as this build reproduced it "
            f"(:doc:`reproductions/{FRONT}`): AdaBoost's margin on the Rudin matrix stalls "
            "at 1/3 without shrinkage and reaches the maximum 3/8 with it.\n\n"
            f".. image:: reproductions/{FRONT}/figure.png\n"
            f"   :alt: {FRONT}\n   :width: 70%\n")


def _results_folder(app) -> tuple[Path, str]:
    """The results folder, and how the pages name it (relative to the root if inside)."""
    given = app.config.reproductions_results
    folder = Path(given).expanduser().resolve() if given else ROOT / "results"
    try:
        shown = str(folder.relative_to(ROOT))
    except ValueError:
        shown = str(folder)
    return folder, shown


def generate(app) -> None:
    """``builder-inited``: write ``docs/reproductions/`` from the results folder."""
    from oracleboost.experiments import EXPERIMENTS

    folder, shown = _results_folder(app)
    if not _completed(folder) and app.config.reproductions_run:
        _run_quick(folder)
    done = _completed(folder)
    failures = _failures(folder) if done else {}
    logger.info("reproductions: %d of %d experiments from %s", len(done), len(EXPERIMENTS),
                folder)
    _write(DOCS / "_generated_front_figure.rst", _front_figure(done))
    wanted = {OUT / "index.rst"}
    _write(OUT / "index.rst", _index_page(folder, shown, done, failures))
    for name in EXPERIMENTS:
        page = (_experiment_page(name, folder, shown) if name in done
                else _missing_page(name, shown, failures.get(name)))
        _write(OUT / f"{name}.rst", page)
        wanted.add(OUT / f"{name}.rst")
        if name in done:
            wanted.update(p for p in (OUT / name).iterdir())
    # pages and files of experiments no longer in the results (or the registry)
    for path in sorted(OUT.rglob("*"), reverse=True):
        if path.is_file() and path not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def setup(app):
    app.add_config_value("reproductions_results", "", "env", types=frozenset({str}))
    app.add_config_value("reproductions_run", True, "env", types=frozenset({bool}))
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
