"""Where training meets evaluation: ``train_test`` (train, then score the held-out split once with the best weights;
``--seeds``), ``evaluate`` (evaluating runs side by side), ``cross_validation`` (``neuromath cv``), ``compare``
(``neuromath compare``: two runs or two cross-validations, paired per example) and ``demo``.

The training procedures (``neuromath.registry.TRAINING``: ``sequence``, ``classifier``) are registered by
``train_test``, the evaluation procedures (``neuromath.registry.EVALUATION``: ``sequence``, ``modules``,
``symbolic``, ``verification``) by ``evaluate``, and how ``compare`` scores each example of them
(``neuromath.registry.PAIRED_SCORING``, under the same names) by ``compare``; a task names its own
(``task.training``, ``task.evaluation``), so nothing above this layer branches on a task. This is the only package
that imports both ``neuromath.training`` and ``neuromath.evaluation``. Import the module you need: ``evaluate`` and
``compare`` load no Lightning (only training needs it), so the commands that use trained runs start without it.
"""
