"""``neuromath serve`` under hostile input and clients: a non-finite number in a run's summary.json, a
score or attention weights is null in strict JSON, never a 500 for everyone; a text that makes a task raise
RecursionError, OverflowError or ValueError is a 422 with the reason; a request whose client disconnected is
dropped before its decode; and a real server refuses connections over its limit with a 503 and one log line,
closes connections that send half a header or drip a body, and stays reachable."""

import asyncio
import json
import logging
import math
import shutil
import socket
import threading
import time

import httpx
import pytest
import torch
from fastapi.testclient import TestClient

from neuromath.api import LoadedClassifier, Solver, json_safe
from neuromath.serve import server
from neuromath.serve.app import create_app
from neuromath.serve.dynamic_batching import Batcher
from neuromath.serve.launch import start_server, stop_server

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PROBLEM = "Tom has 5 apples. He buys 3 more. How many apples does he have?"


def strict_json(response):
    """The body parsed as strict JSON: NaN and Infinity are refused."""
    def refuse(word):
        raise AssertionError(f"{word} in {response.text[:200]}")
    return json.loads(response.text, parse_constant=refuse)


# ------------------------------------------------------------------------------------------------ non-finite numbers

def test_json_safe_replaces_every_non_finite_number_at_any_depth():
    value = {"a": math.nan, "b": [1.5, math.inf, {"c": -math.inf, "d": (2, math.nan)}], "e": "NaN", "f": True}
    assert json_safe(value) == {"a": None, "b": [1.5, None, {"c": None, "d": [2, None]}], "e": "NaN", "f": True}


@pytest.mark.parametrize("summary", [
    '{"parameters": 12, "best_val_value_accuracy": NaN, "test": {"value_accuracy": Infinity}}',
    '{"parameters": 12, "best_val_value_accuracy": -Infinity}',
    '{"parameters": 1e999, "test": {"accuracy": 1e999, "loss": NaN}}',
])
def test_runs_with_non_finite_numbers_in_their_summary_are_listed(tmp_path, serve_runs, summary):
    run = shutil.copytree(serve_runs["wp"], tmp_path / "nan")
    (run / "summary.json").write_text(summary)
    with TestClient(create_app([run, serve_runs["ids"]], max_batch=4, max_wait_ms=1)) as client:
        response = client.get("/api/runs")
        assert response.status_code == 200, response.text
        runs = {r["name"]: r for r in strict_json(response)}
        assert (runs["nan"]["accuracy"], runs["nan"]["accuracy_of"]) == (None, None)
        assert isinstance(runs["nan"]["parameters"], int) and runs["nan"]["parameters"] > 0
        assert client.get("/api/health").status_code == 200


def test_non_finite_scores_and_attention_weights_are_null_in_a_solution(serve_runs, monkeypatch):
    app = create_app([serve_runs["wp"]], max_batch=4, max_wait_ms=1)
    original = Solver.solve_many

    def poisoned(self, texts, attention=False):
        results = original(self, texts, attention)
        for result in results:
            for attention_map in result.attention or ():
                attention_map.weights[...] = math.nan
        return [result.__class__(**{**result.__dict__, "answer": math.inf}) for result in results]

    monkeypatch.setattr(Solver, "solve_many", poisoned)
    with TestClient(app) as client:
        response = client.post("/api/solve", json={"text": PROBLEM, "attention": True, "beam": 2, "nbest": 2})
    assert response.status_code == 200, response.text
    body = strict_json(response)
    assert body["answer"] is None
    weights = body["attention"][0]["weights"]
    assert weights[0][0][0] is None


def test_a_nan_probability_of_the_classifier_is_null(serve_runs, monkeypatch):
    app = create_app([serve_runs["ids"]], max_batch=4, max_wait_ms=1)
    monkeypatch.setattr(LoadedClassifier, "logits",
                        lambda self, examples, batch_size=512: torch.full((len(examples),), math.nan))
    with TestClient(app) as client:
        response = client.post("/api/solve", json={"text": "sin(x)^2 + cos(x)^2 = 1"})
    assert response.status_code == 200 and strict_json(response)["probability"] is None


