"""Where training meets evaluation: ``train_test`` (train, then score the held-out split once with the best weights;
``--seeds``), ``evaluate`` (evaluating runs side by side), ``cross_validation`` (``neuromath cv``) and ``demo``.

The training procedures (``neuromath.registry.TRAINING``: ``sequence``, ``classifier``) are registered by
``train_test`` and the evaluation procedures (``neuromath.registry.EVALUATION``: ``sequence``, ``modules``,
``symbolic``, ``verification``) by ``evaluate``; a task names its own (``task.training``, ``task.evaluation``), so
nothing above this layer branches on a task. This is the only package that imports both ``neuromath.training`` and
``neuromath.evaluation``. Import the module you need: ``evaluate`` loads no Lightning (only training needs it), so
the commands that use trained runs start without it.
"""
