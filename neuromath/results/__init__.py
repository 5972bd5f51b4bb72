"""The evidence behind every reported number: ``neuromath results run`` and ``neuromath results verify``.

``recipes`` reads ``results/<experiment>/recipe.yaml`` (commands, pinned data files, tables); ``recipe_configs``
resolves a recipe's command against the presets; ``runner`` runs a recipe's unfinished runs; ``evidence`` collects
the compact evidence of a finished run and verifies it, with ``evidence_checks`` (what is recomputed from the
records), ``beam_evidence`` (runs scored by ``evaluate --beams``) and ``evidence_io`` (its files).

It imports the evaluation and the tasks, never training or the models: a verification recomputes numbers from
records, and ``results run`` trains through the ``neuromath`` command. The docs' results pages are rendered from this
evidence by the repository's ``tools/results_pages``, which the wheel does not carry.
"""
