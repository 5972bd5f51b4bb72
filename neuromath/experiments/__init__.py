"""What a user runs: ``fit_then_test`` (train, then score the held-out split once with the best weights; ``--seeds``),
``evaluate_runs`` (runs side by side), ``cross_validation`` (``neuromath cv``) with ``folds`` and ``cv_reports``,
``grid_sweep`` (``neuromath sweep``), ``paired_compare`` (``neuromath compare``: two runs or cross-validations, paired
per example), ``neuromath analyze`` (``run_vote``, ``slices``, ``analyses``) and ``demo_run`` (``neuromath demo``).

Registries filled here: ``neuromath.registry.TRAINING`` (``sequence``, ``classifier``) by ``fit_then_test``,
``EVALUATION`` (``sequence``, ``modules``, ``symbolic``, ``verification``) by ``evaluate_runs``, ``PAIRED_SCORING``
(same names) by ``paired_compare``. A run trains by its model's kind (``neuromath.config.rules.PROCEDURES``) and is
evaluated by its task's ``evaluation``, so nothing above this layer branches on a task. The only package importing
both ``training`` and ``evaluation``; import the module you need, so ``evaluate`` and ``compare`` start without
Lightning.
"""
