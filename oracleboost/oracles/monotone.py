"""Monotone constraints of a hypothesis class, spelt as LightGBM spells them.

``monotone_constraints`` holds one of −1, 0, +1 per feature: the hypotheses must not
decrease (+1) or not increase (−1) in that feature with the others fixed, or are free
(0).  :class:`~oracleboost.oracles.StumpOracle` and
:class:`~oracleboost.oracles.TreeOracle` take it.

A booster's model ``f = Σ_j c_j h_j`` keeps the constraint when every ``h_j`` does and
every ``c_j >= 0``: a negative coefficient turns a rising hypothesis into a falling one.
The constrained classes are not closed under negation, so a booster must take every
answer as it comes (its edge ``<r, h>`` is at least 0: the constants of both signs are
always candidates) and step along it, never against it; the boosters that cannot
promise this refuse a constrained oracle by name.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

__all__ = ["check_monotone_constraints", "is_constrained", "monotone_directions"]


def check_monotone_constraints(value: Sequence[int] | None) -> None:
    """Refuse a ``monotone_constraints`` that is not None or a sequence of −1, 0, +1."""
    if value is None:
        return
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TypeError("monotone_constraints must be None or a sequence of -1, 0, +1 (one "
                        f"per feature); got {type(value).__name__}")
    for j, c in enumerate(value):
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Integral) or \
                c not in (-1, 0, 1):
            raise ValueError("monotone_constraints must hold -1, 0 or +1 for each feature; "
                             f"entry {j} is {c!r}")


def is_constrained(value: Sequence[int] | None) -> bool:
    """Whether ``monotone_constraints`` constrains some feature (a nonzero entry); a
    property of the parameter alone, as capabilities must be."""
    try:
        return value is not None and any(int(c) != 0 for c in value)
    except (TypeError, ValueError):
        return True  # a bad value: bind refuses it by name


def monotone_directions(value: Sequence[int] | None, n_features: int) -> np.ndarray | None:
    """The constraints as an int64 array of one entry per feature, or None when there are
    none (None, or every entry 0: the unconstrained class)."""
    check_monotone_constraints(value)
    if value is None:
        return None
    if len(value) != n_features:
        raise ValueError(f"monotone_constraints has {len(value)} entries, but X has "
                         f"{n_features} features: give one of -1, 0, +1 per feature")
    out = np.asarray([int(c) for c in value], dtype=np.int64)
    return out if out.any() else None
