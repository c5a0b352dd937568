"""A fitted booster as plain JSON text, read back without pickle.

:func:`save_model` / :func:`load_model` (and the boosters' ``save_model`` and
``load_model``) write and read a model as JSON: its parameters (the oracle and loss
included), its fitted attributes (``classes_``, ``history_``, ``stop_reason_``, …) and
its model (``ensemble_``: the intercept, every hypothesis with its fields, the
coefficients and the rounds' log), with the format's version and the library's.

A model file is data, whoever wrote it.  Loading creates objects only of an explicit
allow-list of classes (the library's boosters, oracles, losses, hypotheses and models,
and a few scikit-learn estimators that ``SklearnOracle`` may hold: see
``oracleboost.export.schema``), looked up by name: it imports nothing a file names and
calls no constructor with arguments from the file but scikit-learn's ``Tree``, whose
arguments are checked to be sizes first.  Arrays are of plain dtypes only (bool,
integers, floats, strings; labels in object arrays), no larger than the numbers the file
holds.  Each object's fields are checked against what its class needs before it is made,
and a fitted booster is checked to predict: a file whose fields are missing, of the
wrong type, or out of range is refused at load with a ``ValueError`` naming the field's
place in the document (``estimator.ensemble_.hypotheses[3].feature``), never loaded into
a model that fails later.  Numbers and arrays come back bit for bit (floats are written
in Python's shortest round-trip form, NaN and infinities by name), so the loaded
booster predicts as the saved one did, bit for bit.  :func:`save_model` writes to a
temporary file beside the target and renames it into place, so a failed write leaves
the previous file whole.

What is not written: the running state ``warm_start`` continues from, early stopping's
split of the rows among it (a loaded model predicts; ``warm_start=True`` then fits anew,
with a warning; pickle and ``skops.io`` keep that state for a booster fitted with
``warm_start=True``), and callbacks.  What
cannot be written is refused, naming where it sits: an object of a class outside the
allow-list (a ``joblib.Memory`` as ``CachedOracle``'s ``memory``: give a path; a weak
learner of another library, or a scikit-learn estimator outside the list, through
``SklearnOracle``: use ``skops.io``).

The format, version 2 (every form, the allow-list, the field checks and the versioning
rule: the user guide's "The JSON model format" page)::

    {"format": "oracleboost-model", "format_version": 2, "library_version": "0.1.0",
     "estimator": <value>}

where a value is JSON's own (null, true/false, numbers, strings, lists, objects with
string keys) or one of the tagged forms ``{"__float__": "nan" | "inf" | "-inf"}``,
``{"__tuple__": [...]}``, ``{"__items__": [[key, value], ...]}`` (a dict whose keys are
not strings), ``{"__ndarray__": dtype, "shape": [...], "data": [...]}``,
``{"__records__": layout, "shape": [...], "fields": {...}}`` (a record array of plain
fields), ``{"__enum__": "module:Class", "value": ...}``, ``{"__random_state__": [...]}``
(a NumPy ``RandomState``'s state) and ``{"__object__": "module:Class", "state": {...}}``
(with ``"args"`` for scikit-learn's ``Tree``, an extension type made from its sizes).
Files of version 1 load too (:data:`READ_VERSIONS`); a file of a version this library
does not read is refused with a ``ValueError`` naming its version and the ones read.
"""

# The boosters join the allow-list as their classes are made (export.methods): a file is
# read with every booster of the library known.
import oracleboost.boosters  # noqa: F401
from oracleboost.export.json_model import (
    FORMAT_VERSION,
    READ_VERSIONS,
    from_json,
    load_model,
    save_model,
    to_json,
)

__all__ = ["FORMAT_VERSION", "READ_VERSIONS", "to_json", "from_json", "save_model",
           "load_model"]
