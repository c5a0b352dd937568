"""The boosters' own ways out: ``save_model`` / ``load_model`` (JSON,
:mod:`oracleboost.model_json`) and ``to_lightgbm`` (:mod:`oracleboost.export.lightgbm`),
as a mixin every booster of the library takes; a booster's class joins the model files'
allow-list as it is made."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TypeVar

from oracleboost._typing import ArrayLike
from oracleboost.export.json_model import load_model, save_model
from oracleboost.export.lightgbm import to_lightgbm
from oracleboost.export.schema import persisted

if TYPE_CHECKING:  # pragma: no cover - the export imports lightgbm when it runs
    import lightgbm

__all__ = ["ExportMixin"]

_Self = TypeVar("_Self", bound="ExportMixin")


class ExportMixin:
    """``save_model``, ``load_model`` and ``to_lightgbm`` for a booster (a
    :class:`~oracleboost.engine.base.BaseBooster`).  A subclass defined in the library
    joins the classes a model file may name (:func:`~oracleboost.export.schema.persisted`);
    a user's subclass does not (a file may name only the library's classes)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("oracleboost.") and not cls.__name__.startswith("_"):
            persisted(cls)

    def save_model(self, path: str | os.PathLike) -> None:
        """Write the booster (parameters, fitted attributes, model) to ``path`` as plain
        JSON text, which :meth:`load_model` reads without pickle
        (:mod:`oracleboost.model_json`): the loaded booster predicts bit for bit as this
        one.  The running state ``warm_start`` continues from is not written: a warm
        start of the loaded booster fits anew, with a warning (a pickle or ``skops.io``
        file of a booster fitted with ``warm_start=True`` keeps it).

        Raises
        ------
        TypeError
            Naming what cannot be written: an object of a class outside the allow-list
            (a ``joblib.Memory`` as ``CachedOracle``'s memory: give a path; a weak
            learner of another library, or a scikit-learn estimator that is not a tree,
            linear model, MLP, dummy or label encoder: use ``skops.io``).  The write is
            atomic: a failed save leaves a previous file whole.
        """
        save_model(self, path)

    @classmethod
    def load_model(cls: type[_Self], path: str | os.PathLike) -> _Self:
        """The booster :meth:`save_model` wrote to ``path``.

        Loading runs nothing the file names: it makes only an allow-list of classes and
        plain arrays, and checks every field.  A ``ValueError`` if the file holds
        another class, comes from a newer format version than this library reads, names
        a class outside the allow-list, or has a field missing, of the wrong type or out
        of range (named by its place in the document)."""
        model = load_model(path)
        if not isinstance(model, cls):
            raise ValueError(f"{os.fspath(path)!r} holds a {type(model).__name__}, not a "
                             f"{cls.__name__}")
        return model

    def to_lightgbm(self, X: ArrayLike | None = None) -> lightgbm.Booster:
        """The fitted model as a ``lightgbm.Booster``, where its weak learners are trees
        (stumps, scikit-learn trees, LightGBM trees; :mod:`oracleboost.export.lightgbm`).

        ``to_lightgbm().predict(X, raw_score=True)`` is :meth:`decision_function` (a
        regressor's :meth:`predict`), so SHAP's ``TreeExplainer``, LightGBM's compiled
        prediction and LightGBM's converters read the model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Rows whose counts become the trees' covers (what SHAP's path-dependent
            TreeSHAP integrates over), usually the training rows; None keeps the trees'
            own (stumps have none: 1 a leaf, with a warning).

        Returns
        -------
        lightgbm.Booster
        """
        return to_lightgbm(self, X)
