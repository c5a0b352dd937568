"""A fitted booster as plain JSON text, read back without pickle (issue 22).

:func:`save_model` / :func:`load_model` (and the boosters' ``save_model`` and
``load_model``) write and read a model as JSON: its parameters (the oracle and loss
included), its fitted attributes (``classes_``, ``history_``, ``stop_reason_``, …) and
its model (``ensemble_``: the intercept, every hypothesis with its fields, the
coefficients and the rounds' log), with the format's version and the library's.

The text is data only.  Loading creates objects of the classes it names only where the
class belongs to oracleboost (or, for parameters such as ``SklearnOracle``'s
estimator, to scikit-learn), restoring their fields without calling any of their
methods but ``__setstate__``; numbers and arrays come back bit for bit (floats are
written in Python's shortest round-trip form, NaN and infinities by name), so the
loaded booster predicts as the saved one did, bit for bit.

What is not written: the running state ``warm_start`` continues from (a loaded model
predicts; ``warm_start=True`` then fits anew, as after a fit on a cluster;
``skops.io`` keeps that state), and callbacks.  What cannot be written is refused,
naming where it sits: an object of a class outside oracleboost and scikit-learn (a
``joblib.Memory`` as ``CachedOracle``'s ``memory``: give a path; a weak learner of
another library through ``SklearnOracle``: use ``skops.io``).

The format, version 1::

    {"format": "oracleboost-model", "format_version": 1, "library_version": "0.1.0",
     "estimator": <value>}

where a value is JSON's own (null, true/false, numbers, strings, lists, objects with
string keys) or one of the tagged forms ``{"__float__": "nan" | "inf" | "-inf"}``,
``{"__tuple__": [...]}``, ``{"__items__": [[key, value], ...]}`` (a dict whose keys are
not strings), ``{"__ndarray__": dtype, "shape": [...], "data": [...]}``,
``{"__enum__": "module:Class", "value": ...}``, ``{"__random_state__": [...]}`` (a
NumPy ``RandomState``'s state) and ``{"__object__": "module:Class", "state": {...}}``
(with ``"args"`` for an extension type made from arguments, scikit-learn's ``Tree``).
"""

from __future__ import annotations

import enum
import importlib
import json
import math
import os
from typing import Any

import numpy as np

from . import __version__

__all__ = ["FORMAT_VERSION", "to_json", "from_json", "save_model", "load_model"]

#: The version of the format this library writes; it reads this one and earlier ones.
FORMAT_VERSION = 1
_FORMAT = "oracleboost-model"
#: The packages whose classes a file may name.
_TRUSTED = ("oracleboost.", "sklearn.")
#: Attributes of a booster that are not written (see the module docstring).
_NOT_WRITTEN = ("_state_", "_callback_fit_ctx", "_skl_callbacks_to_teardown",
                "_skl_callbacks")


class _Unwritable(TypeError):
    """A value that has no JSON form here; carries where it was found."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where, self.what = where, what


def to_json(estimator: Any) -> str:
    """The fitted (or unfitted) ``estimator`` as JSON text (see the module docstring).

    Raises
    ------
    TypeError
        Where a value cannot be written, naming its place in the estimator
        (``ensemble_.hypotheses[3].estimator``, say) and why.
    """
    try:
        body = _encode(estimator, type(estimator).__name__, top=True)
    except _Unwritable as exc:
        raise TypeError(
            f"{type(estimator).__name__} cannot be written as JSON: {exc.where} {exc.what}"
        ) from None
    return json.dumps({"format": _FORMAT, "format_version": FORMAT_VERSION,
                       "library_version": __version__, "estimator": body},
                      allow_nan=False, indent=1)


def from_json(text: str) -> Any:
    """The estimator :func:`to_json` wrote.

    Raises
    ------
    ValueError
        When the text is not an oracleboost model, or comes from a newer format version
        than this library reads, or names a class outside oracleboost and scikit-learn.
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not an oracleboost model: the text is not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
        raise ValueError(f"not an oracleboost model: no \"format\": \"{_FORMAT}\" field")
    version = doc.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ValueError(f"not an oracleboost model: format_version {version!r}")
    if version > FORMAT_VERSION:
        raise ValueError(
            f"the model was written in format version {version} (oracleboost "
            f"{doc.get('library_version', '?')}); this oracleboost ({__version__}) reads "
            f"versions up to {FORMAT_VERSION}: upgrade oracleboost to load it"
        )
    return _decode(doc["estimator"])


def save_model(estimator: Any, path: str | os.PathLike) -> None:
    """Write :func:`to_json` of ``estimator`` to ``path`` (UTF-8)."""
    text = to_json(estimator)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def load_model(path: str | os.PathLike) -> Any:
    """The estimator :func:`save_model` wrote to ``path``."""
    with open(path, encoding="utf-8") as f:
        return from_json(f.read())


# -- writing ------------------------------------------------------------------------------
def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _state_of(obj: Any, where: str = "") -> dict:
    getstate = getattr(obj, "__getstate__", None)
    state = getstate() if getstate is not None else None
    if state is None:  # object's default __getstate__ without slots returns None
        state = getattr(obj, "__dict__", None)
    if not isinstance(state, dict):
        raise _Unwritable(where, f"is a {_name(type(obj))}, whose state is not a dict of fields")
    return state


