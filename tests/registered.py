"""A registered booster as the tests of rounds make it: :func:`instances.make`, with
:data:`instances.SEVERAL_ROUNDS`' parameters (the registry of small instances,
tests/instances.py, keeps them)."""

from __future__ import annotations

from instances import SEVERAL_ROUNDS, make

__all__ = ["SEVERAL_ROUNDS", "make"]
