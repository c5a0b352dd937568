"""A JSON model file is data: loading one runs nothing it names, and loads only a model
that predicts.

The known ways in (a class path below ``sklearn.`` reaching ``subprocess.Popen`` or
``numpy.memmap``) are refused; a fuzzer mutates real saved documents (fields deleted,
types changed, classes swapped for arbitrary ``module:attr`` names, dtypes and shapes
changed, values nested) and checks that each load either raises a ``ValueError`` naming
a place in the document, or gives a model whose prediction methods work, with no side
effect.  A damaged file is refused at load by the name of its field, and a save that
fails half-way leaves the previous file whole.
"""

from __future__ import annotations

import builtins
import copy
import errno
import json
import os
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_persistence import _fit

from oracleboost.model_json import from_json, load_model, save_model, to_json

#: Cases whose documents the fuzzer mutates: stumps, a scikit-learn Tree, a LightGBM
#: model string, a RandomState (MLP), label-coded multiclass stumps, a kernel model,
#: a matrix of columns, early stopping's held-out tuple.
FUZZED = ["adaboost-stump", "coordinate-sklearn", "coordinate-lightgbm", "coordinate-mlp",
          "classifier-label-coded", "accelerated-kernel", "coordinate-matrix",
          "regressor-early-stopping", "maboost-multiclass", "coordinate-linear"]

#: Class names a crafted file may give, each a way the old reader ran code.
EVIL = ["subprocess:Popen", "numpy:memmap", "os:system", "builtins:eval",
        "sklearn.callback.tests.test_pickle:subprocess.Popen",
        "sklearn.utils._testing:np.memmap", "sklearn.utils._testing:os.system",
        "oracleboost.model_json:json.loads", "oracleboost:__builtins__.open",
        "sklearn.tree._tree:Tree", "oracleboost.oracles.stumps:np.memmap"]


class _Recorder:
    """Stands for a function or class that must never be reached: records its calls."""

    calls: list = []

    def __init__(self, *args, **kwargs) -> None:
        _Recorder.calls.append(args)

    def __call__(self, *args, **kwargs) -> None:
        _Recorder.calls.append(args)


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    """case -> (its document, its test rows)."""
    out = {}
    for case in FUZZED:
        est, _, _, _, X_test = _fit(case, tmp_path_factory.mktemp(case))
        out[case] = (json.loads(to_json(est)), X_test)
        _predict_all(from_json(to_json(est)), X_test)  # compiled kernels warm
    return out


def _predict_all(model, X) -> None:
    repr(model)
    for name in ("predict", "decision_function", "predict_proba"):
        method = getattr(model, name, None)
        if method is not None:
            method(X)
            list(getattr(model, f"staged_{name}")(X))


class _Guard:
    """Records what must not happen while a document loads: a process started, a
    command run, a memory map made, a file opened for writing; the watched folder's
    files must stay as they were."""

    def __init__(self, monkeypatch, folder) -> None:
        self.opened: list = []
        self.folder = folder
        self.before = self._snapshot()
        real_open = builtins.open

        def watched_open(file, mode="r", *args, **kwargs):
            if any(c in mode for c in "wax+"):
                self.opened.append(file)
            return real_open(file, mode, *args, **kwargs)

        monkeypatch.setattr(subprocess, "Popen", _Recorder)
        monkeypatch.setattr(os, "system", _Recorder())
        monkeypatch.setattr(np, "memmap", _Recorder)
        monkeypatch.setattr(builtins, "eval", _Recorder())
        monkeypatch.setattr(builtins, "open", watched_open)
        _Recorder.calls = []  # (making the stand-ins above is no call)

    def _snapshot(self) -> dict:
        return {p.name: p.read_bytes() for p in self.folder.iterdir()}

    def check(self) -> None:
        assert _Recorder.calls == [], _Recorder.calls
        assert self.opened == [], self.opened
        assert self._snapshot() == self.before


