"""The HTTP service of ``neuromath serve``: a FastAPI app over runs loaded once.

- ``POST /api/solve`` ``{"run": NAME, "text": "...", "beam": K, "nbest": N, "attention": false}``: the object
  ``neuromath solve --json`` prints for the same run, text and settings (``Solution.to_json``, ``Verdict.to_json``).
  ``run`` may be left out when one run is served; ``beam`` and ``nbest`` (at most ``MAX_BEAM``) change the decoding
  for this request only, as ``solve --beam K --nbest N`` does, without loading the model again.
- ``GET /api/runs``: name, task, model, parameters and accuracy (from each run's summary.json) of every run.
- ``GET /api/health``: whether it is up, and the batching settings and batch sizes so far.
- ``GET /``: the page (``neuromath.serve.page``); ``GET /docs`` and ``GET /openapi.json``: FastAPI's interactive
  documentation and the OpenAPI schema, every body typed by the models of ``neuromath.serve.schemas``.

A run is named by its folder's name (``runs/wp`` is ``wp``); a request names a run among those, never a path. Bad
input is a 4xx answer ``{"error": message}``: an unknown run 404, a text over ``MAX_TEXT_CHARACTERS`` 413, a body over
``MAX_BODY_BYTES`` 413 and one nested deeper than ``MAX_BODY_DEPTH`` 400 (each message says which), a body
that is not a JSON object of the right fields and types 422, text the run's task cannot read 422 (the
``NeuromathError``'s message; a RecursionError, OverflowError or ValueError that escapes a task reading a text, too,
logged in one line). Anything unexpected is a 500 ``{"error": "internal error"}``, its traceback logged, never sent.
Every answer is strict JSON: a non-finite number (from a summary.json, a score, an attention weight) is written as
null. Requests with the same run and decoding settings are decoded in batches (``neuromath.serve.dynamic_batching``); a
request whose client has gone is dropped before its batch is decoded.

Who may ask: with ``allowed_hosts`` (what ``neuromath serve`` always gives: its ``--host`` and ``--allowed-host``
values), a request whose Host header names neither one of them nor this machine (localhost, 127.0.0.1, [::1]), with
any port, is answered 400 before it reaches the app (``HostCheck``): a web page cannot reach the server through DNS
rebinding (a name of the attacker's that resolves to this machine). Served on every address (0.0.0.0, ::), a Host that
is an IP address is answered too: rebinding needs a name. No response carries CORS headers unless ``cors_origins``
names the origins whose pages may read the answers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from neuromath import __version__
from neuromath.api import DECODE_OPTIONS, LoadedClassifier, Solver, VotingSolver, decode_options, json_safe, load
from neuromath.errors import NeuromathError
from neuromath.safe_read import SUMMARY_LIMIT, json_depth_error, read_json_file
from neuromath.serve.dynamic_batching import Batcher
from neuromath.serve.page import PAGE
from neuromath.serve.schemas import (
    ERRORS,
    MAX_BEAM,
    HealthAnswer,
    RunAnswer,
    SolutionAnswer,
    SolveRequest,
    VerdictAnswer,
)
from neuromath.serve.server import EVERY_ADDRESS, LOCAL_HOSTS, host_of, is_address

MAX_TEXT_CHARACTERS = 2000  # a longer text is refused (413) before it reaches a model
MAX_BODY_BYTES = 64 * 1024  # a request body over this is refused (413) before it is read whole
MAX_BODY_DEPTH = 32  # a body nested deeper (arrays and objects) is refused (400); a request is one flat object
CLIENT_CLOSED = 499  # the status (nginx's) of a request whose client went away before its answer; nobody reads it
# what a task's code raises on a text it was not made for (a 500-term sum past the recursion limit, a 310-digit
# integer turned into a float, a 5,000-digit integer past int's string limit): the text's fault, so a 422, never a 500
INPUT_FAILURES = (RecursionError, OverflowError, ValueError)
# the page loads nothing from elsewhere: its CSS and script are inline, and it talks only to this server
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                           "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'")

log = logging.getLogger("neuromath.serve")


class ServiceError(Exception):
    """A request the service refuses: ``status`` (4xx) and the message of ``{"error": message}``."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class ServedRun:
    name: str
    path: Path
    solver: Solver | LoadedClassifier
    info: dict  # GET /api/runs
    variants: dict = field(default_factory=dict)  # decoding settings (sorted items) -> Solver sharing the model

    def solver_for(self, options: tuple) -> Solver | LoadedClassifier:
        """The solver that decodes with ``options`` (``decode_options`` of a request, as sorted items)."""
        if not options:
            return self.solver
        if isinstance(self.solver, LoadedClassifier):
            names = ", ".join(name for name, _ in options)
            raise ServiceError(422, f"decoding options ({names}) do not apply to the equation classifier "
                                    f"run {self.name!r}")
        if options not in self.variants:
            self.variants[options] = self.solver.with_decode(**dict(options))  # a ConfigError: 422
        return self.variants[options]


