"""Model files written before the package had its layers still load, and predict as they
did: a document names each class ``module:qualname``, and those files name the modules of
that time (``oracleboost.boosters.coordinate``, ``oracleboost.boosters.model``, ...).

The files in ``tests/data`` were written by that version of the library (30 rows × 3
features from ``RandomState(0)``, rounded to 3 decimals), with the scores it gave on the
same rows beside them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from oracleboost.export.schema import current_name
from oracleboost.model_json import from_json, to_json

DATA = Path(__file__).parent / "data"
KINDS = ("coordinate", "mirror_multiclass", "accelerated", "functional")


def _rows() -> np.ndarray:
    return np.round(np.random.RandomState(0).randn(30, 3), 3)


def _scores(model, X):
    return model.decision_function(X) if hasattr(model, "decision_function") \
        else model.predict(X)


@pytest.mark.parametrize("kind", KINDS)
def test_a_file_of_the_former_layout_loads_and_scores_as_written(kind):
    text = (DATA / f"former_layout_{kind}.json").read_text(encoding="utf-8")
    assert '"oracleboost.boosters.' in text and ".estimator:" not in text  # the old names
    model = from_json(text)
    expected = json.loads((DATA / "former_layout_scores.json").read_text())[kind]
    np.testing.assert_array_equal(_scores(model, _rows()), np.asarray(expected))
    # written again, it names today's modules, and reads back the same
    again = to_json(model)
    assert '"oracleboost.boosters.coordinate:' not in again
    np.testing.assert_array_equal(_scores(from_json(again), _rows()), np.asarray(expected))


def test_only_the_library_s_former_modules_are_translated():
    assert current_name("oracleboost.boosters.mirror:ArgmaxVote") == \
        "oracleboost.optim.votes:ArgmaxVote"
    assert current_name("oracleboost.engine.model:Ensemble") == \
        "oracleboost.engine.model:Ensemble"
    assert current_name("os:system") == "os:system"
    with pytest.raises(ValueError, match="not one a model file may name"):
        from_json(json.dumps({"format": "oracleboost-model", "format_version": 1,
                              "library_version": "0.1.0",
                              "estimator": {"__object__": "os:system", "state": {}}}))
