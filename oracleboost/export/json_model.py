"""A model as JSON text and back (the format: :mod:`oracleboost.model_json`, the public
module, which also makes sure that every booster of the library is known)."""

from __future__ import annotations

import enum
import json
import math
import os
import re
from typing import Any

import numpy as np

from oracleboost._files import write_text_atomic
from oracleboost._version import __version__
from oracleboost.engine.base import with_added_parameters
from oracleboost.export.schema import (
    FORMER_UNSTAMPED,
    SchemaError,
    allowed_classes,
    check_fitted,
    check_parameters,
    check_state,
    check_tree_args,
    check_tree_state,
    current_name,
    name_of,
)

__all__ = ["FORMAT_VERSION", "READ_VERSIONS", "to_json", "from_json", "save_model",
           "load_model"]

#: The version of the format this library writes (the versioning rule:
#: docs/user_guide/model_format.rst).
FORMAT_VERSION = 2
#: The versions this library reads: every one up to the version it writes.  Version 2
#: named two classes anew (a kernel model's kernel ``PairwiseKernel``, and the MLP
#: oracle's nets scikit-learn's own ``MLPRegressor``), which a reader of version 1 does
#: not know; their version-1 names are read still (``schema.current_name``).
READ_VERSIONS = (1, 2)
_FORMAT = "oracleboost-model"
#: Attributes of a booster that are not written (see :mod:`oracleboost.model_json`).
_NOT_WRITTEN = ("_state_", "_held_out_", "_callback_fit_ctx", "_skl_callbacks_to_teardown",
                "_skl_callbacks")


class _Unwritable(TypeError):
    """A value that has no JSON form here; carries where it was found."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where, self.what = where, what


def to_json(estimator: Any) -> str:
    """The fitted (or unfitted) ``estimator`` as JSON text (see :mod:`oracleboost.model_json`).

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
        When the text is not an oracleboost model, or comes from a format version this
        library does not read (a newer one; named, with the versions it reads), or
        names a class outside the allow-list, or holds a
        field that is missing, of the wrong type or out of range (named by its place in
        the document, ``estimator.ensemble_.intercept``), or a model that does not
        predict.  Nothing the text names is imported or run.
    """
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, a 5,000-digit number
        raise ValueError(f"not an oracleboost model: the text is not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
        raise ValueError(f"not an oracleboost model: no \"format\": \"{_FORMAT}\" field")
    version = doc.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"not an oracleboost model: format_version {version!r}")
    if version not in READ_VERSIONS:
        *earlier, last = map(str, READ_VERSIONS)
        readable = f"{', '.join(earlier)} and {last}" if earlier else last
        raise ValueError(
            f"the model was written in format version {version} (oracleboost "
            f"{doc.get('library_version', '?')}); this oracleboost ({__version__}) reads "
            f"format versions {readable}: upgrade oracleboost to load it"
        )
    if "estimator" not in doc:
        raise SchemaError("estimator", "missing")
    try:
        estimator = _decode(doc["estimator"], "estimator")
    except RecursionError:  # objects nested thousands deep: no model is
        raise SchemaError("estimator", "nested too deep") from None
    if type(estimator) not in allowed_classes().values():
        raise SchemaError("estimator", "must be an object of the library")
    check_fitted(estimator, "estimator")
    return estimator


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON (the format writes {{\"__float__\": ...}})")


def save_model(estimator: Any, path: str | os.PathLike) -> None:
    """Write :func:`to_json` of ``estimator`` to ``path`` (UTF-8), atomically.

    The text goes to a temporary file beside ``path``, flushed to disk, then renamed onto
    ``path``: a write that fails (a full disk, an interrupt) leaves a previous file at
    ``path`` whole and no temporary file behind.
    """
    write_text_atomic(path, to_json(estimator))


def load_model(path: str | os.PathLike) -> Any:
    """The estimator :func:`save_model` wrote to ``path``."""
    with open(path, encoding="utf-8") as f:
        return from_json(f.read())


# -- writing ------------------------------------------------------------------------------
def _state_of(obj: Any, where: str = "") -> dict:
    getstate = getattr(obj, "__getstate__", None)
    state = getstate() if getstate is not None else None
    if state is None:  # object's default __getstate__ without slots returns None
        state = getattr(obj, "__dict__", None)
    if not isinstance(state, dict):
        raise _Unwritable(where, f"is a {name_of(type(obj))}, whose state is not a dict of fields")
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
    """The class's name in a document, if loading may make it (the allow-list)."""
    name = name_of(cls)
    if allowed_classes().get(name) is not cls:
        raise _Unwritable(where, f"is a {name}, which JSON cannot hold (it holds "
                                 "oracleboost's objects, numbers, strings, arrays, and "
                                 "scikit-learn's trees, linear models, neural nets, dummies "
                                 "and label encoders); skops.io can store it")
    return name


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
# A document is data: every tagged form has exactly its keys, every class is looked up in
# the allow-list (never imported by a name from the file), and every object's fields are
# checked (oracleboost.export.schema) before the object is made.
_PLAIN_DTYPE = re.compile(r"[<>|=]?(?:b1|[iu][1248]|f[248])")
_LABEL_DTYPE = re.compile(r"[<>|=]?U(\d{1,6})")
_MAX_NDIM = 32
#: Characters a string array may hold beyond what its strings need (64 MiB).
_MAX_CHARS = 2**24
_TAGS = {"__float__": {"__float__"}, "__tuple__": {"__tuple__"}, "__items__": {"__items__"},
         "__ndarray__": {"__ndarray__", "shape", "data"},
         "__records__": {"__records__", "shape", "fields"},
         "__random_state__": {"__random_state__"}, "__enum__": {"__enum__", "value"},
         "__object__": {"__object__", "state"}}