def _encode(v: Any, where: str, top: bool = False) -> Any:  # noqa: C901 - one case a type
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, enum.Enum):
        return {"__enum__": _trusted_name(type(v), where), "value": _encode(v.value, where)}
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if math.isfinite(x):
            return x
        return {"__float__": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, list):
        return [_encode(x, f"{where}[{i}]") for i, x in enumerate(v)]
    if isinstance(v, tuple) and type(v) is tuple:
        return {"__tuple__": [_encode(x, f"{where}[{i}]") for i, x in enumerate(v)]}
    if isinstance(v, dict) and type(v) is dict:
        if all(isinstance(k, str) and not k.startswith("__") for k in v):
            return {k: _encode(x, f"{where}[{k!r}]") for k, x in v.items()}
        return {"__items__": [[_encode(k, where), _encode(x, f"{where}[{k!r}]")]
                              for k, x in v.items()]}
    if isinstance(v, np.ndarray):
        return _encode_array(v, where)
    if type(v) is np.random.RandomState:  # a fitted estimator's generator: its state
        return {"__random_state__": _encode(v.get_state(legacy=True), where)}
    cls = type(v)
    name = _trusted_name(cls, where)
    if getattr(cls, "__reduce__", None) is not object.__reduce__ and not hasattr(v, "__dict__"):
        # an extension type (scikit-learn's Tree): made by its class from arguments
        made = v.__reduce__()
        if not (isinstance(made, tuple) and len(made) == 3 and made[0] is cls):
            raise _Unwritable(where, f"is a {name}, which JSON cannot hold")
        return {"__object__": name, "args": _encode(list(made[1]), f"{where}(args)"),
                "state": _encode(made[2], where)}
    state = _state_of(v, where)
    if top:
        state = {k: x for k, x in state.items() if k not in _NOT_WRITTEN}
    return {"__object__": name, "state": {
        k: _encode(x, f"{where}.{k}") for k, x in state.items()}}


def _trusted_name(cls: type, where: str) -> str:
    if not cls.__module__.startswith(_TRUSTED) and cls.__module__ not in ("oracleboost",):
        raise _Unwritable(where, f"is a {_name(cls)}, which JSON cannot hold (only "
                                 "oracleboost's and scikit-learn's objects, numbers, strings "
                                 "and arrays); skops.io can store it")
    return _name(cls)


def _encode_array(a: np.ndarray, where: str) -> dict:
    if a.dtype.kind in "biuf":
        flat = a.ravel().tolist()
        if a.dtype.kind == "f":
            flat = [x if math.isfinite(x) else _encode(x, where) for x in flat]
        return {"__ndarray__": a.dtype.str, "shape": list(a.shape), "data": flat}
    if a.dtype.kind in "UO":  # labels: strings (or numbers in an object array)
        flat = [_encode(x, f"{where}[{i}]") for i, x in enumerate(a.ravel().tolist())]
        return {"__ndarray__": "O" if a.dtype.kind == "O" else a.dtype.str,
                "shape": list(a.shape), "data": flat}
    if a.dtype.names is not None:  # a record array (scikit-learn's tree nodes)
        fields = a.dtype.fields
        layout = {"names": list(a.dtype.names),
                  "formats": [fields[n][0].str for n in a.dtype.names],
                  "offsets": [int(fields[n][1]) for n in a.dtype.names],
                  "itemsize": int(a.dtype.itemsize)}
        return {"__records__": layout, "shape": list(a.shape),
                "fields": {n: _encode_array(np.ascontiguousarray(a[n]), f"{where}.{n}")
                           for n in a.dtype.names}}
    raise _Unwritable(where, f"is an array of dtype {a.dtype}, which JSON cannot hold")


# -- reading ------------------------------------------------------------------------------
def _class(name: str) -> type:
    module, _, qual = name.partition(":")
    if not module.startswith(_TRUSTED) or not qual:
        raise ValueError(f"the model names the class {name!r}; only oracleboost's and "
                         "scikit-learn's classes are loaded")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        raise ValueError(f"the model names {name!r}, which is not a class")
    return obj


def _decode(v: Any) -> Any:
    if isinstance(v, list):
        return [_decode(x) for x in v]
    if not isinstance(v, dict):
        return v
    if "__float__" in v:
        return float(v["__float__"])
    if "__tuple__" in v:
        return tuple(_decode(x) for x in v["__tuple__"])
    if "__items__" in v:
        return {_decode(k): _decode(x) for k, x in v["__items__"]}
    if "__ndarray__" in v:
        dtype = np.dtype(v["__ndarray__"])
        data = [_decode(x) for x in v["data"]]
        if dtype.kind == "O":
            out = np.empty(len(data), dtype=object)
            out[:] = data
        else:
            out = np.array(data, dtype=dtype)
        return out.reshape(v["shape"])
    if "__records__" in v:
        out = np.zeros(v["shape"], dtype=np.dtype(v["__records__"]))
        for name, column in v["fields"].items():
            out[name] = _decode(column)
        return out
    if "__random_state__" in v:
        rng = np.random.RandomState()
        rng.set_state(_decode(v["__random_state__"]))
        return rng
    if "__enum__" in v:
        return _class(v["__enum__"])(_decode(v["value"]))
    if "__object__" in v:
        cls = _class(v["__object__"])
        if "args" in v:  # an extension type: its class makes it from arguments
            obj = cls(*_decode(v["args"]))
            obj.__setstate__(_decode(v["state"]))
            return obj
        obj = cls.__new__(cls)
        state = {k: _decode(x) for k, x in v["state"].items()}
        if getattr(cls, "__setstate__", None) is not None:
            obj.__setstate__(state)
        else:
            obj.__dict__.update(state)
        return obj
    return {k: _decode(x) for k, x in v.items()}
