"""Fitted models stored with ``skops.io`` (and MLflow), trusting a published list of types.

``skops.io`` stores a model as data and, on load, makes only the types its caller trusts
(beyond the builtins, NumPy's and scikit-learn's estimators, which it trusts itself).
What a stored oracleboost model holds is a documented, public set of types: the booster,
its model (``Ensemble``, ``LinearModel``, ``KernelModel`` and the kernel), its
hypotheses, its oracle's and loss's parameters, the history (arrays), and, for a booster
fitted with ``warm_start=True``, the running state a later fit continues from, stored as
plain data (dicts, tuples, numbers, arrays; the working objects are made again on load).
:func:`trusted_types` is that list: the same allow-list of classes that a JSON model file
may name (:func:`oracleboost.export.schema.allowed_classes`), with scikit-learn's
``sklearn.tree._tree.Tree`` (a fitted tree's nodes, which skops leaves to its caller).
So::

    import skops.io as sio
    from oracleboost.persistence import trusted_types

    sio.dump(model, "model.skops")
    model = sio.load("model.skops", trusted=trusted_types())

or :func:`dump` and :func:`load`, which do the same (the file written atomically).
MLflow's scikit-learn flavour stores with skops by default and loads through the same
check: give it the list (``mlflow.sklearn.log_model(model, name=...,
skops_trusted_types=trusted_types())``).

The list covers every booster of the library with its own oracles and losses and the
scikit-learn estimators a model file may hold (trees, linear models, neural nets and
their optimizers, dummies, label encoders).  A model holding classes of your own (an
oracle, a loss, a scikit-learn estimator outside that list through ``SklearnOracle``)
needs those trusted too: ``skops.io.get_untrusted_types(file=path)`` names them; review
them before you add them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

# The boosters join the allow-list as their classes are made (export.methods).
import oracleboost.boosters  # noqa: F401
from oracleboost._files import atomic_path
from oracleboost.export.schema import allowed_classes

__all__ = ["trusted_types", "dump", "load"]


def trusted_types() -> list[str]:
    """The type names a ``skops.io`` file of an oracleboost model may hold.

    The names are skops's (``module.qualname``, as
    ``skops.io.get_untrusted_types`` gives them), sorted: the library's boosters, models,
    hypotheses, oracles, losses and stop reasons, and the scikit-learn classes its models
    may hold (``sklearn.tree._tree.Tree`` among them), the allow-list that JSON model
    files are read through as well (:mod:`oracleboost.export.schema`).

    Returns
    -------
    list of str
        Pass it as ``trusted=`` to ``skops.io.load``, or as MLflow's
        ``skops_trusted_types``.

    Examples
    --------
    >>> from oracleboost.persistence import trusted_types
    >>> names = trusted_types()
    >>> "oracleboost.oracles.stumps.SignStump" in names, "sklearn.tree._tree.Tree" in names
    (True, True)
    """
    return sorted({f"{cls.__module__}.{cls.__qualname__}"
                   for cls in allowed_classes().values()})


def dump(model: Any, path: str | os.PathLike) -> None:
    """Store ``model`` with ``skops.io.dump`` at ``path``, atomically.

    The file is written under a temporary name beside ``path`` and renamed onto it when
    complete: a write that fails leaves a previous file at ``path`` whole (and its
    permission bits are kept).  Load it with
    :func:`load` (or ``skops.io.load(path, trusted=trusted_types())``).
    """
    sio = _skops_io()
    with atomic_path(path) as tmp:
        sio.dump(model, tmp)
        if Path(path).exists():  # a previous file's permission bits are kept
            shutil.copymode(path, tmp)


def load(path: str | os.PathLike) -> Any:
    """The model stored at ``path`` by :func:`dump` or ``skops.io.dump``, trusting
    exactly :func:`trusted_types`.

    Raises
    ------
    skops.io.exceptions.UntrustedTypesFoundException
        When the file holds a type outside the list (a class of your own, say): check
        ``skops.io.get_untrusted_types(file=path)`` and load it with ``skops.io.load``
        and the types you trust.
    """
    sio = _skops_io()
    return sio.load(path, trusted=trusted_types())


def _skops_io() -> Any:
    try:
        import skops.io as sio
    except ImportError:
        raise ImportError("oracleboost.persistence.dump and load need skops: pip install "
                          "skops") from None
    return sio
