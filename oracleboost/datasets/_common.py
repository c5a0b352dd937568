"""Argument checks shared by the data-set modules."""

from __future__ import annotations

import numpy as np


def _check_size(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer ≥ {minimum}; got {value!r}")
    return int(value)
