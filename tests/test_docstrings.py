"""Every public name of ``oracleboost.boosters``, ``.oracles`` and ``.losses`` (their
``__all__``) has a docstring, and so has each of its public methods and properties
(issue 23: the API reference renders them; a method without one is an empty entry).

A method counts as documented when Sphinx would show a docstring for it: its own, or
the one it inherits from the oracleboost class it overrides (``inspect.getdoc``, as
autodoc's ``autodoc_inherit_docstrings``).  Members defined outside oracleboost
(scikit-learn's ``get_params``, ``str``'s methods on a ``StrEnum``) are their owners' to
document and are not listed by the API pages either (``docs/conf.py``).
"""

from __future__ import annotations

import importlib
import inspect

import pytest

MODULES = ("oracleboost.boosters", "oracleboost.oracles", "oracleboost.losses")


def _documented(obj: object) -> bool:
    return bool((inspect.getdoc(obj) or "").strip())


def _public_members(cls: type) -> list[tuple[str, object]]:
    """``(name, function or property)`` for the public methods and properties that
    ``cls`` has from oracleboost code (its own or inherited)."""
    members = []
    for name in dir(cls):
        if name.startswith("_"):
            continue
        raw = inspect.getattr_static(cls, name)
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
        if isinstance(raw, property):
            target = raw.fget
        elif inspect.isfunction(raw):
            target = raw
        else:
            continue  # data, enum members, descriptors of other libraries
        if not (getattr(target, "__module__", None) or "").startswith("oracleboost"):
            continue
        members.append((name, raw if isinstance(raw, property) else getattr(cls, name)))
    return members


def _undocumented(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue  # registries and constants: documented on the page that lists them
        if not _documented(obj):
            missing.append(name)
        if inspect.isclass(obj):
            missing += [f"{name}.{m}" for m, member in _public_members(obj)
                        if not _documented(member)]
    return missing


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_name_and_method_has_a_docstring(module_name):
    missing = _undocumented(module_name)
    assert not missing, f"{module_name}: no docstring for {missing}"


def test_the_check_sees_the_classifiers_predict_methods():
    """Issue 23 named them: ``predict`` and ``staged_predict`` of every classifier (they
    come from the classifier mixin, so the check must follow inheritance)."""
    from oracleboost.boosters import BOOSTERS

    classes = {spec.estimator for spec in BOOSTERS.values()}
    assert len(classes) >= 6
    for cls in classes:
        names = dict(_public_members(cls))
        for method in ("fit", "predict", "staged_predict"):
            assert method in names, (cls.__name__, method)
            assert _documented(names[method]), (cls.__name__, method)


# -- the API reference's lists (docs/api/*.rst) ------------------------------------------

from pathlib import Path  # noqa: E402

API = Path(__file__).resolve().parents[1] / "docs" / "api"
#: Modules documented name by name, besides :data:`MODULES`: only what their lists name.
LISTED_ONLY = {"oracleboost.export": ["to_lightgbm", "lightgbm_feature_names"],
               "oracleboost.plotting": ["plot_history", "plot_importance", "plot_margins",
                                        "staged_normalised_margins"],
               "oracleboost.model_json": ["to_json", "from_json", "save_model", "load_model"],
               "oracleboost.persistence": ["trusted_types", "dump", "load"]}


def _autosummary_entries(path: Path) -> list[tuple[str, str]]:
    """``(module, name)`` for each entry of each ``autosummary`` list of an API page,
    the module being the ``currentmodule`` in force."""
    entries, module, inside = [], None, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(".. currentmodule::"):
            module, inside = line.split("::", 1)[1].strip(), False
        elif line.startswith(".. autosummary::"):
            inside = True
        elif inside and line.strip() and not line.startswith(" "):
            inside = False
        elif inside and line.strip() and not line.strip().startswith(":"):
            entries.append((module, line.strip()))
    return entries


def _sidebar_pages() -> list[str]:
    """The API pages in the site's navigation: the entries of api/index.rst's toctree."""
    lines = (API / "index.rst").read_text(encoding="utf-8").splitlines()
    start = lines.index(".. toctree::")
    return [line.strip() for line in lines[start + 1:]
            if line.strip() and not line.strip().startswith(":")]


def test_the_api_pages_list_every_public_name_once():
    listed: dict[tuple[str, str], list[str]] = {}
    for path in sorted(API.glob("*.rst")):
        for entry in _autosummary_entries(path):
            listed.setdefault(entry, []).append(path.name)
    twice = {f"{m}.{n}": pages for (m, n), pages in listed.items() if len(pages) > 1}
    assert not twice, f"listed more than once: {twice}"
    expected = {(m, n) for m in MODULES for n in importlib.import_module(m).__all__}
    expected |= {(m, n) for m, names in LISTED_ONLY.items() for n in names}
    missing = sorted(f"{m}.{n}" for m, n in expected - set(listed))
    assert not missing, f"public names on no API page: {missing}"
    unknown = sorted(f"{m}.{n}" for m, n in set(listed) - expected)
    assert not unknown, f"API pages list names that are not public there: {unknown}"


def test_the_sidebar_shows_the_users_names_and_extending_is_a_page_of_its_own():
    pages = _sidebar_pages()
    assert {"boosters", "steps", "oracles", "losses", "export"} <= set(pages)
    extending = (API / "extending.rst").read_text(encoding="utf-8")
    # not in the navigation: reached from the API index's text
    assert "extending" not in pages and extending.startswith(":orphan:")
    assert ":doc:`extending`" in (API / "index.rst").read_text(encoding="utf-8")
    shown = {name for page in pages for _, name in _autosummary_entries(API / f"{page}.rst")}
    for internal in ("StepState", "RoundView", "DIVERGENCE_FACTOR", "seed_generator",
                     "reraise_interrupts", "BaseBooster", "BoundOracle"):
        assert internal not in shown, internal
    # the estimators are all in the navigation
    from oracleboost.boosters import BOOSTERS

    assert {spec.estimator.__name__ for spec in BOOSTERS.values()} <= shown
