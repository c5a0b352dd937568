"""The house's rooms stay recognisable (DESIGN): ``oracles`` and ``losses`` import
neither ``boosters`` nor each other, ``losses`` imports no data module, and boosters
learn what an oracle can do from the protocol, never by importing a concrete oracle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "oracleboost"


def _imports(path: Path) -> set[str]:
    """The oracleboost modules a file imports (relative imports resolved), at any depth
    of the file (imports inside functions count too)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    package = parts if path.name == "__init__.py" else parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {n for n in found if n.startswith("oracleboost")}


RULES = {
    "oracles": ("oracleboost.boosters", "oracleboost.losses", "oracleboost.experiments"),
    "losses": ("oracleboost.boosters", "oracleboost.oracles", "oracleboost.datasets",
               "oracleboost.experiments"),
    "boosters": ("oracleboost.oracles.stumps", "oracleboost.oracles.sklearn",
                 "oracleboost.oracles.lightgbm", "oracleboost.oracles.matrix",
                 "oracleboost.oracles.cache", "oracleboost.experiments", "oracleboost.grid",
                 "oracleboost.cli"),
}


@pytest.mark.parametrize("room", RULES)
def test_a_room_imports_only_what_the_design_allows(room):
    offending = {}
    for path in sorted((PACKAGE / room).rglob("*.py")):
        bad = sorted(n for n in _imports(path)
                     if any(n == f or n.startswith(f + ".") for f in RULES[room]))
        if bad:
            offending[str(path.relative_to(PACKAGE))] = bad
    assert not offending, offending


def test_the_check_sees_imports():
    """The scan finds relative and absolute imports, inside functions too."""
    found = _imports(PACKAGE / "boosters" / "base.py")
    assert "oracleboost.oracles.defaults" in found
    assert "oracleboost.boosters.loop" in found
