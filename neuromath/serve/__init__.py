"""``neuromath serve``: the HTTP service and its page over trained runs loaded once (``app.create_app``), with
dynamic batching of the requests for one run and decoding settings (``batching.Batcher``) and the page
(``page.PAGE``). Needs FastAPI (and uvicorn to run it); ``neuromath.cli.serve`` imports this package only when the
command runs."""
