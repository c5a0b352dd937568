"""Formulas drawn offline: MathJax from a local copy, copied into the built site.

Sphinx's default ``mathjax_path`` loads MathJax from a CDN when a page is viewed, so
an offline reader sees raw TeX.  Debian's ``libjs-mathjax`` package (MathJax 2.7,
``apt-get install libjs-mathjax``; ``/usr/share/javascript/mathjax``) is a local copy.
When it is there, ``conf.py`` points ``mathjax_path`` at ``_static/mathjax/`` and this
extension copies the part of MathJax that the TeX input and the CommonHTML output need
(about 1.5 MB of the package's 54 MB: the loader, the ``TeX-AMS_CHTML`` configuration,
the extensions, the TeX and CommonHTML jax and the TeX web fonts) into the site when
the build finishes: the site then draws every formula with no network at all.  Nothing
of MathJax is kept in the repository.  Without a local copy the site keeps Sphinx's CDN
default, and the build says so.
"""

from __future__ import annotations

import filecmp
import os
import shutil
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

#: Where a local MathJax 2 may be: ``$ORACLEBOOST_MATHJAX``, then Debian's package.
CANDIDATES = [Path(p) for p in (os.environ.get("ORACLEBOOST_MATHJAX"),
                                "/usr/share/javascript/mathjax") if p]
#: The files of MathJax 2 that TeX input with CommonHTML output loads.
SUBSET = ["MathJax.js", "config/TeX-AMS_CHTML.js", "extensions", "jax/input/TeX",
          "jax/output/CommonHTML", "jax/element", "fonts/HTML-CSS/TeX/woff"]
#: The site's path to the copy, relative to ``_static`` (Sphinx's ``mathjax_path``).
LOCAL_PATH = "mathjax/MathJax.js?config=TeX-AMS_CHTML"
#: MathJax 2's configuration for Sphinx's markup: ``\(..\)`` and ``\[..\]`` inside
#: elements of class ``math`` only.
CONFIG = {"tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
                      "processEscapes": True, "ignoreClass": "document",
                      "processClass": "math|output_area"},
          "messageStyle": "none", "menuSettings": {"zoom": "None"}}


def local_mathjax() -> Path | None:
    """The first local MathJax 2 folder holding every file of :data:`SUBSET`."""
    for folder in CANDIDATES:
        if all((folder / part).exists() for part in SUBSET):
            return folder
    return None


def _copy_tree(src: Path, dst: Path) -> None:
    """Copy a file or folder, rewriting only the files that differ (symlinks followed)."""
    if src.is_dir():
        for path in src.rglob("*"):
            if path.is_file():
                _copy_tree(path, dst / path.relative_to(src))
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    if not dst.exists() or not filecmp.cmp(src, dst, shallow=False):
        shutil.copyfile(src, dst)


def copy_into_site(app, exception) -> None:
    """``build-finished``: the subset of the local MathJax into ``_static/mathjax``."""
    if exception is not None or app.builder.format != "html":
        return
    if not app.config.mathjax_path.startswith(LOCAL_PATH.split("/")[0] + "/"):
        return
    folder = local_mathjax()
    if folder is None:  # conf.py found it: it went away during the build
        logger.warning("the local MathJax copy disappeared during the build")
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    for part in SUBSET:
        _copy_tree(folder / part, target / part)


def setup(app):
    app.connect("build-finished", copy_into_site)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
