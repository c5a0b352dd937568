"""Early stopping's held-out rows, as a mixin of every booster.

With ``n_iter_no_change`` set and ``validation_fraction`` a fraction, ``fit`` holds out
that fraction of the training rows (stratified by class for classifiers, whole queries
for the ranker, drawn with ``random_state``: :func:`held_out_split`) and watches the
booster's loss on them (:mod:`.eval_sets`, :class:`~oracleboost.engine.monitors.
EarlyStopping`).  The split is kept with the fitted model (``_held_out_``, with the
data's fingerprint and the fraction), so that a warm start continues on the same rows,
also when ``random_state`` is None; a continuation that would hold out other rows is
refused, naming the parameter.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import is_classifier
from sklearn.model_selection import GroupShuffleSplit, train_test_split
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.multiclass import check_classification_targets

from oracleboost._fingerprint import fingerprint
from oracleboost._typing import ArrayLike, RandomStateLike
from oracleboost.engine.backends import backend_for
from oracleboost.engine.input import validate_input

__all__ = ["HoldOutMixin", "held_out_split"]


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


class HoldOutMixin:
    """Early stopping's held-out rows for a booster (a
    :class:`~oracleboost.engine.base.BaseBooster`): whether early stopping is on and its
    tolerance, the refusal of early stopping with nothing to watch, and the split of
    ``fit``'s rows (X and y checked by ``validate_input``)."""

    #: The per-row argument whose groups a held-out split keeps whole (the ranker's qid).
    _split_groups_arg: str | None = None

    def _early_stopping_on(self) -> bool:
        """Whether this fit stops early (``n_iter_no_change`` is set)."""
        return self.n_iter_no_change is not None

    def _early_stopping_tol(self) -> float:
        """The least decrease of the watched loss that counts as progress: ``tol``, or
        the parameter that stands for it where ``tol`` means another thing."""
        return float(self.tol)

    def _check_watched(self, eval_set) -> None:
        """Refuse early stopping with nothing to watch: ``validation_fraction=None``
        holds out no rows, so it needs an ``eval_set`` (without one the loop would watch
        the training loss, which many boosters lower every round: the fit ran to
        ``n_estimators`` and never stopped, or stopped after one round on a training
        error that does not move, without a word)."""
        if not self._early_stopping_on() or self.validation_fraction is not None:
            return
        if eval_set is not None and not (isinstance(eval_set, Sequence) and len(eval_set) == 0):
            return
        raise ValueError(
            f"n_iter_no_change={self.n_iter_no_change} needs a loss to watch, but "
            "validation_fraction=None holds out no rows and no eval_set is given: set "
            "validation_fraction (e.g. 0.1) to hold out training rows, or pass "
            "eval_set=[(X_val, y_val)] (its first set is watched; eval_set=[(X, y)] "
            "watches the training loss)"
        )

    def _hold_out(self, X, y, rows):
        """Early stopping's held-out split: ``(X, y, rows)`` to train on and the
        held-out ``(X, y, extra)``, or the arguments unchanged and None."""
        if not self._early_stopping_on() or self.validation_fraction is None:
            saved = self._saved_split()
            if self._resuming() and saved is not None:
                raise ValueError(
                    "warm_start=True continues the fitted model on the rows it was trained "
                    "on, but that fit held out validation_fraction="
                    f"{saved[1]} of them for early stopping and this one would "
                    "train on all: keep n_iter_no_change and validation_fraction as they "
                    "were, or set warm_start=False to fit anew"
                )
            vars(self).pop("_held_out_", None)  # this fit holds out no rows
            return X, y, rows, None
        if (backend := backend_for(X)) is not None:
            backend.refuse("held_out_rows", "early stopping with validation_fraction")
        given = X
        X, y = validate_input(self, X, y)
        n = X.shape[0]
        arrays = [
            None if a is None else self._row_array(name, a, n)
            for name, a in zip(self._row_args, rows, strict=True)
        ]
        named = dict(zip(self._row_args, arrays, strict=True))
        groups = named.get(self._split_groups_arg) if self._split_groups_arg else None
        stratify = None
        if groups is None and is_classifier(self):
            check_classification_targets(y)  # "continuous" labels get sklearn's message
            try:
                if len(np.unique(y)) >= 2:  # one class: fit's own check says so
                    stratify = y
            except TypeError:  # unorderable labels: fit's own check says so
                pass
        signature = fingerprint(X, y, *arrays)  # (base's data_signature: warm start's)
        fraction = float(self.validation_fraction)
        kept = self._kept_split(signature, fraction)
        train, held = kept if kept is not None else held_out_split(
            n, fraction, self.random_state, stratify=stratify, groups=groups)
        # (the data's signature and the fraction, then the split)
        self._held_out_ = ((signature, fraction), train, held)
        rows = tuple(None if a is None else a[train] for a in arrays)
        extra = named.get(self._eval_row_arg)
        if hasattr(given, "columns"):
            # a DataFrame's rows as a DataFrame: the fit's own validation then keeps its
            # feature_names_in_ (from the bare array it would drop them, and predict on a
            # DataFrame would warn)
            X = given
        return (_safe_indexing(X, train), y[train], rows,
                (_safe_indexing(X, held), y[held], None if extra is None else extra[held]))

    def _kept_split(self, signature: str, fraction: float
                    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The held-out split of the fit a warm start continues, on data of this
        ``signature`` (its model was trained on those rows: the same rows again, also
        when ``random_state`` is None); None for a new fit (which draws its split with
        this ``validation_fraction`` and ``random_state``) or other data (which
        :meth:`_boost` refuses).  A continuation that would hold out other rows than
        its fit did is refused, naming the parameter."""
        saved = self._saved_split()
        if not self._resuming():
            return None
        if saved is None:
            raise ValueError(
                "warm_start=True continues the fitted model on the rows it was trained "
                "on, but that fit held out no rows for early stopping and this one would "
                f"hold out validation_fraction={fraction} of them: keep n_iter_no_change "
                "and validation_fraction as they were (validation_fraction=None watches "
                "eval_set[0]), or set warm_start=False to fit anew"
            )
        data, kept, train, held = saved
        if data != signature:
            return None
        if kept != fraction:
            raise ValueError(
                f"validation_fraction={fraction} differs from the {kept} of the fit this "
                "warm start continues, whose model was trained on the other rows: set it "
                "back, or set warm_start=False to fit anew"
            )
        return train, held

    def _saved_split(self) -> tuple[str, float, np.ndarray, np.ndarray] | None:
        """The fitted model's held-out split as ``(signature, validation_fraction,
        train, held)``; None without one (or in the layout of an older version, which did
        not keep the fraction)."""
        saved = getattr(self, "_held_out_", None)
        if saved is None or not isinstance(saved[0], tuple):
            return None
        (signature, fraction), train, held = saved
        return signature, fraction, train, held

    def _row_array(self, name: str, a, n: int) -> np.ndarray:
        """A per-row argument of ``fit`` (``_row_args``) as an array of ``n`` rows; the
        ranker checks its ``qid`` here."""
        a = np.asarray(a)
        if a.shape[:1] != (n,):
            raise ValueError(f"{name} has shape {a.shape}; X has {n} rows")
        return a

