"""The gallery's scripts run as the documentation's build runs them (issue 23).

sphinx-gallery executes each script of ``examples/`` inside the build: as ``__main__``,
with ``__doc__`` empty and no ``__file__``, ``sys.argv`` set by
``docs/_ext/docs_gallery.py`` (each script's quick arguments) and matplotlib on Agg, and
it takes the figures left open.  ``tests/test_docs.py`` builds the site without running
them (to stay in the test command's budget), so this runs each the same way here: it
must not raise, and a script given ``--show`` must leave its figure open for the
gallery's scraper.  About 25 s on a loaded 2-core machine: marked ``slow``, run in CI's
step of its own (``pytest -m slow``), not by the README's test command.
"""

from __future__ import annotations

import contextlib
import io
import sys
import types
from pathlib import Path

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import docs_gallery  # noqa: E402


def test_every_script_is_run_or_said_not_to_be():
    scripts = {p.name for p in (ROOT / "examples").glob("*.py")}
    assert scripts == set(docs_gallery.QUICK_ARGV) | set(docs_gallery.NOT_RUN)
    assert not set(docs_gallery.QUICK_ARGV) & set(docs_gallery.NOT_RUN)
    header = (ROOT / "examples" / "GALLERY_HEADER.rst").read_text(encoding="utf-8")
    for name in [*docs_gallery.NOT_RUN, *docs_gallery.NEEDS]:
        assert f"``{name}``" in header, name


def _run_as_the_gallery_does(name: str) -> str:
    """Execute ``examples/NAME`` in a fresh ``__main__`` namespace with the gallery's
    argv (sphinx-gallery's ``execute_script``); return what it printed."""
    path = ROOT / "examples" / name
    code = compile(path.read_text(encoding="utf-8"), str(path), "exec")
    # a fresh __main__ module, installed while the script runs (so that its classes
    # pickle by reference, as joblib's caching needs), as sphinx-gallery does
    main = types.ModuleType("__main__")
    main.__dict__["__doc__"] = ""
    argv, old_main = sys.argv, sys.modules["__main__"]
    sys.argv = [str(path), *docs_gallery.quick_argv({}, {"src_file": str(path)})]
    sys.modules["__main__"] = main
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(code, main.__dict__)  # noqa: S102 - our own example
    finally:
        sys.argv, sys.modules["__main__"] = argv, old_main
    return out.getvalue()


@pytest.mark.slow  # (the scripts together: some 25 s; CI's slow step)
@pytest.mark.filterwarnings("ignore::UserWarning")  # plt.show() under Agg says it cannot show
@pytest.mark.parametrize("name", list(docs_gallery.QUICK_ARGV))
def test_the_gallery_runs_the_script(name):
    if name not in docs_gallery.runnable():
        pytest.skip(f"{' or '.join(docs_gallery.NEEDS[name])} is not installed: the gallery "
                    "does not run it")
    plt.close("all")
    try:
        printed = _run_as_the_gallery_does(name)
        figures = len(plt.get_fignums())
    finally:
        plt.close("all")
    assert len(printed.splitlines()) >= 3, printed
    assert figures == ("--show" in docs_gallery.QUICK_ARGV[name]), figures
