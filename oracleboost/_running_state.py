"""The running state of a fit as plain data, and back.

A booster fitted with ``warm_start=True`` keeps, beside its model, the state its next fit
continues from (the training rows' scores and weights, the solver's columns, the seed
generator): objects of the algorithms' own working classes.  A pickle or a ``skops.io``
file of the booster holds that state as plain data instead (dicts of strings, lists,
tuples, numbers, NumPy arrays and generators, and the library's public objects: losses,
hypotheses), so that what a stored model asks its loader to trust is the library's
documented public types (:func:`oracleboost.persistence.trusted_types`), and renaming or
moving a working class breaks no stored file.

A working class joins with :func:`stored_as`, under a name of its own that stays when the
class moves.  :func:`to_plain` turns each of its objects into ``{"__running__": name,
"fields": {...}}`` (its ``__getstate__``, or its fields, each turned in the same way), and
:func:`from_plain` makes the object again (its ``__setstate__``, or its fields set as
they were), looking the name up among the joined classes only.  An object reached twice
is made once: the second place holds ``{"__running_ref__": k}``, the k-th object made.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["stored_as", "to_plain", "from_plain", "running_classes"]

_T = TypeVar("_T", bound=type)

#: name -> class, and class -> name, of the working classes joined by :func:`stored_as`.
_CLASSES: dict[str, type] = {}
_NAMES: dict[type, str] = {}

_TAG, _REF = "__running__", "__running_ref__"


def stored_as(name: str) -> Callable[[_T], _T]:
    """A class decorator: the class's objects are stored as plain data named ``name``
    (:func:`to_plain`), and made again from it (:func:`from_plain`).  ``name`` is the
    stored files' name for the class: keep it when the class is renamed or moved."""
    def join(cls: _T) -> _T:
        if _CLASSES.get(name, cls) is not cls:
            raise ValueError(f"two running-state classes are stored as {name!r}: "
                             f"{_CLASSES[name].__qualname__} and {cls.__qualname__}")
        if getattr(cls, "__slots__", None) and not issubclass(cls, tuple):
            raise TypeError(f"{cls.__qualname__} has __slots__; stored_as reads __dict__")
        _CLASSES[name], _NAMES[cls] = cls, name
        return cls
    return join


def running_classes() -> dict[str, type]:
    """The working classes joined so far, by their stored name."""
    return dict(_CLASSES)


def to_plain(value: Any) -> Any:
    """``value`` with every object of a joined class, at any depth of dicts, lists and
    tuples, turned into plain data; everything else is kept as it is (the same object)."""
    return _Plain().encode(value)


def from_plain(value: Any) -> Any:
    """What :func:`to_plain` was given, made again from its answer.

    Raises
    ------
    ValueError
        When the data names a class that was not joined (:func:`stored_as`).
    """
    return _Made().decode(value)


class _Plain:
    def __init__(self) -> None:
        self.seen: dict[int, int] = {}  # id(obj) -> its number, in the order met
        self.keep: list[Any] = []  # the objects numbered (their ids stay theirs)

    def encode(self, v: Any) -> Any:
        cls = type(v)
        if cls is dict:
            return {k: self.encode(x) for k, x in v.items()}
        if cls is list:
            return [self.encode(x) for x in v]
        if cls is tuple:
            return tuple(self.encode(x) for x in v)
        name = _NAMES.get(cls)
        if name is None:
            return v
        if id(v) in self.seen:
            return {_REF: self.seen[id(v)]}
        self.seen[id(v)] = len(self.keep)
        self.keep.append(v)
        if issubclass(cls, tuple):  # a NamedTuple: its fields by name
            fields = v._asdict()  # type: ignore[attr-defined]
        else:
            fields = v.__getstate__()
            fields = {} if fields is None else fields
        return {_TAG: name, "fields": {k: self.encode(x) for k, x in fields.items()}}


class _Made:
    def __init__(self) -> None:
        self.made: list[Any] = []

    def decode(self, v: Any) -> Any:
        cls = type(v)
        if cls is list:
            return [self.decode(x) for x in v]
        if cls is tuple:
            return tuple(self.decode(x) for x in v)
        if cls is not dict:
            return v
        if _REF in v:
            k = v[_REF]
            if type(k) is not int or not 0 <= k < len(self.made):
                raise ValueError(f"the stored running state refers to object {k!r}, which "
                                 "it has not made")
            made = self.made[k]
            if made is None:  # an object inside itself: no running state is
                raise ValueError("the stored running state holds an object inside itself")
            return made
        if _TAG not in v:
            return {k: self.decode(x) for k, x in v.items()}
        made = _CLASSES.get(v[_TAG])
        if made is None:
            raise ValueError(f"the stored running state names {v[_TAG]!r}, which is not a "
                             "running-state class of this library")
        if type(v.get("fields")) is not dict:
            raise ValueError(f"the stored running state's {v[_TAG]!r} has no fields")
        k = len(self.made)
        self.made.append(None)  # numbered before its fields, as to_plain numbered it
        fields = {name: self.decode(x) for name, x in v["fields"].items()}
        if issubclass(made, tuple):
            obj = made(**fields)
        else:
            obj = made.__new__(made)
            setstate = getattr(obj, "__setstate__", None)
            if setstate is not None:
                setstate(fields)
            else:  # (a frozen dataclass too: its fields set as the pickle module does)
                vars(obj).update(fields)
        self.made[k] = obj
        return obj
