"""The package's layers import one way (DESIGN, "Layout").

Every module of the package sits in one layer of :data:`LAYERS`; a module imports only
modules of its own layer or of the layers listed before it, and the modules' imports form
no cycle.  Imports inside functions count: a function-level import is still a dependency,
only a later one.  Imports under ``if TYPE_CHECKING:`` do not: they never run (they name
types for annotations).  Beside the table:

* a booster's folder imports no other booster's folder (what two boosters share lives in
  a lower layer);
* no module imports another package's private name (``_name``) from it: what a module of
  another folder needs is public there;
* the engine and the boosters never name Dask: a fit on a cluster reaches them through the
  backend seam (:mod:`oracleboost.engine.backends`), whose table names, as data, the module
  of each backend; those modules sit above the boosters.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "oracleboost"

#: The layers, lowest first: ``(name, module prefixes)``.  A module belongs to the layer
#: of its longest matching prefix (``oracleboost`` itself matches only the package's
#: ``__init__``).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("helpers", ("oracleboost._typing", "oracleboost._validation", "oracleboost._warnings",
                 "oracleboost._files", "oracleboost._fingerprint", "oracleboost._numerics",
                 "oracleboost._markdown", "oracleboost._html_repr", "oracleboost._version",
                 "oracleboost._running_state")),
    ("rows", ("oracleboost.rows",)),
    ("oracles", ("oracleboost.oracles",)),
    ("losses", ("oracleboost.losses",)),
    ("optim", ("oracleboost.optim", "oracleboost.diagnostics")),
    ("engine", ("oracleboost.engine",)),
    ("export", ("oracleboost.export",)),
    ("boosters", ("oracleboost.boosters",)),
    ("distributed", ("oracleboost.distributed", "oracleboost.worker_memory")),
    ("cuda", ("oracleboost.cuda",)),
    ("applications", ("oracleboost.model_json", "oracleboost.persistence", "oracleboost.datasets",
                      "oracleboost.plotting",
                      "oracleboost.experiments", "oracleboost.grid", "oracleboost.cli",
                      "oracleboost._cli_support", "oracleboost.__main__", "oracleboost")),
]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> int:
    best, found = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix if prefix == "oracleboost" else \
                module == prefix or module.startswith(prefix + ".")
            if matches and len(prefix) > best:
                best, found = len(prefix), i
    if found is None:
        raise AssertionError(f"{module} is in no layer of LAYERS")
    return found


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:`` (never run)."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            skipped.update(id(n) for child in node.body for n in ast.walk(child))
    return skipped


def _imports(path: Path) -> list[tuple[str, str | None]]:
    """``(module, name)`` for every import of the package's modules that the file runs,
    at any depth (relative imports resolved; ``name`` is the imported name of a
    ``from m import name`` whose ``m.name`` is no module, else None)."""
    module = _module_name(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            for alias in node.names:
                full = f"{name}.{alias.name}"
                found.append((full, None) if full in MODULES else (name, alias.name))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
    return [(m, n) for m, n in found if m == "oracleboost" or m.startswith("oracleboost.")]


GRAPH = {m: sorted({i for i, _ in _imports(p)} & set(MODULES)) for m, p in MODULES.items()}


def test_every_module_has_a_layer():
    for module in MODULES:
        _layer(module)


def test_a_module_imports_only_its_layer_and_the_ones_below():
    upward = {m: [i for i in imports if _layer(i) > _layer(m)]
              for m, imports in GRAPH.items()}
    upward = {m: [f"{i} ({LAYERS[_layer(i)][0]})" for i in found]
              for m, found in upward.items() if found}
    assert not upward, upward


def _cycle() -> list[str] | None:
    """One cycle of the import graph, or None (a depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in GRAPH[m]:
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        state[m] = 2
        stack.pop()
        return None

    for m in GRAPH:
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_imports_form_no_cycle():
    assert _cycle() is None, " -> ".join(_cycle() or [])


def _booster_folder(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) >= 4 and parts[1] == "boosters":
        return parts[2]
    return None


def test_a_booster_folder_imports_no_other_booster_folder():
    crossing = {m: [i for i in imports if _booster_folder(i) not in (None, _booster_folder(m))]
                for m, imports in GRAPH.items() if _booster_folder(m)}
    assert not {m: c for m, c in crossing.items() if c}


def _folder(module: str) -> str:
    return module.rsplit(".", 1)[0] if module in MODULES and \
        MODULES[module].name != "__init__.py" else module


def test_no_module_imports_another_folder_s_private_names():
    private = {}
    for m, path in MODULES.items():
        for module, name in _imports(path):
            if name and name.startswith("_") and not name.startswith("__") \
                    and _folder(module) != _folder(m):
                private.setdefault(m, []).append(f"{module}.{name}")
    assert not private, private


def test_the_engine_and_the_boosters_never_name_dask():
    naming = {}
    for m, path in MODULES.items():
        if _layer(m) in (_layer("oracleboost.engine"), _layer("oracleboost.boosters")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    names = [a.name for a in node.names] + [getattr(node, "module", "") or ""]
                    if any(n.split(".")[0] in ("dask", "distributed") for n in names):
                        naming.setdefault(m, []).append(ast.unparse(node))
    assert not naming, naming


def test_the_backends_table_names_modules_above_the_boosters():
    from oracleboost.engine.backends import BACKENDS

    for entry in BACKENDS:
        assert entry.module in MODULES, entry
        assert _layer(entry.module) > _layer("oracleboost.boosters"), entry


def test_the_checks_see_what_they_should():
    """The scan resolves relative imports, sees imports inside functions, skips those
    under TYPE_CHECKING, and finds a cycle where there is one."""
    source = PACKAGE / "engine" / "base.py"
    found = {m for m, _ in _imports(source)}
    assert "oracleboost.engine.loop" in found
    text = source.read_text(encoding="utf-8")
    assert "    from " in text  # it has function-level imports, which the scan keeps
    GRAPH["oracleboost.rows.blocks"].append("oracleboost.engine.base")
    try:
        assert _cycle() is not None
    finally:
        GRAPH["oracleboost.rows.blocks"].remove("oracleboost.engine.base")


@pytest.mark.parametrize("room", ["oracles", "losses"])
def test_the_rooms_stay_recognisable(room):
    """``oracles`` and ``losses`` import neither each other's room nor anything above
    (the table says so; this names the rooms of the design card)."""
    for m, imports in GRAPH.items():
        if m.startswith(f"oracleboost.{room}"):
            assert all(_layer(i) <= _layer(m) for i in imports), m
