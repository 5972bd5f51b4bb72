"""The one page of ``neuromath serve`` (``GET /``): pick a run, solve a problem, see the answer, the n-best list with
each hypothesis's verdict, and the attention map.

``page.html`` beside this module (package data) is self-contained: inline CSS and script, nothing loaded from
elsewhere (the service's Content-Security-Policy forbids it). It calls ``GET /api/runs`` and ``POST /api/solve``;
user text is only set as ``textContent``, never parsed as HTML.

The attention map is drawn on a ``<canvas>`` from the JSON's weights (one layer and head at a time), not rendered to
a PNG on the server: that would cost CPU while the model's lock is held, and the page shows exactly the API's numbers.

Stable element ids, for a browser test: ``run`` (the run menu), ``text`` (the problem), ``solve`` (the button),
``answer``, ``nbest`` (the n-best table), ``attention`` (the attention panel, with ``attention-canvas``), ``error``;
``beam``, ``nbest-size`` and ``show-attention`` are the settings. ``document.body.dataset.state`` is ``loading``,
``ready``, ``solving``, ``solved`` or ``failed``.
"""

from importlib.resources import files

PAGE = (files("neuromath.serve") / "page.html").read_text(encoding="utf-8")  # package data, shipped in the wheel
