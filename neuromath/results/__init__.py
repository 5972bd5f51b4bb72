"""The evidence behind every reported number: ``neuromath results run`` and ``neuromath results verify``.

``recipes`` reads ``results/<experiment>/recipe.yaml`` (commands, pinned data files, tables); ``recipe_configs``
resolves a recipe's command against the presets; ``runner`` runs unfinished runs; ``evidence`` collects and verifies
a finished run's evidence, with ``evidence_checks`` (recomputed from records), ``beam_evidence`` (``evaluate
--beams`` runs) and ``evidence_io`` (files).

Imports evaluation and tasks, never training or models: verification recomputes from records, and ``results run``
trains through the ``neuromath`` command. ``tools/results_pages`` (not in the wheel) renders the docs' results pages.
"""
