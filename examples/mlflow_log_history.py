"""Log a booster to MLflow: its parameters, its history round by round, the model
=================================================================================

MABoost (``MirrorBoostingClassifier``, Naghibi & Pfister 2014, ±1 stumps) on
scikit-learn's breast cancer data (400 rows to train, the rest watched with
``eval_set``) logged to an MLflow run, as a tracking server shows it:

* the estimator's parameters (``get_params``), with ``mlflow.log_params``;
* ``history_`` as metrics, one step a round (``step`` = the round, from 1): the training
  loss and error, the edge, the margin, MABoost's step η_t and its bound on the
  training error, and the eval set's curves ``val_loss_0`` and ``val_error_0``, so that
  MLflow's UI draws the same curves as :func:`oracleboost.plotting.plot_history`
  (non-finite entries, such as a margin before any weight is placed, are left out);
* the fitted model with ``mlflow.sklearn.log_model``, in MLflow's default format, skops.
  skops stores the model as data and loads only the types its reader trusts;
  ``oracleboost.persistence.trusted_types()`` is the library's published list, which
  MLflow records beside the model (``skops_trusted_types``) and passes to skops when
  ``mlflow.sklearn.load_model`` reads it back.

It checks that the model MLflow loads (and its ``pyfunc`` form) predicts as the fitted
one, bit for bit, and that the metric history MLflow returns equals ``history_``.  The
run goes to a database in a temporary folder that is removed at the end, or to
``--tracking-uri`` (a server, or a database file: ``--tracking-uri sqlite:///mlflow.db``,
then ``mlflow ui --backend-store-uri sqlite:///mlflow.db`` shows it).
Needs ``pip install mlflow-skinny skops`` (or the full ``mlflow``).
"""

from __future__ import annotations

import argparse
import logging
import math
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from oracleboost import MirrorBoostingClassifier

#: The curves logged as metrics (those the fit recorded).
CURVES = ("loss", "train_error", "edge", "margin", "eta", "bound", "val_loss_0",
          "val_error_0")


def log_history(client, run_id: str, history: dict) -> int:
    """Log ``history_``'s :data:`CURVES` as metrics, step = round, in batches (MLflow
    takes at most 1,000 metrics a call); returns how many were logged."""
    from mlflow.entities import Metric

    now = int(time.time() * 1000)  # (MLflow's timestamps are in milliseconds)
    metrics = [Metric(key, float(value), timestamp=now, step=t + 1)
               for key in CURVES if key in history
               for t, value in enumerate(history[key]) if math.isfinite(value)]
    for start in range(0, len(metrics), 1000):
        client.log_batch(run_id, metrics=metrics[start:start + 1000])
    return len(metrics)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="MABoost's rounds")
    parser.add_argument("--seed", type=int, default=0, help="the train/test split")
    parser.add_argument("--tracking-uri", metavar="URI",
                        help="where to log (default: a temporary folder, removed after)")
    args = parser.parse_args(argv)
    try:
        import mlflow
        import mlflow.sklearn
        import skops.io  # noqa: F401 - MLflow's default format for scikit-learn models
    except ImportError:
        raise SystemExit("this example needs mlflow and skops: pip install mlflow-skinny "
                         "skops") from None
    from oracleboost.persistence import trusted_types

    logging.getLogger("mlflow").setLevel(logging.WARNING)  # (its database set-up notes)

    data = load_breast_cancer()
    X_train, X_test, y_train, y_test = train_test_split(
        data.data, data.target, train_size=400, stratify=data.target, random_state=args.seed)
    model = MirrorBoostingClassifier(n_estimators=args.rounds).fit(
        X_train, y_train, eval_set=[(X_test, y_test)])

    with tempfile.TemporaryDirectory() as tmp:
        # a database file in the temporary folder, with the artifacts beside it
        mlflow.set_tracking_uri(args.tracking_uri or f"sqlite:///{Path(tmp, 'mlflow.db')}")
        client = mlflow.MlflowClient()
        experiment = client.get_experiment_by_name("oracleboost")
        experiment_id = experiment.experiment_id if experiment else client.create_experiment(
            "oracleboost",
            artifact_location=None if args.tracking_uri else Path(tmp, "artifacts").as_uri())
        with mlflow.start_run(experiment_id=experiment_id, run_name="maboost") as run:
            params = {k: v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)
                      for k, v in model.get_params(deep=False).items()}
            mlflow.log_params(params)
            n_metrics = log_history(client, run.info.run_id, model.history_)
            info = mlflow.sklearn.log_model(
                model, name="model", skops_trusted_types=trusted_types(),
                input_example=X_test[:3])
        print(f"MABoost, {model.n_estimators_} rounds on breast cancer, logged to run "
              f"{run.info.run_id}: {len(params)} parameters, {n_metrics} metric values "
              f"({', '.join(k for k in CURVES if k in model.history_)})")

        loaded = mlflow.sklearn.load_model(info.model_uri)  # skops, trusting the list
        same = bool(np.array_equal(loaded.predict_proba(X_test), model.predict_proba(X_test)))
        pyfunc = mlflow.pyfunc.load_model(info.model_uri)
        same_pyfunc = bool(np.array_equal(pyfunc.predict(X_test), model.predict(X_test)))
        steps = client.get_metric_history(run.info.run_id, "val_loss_0")
        logged = np.array([m.value for m in sorted(steps, key=lambda m: m.step)])
        same_curve = bool(np.array_equal(logged, model.history_["val_loss_0"]))
        print(f"the model MLflow loads (skops, {len(trusted_types())} trusted types) "
              f"predicts as the fitted one, bit for bit: {'yes' if same else 'NO'}; "
              f"its pyfunc form: {'yes' if same_pyfunc else 'NO'}")
        print(f"val_loss_0 read back from MLflow equals history_['val_loss_0']: "
              f"{'yes' if same_curve else 'NO'} ({len(logged)} steps; last "
              f"{logged[-1]:.4f})")
        print(f"the model's files: {info.model_uri}")
        print(f"test error {np.mean(model.predict(X_test) != y_test):.3f}; stop: "
              f"{model.stop_reason_}")
    return {"model": model, "loaded": loaded, "same": same, "same_pyfunc": same_pyfunc,
            "same_curve": same_curve, "n_metrics": n_metrics}


if __name__ == "__main__":
    main()
