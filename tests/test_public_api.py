"""The public API is typed (issue #20): every public signature is annotated, the
annotations name things that exist, and the package ships its ``py.typed`` marker (PEP 561).

Public: every module under ``oracleboost`` whose dotted name has no part starting with an
underscore, and in it every name of its ``__all__`` that the module defines itself (a
re-export is checked where it is defined).  For a function, and for every public method
of a class (plus ``__init__`` and ``__call__``), each parameter but ``self``/``cls``,
``*args`` and ``**kwargs`` must be annotated, and so must the return (except
``__init__``'s).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

import oracleboost
import oracleboost.oracles as oracles_module

# The boosters are being restructured and are typed in a separate change; the lead removes
# this exclusion when that lands.
NOT_YET = ()

#: Methods checked besides the public ones.
_DUNDERS = ("__init__", "__call__")


def _excluded(name: str) -> bool:
    return any(name == n or name.startswith(n + ".") for n in NOT_YET)


def _public_modules() -> list[str]:
    names = ["oracleboost"]
    for info in pkgutil.walk_packages(oracleboost.__path__, "oracleboost."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        if not _excluded(info.name):
            names.append(info.name)
    return names


MODULES = _public_modules()


def _function(value: object) -> Callable | None:
    """The plain function behind a class attribute (methods, static and class methods)."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    return value if inspect.isfunction(value) else None


def _signatures(module: ModuleType) -> Iterator[tuple[str, Callable]]:
    """``(qualified name, function)`` for every public signature ``module`` defines."""
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name)
        if getattr(obj, "__module__", None) != module.__name__:
            continue  # a re-export, or a constant
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj):
            for attr, value in vars(obj).items():
                fn = _function(value)
                if fn is not None and (not attr.startswith("_") or attr in _DUNDERS):
                    yield f"{name}.{attr}", fn


def _missing(qualname: str, fn: Callable) -> list[str]:
    sig = inspect.signature(fn)
    missing = [
        p.name
        for p in sig.parameters.values()
        if p.name not in ("self", "cls")
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        and p.annotation is inspect.Parameter.empty
    ]
    if sig.return_annotation is inspect.Signature.empty and not qualname.endswith(".__init__"):
        missing.append("return")
    return missing


def _type_checking_names(module: ModuleType) -> dict[str, object]:
    """The names a module imports under ``if TYPE_CHECKING:`` (optional dependencies such
    as matplotlib), imported here so that annotations naming them can be resolved."""
    source = Path(module.__file__).read_text(encoding="utf-8")
    names: dict[str, object] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            block = ast.Module(body=node.body, type_ignores=[])
            namespace = dict(vars(module))
            exec(compile(block, module.__file__, "exec"), namespace)  # imports only
            names.update({k: v for k, v in namespace.items() if k not in vars(module)})
    return names


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_signature_is_annotated(module_name):
    module = importlib.import_module(module_name)
    missing = {q: m for q, fn in _signatures(module) if (m := _missing(q, fn))}
    assert not missing, f"{module_name}: unannotated parameters or returns: {missing}"


@pytest.mark.parametrize("module_name", MODULES)
def test_annotations_name_importable_things(module_name):
    """Documentation tools evaluate the annotations: a typo there fails here."""
    module = importlib.import_module(module_name)
    localns = _type_checking_names(module)
    broken = {}
    for qualname, fn in _signatures(module):
        try:
            typing.get_type_hints(fn, localns=localns)
        except Exception as exc:  # NameError, AttributeError, TypeError of a bad union
            broken[qualname] = f"{type(exc).__name__}: {exc}"
    assert not broken, f"{module_name}: annotations that do not evaluate: {broken}"


def test_the_walk_sees_the_public_modules():
    """The check covers the rooms it should, and skips only what NOT_YET names."""
    for name in ("oracleboost.oracles.base", "oracleboost.losses.margin",
                 "oracleboost.datasets.planning", "oracleboost.diagnostics",
                 "oracleboost.experiments.base", "oracleboost.grid", "oracleboost.cli"):
        assert name in MODULES
    assert not any(_excluded(m) for m in MODULES)
    assert not any(part.startswith("_") for m in MODULES for part in m.split(".")[1:])
    n_signatures = sum(
        1 for m in MODULES for _ in _signatures(importlib.import_module(m))
    )
    assert n_signatures > 100


