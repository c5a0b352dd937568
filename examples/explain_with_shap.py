"""Explain a boosted MABoost model with SHAP, through its export to LightGBM
=========================================================================

MABoost (``MirrorBoostingClassifier``, Naghibi & Pfister 2014: mirror ascent with the
entropy map, ±1 stumps) on scikit-learn's breast cancer data (569 rows, 30 features;
400 to train, the rest to explain).  ``model.to_lightgbm(X_train)`` writes its ensemble
as a ``lightgbm.Booster``: one constant tree for the intercept, then one stump a round
with its leaves times the round's coefficient, the covers counted on the training rows.
SHAP's ``TreeExplainer`` reads that booster as it reads any LightGBM model and computes
exact TreeSHAP values (path-dependent, over the training rows' covers) in milliseconds,
where a model-agnostic explainer calls ``predict`` thousands of times.

It prints that the export predicts the booster's decision function bit for bit, the
SHAP values' additivity error (SHAP values plus the expected value against the
decision: float64 rounding), that the expected value is the mean decision over the
training rows, and the features with the largest mean ``|SHAP|``; ``--plot FILE.png`` draws
them as bars.  Needs ``pip install shap``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from oracleboost import MirrorBoostingClassifier


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="MABoost's rounds")
    parser.add_argument("--seed", type=int, default=0, help="the train/explain split")
    parser.add_argument("--top", type=int, default=8, help="features to print")
    parser.add_argument("--plot", metavar="FILE.png", help="save a bar chart of mean |SHAP|")
    parser.add_argument("--show", action="store_true",
                        help="show the chart (plt.show(); in the docs' gallery, its picture)")
    args = parser.parse_args(argv)
    try:
        import shap  # an optional dependency, in no extra of oracleboost's
    except ImportError:
        raise SystemExit("this example needs shap: pip install shap") from None

    data = load_breast_cancer()
    X_train, X_explain, y_train, _ = train_test_split(
        data.data, data.target, train_size=400, stratify=data.target, random_state=args.seed)
    model = MirrorBoostingClassifier(n_estimators=args.rounds).fit(X_train, y_train)
    booster = model.to_lightgbm(X_train)  # covers counted on the training rows

    decision = model.decision_function(X_explain)
    exported = booster.predict(X_explain, raw_score=True)
    same = bool(np.array_equal(exported, decision))
    print(f"MABoost, {model.n_estimators_} rounds of stumps on breast cancer; exported to "
          f"LightGBM as {booster.num_trees()} trees; raw scores equal to "
          f"decision_function bit for bit: {'yes' if same else 'NO'}")

    start = time.perf_counter()
    explainer = shap.TreeExplainer(booster)
    values = np.asarray(explainer.shap_values(X_explain))
    seconds = time.perf_counter() - start
    additivity = float(np.max(np.abs(values.sum(axis=1) + explainer.expected_value - decision)))
    mean_train = float(model.decision_function(X_train).mean())
    print(f"TreeSHAP on {len(X_explain)} rows: {seconds:.2f} s; additivity error "
          f"{additivity:.2g}; expected value {float(explainer.expected_value):.6f} "
          f"(the mean decision over the training rows: {mean_train:.6f})")

    importance = np.abs(values).mean(axis=0)
    order = np.argsort(importance)[::-1][: args.top]
    print("features by mean |SHAP| (positive SHAP pushes towards 'benign'):")
    for j in order:
        print(f"  {data.feature_names[j]:<24} {importance[j]:.4f}")
    if args.plot or args.show:
        import matplotlib

        if not args.show:
            matplotlib.use("Agg")  # a file only: no display needed
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 0.35 * len(order) + 1))
        ax.barh([data.feature_names[j] for j in order[::-1]], importance[order[::-1]])
        ax.set_xlabel("mean |SHAP value| (decision function units)")
        ax.set_title("MABoost on breast cancer, explained by TreeSHAP")
        fig.tight_layout()
        if args.plot:
            fig.savefig(args.plot, dpi=120)
            print(f"wrote {args.plot}")
        if args.show:
            plt.show()  # under Agg (the docs' gallery) a no-op that leaves the figure open
        else:
            plt.close(fig)
    return {"same": same, "additivity": additivity, "expected_value":
            float(explainer.expected_value), "mean_train_decision": mean_train,
            "top": [str(data.feature_names[j]) for j in order], "seconds": seconds,
            "largest_decision": float(np.max(np.abs(decision)))}


if __name__ == "__main__":
    main()