def _bait(folder) -> str:
    target = folder / "precious.txt"
    if not target.exists():
        target.write_bytes(b"keep me\n" * 8)
    return str(target)


# -- the known ways in ------------------------------------------------------------------
@pytest.mark.parametrize("name,args", [
    ("sklearn.callback.tests.test_pickle:subprocess.Popen", ["touch {bait}.ran"]),
    ("sklearn.utils._testing:np.memmap", ["{bait}", "uint8", "w+", 0, {"__tuple__": [1]}]),
    ("sklearn.utils._testing:os.system", ["touch {bait}.ran"]),
])
def test_a_crafted_class_path_runs_nothing(name, args, documents, tmp_path, monkeypatch):
    """The reader of old followed any attribute path below ``sklearn.`` and called the
    class with the file's arguments: a process started, a file truncated.  Now the
    name is looked up in the allow-list and refused, naming where it sits."""
    bait = _bait(tmp_path)
    doc = copy.deepcopy(documents["adaboost-stump"][0])
    args = json.loads(json.dumps(args).replace("{bait}", bait))
    doc["estimator"]["state"]["oracle"] = {"__object__": name, "args": args, "state": {}}
    guard = _Guard(monkeypatch, tmp_path)
    with pytest.raises(ValueError, match=r"at estimator\.oracle"):
        from_json(json.dumps(doc))
    guard.check()


def test_the_memmap_way_truncated_a_file_before(tmp_path):
    """The exploit itself, unpatched: the file named is left whole."""
    bait = _bait(tmp_path)
    before = (tmp_path / "precious.txt").read_bytes()
    doc = {"format": "oracleboost-model", "format_version": 1, "estimator": {
        "__object__": "sklearn.utils._testing:np.memmap",
        "args": [bait, "uint8", "w+", 0, {"__tuple__": [1]}], "state": {}}}
    with pytest.raises(Exception) as refused:  # noqa: PT011 - the file is checked first
        from_json(json.dumps(doc))
    assert (tmp_path / "precious.txt").read_bytes() == before  # (was cut to 1 byte)
    assert isinstance(refused.value, ValueError)
    assert "'sklearn.utils._testing:np.memmap' is not one a model file may name" in str(
        refused.value)


# -- damaged files ----------------------------------------------------------------------
def _state(doc, *path):
    v = doc["estimator"]
    for p in path:
        v = v["state"][p] if isinstance(p, str) else v[p]
    return v


@pytest.mark.parametrize("damage,where", [
    (lambda d: _state(d, "ensemble_")["state"].pop("intercept"),
     r"estimator\.ensemble_\.intercept: missing"),
    (lambda d: _state(d, "ensemble_")["state"].update(intercept="zero"),
     r"estimator\.ensemble_\.intercept: must be a finite number"),
    (lambda d: _state(d, "ensemble_", "hypotheses")[0]["state"].update(feature=99),
     r"estimator\.ensemble_\.hypotheses\[0\]\.feature: is 99, beyond n_features 5"),
    (lambda d: _state(d, "ensemble_", "hypotheses")[0]["state"].pop("threshold"),
     r"estimator\.ensemble_\.hypotheses\[0\]\.threshold: missing"),
    (lambda d: _state(d, "ensemble_")["state"]["coef"].pop(),
     r"estimator\.ensemble_\.coef: holds 7 entries for 8 hypotheses"),
    (lambda d: d["estimator"]["state"].pop("classes_"),
     r"estimator\.classes_: missing"),
    (lambda d: d["estimator"]["state"].update(n_features_in_=4),
     r"estimator\.ensemble_\.hypotheses\[0\]\.n_features: is 5; the model has 4"),
    (lambda d: d["estimator"]["state"].pop("n_estimators"),
     r"estimator\.n_estimators: missing \(the parameter n_estimators"),
    (lambda d: d["estimator"]["state"].update(n_jobs="all"),
     r"at estimator: The 'n_jobs' parameter"),
    (lambda d: d["estimator"]["state"]["classes_"].update(shape=[10**12]),
     r"estimator\.classes_\.shape: must be a list of sizes whose product is the 2 values"),
    (lambda d: d["estimator"]["state"]["classes_"].update(__ndarray__="|V8"),
     r"estimator\.classes_\.__ndarray__: '\|V8' is not a plain dtype"),
])
def test_a_damaged_file_is_refused_at_load_by_name(damage, where, documents):
    """Before, a file without the ensemble's intercept loaded and failed at predict
    (AttributeError: 'Ensemble' object has no attribute 'intercept')."""
    doc = copy.deepcopy(documents["adaboost-stump"][0])
    damage(doc)
    with pytest.raises(ValueError, match=where):
        from_json(json.dumps(doc))


