"""Type aliases shared by the library's signatures.

* :data:`ArrayLike` — anything :func:`numpy.asarray` accepts (NumPy's own alias,
  re-exported so that modules annotate inputs from one place).
* :data:`RandomStateLike` — what :func:`sklearn.utils.check_random_state` accepts: a
  ``numpy.random.RandomState``, an int seed, or ``None`` (NumPy's global generator).

Query seeds of the Oracle protocol are plain ``int | None`` (a seed drawn by the booster),
not a :data:`RandomStateLike`.
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ArrayLike", "RandomStateLike"]

#: A random state as scikit-learn takes it: a generator, an int seed or ``None``.
RandomStateLike: TypeAlias = np.random.RandomState | int | None
