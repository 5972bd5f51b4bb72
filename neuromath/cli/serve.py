"""neuromath serve: load trained runs once and answer ``POST /api/solve`` (the ``solve --json`` object), ``GET
/api/runs``, ``GET /api/health`` and the page at ``/`` over HTTP (``neuromath.serve``), with dynamic batching of the
requests for the same run and decoding settings. Binds to 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import argparse

from neuromath.cli.common import add_cost_limits, documented, float_in, integer_in, worker_count
from neuromath.extras import require
from neuromath.serve.server import (  # standard library only: neuromath --help stays fast
    DEFAULT_LIMIT_CONCURRENCY,
    DEFAULT_TIMEOUT_KEEP_ALIVE,
    DEFAULT_TIMEOUT_REQUEST,
    host_of,
)

MAX_SERVE_BATCH = 1024  # requests decoded together; each is a whole problem
MAX_CONNECTIONS = 100_000  # connections open at once
MAX_SECONDS = 3600  # a keep-alive or request timeout, in seconds
max_batch = integer_in(1, MAX_SERVE_BATCH)
wait_ms = float_in(0.0, 60_000.0)  # how long a batch waits for more, in milliseconds: at most a minute
connections = integer_in(1, MAX_CONNECTIONS)
seconds = integer_in(1, MAX_SECONDS)
request_seconds = float_in(0.0, float(MAX_SECONDS), low_open=True)


def host_name(text: str) -> str:
    """An argparse type: a host name or IP address a Host header may give (``example.com``, ``192.168.1.5``,
    ``[::1]``; a port is ignored), or ``*`` for any."""
    if text != "*" and host_of(text) is None:
        raise argparse.ArgumentTypeError(f"must be a host name or IP address (or * for any), got {text[:100]!r}")
    return text


def origin(text: str) -> str:
    """An argparse type: a web origin, ``http://`` or ``https://`` with a host and an optional port and no path
    (``https://example.com:8443``), or ``*`` for any."""
    scheme, separator, rest = text.partition("://")
    if text != "*" and (scheme not in ("http", "https") or not separator or host_of(rest) is None):
        raise argparse.ArgumentTypeError(f"must be an origin such as https://example.com (scheme, host and "
                                         f"optional port, no path) or *, got {text[:100]!r}")
    return text


def command_serve(args: argparse.Namespace) -> int:
    import torch  # the web framework and torch are loaded only here: `neuromath --help` stays fast

    require("fastapi", "neuromath serve")
    require("uvicorn", "neuromath serve")

    from neuromath.serve import server
    from neuromath.serve.app import create_app

    app = create_app(args.runs, max_batch=args.max_batch, max_wait_ms=args.max_wait_ms,
                     batching=not args.no_batching, allowed_hosts=[args.host, *(args.allowed_host or ())],
                     cors_origins=args.cors_origin or (), max_memory=args.max_memory,
                     max_decode_len=args.max_decode_len)
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
            "neuromath serve runs/g2t --host 0.0.0.0 --allowed-host solver.example.org   # by name from other machines",
            "curl -s 127.0.0.1:8000/api/solve -H 'Content-Type: application/json' \\\n"
            "    -d '{\"run\": \"g2t\", \"text\": \"Jerry had 135 pens. John took 19 pens from him. How many pens does "
            "Jerry have left?\"}'",
        ),
    )
    serve.add_argument("runs", nargs="+", metavar="RUN",
                       help="run folders, exported folders or models on the Hugging Face Hub by id (org/name or "
                            "org/name@revision); each is named by its folder's name (a hub model by its name)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=integer_in(0, 65535), default=8000, help="TCP port to listen on (default 8000)")
    serve.add_argument("--allowed-host", dest="allowed_host", action="append", type=host_name, metavar="NAME",
                       help="answer requests whose Host header names NAME (repeatable; * for any); by default only "
                            "the --host address and localhost, 127.0.0.1 and [::1] are answered (any IP address "
                            "too with --host 0.0.0.0), so that no web page reaches the server through DNS "
                            "rebinding")
    serve.add_argument("--cors-origin", dest="cors_origin", action="append", type=origin, metavar="ORIGIN",
                       help="let pages of ORIGIN (https://example.com) read the answers, through CORS headers "
                            "(repeatable; * for any); none by default")
    serve.add_argument("--max-batch", dest="max_batch", type=max_batch, default=32,
                       help="most requests decoded together (default 32)")
    serve.add_argument("--max-wait-ms", dest="max_wait_ms", type=wait_ms, default=5.0,
                       help="how long a batch waits for more requests after its first (default 5)")
    serve.add_argument("--no-batching", dest="no_batching", action="store_true",
                       help="decode one request at a time")
    serve.add_argument("--threads", type=worker_count, default=1,
                       help="torch CPU threads of the decoding (default 1: the other core serves HTTP)")
    serve.add_argument("--limit-concurrency", dest="limit_concurrency", type=connections, metavar="N",
                       default=DEFAULT_LIMIT_CONCURRENCY,
                       help="most connections open at once; one more is answered 503 and closed, logged in one line "
                            f"(default {DEFAULT_LIMIT_CONCURRENCY})")
    serve.add_argument("--timeout-keep-alive", dest="timeout_keep_alive", type=seconds, metavar="SECONDS",
                       default=DEFAULT_TIMEOUT_KEEP_ALIVE,
                       help="seconds an idle connection is kept open after an answer "
                            f"(default {DEFAULT_TIMEOUT_KEEP_ALIVE})")
    serve.add_argument("--timeout-request", dest="timeout_request", type=request_seconds, metavar="SECONDS",
                       default=DEFAULT_TIMEOUT_REQUEST,
                       help="seconds a client has to send a whole request, headers and body, from its connection or "
                            "its first byte; a slower one is disconnected (default "
                            f"{DEFAULT_TIMEOUT_REQUEST:g})")
    serve.add_argument("--log-level", dest="log_level", default="warning",
                       choices=("critical", "error", "warning", "info", "debug"),
                       help="uvicorn's log level (default warning; info logs every request)")
    add_cost_limits(serve)
    serve.set_defaults(handler=command_serve)
