"""Fingerprints of a fixed set of fits, to show that a restructuring changed no result.

Every registered booster (:data:`oracleboost.boosters.registry.BOOSTERS`) is fitted with
every oracle of a fixed list that answers its query, on small data the package or
scikit-learn ships, with fixed seeds.  For each fit the script records a SHA-256 of its
history (every key but the times), of its predictions on held-out rows (the decision
function or the scores, and the predicted labels), and of its stop reason; an oracle a
booster refuses is recorded with the refusal's type.  Nothing here reads a file the
library wrote: a model's JSON names its classes by module, which a move of modules
changes by design.

Run it on the code before the change, then after::

    python tools/equality_fingerprints.py --write before.json
    # ... restructure ...
    python tools/equality_fingerprints.py --check before.json

``--check`` lists every fit whose fingerprint differs, and exits with 1 if any does.
The fits run one thread each (``n_jobs=1``): the results are the same on any number of
threads (the tests check that), so one is enough here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

ROUNDS = 15


def _digest(*arrays: Any) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(np.asarray(a))
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:24]


def _data(task: str) -> tuple:
    """(X_train, y_train, X_test, fit keywords) of a task, small and fixed."""
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits

    if task == "binary":
        X, y = load_breast_cancer(return_X_y=True)
        return X[:300], y[:300], X[300:400], {}
    if task == "classification":
        X, y = load_digits(return_X_y=True)
        keep = y < 4
        X, y = X[keep][:400], y[keep][:400]
        return X[:300], y[:300], X[300:], {}
    if task == "regression":
        X, y = load_diabetes(return_X_y=True)
        return X[:300], y[:300], X[300:], {}
    # ranking: 30 queries of 10 documents, grades 0..3 from a noisy linear rule
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 6))
    grades = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + rng.standard_normal(400) * 0.5
                              + 1.5), 0, 3)
    qid = np.repeat(np.arange(40), 10)
    return X[:300], grades[:300], X[300:], {"qid": qid[:300]}


def _oracles() -> dict[str, Any]:
    from oracleboost.oracles import LinearOracle, StumpOracle, TreeOracle

    return {
        "stumps": lambda: StumpOracle(n_jobs=1),
        "trees": lambda: TreeOracle(max_depth=2),
        "linear": lambda: LinearOracle(),
    }


#: The variants of a booster's options, each fitted on the binary task with stumps (and
#: with the linear class where the booster needs columns): a booster's round branches on
#: them, so each is its own path through the code.
VARIANTS: dict[str, list[dict]] = {
    "adaboost": [{"step": rule} for rule in ("quadratic", "wolfe", "optimal", "closed_form",
                                            "constant")] + [{"learning_rate": 0.5}],
    "maboost": [{"variant": v} for v in ("max_margin", "madaboost")]
    + [{"variant": "smooth", "smoothness": 20.0}, {"mirror": "euclidean"},
       {"mirror": "euclidean", "update": "active"},
       {"variant": "sparse", "mirror": "euclidean", "sparsity": 0.1}],
    "gradient-logistic": [{"projection": p} for p in ("repeated", "residual")]
    + [{"schedule": "inv_sqrt"}, {"schedule": "inv_t", "strong_convexity": 0.1}],
    "accelerated": [{"method": m} for m in ("normalized", "normalized_sqrt",
                                            "gradient_descent", "perceptron", "stochastic")],
}


def _fits() -> Iterator[tuple[str, Any, str, dict]]:
    """``(fit name, its booster's spec, its oracle's name, its parameters)``."""
    from oracleboost.boosters.registry import BOOSTERS

    for name, spec in BOOSTERS.items():
        for oracle_name in _oracles():
            yield f"{name} × {oracle_name}", spec, oracle_name, {}
        for params in VARIANTS.get(name, []):
            oracle_name = "linear" if name == "accelerated" else "stumps"
            options = ", ".join(f"{k}={v!r}" for k, v in params.items())
            yield f"{name}({options}) × {oracle_name}", spec, oracle_name, params


def fingerprints(only: str | None = None) -> Iterator[tuple[str, dict]]:
    """``(fit name, its fingerprint)`` for every fit of the fixed set (whose name
    starts with ``only``, when given)."""
    oracles = _oracles()
    for key, spec, oracle_name, options in _fits():
        if only is not None and not key.startswith(only):
            continue
        X, y, X_test, kw = _data("binary" if options else spec.task)
        name = spec.name
        params = {"n_estimators": ROUNDS, "random_state": 0, **options}
        if name in ("lpboost", "erlpboost"):
            params["nu"] = 5  # several rounds on these few, nearly separable rows
        if "random_state" not in spec.estimator().get_params():
            params.pop("random_state")
        model = spec.make(oracles[oracle_name](), **params)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, y, **kw)
        except Exception as exc:  # a refused oracle is part of the behaviour
            yield key, {"refused": type(exc).__name__}
            continue
        history = {k: _digest(v) for k, v in sorted(model.history_.items())
                   if "time" not in k}
        scores = (model.decision_function(X_test) if hasattr(model, "decision_function")
                  else model.predict(X_test))
        yield key, {"history": history, "scores": _digest(scores),
                    "predict": _digest(model.predict(X_test)),
                    "stop": str(getattr(model, "stop_reason_", ""))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="FILE", help="record the fingerprints in FILE")
    mode.add_argument("--check", metavar="FILE", help="compare with those in FILE")
    parser.add_argument("--only", metavar="PREFIX",
                        help="only the fits whose names start with PREFIX (a booster's)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    found = {}
    for key, value in fingerprints(args.only):
        found[key] = value
        print(f"{key}: {'refused (' + value['refused'] + ')' if 'refused' in value else 'fitted'}",
              file=sys.stderr)
    seconds = time.perf_counter() - start
    if args.write:
        with open(args.write, "w", encoding="utf-8") as f:
            json.dump(found, f, indent=1, sort_keys=True)
        print(f"{len(found)} fits recorded in {args.write} ({seconds:.0f} s)")
        return 0
    with open(args.check, encoding="utf-8") as f:
        recorded = json.load(f)
    if args.only is not None:
        recorded = {k: v for k, v in recorded.items() if k.startswith(args.only)}
    differ = sorted(k for k in recorded.keys() | found.keys()
                    if recorded.get(k) != found.get(k))
    for key in differ:
        was, now = recorded.get(key), found.get(key)
        if was is None or now is None:
            print(f"{key}: {'new' if was is None else 'missing'}")
            continue
        parts = [p for p in sorted(was.keys() | now.keys()) if was.get(p) != now.get(p)]
        print(f"{key}: differs in {', '.join(parts)}")
    print(f"{len(found)} fits, {len(differ)} differ ({seconds:.0f} s)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