def run_name(path: str | Path) -> str:
    return Path(path).resolve().name


def run_info(name: str, path: Path, solver: Solver | LoadedClassifier) -> dict:
    """What ``GET /api/runs`` tells of a run: its task and model from its config; parameters and accuracy from its
    summary.json (the test accuracy when the run was tested, else the best validation accuracy) with the protocol
    that chose its epoch, or counted from the loaded model when it has none."""
    try:
        summary = read_json_file(path / "summary.json", SUMMARY_LIMIT, "summary")  # too deep: refused
    except (OSError, ValueError, NeuromathError):  # none, or one that is not a run's (a FIFO, too large, not JSON)
        summary = {}
    summary = summary if isinstance(summary, dict) else {}
    test = summary.get("test") if isinstance(summary.get("test"), dict) else {}
    accuracy, accuracy_of = None, None
    for source, where, keys in ((test, "test", ("value_accuracy", "accuracy")),
                                (summary, "validation", ("best_val_value_accuracy", "best_val_accuracy"))):
        found = [source[key] for key in keys if isinstance(source.get(key), (int, float))
                 and not isinstance(source[key], bool) and math.isfinite(source[key])]  # NaN: no accuracy
        if found:
            accuracy, accuracy_of = float(found[0]), where
            break
    parameters = summary.get("parameters")
    if not isinstance(parameters, int) or isinstance(parameters, bool) or parameters < 0:
        members = solver.members if isinstance(solver, VotingSolver) else [solver]  # a vote: all its seeds
        parameters = sum(p.numel() for member in members for p in member.model.parameters())
    sequence = isinstance(solver, Solver)
    return {
        "name": name,
        "task": solver.config.data.task,
        "model": solver.config.model.name,
        "parameters": parameters,
        "accuracy": accuracy,
        "accuracy_of": accuracy_of,  # "test", "validation" or None
        # literature: the kept epoch was chosen on the test split itself (train.protocol), so its accuracy is
        # optimistic; clean for every other run, summaries older than the key included
        "protocol": "literature" if summary.get("protocol") == "literature" else "clean",
        "decode": {"beam": solver.decode.beam, "nbest": solver.decode.nbest} if sequence else None,
        "attention": sequence,  # whether a solution can carry attention maps (a tree classifier has none)
        # what "verified" means: "answer" (the verifier checks the answer: symbolic), "form" (it checks that the
        # equation is well-formed: word problems) or None (no verifier)
        "verifier": verifier_kind(solver) if sequence else None,
    }


def verifier_kind(solver: Solver) -> str | None:
    if solver.task.verifier is None:
        return None
    return "form" if solver.task.answer_text is None else "answer"


def load_runs(paths: Sequence[str | Path], max_memory: float | None = None,
              max_decode_len: int | None = None) -> dict[str, ServedRun]:
    """Every run folder loaded once, by its folder name; two folders of one name are an error. Each is checked
    before its model is built against ``max_memory`` GB and ``max_decode_len`` tokens (``neuromath.load``)."""
    if not paths:
        raise NeuromathError("serve needs at least one run folder")
    runs: dict[str, ServedRun] = {}
    for path in paths:
        path = Path(path)
        name = run_name(path)
        if name in runs:
            raise NeuromathError(f"two runs are named {name!r} ({runs[name].path} and {path}): the service names a "
                                 "run by its folder's name, so serve runs from folders of different names")
        solver = load(path, max_memory=max_memory, max_decode_len=max_decode_len)
        folder = Path(getattr(solver, "run_dir", None) or path)  # a hub id: its folder in the Hugging Face cache
        runs[name] = ServedRun(name, folder, solver, run_info(name, folder, solver))
    return runs


