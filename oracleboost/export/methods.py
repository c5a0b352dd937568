"""The boosters' own ways out: ``save_model`` / ``load_model`` (JSON,
:mod:`oracleboost.model_json`) and ``to_lightgbm`` (:mod:`oracleboost.export.lightgbm`),
as a mixin every booster of the library takes; a booster's class joins the model files'
allow-list as it is made.  What LightGBM answers of a model of trees (leaf indices,
TreeSHAP contributions, split gains) the booster answers through its export: ``apply``,
``predict(X, pred_leaf=True)``, ``predict(X, pred_contrib=True)`` and
``importance_type="gain"``."""

from __future__ import annotations

import copy
import os
import warnings
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from oracleboost._typing import ArrayLike
from oracleboost.engine.backends import backend_for
from oracleboost.engine.input import validate_input
from oracleboost.engine.inspection import num_iteration_doc
from oracleboost.export.json_model import load_model, save_model
from oracleboost.export.lightgbm import ExportWarning, to_lightgbm
from oracleboost.export.schema import persisted
from oracleboost.rows.partitioned import NotDistributedError

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

    def to_lightgbm(self, X: ArrayLike | None = None, *,
                    link: str = "native") -> lightgbm.Booster:
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
        link : {"native", "standard"}, default="native"
            ``"standard"`` writes a link ``σ(c·f)`` (the exponential loss: ``c = 2``)
            as ``c`` times every leaf with ``binary sigmoid:1``, so that SHAP's and
            onnxmltools' probabilities (which ignore ``sigmoid``) are
            :meth:`predict_proba` too; the raw score is then ``c`` times
            :meth:`decision_function` (see :func:`~oracleboost.export.to_lightgbm`).

        Returns
        -------
        lightgbm.Booster
        """
        return to_lightgbm(self, X, link=link)

    @num_iteration_doc
    def apply(self, X: ArrayLike, *, num_iteration: int | None = None) -> np.ndarray:
        """The leaf each row reaches in each tree of the exported model
        (:meth:`to_lightgbm`): ``predict(X, pred_leaf=True)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        num_iteration : int or None, default=None
            <num_iteration>

        Returns
        -------
        ndarray of shape (n_samples, n_trees)
            LightGBM's leaf indices, ``to_lightgbm().predict(X, pred_leaf=True)`` of the
            model after ``num_iteration`` rounds: the trees in the export's order, first
            one constant tree a score holding the intercept (leaf 0 for every row), then
            one tree a score for each round (for a model whose last round re-solved its
            coefficients, each hypothesis once).

        Raises
        ------
        ValueError
            When the model is not an ensemble of trees (naming its weak learner).
        """
        return self._tree_prediction(X, "pred_leaf", num_iteration)

    def _tree_prediction(self, X: ArrayLike, option: str,
                         num_iteration: int | None = None) -> np.ndarray:
        """``to_lightgbm().predict(X, pred_leaf=True)`` or ``pred_contrib=True`` (``option``)
        of the model after ``num_iteration`` rounds, X checked as ``decision_function``
        checks it.  The export of a model cut back to ``num_iteration`` rounds is the
        model's own export cut back (a totally corrective model's too: the cut model's
        terms, at the coefficients it had then).  Contributions are path-dependent
        TreeSHAP over the trees' own covers: stumps have none, and count 1 a leaf (a
        warning says so, with the way to count them on the training rows)."""
        name = type(self).__name__
        if backend_for(X) is not None:
            raise NotDistributedError(
                f"{name}.predict({option}=True) reads the exported trees in this process: "
                "pass a NumPy array (X.compute(), or a block of it)")
        check_is_fitted(self, "ensemble_")
        model = self._model_at(num_iteration)
        target = self
        if model is not self.ensemble_:
            target = copy.copy(self)
            target.ensemble_ = model
        X = validate_input(self, X, reset=False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ExportWarning)
            try:
                booster = to_lightgbm(target)
            except ValueError as exc:
                raise ValueError(f"{name}.predict({option}=True) answers through the model's "
                                 f"export to LightGBM: {exc}") from None
        for w in caught:  # the covers matter to the contributions only
            if not issubclass(w.category, ExportWarning):
                warnings.warn(w.message, w.category, stacklevel=3)
                continue
            if option != "pred_contrib":
                continue
            message = str(w.message)
            if "carry no training counts" in message:
                message = (
                    f"{name}'s weak learners carry no training counts: the contributions "
                    "are TreeSHAP's over covers of 1 a leaf (each split's sides weighed "
                    "equally); to_lightgbm(X_train).predict(X, pred_contrib=True) counts "
                    "them on the training rows")
            warnings.warn(message, ExportWarning, stacklevel=3)
        return booster.predict(X, **{option: True})

    def _gain_importances(self) -> np.ndarray:
        """``importance_type="gain"``: ``to_lightgbm().feature_importance("gain")``, the
        total gain of each feature's splits in the exported trees (see
        ``feature_importances_``)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExportWarning)  # the covers are as documented
            try:
                booster = to_lightgbm(self)
            except ValueError as exc:
                raise AttributeError(
                    f"{type(self).__name__} has no gain importances (importance_type="
                    f"'gain' reads the exported trees' split gains): {exc}") from None
        return booster.feature_importance("gain").astype(np.float64)