def _decode(v: Any, where: str) -> Any:
    if v is None or isinstance(v, (bool, str, int)):
        return v
    if isinstance(v, float):
        if not math.isfinite(v):  # JSON's own NaN/Infinity tokens: not what we write
            raise SchemaError(where, "a number that is not finite must be written as "
                                     "{\"__float__\": ...}")
        return v
    if isinstance(v, list):
        return [_decode(x, f"{where}[{i}]") for i, x in enumerate(v)]
    tags = [k for k in v if k.startswith("__")]
    if not tags:
        return {k: _decode(x, f"{where}.{k}") for k, x in v.items()}
    tag = tags[0]
    keys = _TAGS.get(tag, set())
    if len(tags) != 1 or not (set(v) == keys or tag == "__object__"
                              and set(v) == keys | {"args"}):
        raise SchemaError(where, f"an object with the keys {sorted(v)} is none of the "
                                 "format's forms")
    return _READERS[tag](v, where)


def _read_float(v: dict, where: str) -> float:
    names = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
    if not isinstance(v["__float__"], str) or v["__float__"] not in names:
        raise SchemaError(where, "__float__ must be \"nan\", \"inf\" or \"-inf\"")
    return names[v["__float__"]]


def _read_tuple(v: dict, where: str) -> tuple:
    return tuple(_decode(_a_list(v["__tuple__"], where), where))


def _read_items(v: dict, where: str) -> dict:
    out = {}
    for i, pair in enumerate(_a_list(v["__items__"], where)):
        if not (isinstance(pair, list) and len(pair) == 2):
            raise SchemaError(f"{where}[{i}]", "an item must be [key, value]")
        key = _decode(pair[0], f"{where}[{i}]")
        if not _key_like(key):
            raise SchemaError(f"{where}[{i}]", "a key must be a number, string or tuple")
        out[key] = _decode(pair[1], f"{where}[{key!r}]")
    return out


def _key_like(k: Any) -> bool:
    return k is None or isinstance(k, (bool, int, float, str)) or (
        isinstance(k, tuple) and all(_key_like(x) for x in k))


def _a_list(v: Any, where: str) -> list:
    if not isinstance(v, list):
        raise SchemaError(where, f"must be a list, not a {type(v).__name__}")
    return v


