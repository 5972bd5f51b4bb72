"""neuromath serve: load trained runs once and answer ``POST /api/solve`` (the ``solve --json`` object), ``GET
/api/runs``, ``GET /api/health`` and the page at ``/`` over HTTP (``neuromath.serve``), with dynamic batching of the
requests for the same run and decoding settings. Binds to 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import argparse

from neuromath.cli.common import documented, integer_in, nonnegative_float, positive_int
from neuromath.extras import require
from neuromath.serve.server import (  # standard library only: neuromath --help stays fast
    DEFAULT_LIMIT_CONCURRENCY,
    DEFAULT_TIMEOUT_KEEP_ALIVE,
    DEFAULT_TIMEOUT_REQUEST,
)


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0 (a timeout)."""
    value = nonnegative_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {value}")
    return value


def command_serve(args: argparse.Namespace) -> int:
    import torch  # the web framework and torch are loaded only here: `neuromath --help` stays fast

    require("fastapi", "neuromath serve")
    require("uvicorn", "neuromath serve")

    from neuromath.serve import server
    from neuromath.serve.app import create_app

    app = create_app(args.runs, max_batch=args.max_batch, max_wait_ms=args.max_wait_ms,
                     batching=not args.no_batching)
    torch.set_num_threads(args.threads)
    names = ", ".join(app.state.runs)
    batching = "off" if args.no_batching else f"up to {args.max_batch} within {args.max_wait_ms:g} ms"
    print(f"serving {names} on http://{args.host}:{args.port}/ (batching {batching})", flush=True)
    server.run(app, host=args.host, port=args.port, log_level=args.log_level, limit_concurrency=args.limit_concurrency,
               timeout_keep_alive=args.timeout_keep_alive, timeout_request=args.timeout_request)
    return 0


def register(commands) -> None:
    serve = commands.add_parser(
        "serve", help="serve trained runs over HTTP: an API and a page to solve problems",
        **documented(
            "Load trained runs once and answer over HTTP until interrupted: POST /api/solve (the object that "
            "neuromath solve --json prints), GET /api/runs, GET /api/health, and a page at / to pick a run, type a "
            "problem and see the answer, the n-best list and the attention map. Requests for the same run and "
            "decoding settings that arrive together are decoded as one batch. Binds to 127.0.0.1 (this machine "
            "only) unless --host says otherwise.",
            "neuromath serve runs/g2t runs/int runs/verify     # the page at http://127.0.0.1:8000/",
            "neuromath serve runs/g2t --port 8080 --max-batch 16 --max-wait-ms 2 --threads 2",
            "neuromath serve runs/g2t --limit-concurrency 200 --timeout-keep-alive 15 --timeout-request 30"
            "   # behind nginx",
            "curl -s 127.0.0.1:8000/api/solve -H 'Content-Type: application/json' \\\n"
            "    -d '{\"run\": \"g2t\", \"text\": \"Jerry had 135 pens. John took 19 pens from him. How many pens does "
            "Jerry have left?\"}'",
        ),
    )
    serve.add_argument("runs", nargs="+", metavar="RUN", help="run folders; each is named by its folder's name")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=integer_in(0, 65535), default=8000, help="TCP port to listen on (default 8000)")
    serve.add_argument("--max-batch", dest="max_batch", type=positive_int, default=32,
                       help="most requests decoded together (default 32)")
    serve.add_argument("--max-wait-ms", dest="max_wait_ms", type=nonnegative_float, default=5.0,
                       help="how long a batch waits for more requests after its first (default 5)")
    serve.add_argument("--no-batching", dest="no_batching", action="store_true",
                       help="decode one request at a time")
    serve.add_argument("--threads", type=positive_int, default=1,
                       help="torch CPU threads of the decoding (default 1: the other core serves HTTP)")
    serve.add_argument("--limit-concurrency", dest="limit_concurrency", type=positive_int, metavar="N",
                       default=DEFAULT_LIMIT_CONCURRENCY,
                       help="most connections open at once; one more is answered 503 and closed, logged in one line "
                            f"(default {DEFAULT_LIMIT_CONCURRENCY})")
    serve.add_argument("--timeout-keep-alive", dest="timeout_keep_alive", type=positive_int, metavar="SECONDS",
                       default=DEFAULT_TIMEOUT_KEEP_ALIVE,
                       help="seconds an idle connection is kept open after an answer "
                            f"(default {DEFAULT_TIMEOUT_KEEP_ALIVE})")
    serve.add_argument("--timeout-request", dest="timeout_request", type=positive_float, metavar="SECONDS",
                       default=DEFAULT_TIMEOUT_REQUEST,
                       help="seconds a client has to send a whole request, headers and body, from its connection or "
                            "its first byte; a slower one is disconnected (default "
                            f"{DEFAULT_TIMEOUT_REQUEST:g})")
    serve.add_argument("--log-level", dest="log_level", default="warning",
                       choices=("critical", "error", "warning", "info", "debug"),
                       help="uvicorn's log level (default warning; info logs every request)")
    serve.set_defaults(handler=command_serve)
