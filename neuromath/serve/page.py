"""The one page of ``neuromath serve`` (``GET /``): pick a run, type a problem, solve it, and see the answer, the n-best
list with each hypothesis's verdict, and the attention map.

The page is ``page.html`` beside this module (package data). Self-contained: the CSS and the script are inline and
nothing is loaded from elsewhere (the service sends a
Content-Security-Policy that forbids it). The page calls ``GET /api/runs`` and ``POST /api/solve`` and shows what they
answer; user text is only ever set as ``textContent``, never parsed as HTML.

The attention map is drawn on a ``<canvas>`` from the weights in the JSON answer (one layer and head at a time, picked
with two menus; the weight under the pointer is shown beside it), not rendered to a PNG on the server: the JSON
already holds the weights, drawing them costs the server nothing (``plot_attention`` took 2 s of CPU for the 24
panels of the 2+2-layer word-problem preset, time the model's lock would be held), and the page shows exactly the
numbers the API returns.

Stable element ids, for a browser test: ``run`` (the run menu), ``text`` (the problem), ``solve`` (the button),
``answer``, ``nbest`` (the n-best table), ``attention`` (the attention panel, with ``attention-canvas``), ``error``;
``beam``, ``nbest-size`` and ``show-attention`` are the settings. ``document.body.dataset.state`` is ``loading``,
``ready``, ``solving``, ``solved`` or ``failed``.
"""

from importlib.resources import files

PAGE = (files("neuromath.serve") / "page.html").read_text(encoding="utf-8")  # package data, shipped in the wheel