def _shape(v: Any, n: int, where: str) -> tuple[int, ...]:
    """The shape of an array of ``n`` values (its product must be ``n``: an array is never
    larger than the data the file holds)."""
    if not (isinstance(v, list) and len(v) <= _MAX_NDIM
            and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in v)
            and math.prod(v) == n):
        raise SchemaError(f"{where}.shape", f"must be a list of sizes whose product is the "
                                            f"{n} values given")
    return tuple(v)


def _read_ndarray(v: dict, where: str) -> np.ndarray:
    dtype, data = v["__ndarray__"], _a_list(v["data"], f"{where}.data")
    shape = _shape(v["shape"], len(data), where)
    if dtype == "O":  # labels: strings or numbers
        values = [_decode(x, f"{where}.data[{i}]") for i, x in enumerate(data)]
        if not all(isinstance(x, (str, int, float)) or x is None for x in values):
            raise SchemaError(f"{where}.data", "an object array holds labels only")
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out.reshape(shape)
    if not isinstance(dtype, str):
        raise SchemaError(f"{where}.__ndarray__", "must be a dtype's name")
    label = _LABEL_DTYPE.fullmatch(dtype)
    if label:
        size = int(label[1])
        if not all(isinstance(x, str) and len(x) <= size for x in data):
            raise SchemaError(f"{where}.data", f"must hold strings that fit {dtype}")
        if size * len(data) > _MAX_CHARS and size > max(map(len, data), default=0):
            # wider than its strings need, and large: memory the file does not hold
            raise SchemaError(f"{where}.__ndarray__", f"{dtype} is wider than its strings")
        return np.array(data, dtype=dtype).reshape(shape)
    if not _PLAIN_DTYPE.fullmatch(dtype):
        raise SchemaError(f"{where}.__ndarray__", f"{dtype!r} is not a plain dtype (bool, "
                                                  "int, uint, float, str)")
    return _numbers(np.dtype(dtype), data, where).reshape(shape)


def _numbers(dtype: np.dtype, data: list, where: str) -> np.ndarray:
    if dtype.kind == "b":
        ok = all(isinstance(x, bool) for x in data)
    elif dtype.kind == "f":
        data = [_read_float(x, f"{where}.data") if isinstance(x, dict)
                and set(x) == {"__float__"} else x for x in data]
        ok = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in data)
    else:
        ok = all(isinstance(x, int) and not isinstance(x, bool) for x in data)
    if not ok:
        raise SchemaError(f"{where}.data", f"must hold {dtype.kind!r} numbers of {dtype}")
    try:
        return np.array(data, dtype=dtype)
    except (OverflowError, ValueError):
        raise SchemaError(f"{where}.data", f"holds a number out of {dtype}'s range") from None


def _read_records(v: dict, where: str) -> np.ndarray:
    layout, fields = v["__records__"], v["fields"]
    if not (isinstance(layout, dict) and set(layout) == {"names", "formats", "offsets",
                                                         "itemsize"}
            and isinstance(fields, dict) and isinstance(layout["names"], list)
            and isinstance(layout["formats"], list)
            and all(isinstance(f, str) and _PLAIN_DTYPE.fullmatch(f)
                    for f in layout["formats"])
            and list(fields) == layout["names"]):
        raise SchemaError(where, "a record array's layout must name plain fields, each "
                                 "given")
    try:
        dtype = np.dtype(layout)
    except (TypeError, ValueError, OverflowError) as exc:
        raise SchemaError(where, f"not a record layout ({exc})") from None
    packed = sum(np.dtype(f).itemsize for f in layout["formats"])
    if dtype.itemsize > 2 * packed + 16:  # padding beyond any alignment: memory for nothing
        raise SchemaError(f"{where}.__records__", f"an itemsize of {dtype.itemsize} for "
                                                  f"fields of {packed} bytes")
    columns = {n: _decode(x, f"{where}.fields.{n}") for n, x in fields.items()}
    sizes = {c.size if isinstance(c, np.ndarray) else -1 for c in columns.values()}
    if len(sizes) != 1 or -1 in sizes:
        raise SchemaError(f"{where}.fields", "must be arrays of one size")
    shape = _shape(v["shape"], sizes.pop(), where)
    out = np.zeros(shape, dtype=dtype)
    for name, column in columns.items():
        if column.dtype != dtype.fields[name][0]:
            raise SchemaError(f"{where}.fields.{name}", f"must be of dtype "
                                                        f"{dtype.fields[name][0]}")
        out[name] = column.reshape(shape)
    return out


