"""The results pages of the docs (``docs/results/*.md``, their images) and the README's results table, written from
the recipes and evidence of ``results/``; run from the repository root as ``python -m tools.results_pages build``
(``--check``: CI's check that the committed pages are what the evidence gives).

``pages`` reads the page templates of ``results/pages/`` and renders their directives, with ``paired_pages``
(``{{ paired }}``, ``{{ robustness }}``) and ``gpu_pages`` (``{{ gpu_check }}``, ``{{ decode_compile }}``). The
evidence itself is read through ``neuromath.results``, the package behind ``neuromath results run`` and ``verify``.
"""
