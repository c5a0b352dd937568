"""Sphinx configuration of oracleboost's documentation.

Build (warnings are errors), from the repository root::

    python -m sphinx -W -b html docs docs/_build/html

The build runs offline: no intersphinx inventory, remote image or version switcher is
fetched (MathJax is loaded by the reader's browser at view time, not by the build).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# The checkout's package, not an installed copy, is the one documented.
sys.path.insert(0, str(ROOT))

import oracleboost  # noqa: E402

project = "oracleboost"
author = "the oracleboost developers"
copyright = "the oracleboost developers"
release = oracleboost.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "_generated_*"]
root_doc = "index"

# -- API reference ---------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
autodoc_inherit_docstrings = True
# Member tables come from our own class template (_templates/autosummary/class.rst):
# autodoc lists the members with their docstrings on the class page itself.  numpydoc's
# own tables would list every scikit-learn method (set_fit_request, ...) as a link to a
# page we do not build.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- HTML ------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"oracleboost {release}"
html_static_path = []
html_theme_options = {
    # offline build: no version switcher JSON, no remote icons or analytics
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False
html_copy_source = False


# -- Benchmarks table: benchmarks/README.md's first table, as RST, at build time --------
def _markdown_table_to_rst(lines: list[str]) -> str:
    """A GitHub markdown table (header, ``|---|`` rule, rows) as an RST list-table.

    Cells keep their inline markup: markdown's ```x``` becomes RST's ````x````, ``**x**``
    is the same in both."""
    rows = []
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue  # the header rule
        rows.append([re.sub(r"`([^`]+)`", r"``\1``", c) or "\\" for c in cells])
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in rows:
        out.append(f"   * - {row[0]}")
        out.extend(f"     - {c}" for c in row[1:])
    return "\n".join(out) + "\n"


def _write_benchmarks_table() -> None:
    """Write ``_generated_benchmarks_table.rst`` from ``benchmarks/README.md`` (the file
    ``benchmarks/run.py`` rewrites), so the page never holds a hand copy."""
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith("|"))
    end = next((i for i in range(start, len(text)) if not text[i].startswith("|")), len(text))
    table = _markdown_table_to_rst(text[start:end])
    target = DOCS / "_generated_benchmarks_table.rst"
    if not target.exists() or target.read_text(encoding="utf-8") != table:
        target.write_text(table, encoding="utf-8")


_write_benchmarks_table()


# -- Members: ours only ----------------------------------------------------------------
def _skip_foreign_member(app, what, name, obj, skip, options):
    """Skip callables defined outside oracleboost on our class pages.

    scikit-learn's methods (``get_params``, ``set_params``, the ``set_*_request``
    methods it attaches to every estimator class) and ``str``'s on a ``StrEnum`` are
    documented by their owners; repeating them here only copies their docstrings, whose
    cross-references point into scikit-learn's own pages.  Data attributes are left to
    autodoc's default."""
    if what != "class" or not callable(obj):
        return None
    target = obj.fget if isinstance(obj, property) else obj
    module = getattr(target, "__module__", None) or ""
    if not module.startswith("oracleboost"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_member)