def validation_message(error: RequestValidationError) -> str:
    """One line for a body that failed validation: each problem as ``field: reason``."""
    parts = []
    for problem in error.errors()[:5]:
        if problem.get("type") == "json_invalid":
            reason = problem.get("ctx", {}).get("error", "")
            return f"the body is not valid JSON ({reason})" if reason else "the body is not valid JSON"
        where = ".".join(str(part) for part in problem.get("loc", ()) if part != "body")
        if not where:  # no body, or not an object (an array, a string, bytes not sent as application/json)
            return 'the body must be a JSON object such as {"run": NAME, "text": "..."}, sent as application/json'
        parts.append(f"{where or 'body'}: {problem.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def create_app(runs: Sequence[str | Path], max_batch: int = 32, max_wait_ms: float = 5.0,
               batching: bool = True, allowed_hosts: Sequence[str] | None = None, cors_origins: Sequence[str] = (),
               max_memory: float | None = None, max_decode_len: int | None = None) -> FastAPI:
    """The service over the run folders ``runs`` (loaded here, once). Requests with the same run and decoding
    settings arriving within ``max_wait_ms`` are decoded together, up to ``max_batch`` (``batching=False``: one at a
    time); batches run in worker threads, one at a time per run, so that a slow batch of one run (a symbolic
    verification near its time limit) never holds up another run's. Torch's thread count is the caller's to set.

    ``allowed_hosts``: the names a request's Host header may give besides this machine's (``LOCAL_HOSTS``), ``*`` for
    any; None answers every Host (an app not bound by ``neuromath serve``, which always gives them: its ``--host``
    and ``--allowed-host`` values). ``cors_origins``: the origins whose pages may read the answers (CORS); none by
    default. ``max_memory`` (GB) and ``max_decode_len`` bound what each run may cost (``neuromath.load``)."""
    served = load_runs(runs, max_memory, max_decode_len)

    def solve_batch(key: tuple, items: list) -> list:  # in a worker thread
        name, options = key
        solver = served[name].solver_for(options)
        return solver.solve_many([text for text, _ in items], [attention for _, attention in items])

    batcher = Batcher(solve_batch, max_batch, max_wait_ms, batching, model_of=lambda key: key[0],
                      workers=len(served))

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        batcher.close()

    app = FastAPI(title="neuromath", summary="Solve mathematics problems with trained neuromath runs",
                  version=__version__, lifespan=lifespan, redoc_url=None,
                  default_response_class=ServiceJSONResponse)
    app.state.runs = served
    app.state.batcher = batcher

    app.add_middleware(BodyLimit, max_bytes=MAX_BODY_BYTES, max_depth=MAX_BODY_DEPTH)
    if cors_origins:  # only when asked: without CORS headers a page of another origin cannot read an answer
        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Content-Type"])
    if allowed_hosts is not None:  # the outermost: a request for another host reaches nothing else
        app.add_middleware(HostCheck, allowed=allowed_hosts)

    @app.exception_handler(ServiceError)
    async def service_error(request: Request, error: ServiceError):
        return error_response(error.status, error.message)

    @app.exception_handler(ClientGone)
    async def client_gone(request: Request, error: ClientGone):
        return error_response(CLIENT_CLOSED, "the client closed the connection before the answer")

    @app.exception_handler(NeuromathError)
    async def neuromath_error(request: Request, error: NeuromathError):
        return error_response(422, str(error))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError):
        return error_response(422, validation_message(error))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException):
        if error.status_code == 400 and request.url.path == "/api/solve":  # bytes json.loads cannot decode
            return error_response(400, "the body could not be read as JSON text (UTF-8)")
        return error_response(error.status_code, str(error.detail))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception):
        log.error("internal error on %s %s", request.method, request.url.path, exc_info=error)
        return error_response(500, "internal error")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page():
        return HTMLResponse(PAGE, headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY})

    # the answer models document the answers, which are sent as they are built (response_model=None: not filtered)
    @app.get("/api/health", response_model=None, responses={200: {"model": HealthAnswer}, 500: ERRORS[500]})
    async def health():
        """Whether the service is up, its limits, and how many batches of each size it has decoded."""
        return {"status": "ok", "runs": len(served), "batching": batching,
                "max_batch": batcher.max_batch, "max_wait_ms": max_wait_ms,
                "max_text_characters": MAX_TEXT_CHARACTERS, "max_beam": MAX_BEAM,
                "batches": {str(size): count for size, count in sorted(batcher.batch_sizes.items())},
                "dropped": batcher.dropped}

    @app.get("/api/runs", response_model=None, responses={200: {"model": list[RunAnswer]}, 500: ERRORS[500]})
    async def list_runs():
        """Every served run: its task, model, size, accuracy, decoding settings and what its verifier checks."""
        return [run.info for run in served.values()]

    @app.post("/api/solve", response_model=None,
              responses={200: {"model": SolutionAnswer | VerdictAnswer, "description": "the answer: what "
                               "neuromath solve --json prints (a VerdictAnswer for an identities run)"}, **ERRORS})
    async def solve(body: SolveRequest, request: Request):
        """Solve one problem with a served run, decoded in a batch with other requests of the same settings."""
        run = find_run(served, body.run)
        if len(body.text) > MAX_TEXT_CHARACTERS:
            raise ServiceError(413, f"the text has {len(body.text)} characters; at most {MAX_TEXT_CHARACTERS}")
        try:
            body.text.encode("utf-8")
        except UnicodeEncodeError:
            raise ServiceError(422, "the text is not valid Unicode (it holds a lone surrogate)") from None
        given = {"beam": body.beam, "nbest": body.nbest}
        options = tuple(sorted(decode_options({name: given.get(name) for name in DECODE_OPTIONS}).items()))
        run.solver_for(options)  # refuses settings that do not apply before the request joins a batch
        turn = batcher.submit((run.name, options), (body.text, body.attention))
        try:
            result = await unless_disconnected(request, turn)
        except INPUT_FAILURES as error:  # a NeuromathError is none of these: its own handler answers it
            raise input_failure(run.name, body.text, error) from None
        return ServiceJSONResponse(result.to_json())

    return app