@pytest.mark.parametrize("case,damage,where", [
    ("coordinate-sklearn",
     lambda t: t["state"]["nodes"]["fields"]["left_child"]["data"].__setitem__(0, 0),
     r"tree_\.nodes: a child or feature index is out of range"),
    ("coordinate-sklearn",
     lambda t: t["state"]["nodes"]["fields"]["feature"]["data"].__setitem__(0, 7),
     r"tree_\.nodes: a child or feature index is out of range"),
    ("coordinate-sklearn", lambda t: t["args"].__setitem__(0, 10**6),
     r"n_features_in_: must be 1000000, the tree's"),
    ("coordinate-sklearn",  # NaN leaves: loaded, and predicted by argmax over NaN
     lambda t: t["state"]["values"]["data"].__setitem__(slice(None), [{"__float__": "nan"}]
                                                        * len(t["state"]["values"]["data"])),
     r"tree_\.values: must be a float64 array of shape \(3, 1, 2\) of finite numbers"),
])
def test_a_scikit_learn_tree_is_checked_before_compiled_code_reads_it(case, damage, where,
                                                                      documents):
    """A child index that points back (an endless walk) or a feature beyond X (a read
    outside it) is refused: scikit-learn's compiled predict does not check them."""
    doc = copy.deepcopy(documents[case][0])
    tree = _state(doc, "ensemble_", "hypotheses")[0]["state"]["estimator"]["state"]["tree_"]
    damage(tree)
    with pytest.raises(ValueError, match=where):
        from_json(json.dumps(doc))


@pytest.mark.parametrize("old,new,where", [
    ("split_feature=3 2 3", "split_feature=3 9 3", "feature or decision type is out of range"),
    ("left_child=-1 -2 -3", "left_child=-1  0 -3", "a child index is out of range"),
    ("left_child=-1 -2 -3", "left_child=-1 -7 -3", "a child index is out of range"),
    ("threshold=-0.55", "threshold=-9.55", None),  # the same size: loads
    ("num_leaves=4", "num_leaves=5", "must be a tree of 4 leaves"),
    ("[data: ]", "[data: ]\nsomething=else", "a line LightGBM's model has not"),
])
def test_a_lightgbm_model_string_is_checked_before_lightgbm_reads_it(old, new, where,
                                                                     documents):
    doc = copy.deepcopy(documents["coordinate-lightgbm"][0])
    h = _state(doc, "ensemble_", "hypotheses")[0]["state"]
    assert old in h["model_str"]
    h["model_str"] = h["model_str"].replace(old, new, 1)
    if where is None:
        from_json(json.dumps(doc)).predict(documents["coordinate-lightgbm"][1])
        return
    with pytest.raises(ValueError, match=r"hypotheses\[0\]\.model_str: .*" + where):
        from_json(json.dumps(doc))


# -- the fuzzer -------------------------------------------------------------------------
def _places(v, path=()):
    """Every place in a document below its header: (path of keys and indices, value);
    an array's numbers count as one place, its ``data``."""
    if path:
        yield path, v
    if isinstance(v, dict) and "__ndarray__" in v:
        items = [(k, x) for k, x in v.items() if k != "data"]
        if "data" in v:
            yield path + ("data",), v["data"]
    else:
        items = (v.items() if isinstance(v, dict) else enumerate(v)
                 if isinstance(v, list) else ())
    for k, x in items:
        yield from _places(x, path + (k,))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False,
                                                                       allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=6)
