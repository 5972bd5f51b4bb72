"""Fitting models: Lightning modules (sequence models, equation classifiers), a run's data preparation, the trainer
(checkpoints, early stopping, logs) and its run folder. Never imports ``evaluation`` or ``api``: test scoring is
``neuromath.experiments``' job."""
