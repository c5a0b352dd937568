"""Screenshots of the built documentation in headless Chromium (run by a developer, not CI).

Serves the built site (``docs/_build/html`` by default) on ``127.0.0.1`` at a free
port, opens the front page and one API page in headless Chromium with no network but
that server, and writes one PNG of each (default ``docs/_build/screenshots/``, ignored
by git).  Look at them: the front page should show the navigation bar and the
reproduced Telgarsky 2013 Figure 2; the API page of ``CoordinateBoostingClassifier``
the navigation, the sidebar and the booster's round in typeset mathematics (MathJax, from
the site's own copy when the build found one: see ``_ext/docs_mathjax.py``).

Before the screenshots the script checks, from the HTML, that each page has its
navigation, that the front page's figure is a file of the site, and that the API page
loads MathJax from the site itself (not from a CDN, which an offline reader cannot
reach); it exits with 1 when a check fails.

Usage (from the repository root, after the README's build command)::

    apt-get install chromium libjs-mathjax     # Debian; once
    python -m sphinx -W -b html docs docs/_build/html
    python docs/screenshot.py [--html DIR] [--out DIR] [--chromium PATH]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

DOCS = Path(__file__).resolve().parent
#: (PNG name, page, window height): the front page and one API page.
PAGES = [
    ("front.png", "index.html", 1800),
    ("api.png", "api/generated/oracleboost.boosters.CoordinateBoostingClassifier.html", 1600),
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def check_html(html: Path) -> list[str]:
    """What the pages' HTML must hold for the screenshots to show what they should."""
    problems = []
    for name, page, _ in PAGES:
        text = (html / page).read_text(encoding="utf-8")
        if "bd-header" not in text or "navbar" not in text:
            problems.append(f"{page}: no navigation bar")
        if name == "front.png":
            figure = re.search(r'<img[^>]+src="([^"]*figure[^"]*\.png)"', text)
            if figure is None or not (html / figure[1]).is_file():
                problems.append(f"{page}: no reproduced figure (build with results)")
        if name == "api.png":
            if 'class="math' not in text:
                problems.append(f"{page}: no formula")
            script = re.search(r'<script[^>]+src="([^"]*MathJax[^"]*|[^"]*mathjax[^"]*)"', text)
            if script is None:
                problems.append(f"{page}: MathJax is not loaded")
            elif "://" in script[1]:
                problems.append(f"{page}: MathJax comes from {script[1]} (install libjs-mathjax "
                                "and build again to draw formulas offline)")
            elif not (html / page).parent.joinpath(script[1].split("?")[0]).resolve().is_file():
                problems.append(f"{page}: {script[1]} is not in the site")
    return problems


def shoot(chromium: str, url: str, png: Path, height: int) -> None:
    """One headless Chromium screenshot of ``url`` (a fresh profile, no network but the
    local server: background services off), after the page's scripts have run."""
    with tempfile.TemporaryDirectory(prefix="oracleboost-chromium-") as profile:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--hide-scrollbars",
               f"--user-data-dir={profile}", f"--window-size=1280,{height}",
               # let MathJax typeset before the shot (virtual time: no real wait)
               "--virtual-time-budget=15000", f"--screenshot={png}", url]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    if done.returncode != 0 or not png.is_file():
        raise RuntimeError(f"chromium failed on {url}:\n{done.stderr[-2000:]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--html", type=Path, default=DOCS / "_build" / "html",
                        help="the built site (default docs/_build/html)")
    parser.add_argument("--out", type=Path, default=DOCS / "_build" / "screenshots",
                        help="where the PNGs go (default docs/_build/screenshots)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args(argv)
    if not (args.html / "index.html").is_file():
        parser.error(f"--html: no built site in {args.html} (build it first)")
    if not Path(args.chromium).is_file():
        parser.error(f"--chromium: {args.chromium} not found (apt-get install chromium)")

    problems = check_html(args.html)
    for p in problems:
        print(f"check: {p}", file=sys.stderr)

    handler = functools.partial(_QuietHandler, directory=str(args.html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        port = server.server_address[1]
        for name, page, height in PAGES:
            url = f"http://127.0.0.1:{port}/{page}"
            shoot(args.chromium, url, args.out / name, height)
            print(f"{args.out / name}  ({url})")
    finally:
        server.shutdown()
        server.server_close()
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