_NAMES = st.sampled_from(EVIL) | st.from_regex(r"[a-z_.]{1,20}:[A-Za-z_.]{1,20}",
                                               fullmatch=True)
_EVIL_OBJECTS = st.builds(lambda n, a: {"__object__": n, "args": a, "state": {}},
                          st.sampled_from(EVIL) | st.from_regex(
                              r"[a-z_.]{1,20}:[A-Za-z_.]{1,20}", fullmatch=True),
                          st.lists(st.sampled_from(["PRECIOUS", "w+", 0, 1, "uint8"])
                                   | _JSON, max_size=5))
_DTYPES = st.sampled_from(["O", "|V8", "<M8[s]", "<m8[s]", "<f8", "<i8", "|u1", "|b1",
                           "<U3", "<U1", "f4,f4", "<c16", ">f8", "object", "<f2"])


def _mutation(draw, value):
    """A changed value for one place of a document, of a kind that fits the value (and
    sometimes any JSON at all)."""
    if draw(st.integers(0, 5)) == 0:
        return draw(_JSON | _EVIL_OBJECTS)
    if isinstance(value, dict) and "__object__" in value:
        return draw(st.sampled_from(["evil", "swap", "nest"]).flatmap(
            lambda kind: _EVIL_OBJECTS if kind == "evil" else _nested(value)
            if kind == "nest" else st.builds(lambda n: {**value, "__object__": n},
                                             _NAMES | st.sampled_from(_LIBRARY_NAMES))))
    if isinstance(value, dict) and "__ndarray__" in value:
        return draw(st.one_of(
            st.builds(lambda d: {**value, "__ndarray__": d}, _DTYPES),
            st.builds(lambda s: {**value, "shape": s},
                      st.lists(st.integers(-2, 2**40), max_size=3)),
            st.builds(lambda d: {**value, "data": d}, st.lists(_JSON, max_size=4))))
    if isinstance(value, bool) or value is None:
        return draw(st.sampled_from([not value, 0, 1, "yes", None, [], {}]))
    if isinstance(value, (int, float)):
        return draw(st.sampled_from([value + 1, value - 1, -value, float(value), 10**30,
                                     -(10**30), 0, 1e308, int(value) * 7, str(value),
                                     {"__float__": "nan"}, {"__float__": "inf"}]))
    if isinstance(value, str):
        return draw(st.sampled_from([value + "x", "", value[:-10], value.replace("1", "9"),
                                     value.replace("-", ""), value.upper(), "PRECIOUS"]))
    if isinstance(value, list) and value and draw(st.booleans()):  # one entry changed
        i = draw(st.integers(0, len(value) - 1))
        return value[:i] + [_mutation(draw, value[i])] + value[i + 1:]
    return draw(_nested(value) | _JSON)


def _nested(value):
    return st.sampled_from([[value], {"__tuple__": [value]}, {"__items__": [[value, value]]},
                            {"x": value}, {"__object__": value, "state": {}}])


_LIBRARY_NAMES = ["oracleboost.oracles.stumps:SignStump", "oracleboost.oracles.stumps:VectorStump",
                  "oracleboost.engine.model:Ensemble", "oracleboost.engine.model:LinearModel",
                  "sklearn.tree._classes:DecisionTreeRegressor", "sklearn.tree._tree:Tree",
                  "oracleboost.oracles.lightgbm:LightGBMTree",
                  "oracleboost.boosters.coordinate.estimator:CoordinateBoostingClassifier",
                  "oracleboost.engine.rounds:StopReason", "oracleboost.losses.margin:Logistic"]