# ------------------------------------------------------------------------------- task failures are the text's fault

@pytest.fixture(scope="module")
def ids_client(serve_runs):
    with TestClient(create_app([serve_runs["ids"]], max_batch=8, max_wait_ms=1), raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("text", [
    " + ".join(["x"] * 500) + " = 1",  # RecursionError in format_infix (an ExpressionError once the task is fixed)
    "1" + "0" * 310 + " * x = 1",  # OverflowError in leaf_float
])
def test_identities_texts_that_break_the_task_are_a_4xx_with_the_reason(ids_client, text):
    response = ids_client.post("/api/solve", json={"text": text})
    assert 400 <= response.status_code < 500, response.text
    assert set(response.json()) == {"error"} and response.json()["error"]
    assert ids_client.post("/api/solve", json={"text": "sin(x)^2 + cos(x)^2 = 1"}).status_code == 200


@pytest.mark.parametrize("error,reason", [
    (RecursionError("maximum recursion depth exceeded"), "nested or repeated too deeply"),
    (OverflowError("int too large to convert to float"), "too large"),
    (ValueError("Exceeds the limit (4300 digits) for integer string conversion"), "Exceeds the limit"),
])
def test_recursion_overflow_and_value_errors_of_a_task_are_a_422_logged_in_one_line(serve_runs, monkeypatch, caplog,
                                                                                     error, reason):
    app = create_app([serve_runs["wp"]], max_batch=4, max_wait_ms=50)
    original = Solver.solve_many

    def failing(self, texts, attention=False):
        if any("poison" in text for text in texts):
            raise error
        return original(self, texts, attention)

    monkeypatch.setattr(Solver, "solve_many", failing)
    with caplog.at_level(logging.WARNING, logger="neuromath.serve"), TestClient(app) as client:
        response = client.post("/api/solve", json={"text": "Tom has 5 poison apples. How many?"})
        assert client.post("/api/solve", json={"text": PROBLEM}).status_code == 200
    assert response.status_code == 422, response.text
    assert reason in response.json()["error"] and "Traceback" not in response.json()["error"]
    records = [r for r in caplog.records if r.name == "neuromath.serve"]
    assert len(records) == 1 and type(error).__name__ in records[0].getMessage()
    assert records[0].exc_info is None and "\n" not in records[0].getMessage()


# ------------------------------------------------------------------------------------------------ gone clients

def test_a_cancelled_request_waiting_behind_a_batch_of_its_model_is_never_decoded():
    decoded, release = [], threading.Event()

    def solve_batch(key, items):
        decoded.append((key, list(items)))
        if "slow" in items:
            release.wait(30)
        return [f"{key}:{item}" for item in items]

    async def scenario(batcher):
        slow = asyncio.ensure_future(batcher.submit(("wp", 1), "slow"))
        while not decoded:
            await asyncio.sleep(0.01)
        gone = asyncio.ensure_future(batcher.submit(("wp", 2), "gone"))  # another key, the same model: it waits
        kept = asyncio.ensure_future(batcher.submit(("wp", 2), "kept"))
        await asyncio.sleep(0.1)  # both are in one batch, waiting for the model's lock
        gone.cancel()
        release.set()
        return await asyncio.gather(slow, kept)

    batcher = Batcher(solve_batch, max_batch=8, max_wait_ms=10, model_of=lambda key: key[0])
    try:
        assert asyncio.run(scenario(batcher)) == ["('wp', 1):slow", "('wp', 2):kept"]
    finally:
        batcher.close()
    assert decoded == [(("wp", 1), ["slow"]), (("wp", 2), ["kept"])]
    assert batcher.dropped == 1


def hold_the_first_decode(monkeypatch):
    """Make the solver record every text it decodes and hold the decode of ``"first " + PROBLEM`` until the returned
    event is set (at most 30 s): ``(decoded texts, release event)``."""
    decoded, release = [], threading.Event()
    original = Solver.solve_many

    def held(self, texts, attention=False):
        decoded.extend(texts)
        if texts == ["first " + PROBLEM]:
            release.wait(30)
        return original(self, texts, attention)

    monkeypatch.setattr(Solver, "solve_many", held)
    return decoded, release


def test_a_request_whose_client_disconnected_is_dropped_before_decoding(serve_runs, monkeypatch):
    """Through the app, as the server calls it: the first request's decode is held; a second client sends its body
    and hangs up; the second text never reaches the model, and a third request is answered as usual."""
    app = create_app([serve_runs["wp"]], max_batch=8, max_wait_ms=1)
    decoded, release = hold_the_first_decode(monkeypatch)

    async def call(text, hang_up: asyncio.Event | None = None):
        body = json.dumps({"text": text}).encode()
        sent = []
        delivered = False

        async def receive():
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            if hang_up is not None:
                await hang_up.wait()
            else:
                await asyncio.Event().wait()  # never: the client stays
            return {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": "/api/solve", "raw_path": b"/api/solve", "query_string": b"",
                 "root_path": "", "headers": [(b"content-type", b"application/json"),
                                              (b"content-length", str(len(body)).encode())],
                 "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
        await app(scope, receive, send)
        return next(m["status"] for m in sent if m["type"] == "http.response.start")

    async def scenario():
        first = asyncio.ensure_future(call("first " + PROBLEM))
        while not decoded:
            await asyncio.sleep(0.01)
        hang_up = asyncio.Event()
        gone = asyncio.ensure_future(call("gone " + PROBLEM, hang_up))
        await asyncio.sleep(0.2)  # its body is read and it waits in the batcher
        hang_up.set()
        gone_status = await gone
        release.set()
        return await first, gone_status, await call("third " + PROBLEM)

    try:
        assert asyncio.run(scenario()) == (200, 499, 200)
    finally:
        release.set()
        app.state.batcher.close()
    assert decoded == ["first " + PROBLEM, "third " + PROBLEM]
    assert app.state.batcher.dropped == 1


# ------------------------------------------------------------------------------------------- a real server's limits

def raw_connection(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    connection = socket.create_connection((host, int(port)), timeout=60)
    return connection


def read_until_closed(connection: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a socket timeout of 60 s fails the test)."""
    received = b""
    while chunk := connection.recv(4096):
        received += chunk
    return received


def health(url: str, attempts: int = 100) -> int:
    """The status of GET /api/health, retried while the server still counts closed connections (generous cap)."""
    for _ in range(attempts):
        try:
            status = httpx.get(f"{url}/api/health", timeout=30).status_code
        except httpx.HTTPError:
            status = 0
        if status == 200:
            return status
        time.sleep(0.1)
    return status


def test_the_server_refuses_connections_over_its_limit_and_closes_slow_clients(serve_runs):
    process, url = start_server([serve_runs["wp"]], ["--limit-concurrency", "3", "--timeout-request", "1",
                                                     "--log-level", "info"], capture=True)
    try:
        # half a header and a dripped body: closed once the request time is up (the test allows 60 s)
        half_header = raw_connection(url)
        half_header.sendall(b"POST /api/solve HTTP/1.1\r\nHost: x\r\nContent-Le")
        dripping = raw_connection(url)
        dripping.sendall(b"POST /api/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000\r\n\r\n{")
        for _ in range(3):
            time.sleep(0.4)
            dripping.sendall(b" ")
        assert read_until_closed(half_header) == b""
        assert b" 200 " not in read_until_closed(dripping)
        half_header.close(), dripping.close()
        assert health(url) == 200

        # three idle connections fill the limit (each made its own, one after another); a fourth is refused
        idle = []
        for _ in range(3):
            idle.append(raw_connection(url))
            time.sleep(0.2)
        refused = raw_connection(url)
        assert read_until_closed(refused).startswith(b"HTTP/1.1 503 ")
        refused.close()
        for connection in idle:
            connection.close()
        assert health(url) == 200  # the idle ones are gone (or timed out): the server answers again
        response = httpx.post(f"{url}/api/solve", json={"text": PROBLEM}, timeout=60)
        assert response.status_code == 200
    finally:
        stop_server(process)
    log_text = process.stdout.read()
    assert "refused a connection from 127.0.0.1" in log_text
    assert "no whole request within 1 s" in log_text
    assert "Traceback" not in log_text


def test_accept_errors_and_refusals_are_one_line_and_rate_limited(capsys):
    logger = logging.getLogger("test.serve.accept")
    handler = logging.StreamHandler()
    logger.addHandler(handler)
    logger.propagate = False
    logger.addFilter(server.OneLineLog(("socket.accept() out of system resource",), interval=3600))
    try:
        for _ in range(100):
            try:
                raise OSError(24, "Too many open files")
            except OSError:
                logger.error("socket.accept() out of system resource", exc_info=True)
        logger.error("something else")
    finally:
        logger.removeHandler(handler)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["socket.accept() out of system resource: [Errno 24] Too many open files", "something else"]


def test_the_serve_command_has_connection_options_with_defaults(serve_runs):
    from neuromath.cli import build_parser

    args = build_parser().parse_args(["serve", str(serve_runs["wp"])])
    assert (args.limit_concurrency, args.timeout_keep_alive, args.timeout_request) == (
        server.DEFAULT_LIMIT_CONCURRENCY, server.DEFAULT_TIMEOUT_KEEP_ALIVE, server.DEFAULT_TIMEOUT_REQUEST)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", str(serve_runs["wp"]), "--timeout-request", "0"])


def test_a_client_that_hangs_up_on_a_real_server_is_not_decoded(serve_runs, monkeypatch):
    """The same through uvicorn with serve's protocol, in this process: a client posts a problem while the first
    decode is held, closes its socket, and its text never reaches the model."""
    import uvicorn

    app = create_app([serve_runs["wp"]], max_batch=8, max_wait_ms=1)
    decoded, release = hold_the_first_decode(monkeypatch)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    config = uvicorn.Config(app, log_level="warning", http=server.guarded_protocol(10, 30), limit_concurrency=11)
    uvicorn_server = uvicorn.Server(config)
    thread = threading.Thread(target=uvicorn_server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        assert health(url) == 200
        first = threading.Thread(target=httpx.post, args=(f"{url}/api/solve",),
                                 kwargs={"json": {"text": "first " + PROBLEM}, "timeout": 60}, daemon=True)
        first.start()
        for _ in range(300):  # generous cap: the first decode has begun
            if decoded:
                break
            time.sleep(0.1)
        body = json.dumps({"text": "gone " + PROBLEM}).encode()
        gone = raw_connection(url)
        gone.sendall(b"POST /api/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        time.sleep(0.5)  # the body is read and the request waits behind the first decode
        gone.close()
        for _ in range(300):  # until the request's future is cancelled (it waits in its queue behind the first)
            waiting = [future for queue in list(app.state.batcher.queues.values()) for _, future in list(queue._queue)]
            if waiting and all(future.cancelled() for future in waiting):
                break
            time.sleep(0.1)
        release.set()
        first.join(60)
        assert httpx.post(f"{url}/api/solve", json={"text": "third " + PROBLEM}, timeout=60).status_code == 200
    finally:
        release.set()
        uvicorn_server.should_exit = True
        thread.join(30)
    assert decoded == ["first " + PROBLEM, "third " + PROBLEM]
    assert app.state.batcher.dropped == 1
