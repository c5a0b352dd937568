"""Sphinx configuration of oracleboost's documentation.

Build (warnings are errors), from the repository root::

    python -m sphinx -W -b html docs docs/_build/html

The build runs offline: no intersphinx inventory, remote image or version switcher is
fetched.  It also runs the gallery's scripts (``examples/``, in quick mode:
``_ext/docs_gallery.py``) and writes the reproductions' pages from ``oracleboost
reproduce`` output (``_ext/docs_reproductions.py``: ``results/``, or a quick run of every
experiment when there is none).  ``-D plot_gallery=0`` builds the gallery's pages without
running the scripts; ``-D reproductions_results=DIR`` takes the results from DIR.
Formulas are drawn by MathJax from a local copy when one is installed, else from its CDN
when a page is viewed (an offline reader then sees raw TeX).  For a site that draws them
offline, install MathJax 2 before building: ``apt-get install libjs-mathjax`` (Debian,
Ubuntu), or set ``ORACLEBOOST_MATHJAX`` to a MathJax 2 folder (``_ext/docs_mathjax.py``
copies the 1.5 MB it needs into the site).  The build says which it used.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# The checkout's package, not an installed copy, is the one documented.
sys.path.insert(0, str(ROOT))
# this site's own extensions and helpers
sys.path.insert(0, str(DOCS / "_ext"))

import docs_gallery  # noqa: E402
import docs_markdown  # noqa: E402
import docs_mathjax  # noqa: E402
from sphinx.util import logging as sphinx_logging  # noqa: E402

import oracleboost  # noqa: E402

_logger = sphinx_logging.getLogger(__name__)

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
    "sphinx_gallery.gen_gallery",
    "docs_reproductions",
    "docs_mathjax",
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
# "On this page" of a class lists its members as fit(), predict(), ...: with their
# parents (CoordinateBoostingClassifier.fit()) the long shared prefix made every entry
# look the same in the narrow column
toc_object_entries_show_parents = "hide"

# -- Formulas: MathJax from a local copy when there is one (see _ext/docs_mathjax.py) --
# Not sphinx.ext.imgmath: it needs LaTeX and dvipng at build time, a far larger install
# than the OS's MathJax package, and draws formulas as images; nor a copy of MathJax in
# the repository (megabytes of a third party's JavaScript to keep up to date).
_LOCAL_MATHJAX = docs_mathjax.local_mathjax()
if _LOCAL_MATHJAX is not None:
    mathjax_path = docs_mathjax.LOCAL_PATH
    mathjax2_config = docs_mathjax.CONFIG

# -- Gallery: examples/ run by sphinx-gallery, in quick mode (_ext/docs_gallery.py) ----
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # the scripts to run (the others are shown without output; the gallery's page says why)
    "filename_pattern": docs_gallery.filename_pattern(),
    # each script's quick arguments, e.g. --rounds 30 --show
    "reset_argv": "docs_gallery.quick_argv",
    "within_subsection_order": "FileNameSortKey",
    # main()'s return value (the histories) is for tests, not for the page
    "capture_repr": (),
    "image_scrapers": ("matplotlib",),
    "download_all_examples": False,
    "write_computation_times": False,
    "show_memory": False,
    "remove_config_comments": True,
}

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
def _write_benchmarks_table() -> None:
    """Write ``_generated_benchmarks_table.rst`` from ``benchmarks/README.md`` (the file
    ``benchmarks/run.py`` rewrites), so the page never holds a hand copy."""
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith("|"))
    end = next((i for i in range(start, len(text)) if not text[i].startswith("|")), len(text))
    table = "\n".join(docs_markdown.table(text[start:end])) + "\n"
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


def _say_where_mathjax_comes_from(app) -> None:
    """Say at the start of the build whether formulas will be drawn offline."""
    if _LOCAL_MATHJAX is not None:
        _logger.info("formulas: MathJax from %s, copied into the site (drawn offline)",
                     _LOCAL_MATHJAX)
    else:
        # print, not a Sphinx warning: a build with -W must not fail for it, and -q
        # hides Sphinx's info messages
        print("docs: no local MathJax; formulas load MathJax from its CDN when a page is "
              "viewed (offline: raw TeX). For offline formulas: apt-get install "
              "libjs-mathjax, or set ORACLEBOOST_MATHJAX to a MathJax 2 folder",
              file=sys.stderr)


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_member)
    app.connect("builder-inited", _say_where_mathjax_comes_from)
