"""Validation curves and early stopping, shared by every booster.

``fit(..., eval_set=[(X_val, y_val), ...])`` records, after every weak learner, the
booster's own loss (and a classifier's error) on each set as ``history_["val_loss_0"]``,
``history_["val_error_0"]``, …  The scores on a set are kept up to date by the model's
running sums (:class:`~oracleboost.boosters.model.RunningScores`): each round predicts
only its new hypothesis on the set, never the whole ensemble again.

Early stopping follows scikit-learn's gradient boosting (``n_iter_no_change``,
``validation_fraction``, ``tol``): when ``n_iter_no_change`` is set, a fraction of the
training rows is held out (stratified by class for classifiers, by query for rankers,
drawn with ``random_state``), its curve is ``history_["heldout_loss"]``, and the fit
stops once ``n_iter_no_change`` rounds in a row have not lowered the held-out loss by
more than ``tol`` below its best.  Unlike scikit-learn (and like LightGBM's
``best_iteration``), the model is then cut back to the round of the smallest held-out
loss, so that what is kept is the best model the fit saw.  The watching is done by the
:class:`~oracleboost.boosters.monitors.EarlyStopping` monitor.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from sklearn.model_selection import GroupShuffleSplit, train_test_split
from sklearn.utils import check_random_state

from .._typing import ArrayLike, RandomStateLike

__all__ = ["EvalSet", "held_out_split", "documented"]


@dataclass
class EvalSet:
    """One data set watched during a fit.

    ``target`` and ``weight`` are in the booster's own encoding (``_eval_target``);
    ``scores`` is the model's running decision on ``X``, attached when the loop starts.
    History keys are ``f"{prefix}_{metric}{suffix}"``: ``val_loss_0`` for
    ``eval_set[0]``, ``heldout_loss`` for early stopping's held-out split.
    """

    prefix: str
    suffix: str
    X: Any
    target: Any
    weight: np.ndarray
    scores: Any = field(default=None, repr=False)

    def key(self, metric: str) -> str:
        return f"{self.prefix}_{metric}{self.suffix}"


def held_out_split(
    n: int, fraction: float, random_state: RandomStateLike, *,
    stratify: ArrayLike | None = None, groups: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Row indices ``(train, held_out)``: a ``fraction`` of the rows, stratified by
    ``stratify`` (class labels) or whole groups of ``groups`` (query ids) held out.

    Raises ``ValueError`` naming ``validation_fraction`` when no such split exists (a
    class with a single row, fewer held-out rows than classes, a single query).
    """
    rs = check_random_state(random_state)
    index = np.arange(n)
    try:
        if groups is not None:
            splitter = GroupShuffleSplit(n_splits=1, test_size=fraction, random_state=rs)
            train, held = next(splitter.split(index, groups=groups))
        else:
            train, held = train_test_split(
                index, test_size=fraction, stratify=stratify, random_state=rs
            )
    except ValueError as exc:
        raise ValueError(
            f"validation_fraction={fraction}: early stopping cannot hold out this fraction "
            f"of the {n} training rows ({exc}); change validation_fraction, or set it to "
            "None to watch eval_set[0]"
        ) from exc
    if len(train) == 0 or len(held) == 0:
        raise ValueError(
            f"validation_fraction={fraction} leaves {len(train)} training and {len(held)} "
            f"held-out rows of {n}; both must be non-empty"
        )
    return np.sort(train), np.sort(held)


#: The class :func:`documented` decorates (returned as it is, its docstring filled).
_Class = TypeVar("_Class")

_PARAMETERS = """\
    n_iter_no_change : int or None, default=None
        Early stopping, as in scikit-learn's gradient boosting: hold out
        ``validation_fraction`` of the training rows (stratified by class; whole queries
        for the ranker; drawn with ``random_state``), stop once this many rounds in a row
        have not lowered the held-out loss by more than ``{tol}`` below its best, and keep
        the best round's model (``stop_reason_ = "early_stopping"``; see
        :mod:`oracleboost.boosters.validation`).  None (default): off.
    validation_fraction : float in (0, 1) or None, default=0.1
        The held-out fraction.  None: early stopping watches ``eval_set[0]`` (without
        one, the training loss).
    {tol} : float, default=1e-4
        The least decrease of the watched loss that counts as progress{tol_note}."""

_ATTRIBUTES = """\
    validation_loss_ : ndarray
        Early stopping's watched loss after each round, the rounds after the best one
        (which were cut) included; empty when early stopping is off.
    best_iteration_ : int or None
        The weak learners kept by early stopping (the length of ``history_``); None
        when it is off."""


def documented(
    tol: str = "tol", tol_note: str = "", **snippets: str
) -> Callable[[type[_Class]], type[_Class]]:
    """Class decorator: the one way a booster's docstring shares text with others.

    Each line ``    <name>`` of the docstring is replaced by the snippet of that name:
    ``<early stopping parameters>`` and ``<validation attributes>`` (one text for every
    booster; ``tol`` names the early-stopping tolerance), and any snippet given as a
    keyword (``functional_parameters=...`` fills ``<functional parameters>``; a snippet
    may itself hold the built-in placeholders).  A placeholder left unfilled is an error.
    """
    fills = {name.replace("_", " "): text for name, text in snippets.items()}
    fills["early stopping parameters"] = _PARAMETERS.format(tol=tol, tol_note=tol_note)
    fills["validation attributes"] = _ATTRIBUTES

    def fill(cls):
        doc = cls.__doc__
        for name, text in fills.items():  # the given snippets first: they may hold more
            doc = doc.replace(f"    <{name}>", text.rstrip("\n"))
        left = re.findall(r"^    <([a-z ]+)>$", doc, flags=re.M)
        if left:
            raise ValueError(f"{cls.__name__}'s docstring has no snippet for {left}")
        cls.__doc__ = doc
        return cls

    return fill
