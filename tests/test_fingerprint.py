"""One fingerprint of data for warm starts, held-out splits and the oracle cache."""

import numpy as np

from oracleboost._fingerprint import fingerprint
from oracleboost.engine.base import data_signature
from oracleboost.oracles import cache


def test_the_same_values_in_any_layout_give_the_same_fingerprint():
    X = np.random.RandomState(0).randn(300, 7)
    same = [X, np.asfortranarray(X), X.astype(X.dtype.newbyteorder(">")),
            np.repeat(X, 2, axis=1)[:, ::2]]
    assert len({fingerprint(a) for a in same}) == 1
    ro = X.copy()
    ro.flags.writeable = False
    assert fingerprint(ro) == fingerprint(X)
    # the row-block path for non-C-ordered arrays (blocks smaller than the array)
    big = np.random.RandomState(1).randn(3000, 800)
    assert fingerprint(np.asfortranarray(big)) == fingerprint(big)


def test_different_values_dtypes_shapes_and_items_differ():
    X = np.arange(12.0).reshape(3, 4)
    Y = X.copy()
    Y[2, 3] = np.nextafter(Y[2, 3], np.inf)  # one ulp
    prints = {fingerprint(X), fingerprint(Y), fingerprint(X.astype(np.float32)),
              fingerprint(X.reshape(4, 3)), fingerprint(X, None), fingerprint(None, X),
              fingerprint(X, 1.0), fingerprint(X, 1)}
    assert len(prints) == 8


def test_every_user_asks_the_one_function():
    X = np.random.RandomState(2).randn(20, 3)
    assert data_signature(X, None) == fingerprint(X, None)
    assert cache._fingerprint is fingerprint
