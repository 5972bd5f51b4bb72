"""Who ``neuromath serve`` answers: only requests whose Host header names the bound address or this machine (a web
page cannot reach the server through DNS rebinding, whose Host is the attacker's name), more with --allowed-host;
no CORS headers unless --cors-origin asks for them; a run too large for the machine stops the server at start."""

import asyncio
import json

import httpx
import pytest
from fastapi.testclient import TestClient
from support.run_folders import error_line

from neuromath.cli import main
from neuromath.serve import server
from neuromath.serve.app import create_app
from neuromath.serve.launch import serving
from neuromath.serve.server import host_of

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # starlette's TestClient on httpx

PROBLEM = "Tom has 5 apples. He buys 3 more. How many apples does he have?"


@pytest.fixture(scope="module")
def app(serve_runs):
    """The app as ``neuromath serve`` builds it with its defaults: bound to 127.0.0.1, no other host, no CORS."""
    return create_app([serve_runs["wp"]], max_batch=4, max_wait_ms=1, allowed_hosts=["127.0.0.1"])


def ask(app, host: str, path: str = "/api/runs", **headers):
    """GET ``path`` with this Host header (and ``headers``). Outside a ``with``, the client leaves the app's lifespan
    alone: its batcher stays open for the requests of later clients."""
    return TestClient(app, base_url=f"http://{host}").get(path, headers=headers)


@pytest.mark.parametrize("header,host", [
    ("localhost", "localhost"), ("LocalHost:8000", "localhost"), ("localhost.:80", "localhost"),
    ("127.0.0.1:8000", "127.0.0.1"), ("[::1]:8000", "::1"), ("[::1]", "::1"), ("example.com", "example.com"),
    ("evil.example:1", "evil.example"), ("", None), (":80", None), ("a:b", None), ("[::1", None), ("[::1]x", None),
    ("a/b", None), ("user@host", None), ("::1", None),
])
def test_the_host_of_a_host_header(header, host):
    assert host_of(header) == host


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000", "LOCALHOST:1"])
def test_this_machine_is_answered(app, host):
    response = ask(app, host)
    assert response.status_code == 200 and response.json()[0]["name"] == "wp"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil",
                                  "192.168.1.5:8000", "[::2]"])
def test_another_host_is_refused_with_a_json_error_on_every_path(app, host):
    for path in ("/api/runs", "/", "/api/health"):
        response = ask(app, host, path)
        assert response.status_code == 400, (host, path, response.text)
        assert response.headers["content-type"].startswith("application/json")
        message = response.json()["error"]
        assert "--allowed-host" in message and host.split(":")[0].strip("[]") in message
    client = TestClient(app, base_url=f"http://{host}")  # the API too, before any body is read
    assert client.post("/api/solve", json={"text": PROBLEM}).status_code == 400


def test_a_request_without_a_host_header_is_refused(app):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/api/runs", "headers": [], "query_string": b"",
             "http_version": "1.0", "scheme": "http", "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 1),
             "root_path": "", "raw_path": b"/api/runs"}
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 400
    assert "without a Host header" in json.loads(sent[1]["body"])["error"]


def test_allowed_hosts_add_names_and_a_star_allows_any(serve_runs):
    named = create_app([serve_runs["wp"]], max_batch=4, max_wait_ms=1,
                       allowed_hosts=["127.0.0.1", "solver.example.org", "10.0.0.7:9000"])
    assert ask(named, "solver.example.org:8000").status_code == 200
    assert ask(named, "SOLVER.example.org").status_code == 200
    assert ask(named, "10.0.0.7").status_code == 200
    assert ask(named, "evil.example").status_code == 400
    anyone = create_app([serve_runs["wp"]], max_batch=4, max_wait_ms=1, allowed_hosts=["127.0.0.1", "*"])
    assert ask(anyone, "evil.example").status_code == 200


def test_bound_to_every_address_any_ip_address_is_answered_but_no_name(serve_runs):
    every = create_app([serve_runs["wp"]], max_batch=4, max_wait_ms=1, allowed_hosts=["0.0.0.0"])
    assert ask(every, "192.168.1.5:8000").status_code == 200
    assert ask(every, "[fe80::1]:8000").status_code == 200
    assert ask(every, "localhost").status_code == 200
    assert ask(every, "evil.example").status_code == 400  # a name that resolves here: DNS rebinding


