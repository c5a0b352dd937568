"""The JSON format's versions: a file of every version this library reads loads and
predicts as it was written; a file of another version is refused, naming its version
and the versions read.

``tests/data/format_v1_mlp.json`` was written by the library in format version 1 (a
functional gradient regressor over ``MLPOracle`` nets, on 30 rows × 3 features from
``RandomState(0)``, rounded to 3 decimals), with its predictions on those rows in
``format_v1_scores.json``.  Version 1 named the nets by a class of the library's own;
version 2 names scikit-learn's ``MLPRegressor`` (and a kernel model's kernel
``PairwiseKernel``: ``tests/data/former_layout_accelerated.json``, of version 1 too).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from oracleboost.model_json import FORMAT_VERSION, READ_VERSIONS, from_json, to_json

DATA = Path(__file__).parent / "data"


def _rows() -> np.ndarray:
    return np.round(np.random.RandomState(0).randn(30, 3), 3)


def test_the_versions_read_are_every_one_up_to_the_one_written():
    assert FORMAT_VERSION == 2 and READ_VERSIONS == tuple(range(1, FORMAT_VERSION + 1))


def test_a_version_1_file_loads_and_predicts_as_written():
    text = (DATA / "format_v1_mlp.json").read_text(encoding="utf-8")
    doc = json.loads(text)
    assert doc["format_version"] == 1 and '"oracleboost.oracles.sklearn:_QuietMLP"' in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (scikit-learn's warning of an old pickle: none)
        model = from_json(text)
    expected = np.asarray(json.loads((DATA / "format_v1_scores.json").read_text())["mlp"])
    np.testing.assert_array_equal(model.predict(_rows()), expected)
    # written again: version 2, naming scikit-learn's class, and read back the same
    again = to_json(model)
    assert json.loads(again)["format_version"] == 2 and "_QuietMLP" not in again
    assert '"sklearn.neural_network._multilayer_perceptron:MLPRegressor"' in again
    np.testing.assert_array_equal(from_json(again).predict(_rows()), expected)


def test_a_version_1_kernel_model_is_written_again_with_its_public_kernel():
    text = (DATA / "former_layout_accelerated.json").read_text(encoding="utf-8")
    assert json.loads(text)["format_version"] == 1 and ":_Kernel" in text
    again = to_json(from_json(text))
    assert '"oracleboost.boosters.accelerated.estimator:PairwiseKernel"' in again
    assert "_Kernel" not in again


@pytest.mark.parametrize("version", [3, 17])
def test_a_version_not_read_is_refused_by_name(version):
    doc = json.loads((DATA / "format_v1_mlp.json").read_text(encoding="utf-8"))
    doc["format_version"] = version
    with pytest.raises(ValueError, match=rf"written in format version {version} \(oracleboost "
                                         r"0\.1\.0\); this oracleboost \(.*\) reads format "
                                         r"versions 1 and 2: upgrade oracleboost"):
        from_json(json.dumps(doc))


@pytest.mark.parametrize("version", [0, -1, "1", True, 1.0, None])
def test_a_version_that_is_no_version_is_refused(version):
    doc = {"format": "oracleboost-model", "format_version": version,
           "library_version": "0.1.0", "estimator": None}
    with pytest.raises(ValueError, match=r"not an oracleboost model: format_version"):
        from_json(json.dumps(doc))