def _apply(doc, path, new):
    if not path:
        return new
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    if new is _DELETE and isinstance(parent, dict):
        del parent[path[-1]]
    elif new is _DELETE:
        parent.pop(path[-1])
    else:
        parent[path[-1]] = new
    return doc


_DELETE = object()


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_no_mutated_document_runs_code_or_loads_a_model_that_fails(data, documents, tmp_path,
                                                                   monkeypatch):
    case = data.draw(st.sampled_from(FUZZED))
    original, X_test = documents[case]
    doc = copy.deepcopy(original)
    for _ in range(data.draw(st.integers(1, 3))):
        places = list(_places(doc["estimator"]))
        if not places:  # all deleted
            break
        path, value = data.draw(st.sampled_from(places))
        new = _DELETE if data.draw(st.integers(0, 4)) == 0 else _mutation(data.draw, value)
        _apply(doc["estimator"], path, new)
    _bait(tmp_path)
    text = json.dumps(doc).replace("PRECIOUS", str(tmp_path / "precious.txt"))
    with monkeypatch.context() as patch:
        guard = _Guard(patch, tmp_path)
        try:
            model = from_json(text)
        except ValueError as exc:
            assert "not an oracleboost model" in str(exc) or "at estimator" in str(exc), exc
            event(str(exc).split(":")[1 if "at estimator" in str(exc) else 0][:40])
            model = None
        guard.check()
    if model is not None:
        event("loaded")
        _predict_all(model, X_test)


# -- atomic save ------------------------------------------------------------------------
def test_a_save_that_fails_half_way_leaves_the_previous_file_whole(documents, tmp_path,
                                                                   monkeypatch):
    """A full disk half-way through the write: the previous model stays, byte for byte,
    and no temporary file is left (before, the file was truncated to what was
    written)."""
    est = from_json(json.dumps(documents["adaboost-stump"][0]))
    path = tmp_path / "model.json"
    save_model(est, path)
    before = path.read_bytes()
    real_open = builtins.open

    class _FullDisk:
        def __init__(self, f) -> None:
            self.f = f

        def write(self, text):
            self.f.write(text[: len(text) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.f.__exit__(*exc)

    def full_disk_open(file, mode="r", *args, **kwargs):
        f = real_open(file, mode, *args, **kwargs)
        return _FullDisk(f) if "w" in mode else f

    monkeypatch.setattr(builtins, "open", full_disk_open)
    with pytest.raises(OSError, match="No space left"):
        save_model(from_json(json.dumps(documents["classifier-label-coded"][0])), path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.json"]
    load_model(path)


def test_a_save_replaces_the_file_and_keeps_its_permissions(documents, tmp_path):
    path = tmp_path / "model.json"
    path.write_text("old")
    path.chmod(0o640)
    save_model(from_json(json.dumps(documents["adaboost-stump"][0])), path)
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)
    assert json.loads(path.read_text())["format"] == "oracleboost-model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.json"]


@pytest.mark.parametrize("write", ["save_model", "atomic_path"])
def test_the_data_reaches_the_disk_before_the_rename(write, documents, tmp_path,
                                                     monkeypatch):
    """Every atomic write (a model, the grid's CSV, a figure) flushes the temporary
    file to disk before renaming it: renamed first, a power cut could leave the target
    naming an empty file."""
    from oracleboost._files import atomic_path

    path = tmp_path / "model.json"
    order = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: order.append("fsync") or real_fsync(fd))
    monkeypatch.setattr(os, "replace",
                        lambda a, b: order.append(("replace", b)) or real_replace(a, b))
    if write == "save_model":
        save_model(from_json(json.dumps(documents["adaboost-stump"][0])), path)
    else:
        with atomic_path(path) as tmp:
            tmp.write_text("x")
    assert order == ["fsync", ("replace", path)]


_NODES = {"names": ["a", "b"], "formats": ["<i8", "<f8"], "offsets": [0, 8]}


