"""Thinning a 500-tree LightGBM model with LPBoost over its trees.

For each data set and seed: a stratified 70/30 train/test split; a 500-tree
``lightgbm.LGBMClassifier`` (its defaults: 31 leaves, learning rate 0.1; one thread,
``deterministic=True``) fitted on the training rows; then
``TotallyCorrectiveClassifier(TreeEnsembleOracle.from_lightgbm(model), method="lpboost",
nu=ν, n_estimators=500)`` fitted on the same training rows, which re-weights the 500
trees by column generation (each round prices every tree exactly and adds the best; it
stops when the certificate's gap closes).  Reported: the trees kept (nonzero
coefficients) and the test error of the thinned model and of the full model, median and
range over the seeds, for the hard margin (ν = 1) and a soft margin (ν = N/10, N the
training rows).

Data: scikit-learn's breast cancer (569 × 30) and digits as a binary task (digit ≥ 5
against < 5; 1,797 × 64), and satimage of the package's UCI sets (6,435 × 36) as
"class 1 (red soil) against the rest".

Akkerman et al. (TMLR 2025, "Boosting revisited") thin tree ensembles with an LP solved
by Gurobi over all trees at once.  Here the LP is the same soft-margin LP (Demiriz,
Bennett & Shawe-Taylor 2002) over the model's trees, solved by column generation with
HiGHS (warm-started dual simplex): the certificate bounds its value over all 500
trees, so the result is the full LP's optimum to ``tol`` without forming it.  Which
trees an optimal vertex keeps may differ between solvers (the LP is degenerate); the
margin, hence the certificate, does not.  The tree columns are scaled to a largest
|leaf| in (0.5, 1] (a power of two), not by the learning rate, so the LP weighs trees as
functions.

Run: ``python benchmarks/thin_lightgbm.py`` (writes ``benchmarks/thin_lightgbm.md``);
``--seeds 3 --datasets breast_cancer`` for a shorter run.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import lightgbm as lgb  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from oracleboost import TotallyCorrectiveClassifier  # noqa: E402
from oracleboost.datasets import load_uci  # noqa: E402
from oracleboost.oracles import TreeEnsembleOracle  # noqa: E402

N_TREES = 500


def _data(name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "breast_cancer":
        return load_breast_cancer(return_X_y=True)
    if name == "digits":
        X, y = load_digits(return_X_y=True)
        return X.astype(np.float64), (y >= 5).astype(int)
    if name == "satimage":
        X, y = load_uci("satimage")
        return X, (y == np.unique(y)[0]).astype(int)
    raise ValueError(f"unknown data set {name!r}")


def _one(name: str, seed: int, nus: dict[str, str]) -> dict:
    X, y = _data(name)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y,
                                              random_state=seed)
    full = lgb.LGBMClassifier(n_estimators=N_TREES, random_state=seed, n_jobs=1,
                              deterministic=True, verbose=-1).fit(X_tr, y_tr)
    out = {"full": float(np.mean(full.predict(X_te) != y_te)),
           "n_trees": full.booster_.num_trees()}
    oracle = TreeEnsembleOracle.from_lightgbm(full)
    for label, nu in nus.items():
        nu_value = 1 if nu == "1" else max(1.0, len(y_tr) / 10)
        t0 = time.perf_counter()
        thin = TotallyCorrectiveClassifier(oracle, method="lpboost", nu=nu_value,
                                           n_estimators=N_TREES).fit(X_tr, y_tr)
        seconds = time.perf_counter() - t0
        coef = np.asarray(thin.ensemble_.coef)
        out[label] = {"kept": int(np.count_nonzero(coef)),
                      "error": float(np.mean(thin.predict(X_te) != y_te)),
                      "rounds": int(thin.n_estimators_), "seconds": seconds,
                      "stop": str(thin.stop_reason_)}
    return out


def _spread(values: list[float], fmt: str) -> str:
    return (f"{format(statistics.median(values), fmt)} "
            f"({format(min(values), fmt)}–{format(max(values), fmt)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--datasets", default="breast_cancer,digits,satimage")
    parser.add_argument("--out", default=str(Path(__file__).with_name("thin_lightgbm.md")))
    args = parser.parse_args()
    nus = {"hard margin (ν = 1)": "1", "soft margin (ν = N/10)": "N/10"}
    rows = []
    for name in args.datasets.split(","):
        runs = [_one(name, seed, nus) for seed in range(args.seeds)]
        for label in nus:
            kept = [r[label]["kept"] for r in runs]
            rows.append(
                f"| {name} | {label} | {_spread(kept, '.0f')} | "
                f"{_spread([r[label]['error'] for r in runs], '.4f')} | "
                f"{_spread([r['full'] for r in runs], '.4f')} | "
                f"{_spread([r[label]['rounds'] for r in runs], '.0f')} | "
                f"{_spread([r[label]['seconds'] for r in runs], '.1f')} |")
            print(rows[-1], flush=True)
            stops = sorted({r[label]["stop"] for r in runs})
            print(f"    stop reasons: {', '.join(stops)}", flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).parent).stdout.strip()
    text = "\n".join([
        "# Thinning a 500-tree LightGBM model with LPBoost",
        "",
        "Written by `benchmarks/thin_lightgbm.py` (its docstring gives the method). "
        f"Median (min–max) over {args.seeds} seeds of a stratified 70/30 split; "
        f"{N_TREES} trees in every full model.",
        "",
        "| data | LP | trees kept | test error, thinned | test error, full model "
        "| rounds | fit seconds |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; oracleboost "
        f"{commit}, lightgbm {lgb.__version__}",
        f"- machine: {platform.machine()}, {os.cpu_count()} CPUs (shared: the seconds are "
        "indicative only)",
        "",
    ])
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
