"""Where training meets evaluation: train-then-test (a run's held-out split scored once with its best weights),
``--seeds``, k-fold cross-validation, evaluating runs side by side, and the demo.

The training procedures (``neuromath.registry.TRAINING``: ``sequence``, ``classifier``) and evaluation procedures
(``neuromath.registry.EVALUATION``: ``sequence``, ``modules``, ``symbolic``, ``verification``) are registered here;
a task names its own (``task.training``, ``task.evaluation``), so nothing above this layer branches on a task.
This is the only package that imports both ``neuromath.training`` and ``neuromath.evaluation``.
"""

from neuromath.experiments.cross_validation import run_cross_validation
from neuromath.experiments.demo import run_demo
from neuromath.experiments.evaluate import EvaluateRequest, evaluate_runs
from neuromath.experiments.train_test import train, train_and_report, train_classifier, train_seeds

__all__ = [
    "EvaluateRequest", "evaluate_runs", "run_cross_validation", "run_demo", "train", "train_and_report",
    "train_classifier", "train_seeds",
]
