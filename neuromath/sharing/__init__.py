"""What travels with a trained model: its model card (``card``: ``RUN/README.md`` and ``RUN/environment.json``,
written by ``train``), ``neuromath export`` and what ``neuromath push`` uploads (``export_run``), the export's data
paths made machine-free (``portable``), and ``neuromath import released`` (``import_released``: a released state
dict as a run folder).

It sits below ``neuromath.experiments`` (``train`` writes the card) and above ``neuromath.api`` (an export is checked
by loading it). Import the module you need: ``export_run`` and ``import_released`` load torch.
"""