class HostCheck:
    """ASGI middleware: a request whose Host header names none of ``allowed`` (nor this machine: ``LOCAL_HOSTS``) is
    answered 400 ``{"error": ...}`` before the app sees it; ``*`` in ``allowed`` lets every host through, and an
    address that binds every interface (``EVERY_ADDRESS``) lets every IP address through. A request without a Host
    header is refused too."""

    def __init__(self, app, allowed: Sequence[str]):
        self.app = app
        named = [host_of(name) if name not in EVERY_ADDRESS else name for name in allowed]
        self.any_host = "*" in allowed
        self.any_address = any(name in EVERY_ADDRESS for name in allowed)
        self.allowed = frozenset(name for name in (*LOCAL_HOSTS, *named) if name)
        self.shown = ", ".join(sorted(f"[{name}]" if ":" in name else name for name in self.allowed))

    def answers(self, host: str | None) -> bool:
        if self.any_host:
            return True
        if host is None:
            return False
        return host in self.allowed or (self.any_address and is_address(host))

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        header = dict(scope.get("headers", ())).get(b"host")
        text = header.decode("latin-1") if header is not None else None
        if self.answers(host_of(text) if text is not None else None):
            return await self.app(scope, receive, send)
        if scope["type"] != "http":  # a websocket for another host: closed unanswered
            return await send({"type": "websocket.close", "code": 1008})
        named = f"the Host {text[:100]!r}" if text is not None else "a request without a Host header"
        message = (f"{named} is not a name this server answers to ({self.shown}); start it with --allowed-host NAME "
                   "to answer another")
        return await error_response(400, message)(scope, receive, send)


