"""``neuromath serve``: HTTP service over trained runs loaded once (``app.create_app``), batching requests per run
and decoding settings (``batching.Batcher``), and its page (``page.PAGE``). Needs FastAPI (uvicorn to run);
``neuromath.cli.serve`` imports it only when the command runs."""
