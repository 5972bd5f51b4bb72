"""Fitting models: Lightning modules (sequence models and equation classifiers), data preparation for a run, the
trainer with its checkpoints, early stopping and logs, and the run folder it writes. Never imports ``evaluation``
or ``api``: scoring a trained run on its test split is ``neuromath.experiments``' job."""
