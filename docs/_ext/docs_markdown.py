"""The Markdown that oracleboost writes, as reStructuredText for the documentation.

The library writes Markdown in two places that the documentation shows as they are:
``benchmarks/README.md`` (its table) and each reproduction's ``summary.md``
(:func:`oracleboost.experiments.base.summary_markdown`).  Both use a small subset:
``#``/``##`` headings, paragraphs, ``- `` bullets, pipe tables (``\\|`` for a literal
pipe, as :func:`oracleboost._markdown.cell` escapes it), fenced code blocks, images,
links, ```code```, ``*em*`` and ``**strong**``.  This converts that subset and nothing
more: a construct outside it comes out as plain text, never as RST markup by accident
(every RST special character of plain text is escaped).
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: A link's or image's target, resolved by the caller: ``(target) -> RST`` for a link
#: given its text, e.g. a ``:download:`` role or a ``:doc:`` reference.
LinkRule = Callable[[str, str], str]

_INLINE = re.compile(
    r"(?P<code>`[^`]+`)"
    r"|(?P<link>\[(?P<text>[^\]]+)\]\((?P<target>[^)\s]+)\))"
    r"|(?P<strong>\*\*(?P<strong_text>[^*]+?)\*\*)"
    r"|(?P<em>\*(?P<em_text>[^*\s](?:[^*]*?[^*\s])?)\*)"
    r"|(?P<escape>\\(?P<escaped>[\\`*_{}\[\]()#+\-.!|]))"
)
_RST_SPECIAL = re.compile(r"([\\`*_|])")


def escape(text: str) -> str:
    """Plain text as RST text: every character RST could read as markup escaped, and
    ``--`` kept as two hyphens (Sphinx's smart quotes would make it a dash: ``--quick``
    is an option, not a dash)."""
    return _RST_SPECIAL.sub(r"\\\1", text).replace("--", "\\-\\-")


_EDGE = "\x00"  # where inline markup meets its neighbours (see _separate)


def _markup(rst: str) -> str:
    return f"{_EDGE}{rst}{_EDGE}"


def _separate(text: str) -> str:
    """Inline markup must not touch a word character in RST: where it meets one, put an
    escaped space between them (which RST drops from the output); elsewhere nothing."""
    text = re.sub(rf"^{_EDGE}|{_EDGE}$|(?<=\s){_EDGE}|{_EDGE}(?=\s)", "", text)
    return text.replace(_EDGE * 2, "\\ ").replace(_EDGE, "\\ ")


def external_link(text: str, target: str) -> str:
    """The default link rule: an anonymous hyperlink (relative targets left as given)."""
    return f"`{escape(text)} <{target}>`__"


def inline(text: str, link: LinkRule = external_link) -> str:
    """One line of Markdown inline markup as RST inline markup."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(escape(text[pos:m.start()]))
        pos = m.end()
        if m["code"]:
            out.append(_markup(f"``{m['code'][1:-1]}``"))
        elif m["link"]:
            out.append(_markup(link(m["text"], m["target"])))
        elif m["strong"]:
            out.append(_markup(f"**{escape(m['strong_text'])}**"))
        elif m["em"]:
            out.append(_markup(f"*{escape(m['em_text'])}*"))
        else:
            out.append(escape(m["escaped"]))
    out.append(escape(text[pos:]))
    return _separate("".join(out).strip())


def _cells(line: str) -> list[str]:
    """A table row's cells; ``\\|`` is a pipe inside a cell, not a border."""
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return [c.strip() for c in re.split(r"(?<!\\)\|", row)]


def table(lines: list[str], link: LinkRule = external_link) -> list[str]:
    """A pipe table (header, ``|---|`` rule, rows) as an RST ``list-table``."""
    rows = []
    for line in lines:
        cells = _cells(line)
        if all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue  # the header rule
        rows.append([inline(c, link) or "\\" for c in cells])
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in rows:
        out.append(f"   * - {row[0]}")
        out.extend(f"     - {c}" for c in row[1:])
    return out


def _plain(line: str) -> bool:
    """Whether a line continues a paragraph (not blank, not a block of its own)."""
    s = line.strip()
    return bool(s) and not (s.startswith(("#", "|", "- ", "```", "![")))


def to_rst(markdown: str, link: LinkRule = external_link,
           image: Callable[[str, str], list[str]] | None = None) -> str:
    """A Markdown document of the subset above as an RST document.

    ``link(text, target)`` renders links; ``image(alt, target)`` returns the lines of an
    image directive (default: ``.. image:: target``).  ``#`` is the page title, ``##``
    its sections.
    """
    if image is None:
        def image(alt: str, target: str) -> list[str]:
            return [f".. image:: {target}", f"   :alt: {alt}"]

    lines = markdown.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):  # a fenced block, kept verbatim
            language = stripped[3:].strip() or "text"
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i])
                i += 1
            out += [f".. code-block:: {language}", ""]
            out += [f"   {b}".rstrip() for b in body] + [""]
            i += 1
            continue
        heading = re.match(r"(#{1,2})\s+(.*)", stripped)
        if heading:
            title = inline(heading[2], link)
            rule = "=" if len(heading[1]) == 1 else "-"
            out += [title, rule * max(len(title), 4), ""]
        elif re.fullmatch(r"!\[[^\]]*\]\([^)\s]+\)", stripped):
            alt, target = re.fullmatch(r"!\[([^\]]*)\]\(([^)\s]+)\)", stripped).groups()
            out += image(alt, target) + [""]
        elif stripped.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(lines[i])
                i += 1
            out += table(rows, link) + [""]
            continue
        elif stripped.startswith("- "):
            out.append(f"- {inline(stripped[2:], link)}")
            if i + 1 >= len(lines) or not lines[i + 1].strip().startswith("- "):
                out.append("")
        elif stripped:  # a paragraph: this line and the plain lines after it
            paragraph = [stripped]
            while i + 1 < len(lines) and _plain(lines[i + 1]):
                i += 1
                paragraph.append(lines[i].strip())
            out += [inline(" ".join(paragraph), link), ""]
        i += 1
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"
