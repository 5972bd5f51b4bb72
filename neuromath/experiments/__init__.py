"""What a user runs: ``fit_then_test`` (train, then score the held-out split once with the best weights; ``--seeds``),
``evaluate_runs`` (evaluating runs side by side), ``cross_validation`` (``neuromath cv``), its folders of folds
(``folds``) and its reports (``cv_reports``), ``grid_sweep`` (``neuromath sweep``), ``paired_compare`` (``neuromath
compare``: two runs or two cross-validations, paired per example), the analyses of ``neuromath analyze`` (``run_vote``,
``slices``, ``analyses``) and ``demo_run`` (``neuromath demo``). What travels with a trained model is
``neuromath.sharing``; the evidence behind ``neuromath results`` is ``neuromath.results``.

The training procedures (``neuromath.registry.TRAINING``: ``sequence``, ``classifier``) are registered by
``fit_then_test``, the evaluation procedures (``neuromath.registry.EVALUATION``: ``sequence``, ``modules``,
``symbolic``, ``verification``) by ``evaluate_runs``, and how ``compare`` scores each example of them
(``neuromath.registry.PAIRED_SCORING``, under the same names) by ``paired_compare``. A run trains by its model's
kind (``neuromath.config.rules.PROCEDURES``) and is evaluated by its task's ``evaluation``, so nothing above this
layer branches on a task. This is the only package
that imports both ``neuromath.training`` and ``neuromath.evaluation``. Import the module you need: ``evaluate`` and
``compare`` load no Lightning (only training needs it), so the commands that use trained runs start without it.
"""
