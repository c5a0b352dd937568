"""Prune Optuna trials round by round through a scikit-learn callback
==================================================================

An Optuna study tunes gradient boosting (``FunctionalGradientClassifier``: the logistic
loss, trees of ``TreeOracle``) on scikit-learn's breast cancer data (569 rows:
300 to train, 130 to validate, the rest held back for the chosen model): the learning
rate, the trees' depth and the smallest leaf.  Each trial fits 100 rounds while
watching the validation rows (``fit(eval_set=...)``); the curve of their loss,
``history_["val_loss_0"]``, grows by one entry a round.

Optuna prunes a trial that is doing worse than the others at the same step: its
``trial.report(value, step)`` and ``trial.should_prune()``.  The bridge is a
scikit-learn callback (scikit-learn ≥ 1.9, ``booster.set_callbacks(...)``), written
here in a dozen lines, with no integration package.  Every booster calls a callback's
``on_fit_task_end`` after each round; this one takes ``fitted_estimator`` (the model as
it stands after the round), reports the round's validation loss to the trial, and
returns True when Optuna says to prune: the fit stops after that round
(``stop_reason_ == "callback"``), and the objective raises ``optuna.TrialPruned``.  It
is what LightGBM's and XGBoost's pruning callbacks in ``optuna-integration`` do, and
works for every oracleboost booster.

It prints each trial's parameters, its rounds and its last validation loss (pruned or
completed), the study's best trial, and the best model's error on the held-back rows.
Needs ``pip install optuna``.
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from oracleboost import FunctionalGradientClassifier, TreeOracle


class OptunaPruning:
    """A scikit-learn fit callback: after each round, report a validation curve's last
    value to an Optuna trial, and stop the fit when the trial should be pruned.

    ``key`` is the curve in ``history_`` (``"val_loss_0"``: the booster's own loss on
    ``eval_set[0]``; ``fit(eval_metric=...)`` adds others, e.g. ``"val_roc_auc_0"``).
    Optuna's direction must match the curve: ``"minimize"`` for a loss.
    """

    def __init__(self, trial, key: str = "val_loss_0") -> None:
        self.trial = trial
        self.key = key
        self.pruned = False

    def setup(self, estimator, context) -> None:
        self.pruned = False

    def teardown(self, estimator, context) -> None:
        pass

    def on_fit_task_begin(self, estimator, context) -> None:
        pass

    def on_fit_task_end(self, estimator, context, *, fitted_estimator=None) -> bool:
        if context.task_name != "round" or fitted_estimator is None:
            return False  # the fit's own task, or a round that added nothing
        curve = fitted_estimator.history_[self.key]
        self.trial.report(float(curve[-1]), step=len(curve))
        self.pruned = self.trial.should_prune()
        return self.pruned  # True stops the fit after this round


def split(seed: int):
    data = load_breast_cancer()
    X, X_test, y, y_test = train_test_split(data.data, data.target, test_size=139,
                                            stratify=data.target, random_state=seed)
    X_train, X_val, y_train, y_val = train_test_split(X, y, train_size=300, stratify=y,
                                                      random_state=seed)
    return X_train, X_val, X_test, y_train, y_val, y_test


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="Optuna trials")
    parser.add_argument("--rounds", type=int, default=100, help="rounds of each fit")
    parser.add_argument("--seed", type=int, default=0, help="the split and the sampler")
    args = parser.parse_args(argv)
    try:
        import optuna  # an optional dependency, in no extra of oracleboost's
    except ImportError:
        raise SystemExit("this example needs optuna: pip install optuna") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    X_train, X_val, X_test, y_train, y_val, y_test = split(args.seed)
    models = {}

    def objective(trial) -> float:
        model = FunctionalGradientClassifier(
            TreeOracle(max_depth=trial.suggest_int("max_depth", 1, 4),
                       min_samples_leaf=trial.suggest_int("min_samples_leaf", 1, 20)),
            learning_rate=trial.suggest_float("learning_rate", 0.01, 1.0, log=True),
            n_estimators=args.rounds)
        pruning = OptunaPruning(trial)
        model.set_callbacks(pruning)
        model.fit(X_train, y_train, eval_set=[(X_val, y_val)])
        models[trial.number] = model
        last = float(model.history_["val_loss_0"][-1])
        print(f"{trial.number:>5} {trial.params['learning_rate']:>8.4f} "
              f"{trial.params['max_depth']:>5} {trial.params['min_samples_leaf']:>5} "
              f"{model.n_estimators_:>6} {last:>9.4f}  "
              f"{'pruned' if pruning.pruned else 'complete'}")
        if pruning.pruned:
            raise optuna.TrialPruned()
        return last

    study = optuna.create_study(
        direction="minimize", sampler=optuna.samplers.TPESampler(seed=args.seed),
        # prune from round 10 on, once 5 trials have completed
        pruner=optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=10))
    print(f"{'trial':>5} {'rate':>8} {'depth':>5} {'leaf':>5} {'rounds':>6} "
          f"{'val loss':>9}")
    study.optimize(objective, n_trials=args.trials)
    states = [t.state for t in study.trials]
    pruned = sum(s == optuna.trial.TrialState.PRUNED for s in states)
    best = study.best_trial
    model = models[best.number]
    rounds = sum(m.n_estimators_ for m in models.values())
    print(f"{pruned} of {len(states)} trials pruned; {rounds} rounds fitted of "
          f"{len(states) * args.rounds} without pruning")
    print(f"best trial {best.number}: {best.params}, validation loss {best.value:.4f}; "
          f"test error {np.mean(model.predict(X_test) != y_test):.3f}")
    return {"study": study, "models": models, "pruned": pruned, "best": model}


if __name__ == "__main__":
    main()