def _read_random_state(v: dict, where: str) -> np.random.RandomState:
    state = _decode(v["__random_state__"], where)
    if not (isinstance(state, tuple) and len(state) == 5 and state[0] == "MT19937"
            and isinstance(state[1], np.ndarray) and state[1].dtype == np.uint32
            and state[1].shape == (624,)
            and all(isinstance(x, int) and not isinstance(x, bool) for x in state[2:4])
            and 0 <= state[2] <= 624 and isinstance(state[4], float)):
        raise SchemaError(where, "must be a NumPy RandomState's MT19937 state")
    rng = np.random.RandomState(0)
    rng.set_state(state)
    return rng


def _allowed(name: Any, where: str) -> type:
    cls = allowed_classes().get(current_name(name)) if isinstance(name, str) else None
    if cls is None:
        raise SchemaError(where, f"the class {name!r} is not one a model file may name "
                                 "(oracleboost's boosters, oracles, losses and hypotheses, "
                                 "and the scikit-learn estimators they hold)")
    return cls


def _read_enum(v: dict, where: str) -> enum.Enum:
    cls = _allowed(v["__enum__"], f"{where}.__enum__")
    if not (issubclass(cls, enum.Enum) and isinstance(v["value"], (str, int))
            and v["value"] in {m.value for m in cls}):
        raise SchemaError(where, f"{v['value']!r} is not a {cls.__name__}")
    return cls(v["value"])


def _read_object(v: dict, where: str) -> Any:
    cls = _allowed(v["__object__"], f"{where}.__object__")
    if issubclass(cls, enum.Enum):
        raise SchemaError(f"{where}.__object__", f"{cls.__name__} is an enum")
    if "args" in v or cls.__name__ == "Tree" and cls.__module__.startswith("sklearn."):
        return _read_tree(cls, v, where)
    if not isinstance(v["state"], dict):
        raise SchemaError(f"{where}.state", "must be an object of fields")
    state = {k: _decode(x, f"{where}.{k}") for k, x in v["state"].items()}
    state = with_added_parameters(cls, state)  # (a file written before an option was)
    if v["__object__"] in FORMER_UNSTAMPED and "_sklearn_version" not in state:
        import sklearn

        state["_sklearn_version"] = sklearn.__version__
    check_state(cls, state, where)
    obj = cls.__new__(cls)
    if getattr(cls, "__setstate__", None) is not None:
        obj.__setstate__(state)
    else:
        obj.__dict__.update(state)
    check_parameters(obj, where)
    return obj


def _read_tree(cls: type, v: dict, where: str) -> Any:
    """scikit-learn's ``Tree``, the one class made from arguments: they are checked to be
    sizes first, and its nodes to be a tree over them."""
    if "args" not in v or cls.__name__ != "Tree":
        raise SchemaError(where, f"{v['__object__']!r} is not made from arguments")
    args = check_tree_args(_decode(v["args"], f"{where}(args)"), f"{where}(args)")
    state = _decode(v["state"], where)
    check_tree_state(args, state, where)
    try:
        tree = cls(*args)
        tree.__setstate__(state)
    except (ValueError, TypeError, OverflowError) as exc:  # scikit-learn's own checks
        raise SchemaError(where, f"not a scikit-learn tree ({exc})") from None
    return tree


_READERS: dict[str, Any] = {
    "__float__": _read_float, "__tuple__": _read_tuple, "__items__": _read_items,
    "__ndarray__": _read_ndarray, "__records__": _read_records,
    "__random_state__": _read_random_state, "__enum__": _read_enum,
    "__object__": _read_object,
}