def test_no_cors_headers_unless_asked(app, serve_runs):
    origin = "https://app.example"
    plain = ask(app, "127.0.0.1", Origin=origin)
    assert plain.status_code == 200 and not any(h.startswith("access-control-") for h in plain.headers)
    preflight = TestClient(app, base_url="http://127.0.0.1").options(
        "/api/solve", headers={"Origin": origin, "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in preflight.headers
    shared = create_app([serve_runs["wp"]], max_batch=4, max_wait_ms=1, allowed_hosts=["127.0.0.1"],
                        cors_origins=[origin])
    answered = ask(shared, "127.0.0.1", Origin=origin)
    assert answered.headers["access-control-allow-origin"] == origin
    assert "access-control-allow-origin" not in ask(shared, "127.0.0.1", Origin="https://evil.example").headers
    with TestClient(shared, base_url="http://127.0.0.1") as client:
        preflight = client.options("/api/solve", headers={"Origin": origin, "Access-Control-Request-Method": "POST",
                                                          "Access-Control-Request-Headers": "content-type"})
        assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == origin
        solved = client.post("/api/solve", json={"text": PROBLEM}, headers={"Origin": origin})
        assert solved.status_code == 200 and solved.headers["access-control-allow-origin"] == origin


@pytest.fixture
def started(monkeypatch):
    """``neuromath serve`` up to the point where uvicorn would start: the app it built and the address."""
    apps = {}

    def run(app, host, port, **kwargs):
        apps.update(app=app, host=host, port=port)

    monkeypatch.setattr(server, "run", run)
    return apps


def test_the_command_answers_its_host_and_the_allowed_ones(serve_runs, started, capsys):
    assert main(["serve", str(serve_runs["wp"]), "--port", "0"]) == 0
    assert ask(started["app"], "127.0.0.1:8000").status_code == 200
    assert ask(started["app"], "evil.example").status_code == 400
    assert "access-control-allow-origin" not in ask(started["app"], "localhost", Origin="https://a.example").headers
    assert main(["serve", str(serve_runs["wp"]), "--host", "192.168.1.5", "--allowed-host", "solver.example.org",
                 "--allowed-host", "other.example", "--cors-origin", "https://a.example"]) == 0
    app = started["app"]
    for host in ("192.168.1.5:8000", "solver.example.org", "other.example:1", "localhost"):
        assert ask(app, host).status_code == 200, host
    assert ask(app, "192.168.1.6").status_code == 400
    assert ask(app, "localhost", Origin="https://a.example").headers["access-control-allow-origin"] == \
        "https://a.example"


@pytest.mark.parametrize("option,value", [("--allowed-host", "a/b"), ("--allowed-host", "user@evil"),
                                          ("--cors-origin", "example.com"), ("--cors-origin", "https://a.example/x"),
                                          ("--cors-origin", "ftp://a.example")])
def test_the_command_refuses_a_host_or_origin_that_is_not_one(serve_runs, option, value, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["serve", str(serve_runs["wp"]), option, value])
    assert stopped.value.code == 2 and option in capsys.readouterr().err


def test_a_run_too_large_for_the_limit_stops_the_server_at_start(serve_runs, started, capsys):
    assert main(["serve", str(serve_runs["wp"]), "--max-memory", "0.000001"]) == 1
    line = error_line(capsys)
    assert "--max-memory" in line and "parameters" in line
    assert "app" not in started  # never served
    assert main(["serve", str(serve_runs["wp"]), "--max-memory", "1"]) == 0 and "app" in started


def test_the_running_server_refuses_a_rebinding_host_and_answers_an_allowed_one(serve_runs):
    """Through uvicorn in a subprocess, as a browser's request would arrive: the Host header decides."""


    with serving([serve_runs["wp"]], ["--allowed-host", "solver.example.org"]) as url:
        port = url.rsplit(":", 1)[1].strip("/")
        assert httpx.get(f"{url}/api/runs").status_code == 200  # Host 127.0.0.1:PORT
        assert httpx.get(f"{url}/api/runs", headers={"Host": f"localhost:{port}"}).status_code == 200
        assert httpx.get(f"{url}/api/runs", headers={"Host": "solver.example.org"}).status_code == 200
        refused = httpx.post(f"{url}/api/solve", json={"text": PROBLEM}, headers={"Host": f"evil.example:{port}"})
        assert refused.status_code == 400 and "evil.example" in refused.json()["error"]
        assert "access-control-allow-origin" not in httpx.get(f"{url}/api/runs",
                                                              headers={"Origin": "https://a.example"}).headers
