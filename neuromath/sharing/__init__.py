"""What travels with a trained model: the model card (``card``: ``RUN/README.md``, ``RUN/environment.json``, written
by ``train``), ``neuromath export``/``push`` (``export_run``), machine-free data paths (``portable``), and
``neuromath import released`` (``import_released``: a released state dict as a run folder).

Below ``neuromath.experiments`` (``train`` writes the card), above ``neuromath.api`` (an export is checked by loading
it). ``export_run`` and ``import_released`` load torch; import only the module you need.
"""