class BodyLimit:
    """ASGI middleware: a request body over ``max_bytes`` is answered 413 ``{"error": ...}`` before the app reads it:
    by its Content-Length, or, sent in chunks without one, as soon as the chunks pass the limit. A body nested
    deeper than ``max_depth`` arrays and objects is answered 400 (found by a scan of its brackets, never by a parser
    that recurses), so that each of the two says what it was."""

    def __init__(self, app, max_bytes: int, max_depth: int = MAX_BODY_DEPTH):
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers", ())).get(b"content-length")
        if length is not None:  # the server holds the body to its length
            if length.strip().isdigit() and int(length) > self.max_bytes:
                message = f"the request body is too large: {int(length)} bytes; at most {self.max_bytes}"
                return await error_response(413, message)(scope, receive, send)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                message = f"the request body is too large: more than {self.max_bytes} bytes"
                return await error_response(413, message)(scope, receive, send)
            if not message.get("more_body", False):
                break
        body, replayed = b"".join(chunks), False
        # brackets, quotes and backslashes are single bytes in UTF-8, never part of another character: the bytes read
        # as Latin-1 nest as the text does
        if json_depth_error(body.decode("latin-1"), self.max_depth) is not None:
            message = f"the request body is too deeply nested: more than {self.max_depth} levels of arrays and objects"
            return await error_response(400, message)(scope, receive, send)

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


class ClientGone(Exception):
    """The client of a request closed its connection before the answer."""


async def unless_disconnected(request: Request, work):
    """The result of the awaitable ``work`` (a request's turn in the batcher), unless the client disconnects first:
    then ``work`` is cancelled, which cancels the request's future, and the batcher drops the request before it is
    decoded (``Batcher`` skips done futures), rather than decoding for nobody. The body has been read by now, so the
    next ASGI message is the disconnect, which the server sends when the connection closes."""
    task = asyncio.ensure_future(work)

    async def disconnected() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(disconnected())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()  # cancels the future the task awaits at once: the batcher sees it done
    if task.done() and not task.cancelled():
        return task.result()
    raise ClientGone


def input_failure(run: str, text: str, error: BaseException) -> ServiceError:
    """The 422 of a text whose reading raised one of ``INPUT_FAILURES`` inside a task (a safety net: tasks are meant
    to raise a NeuromathError with the reason), logged in one line with where it was raised, for a fix."""
    frames = error.__traceback__
    while frames is not None and frames.tb_next is not None:
        frames = frames.tb_next
    where = (f" in {frames.tb_frame.f_code.co_name} ({Path(frames.tb_frame.f_code.co_filename).name}:"
             f"{frames.tb_lineno})" if frames is not None else "")
    log.warning("input error on run %r: %s%s: %.200s (a text of %d characters)", run, type(error).__name__, where,
                error, len(text))
    reason = {RecursionError: "it is nested or repeated too deeply",
              OverflowError: "a number in it is too large"}.get(type(error))
    if reason is None:
        reason = f"{error}"[:200] or type(error).__name__
    return ServiceError(422, f"the text cannot be read: {reason}")


def find_run(served: dict[str, ServedRun], name: str | None) -> ServedRun:
    if name is None:
        if len(served) == 1:
            return next(iter(served.values()))
        raise ServiceError(422, f"name a run: one of {', '.join(sorted(served))}")
    if name not in served:
        raise ServiceError(404, f"unknown run {name!r}; this service has {', '.join(sorted(served))}")
    return served[name]


class ServiceJSONResponse(JSONResponse):
    """Strict JSON as FastAPI writes it, with non-finite numbers as null (``json_safe``), never failing on text that
    UTF-8 cannot hold (a lone surrogate that came in a request, e.g. in the name of an unknown key): such text is
    written with escapes."""

    def render(self, content) -> bytes:
        content = json_safe(content)
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def error_response(status: int, message: str) -> JSONResponse:
    return ServiceJSONResponse({"error": message}, status_code=status)
