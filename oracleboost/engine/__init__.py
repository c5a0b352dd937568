"""The round engine: problems, rounds and stop reasons, the loop and its monitors, the
history, callbacks, the model protocol (``Ensemble``) and the estimator base every
booster builds on."""