@pytest.mark.parametrize("value,where", [
    ({"__float__": ["nan"]}, r"estimator: __float__ must be"),
    ({"__enum__": "oracleboost.engine.rounds:StopReason", "value": []},
     r"estimator: \[\] is not a StopReason"),
    ({"__records__": {**_NODES, "itemsize": 2**30}, "shape": [1],
      "fields": {"a": {"__ndarray__": "<i8", "shape": [1], "data": [1]},
                 "b": {"__ndarray__": "<f8", "shape": [1], "data": [1.0]}}},
     r"estimator\.__records__: an itemsize of 1073741824 for fields of 16 bytes"),
    ({"__ndarray__": "<U999999", "shape": [100], "data": ["a"] * 100},
     r"estimator\.__ndarray__: <U999999 is wider than its strings"),
    ({"__ndarray__": "<f8", "shape": [2], "data": [1.0, []]},
     r"estimator\.data: must hold 'f' numbers"),
    (5, r"estimator: must be an object of the library"),
    ({"__tuple__": [1]}, r"estimator: must be an object of the library"),
])
def test_what_a_value_claims_is_checked_first(value, where):
    """A malformed tagged value is a ValueError naming its place (the reader of old
    raised TypeError for the first two), and no value claims more memory than the file
    holds numbers for (an itemsize of 1 GiB a record, 4 MB a string)."""
    doc = {"format": "oracleboost-model", "format_version": 1, "estimator": value}
    with pytest.raises(ValueError, match=where):
        from_json(json.dumps(doc))


def test_no_count_in_a_file_sizes_an_allocation(documents):
    """Counts that size what predict allocates are checked against the model: a
    label-coded stump's n_classes against classes_ (its codes are an n_classes square),
    n_features_in_ against a bound (the row of zeros a load predicts), a record
    layout's offsets against C's (found by the fuzzer: an OverflowError)."""
    doc = copy.deepcopy(documents["classifier-label-coded"][0])
    for h in _state(doc, "ensemble_", "hypotheses"):
        h["state"].update(n_classes=100_000)
    with pytest.raises(ValueError, match=r"hypotheses\[0\]\.n_classes: is 100000; the model "
                                         r"has 3 classes"):
        from_json(json.dumps(doc))
    doc = copy.deepcopy(documents["adaboost-stump"][0])
    doc["estimator"]["state"]["n_features_in_"] = 2**30
    for h in _state(doc, "ensemble_", "hypotheses"):
        h["state"].update(n_features=2**30)
    with pytest.raises(ValueError, match=r"estimator\.n_features_in_: 1073741824 features"):
        from_json(json.dumps(doc))
    doc = copy.deepcopy(documents["coordinate-sklearn"][0])
    tree = _state(doc, "ensemble_", "hypotheses")[0]["state"]["estimator"]["state"]["tree_"]
    tree["state"]["nodes"]["__records__"]["offsets"][0] = 10**30
    with pytest.raises(ValueError, match=r"tree_\.nodes: not a record layout"):
        from_json(json.dumps(doc))


@pytest.mark.parametrize("field,value,where", [
    ("max_depth", 10**30, r"tree_\.max_depth: must be an integer from the depth 1 to "
                          r"node_count"),
    ("args", [10**30, {"__ndarray__": "<i8", "shape": [1], "data": [2]}, 1],
     r"tree_\(args\): n_features and n_outputs must be integers"),
])
def test_a_tree_of_impossible_sizes_is_refused_by_its_place(field, value, where, documents):
    """Found by the fuzzer: scikit-learn's Tree raised OverflowError for a depth or a
    feature count beyond C's integers."""
    doc = copy.deepcopy(documents["coordinate-sklearn"][0])
    tree = _state(doc, "ensemble_", "hypotheses")[0]["state"]["estimator"]["state"]["tree_"]
    if field == "args":
        tree["args"] = value
    else:
        tree["state"][field] = value
    with pytest.raises(ValueError, match=where):
        from_json(json.dumps(doc))
