"""The estimators' drawing in notebooks (scikit-learn's HTML repr): a booster shows its
oracle, and a wrapping oracle (``CachedOracle``, ``ApproximateOracle``,
``SklearnOracle``) what it wraps, as nested estimators with their own parameters,
instead of one box whose parameters read ``oracle__oracle__lambda_l2``.

scikit-learn nests a parameter only if it has ``fit``; an oracle has ``bind`` instead,
so the owners say which parameters to nest through ``_sk_visual_block_``, the hook
scikit-learn's meta-estimators use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _visual_block_class() -> Any:
    try:  # scikit-learn >= 1.7
        from sklearn.utils._repr_html.estimator import _VisualBlock
    except ImportError:  # pragma: no cover - scikit-learn 1.6
        from sklearn.utils._estimator_html_repr import _VisualBlock
    return _VisualBlock


def nested_block(owner: Any, parts: Sequence[tuple[str, Any, str]]) -> Any:
    """``owner``'s block with ``parts`` — (parameter name, estimator or oracle, a note
    after its class name) — drawn inside it, side by side; a plain box when there is
    none."""
    block = _visual_block_class()
    parts = [(name, value, note) for name, value, note in parts
             if value is not None and hasattr(value, "get_params")]
    if not parts:
        return block("single", owner, names=type(owner).__name__, name_details=str(owner))
    return block(
        "parallel",
        [value for _, value, _ in parts],
        names=[f"{name}: {type(value).__name__}{note}" for name, value, note in parts],
        name_details=[str(value) for _, value, _ in parts],
    )


def nested_parameters(owner: Any) -> list[tuple[str, Any, str]]:
    """The parameters of ``owner`` that are estimators or oracles (they have
    ``get_params`` and ``fit`` or ``bind``), as ``nested_block`` takes them."""
    return [(name, value, "") for name, value in owner.get_params(deep=False).items()
            if hasattr(value, "get_params") and not isinstance(value, type)
            and (hasattr(value, "fit") or hasattr(value, "bind"))]