def test_the_package_ships_py_typed():
    """PEP 561: type checkers read the hints of an installed package only with the marker
    (``[tool.setuptools.package-data]`` puts it in the wheel)."""
    marker = Path(oracleboost.__file__).parent / "py.typed"
    assert marker.is_file()


# -- the top-level names: ``from oracleboost import CoordinateBoostingClassifier`` ---------

#: The modules whose public names the top level re-exports.
_SOURCES = ("oracleboost.boosters", "oracleboost.oracles", "oracleboost.losses",
            "oracleboost.model_json", "oracleboost.export")


def _home(name: str) -> ModuleType:
    """The one public module (of :data:`_SOURCES`) whose ``__all__`` has ``name``."""
    homes = [m for m in map(importlib.import_module, _SOURCES) if name in m.__all__]
    assert len(homes) == 1, f"{name}: public in {[m.__name__ for m in homes]}"
    return homes[0]


@pytest.mark.parametrize("name", [n for n in oracleboost.__all__ if n != "__version__"])
def test_every_top_level_name_is_its_submodules_object(name):
    assert getattr(oracleboost, name) is getattr(_home(name), name)


def test_the_top_level_has_every_booster_oracle_and_loss():
    from oracleboost.boosters import BOOSTERS, BaseBooster
    from oracleboost.losses import LOSSES, STRUCTURED_LOSSES
    from oracleboost.oracles import Oracle

    exported = {getattr(oracleboost, n) for n in oracleboost.__all__ if n != "__version__"}
    boosters = {spec.estimator for spec in BOOSTERS.values()}
    assert len(boosters) >= 7 and all(issubclass(b, BaseBooster) for b in boosters)
    assert boosters <= exported, boosters - exported
    oracles = {getattr(oracles_module, n) for n in oracles_module.__all__}
    oracle_classes = {o for o in oracles if isinstance(o, type) and issubclass(o, Oracle)}
    assert len(oracle_classes) >= 10
    assert oracle_classes <= exported, oracle_classes - exported
    losses = {*LOSSES.values(), *STRUCTURED_LOSSES.values()}
    assert losses <= exported, losses - exported
    assert {"save_model", "load_model", "__version__"} <= set(oracleboost.__all__)


def test_all_is_what_the_lazy_table_imports():
    """``__all__`` is a literal (for tools that read the source): each of its names is
    one the package imports on demand, and each name it imports is in ``__all__``."""
    assert len(oracleboost.__all__) == len(set(oracleboost.__all__))
    assert set(oracleboost.__all__) == {"__version__", *oracleboost._LAZY}


def test_star_import_and_dir_list_the_public_names():
    namespace: dict[str, object] = {}
    exec("from oracleboost import *", namespace)
    assert set(oracleboost.__all__) <= set(namespace)
    assert namespace["StumpOracle"] is oracles_module.StumpOracle
    assert set(oracleboost.__all__) <= set(dir(oracleboost))


def test_an_unknown_name_raises_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="no attribute 'CoordinateBoostingClassifer'"):
        oracleboost.CoordinateBoostingClassifer  # noqa: B018 (a typo, on purpose)
    with pytest.raises(ImportError, match="NoSuchOracle"):
        exec("from oracleboost import NoSuchOracle", {})
    assert not hasattr(oracleboost, "_no_such_private_name")


def test_import_oracleboost_loads_no_heavy_module():
    """The command line imports this package: its start must not pay for scikit-learn,
    numba, LightGBM or NumPy (a subprocess, since this one has them all loaded)."""
    heavy = ("numpy", "scipy", "sklearn", "numba", "lightgbm", "pandas")
    code = ("import sys, oracleboost; "
            f"print(','.join(m for m in {heavy!r} if m in sys.modules)); "
            "print(oracleboost.__version__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    loaded, version = done.stdout.splitlines()
    assert loaded == "", f"import oracleboost loaded {loaded}"
    assert version == oracleboost.__version__
    # and the first read of a name imports what it needs
    code = ("import sys, oracleboost; oracleboost.StumpOracle; "
            "print('oracleboost.oracles' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "True"
