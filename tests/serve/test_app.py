"""The HTTP service of ``neuromath serve``: ``POST /api/solve`` answers exactly what ``neuromath solve --json`` prints
for the same run, text and settings; ``/api/runs`` and ``/api/health`` describe what is served; every kind of bad
input is a 4xx JSON error with a message (never a 500, also for random bodies); a verifier past its time limit gives
the answer "not verified" (the verifier's own verdict "timeout") instead of a hung request; the page needs nothing
from elsewhere."""

import json
import re
import time

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neuromath.api import Candidate
from neuromath.cli import main
from neuromath.errors import NeuromathError
from neuromath.serve.app import MAX_TEXT_CHARACTERS, create_app
from neuromath.tasks.symbolic import verify as sv

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # starlette's TestClient on httpx

PROBLEM = "Tom has 5 apples. He buys 3 more. How many apples does he have?"


def solve_json(run, text, *options, capsys):
    """What ``neuromath solve RUN TEXT --json OPTIONS`` prints, read back."""
    capsys.readouterr()
    status = main(["solve", str(run), text, "--json", *options])
    assert status in (0, 1)  # 1: an answer-less solution, still printed
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("run,text,request_options,cli_options", [
    ("wp", PROBLEM, {}, []),
    ("wp", PROBLEM, {"beam": 3, "nbest": 3}, ["--beam", "3", "--nbest", "3"]),
    ("wp", "Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?",
     {"beam": 2}, ["--beam", "2"]),
    ("ids", "sin(x)^2 + cos(x)^2 = 1", {}, []),
    ("ids", "tan(x) = 3", {}, []),  # unknown symbols are named, not an error
])
def test_solve_answers_the_object_of_solve_json(client, serve_runs, run, text, request_options, cli_options,
                                                 capsys):
    response = client.post("/api/solve", json={"run": run, "text": text, **request_options})
    assert response.status_code == 200, response.text
    assert response.json() == solve_json(serve_runs[run], text, *cli_options, capsys=capsys)
    if request_options.get("nbest", 1) > 1:
        assert len(response.json()["nbest"]) == request_options["nbest"]
    if text == "tan(x) = 3":
        assert response.json()["unknown_tokens"] == ["tan", "3"]


def test_attention_weights_are_those_solve_json_gives(client, serve_runs, tmp_path, capsys):
    response = client.post("/api/solve", json={"run": "wp", "text": PROBLEM, "attention": True})
    expected = solve_json(serve_runs["wp"], PROBLEM, "--attention", str(tmp_path / "a.png"), capsys=capsys)
    assert response.status_code == 200
    assert response.json() == expected
    titles = [m["title"] for m in response.json()["attention"]]
    assert titles == ["encoder self-attention, layer 1", "decoder self-attention, layer 1", "cross-attention, layer 1"]
    assert "attention" not in client.post("/api/solve", json={"run": "wp", "text": PROBLEM}).json()


def test_unknown_words_of_a_problem_are_listed_not_refused(client):
    response = client.post("/api/solve", json={"run": "wp", "text": "Tom has 5 zebras. He buys 3 more. How many?"})
    assert response.status_code == 200
    assert response.json()["unknown_tokens"] == ["zebras"]


def test_decoding_settings_apply_per_request_and_never_change_the_run(client):
    wide = client.post("/api/solve", json={"run": "wp", "text": PROBLEM, "beam": 4, "nbest": 4}).json()
    plain = client.post("/api/solve", json={"run": "wp", "text": PROBLEM}).json()
    assert len(wide["nbest"]) == 4 and plain["nbest"] == []
    nbest_alone = client.post("/api/solve", json={"run": "wp", "text": PROBLEM, "nbest": 2}).json()
    assert len(nbest_alone["nbest"]) == 2  # nbest alone decodes with a beam of that width, as solve --nbest does


def test_runs_and_health(client, serve_runs):
    runs = {run["name"]: run for run in client.get("/api/runs").json()}
    assert set(runs) == {"wp", "sym", "ids"}
    assert (runs["wp"]["task"], runs["wp"]["model"]) == ("word_problems", "transformer")
    assert (runs["sym"]["task"], runs["ids"]["task"], runs["ids"]["model"]) == ("symbolic", "identities", "tree_lstm")
    assert runs["wp"]["decode"] == {"beam": 1, "nbest": 1} and runs["ids"]["decode"] is None
    assert all(isinstance(run["parameters"], int) and run["parameters"] > 0 for run in runs.values())
    assert runs["wp"]["accuracy"] is None  # these runs have no summary.json
    health = client.get("/api/health")
    assert health.status_code == 200 and health.json()["status"] == "ok" and health.json()["runs"] == 3


def test_runs_report_parameters_and_accuracy_from_the_summary(tmp_path, serve_runs):
    import shutil

    run = shutil.copytree(serve_runs["wp"], tmp_path / "tested")
    (run / "summary.json").write_text(json.dumps({"parameters": 1234, "best_val_value_accuracy": 0.5,
                                                  "test": {"value_accuracy": 0.75, "n": 4}}))
    other = shutil.copytree(serve_runs["wp"], tmp_path / "validated")
    (other / "summary.json").write_text(json.dumps({"parameters": 99, "best_val_value_accuracy": 0.25}))
    with TestClient(create_app([run, other], max_batch=4, max_wait_ms=1)) as client:
        runs = {r["name"]: r for r in client.get("/api/runs").json()}
    assert (runs["tested"]["parameters"], runs["tested"]["accuracy"], runs["tested"]["accuracy_of"]) == (
        1234, 0.75, "test")
    assert (runs["validated"]["accuracy"], runs["validated"]["accuracy_of"]) == (0.25, "validation")


def test_two_runs_of_one_folder_name_are_refused_at_start(tmp_path, serve_runs):
    import shutil

    copy = shutil.copytree(serve_runs["wp"], tmp_path / "elsewhere" / "wp")
    with pytest.raises(NeuromathError, match="two runs are named 'wp'"):
        create_app([serve_runs["wp"], copy])


def error_of(response, status):
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and isinstance(body["error"], str) and body["error"]
    assert "Traceback" not in body["error"]
    return body["error"]


def test_every_kind_of_bad_input_is_a_4xx_json_error(client):
    post = client.post
    assert "unknown run 'nope'" in error_of(post("/api/solve", json={"run": "nope", "text": PROBLEM}), 404)
    assert "unknown run '../wp'" in error_of(post("/api/solve", json={"run": "../wp", "text": PROBLEM}), 404)
    # three runs are served: a request must name one
    assert "name a run" in error_of(post("/api/solve", json={"text": PROBLEM}), 422)
    long_text = "Tom has 5 apples. " * (MAX_TEXT_CHARACTERS // 10)
    assert f"at most {MAX_TEXT_CHARACTERS}" in error_of(post("/api/solve", json={"run": "wp", "text": long_text}), 413)
    assert "text" in error_of(post("/api/solve", json={"run": "wp", "text": 5}), 422)
    assert "beam" in error_of(post("/api/solve", json={"run": "wp", "text": PROBLEM, "beam": "3"}), 422)
    assert "attention" in error_of(post("/api/solve", json={"run": "wp", "text": PROBLEM, "attention": 1}), 422)
    assert "beam" in error_of(post("/api/solve", json={"run": "wp", "text": PROBLEM, "beam": 21}), 422)
    assert "beam" in error_of(post("/api/solve", json={"run": "wp", "text": PROBLEM, "beam": 0}), 422)
    assert "nbest (3) cannot exceed the beam width (2)" in error_of(
        post("/api/solve", json={"run": "wp", "text": PROBLEM, "beam": 2, "nbest": 3}), 422)
    assert "do not apply to the equation classifier" in error_of(
        post("/api/solve", json={"run": "ids", "text": "x = x", "beam": 2}), 422)
    assert "no attention" in error_of(post("/api/solve", json={"run": "ids", "text": "x = x", "attention": True}), 422)
    assert "path" in error_of(post("/api/solve", json={"run": "wp", "text": PROBLEM, "path": "/etc"}), 422)
    # text the task cannot read: the NeuromathError's message
    assert "no numbers" in error_of(post("/api/solve", json={"run": "wp", "text": "How many apples?"}), 422)
    assert "no numbers" in error_of(post("/api/solve", json={"run": "wp", "text": ""}), 422)
    assert "unknown name 'z'" in error_of(post("/api/solve", json={"run": "sym", "text": "z*x"}), 422)
    assert "at position" in error_of(post("/api/solve", json={"run": "ids", "text": "sin(x) + = 1"}), 422)
    # bodies that are not a JSON object of the fields
    headers = {"content-type": "application/json"}
    assert "JSON object" in error_of(post("/api/solve", content=b"", headers=headers), 422)
    assert "not valid JSON" in error_of(post("/api/solve", content=b'{"run": "wp", ', headers=headers), 422)
    assert "JSON object" in error_of(post("/api/solve", content=b"[1, 2]", headers=headers), 422)
    assert "JSON object" in error_of(post("/api/solve", content=b"null", headers=headers), 422)
    assert "could not be read as JSON" in error_of(post("/api/solve", content=b"\xff\xfe\x00", headers=headers), 400)
    assert "JSON object" in error_of(post("/api/solve", content=b'{"run": "wp", "text": "1"}'), 422)  # no type
    lone_surrogate = b'{"run": "wp", "text": "Tom has 5 \\ud800 apples"}'
    assert "lone surrogate" in error_of(post("/api/solve", content=lone_surrogate, headers=headers), 422)
    assert error_of(post("/api/solve", content=b'{"run": "wp", "text": "1", "\\udc00": 1}', headers=headers), 422)
    assert "at most" in error_of(post("/api/solve", content=b"x" * 100_000, headers=headers), 413)
    chunks = (b"x" * 10_000 for _ in range(10))  # sent in chunks, without a Content-Length
    assert "more than" in error_of(post("/api/solve", content=chunks, headers=headers), 413)
    chunked = iter([b'{"run": "wp", ', b'"text": "Tom has 5 apples and 3 pears. How many?"}'])
    assert post("/api/solve", content=chunked, headers=headers).status_code == 200
    # paths and methods that do not exist
    error_of(client.get("/api/nothing"), 404)
    error_of(client.get("/api/solve"), 405)


def test_a_number_too_large_for_a_float_is_solved_not_a_server_error(client):
    """Found by the random-text test below: the values of a problem's numbers (word_problems'
    ``SourceText.number_values``) raised OverflowError for a fraction beyond a float's range."""
    from neuromath.tasks import get_task

    text = "Tom has 7^995/221,709 apples. He buys 3 more. How many apples does he have?"
    task = get_task("word_problems")
    assert task.source_text.number_values(task.prepare(text))[0] == float("inf")
    response = client.post("/api/solve", json={"run": "wp", "text": text})
    assert response.status_code == 200 and response.json()["text"] == text


def test_a_long_problem_the_model_cannot_read_is_refused_with_the_reason(client):
    text = "Tom has 5 apples. " + "he " * 600 + "?"  # 600 words in under 2,000 characters
    assert len(text) <= MAX_TEXT_CHARACTERS
    assert "the model reads at most 512" in error_of(client.post("/api/solve", json={"run": "wp", "text": text}), 422)


JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
JSON_VALUES = st.recursive(JSON_LEAVES, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
ATOMS = st.sampled_from(["x", "y", "0", "1", "2", "-1", "3.5", "1e3", "pi", "e", "c", "Y", "Y'", "q"])
EXPRESSIONS = st.recursive(
    ATOMS,
    lambda inner: st.builds("{}({})".format, st.sampled_from(["sin", "cos", "tan", "exp", "ln", "sqrt", "f"]), inner)
    | st.builds("({} {} {})".format, inner, st.sampled_from(["+", "-", "*", "/", "^"]), inner),
    max_leaves=6,
)
TEXTS = (st.text(max_size=80)
         | st.from_regex(r"[A-Za-z ]{0,20}[0-9.,/%e^ -]{1,14}[a-z .?]{0,20}[0-9]{0,3}", fullmatch=True)  # problems
         | EXPRESSIONS | st.builds("{} = {}".format, EXPRESSIONS, EXPRESSIONS))  # integrands, ODEs, equations
# bodies of the right shape, whose texts reach the runs' tasks and models
WELL_FORMED_BODIES = st.fixed_dictionaries(
    {"run": st.sampled_from(["wp", "ids", "sym"]), "text": TEXTS},
    optional={"beam": st.integers(1, 4), "nbest": st.integers(1, 4), "attention": st.booleans()},
)
# anything in the fields, and anything instead of an object
WILD_BODIES = st.fixed_dictionaries(
    {"run": st.sampled_from(["wp", "ids", "sym", "nope"]) | JSON_VALUES, "text": TEXTS | JSON_VALUES},
    optional={"beam": st.integers(-2, 25) | JSON_VALUES, "nbest": st.integers(-2, 25) | JSON_VALUES,
              "attention": st.booleans() | JSON_VALUES, "extra": JSON_VALUES},
) | JSON_VALUES


def post_json_text(client, body):
    response = client.post("/api/solve", content=json.dumps(body), headers={"content-type": "application/json"})
    assert response.status_code < 500, (body, response.text)
    if response.status_code >= 400:
        error_of(response, response.status_code)
    return response


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(body=WELL_FORMED_BODIES)
def test_random_texts_and_settings_never_give_a_server_error(client, body):
    response = post_json_text(client, body)
    if response.status_code == 200:
        assert response.json()["text"] == body["text"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(body=WILD_BODIES)
def test_random_json_bodies_never_give_a_server_error(client, body):
    post_json_text(client, body)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=120), content_type=st.sampled_from(["application/json", "text/plain", None]))
def test_random_bytes_never_give_a_server_error(client, raw, content_type):
    headers = {"content-type": content_type} if content_type else {}
    response = client.post("/api/solve", content=raw, headers=headers)
    assert response.status_code < 500, (raw, response.text)
    error_of(response, response.status_code)


def test_the_page_is_self_contained_and_has_its_element_ids(client):
    response = client.get("/")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    page = response.text
    for element_id in ("run", "text", "solve", "answer", "nbest", "attention", "error"):
        assert re.search(rf'\bid="{element_id}"', page), element_id
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # no outside scripts, styles, fonts
    assert "@import" not in page and "url(" not in page
    assert "default-src 'none'" in response.headers["content-security-policy"]


def test_a_verifier_past_its_time_limit_gives_the_answer_with_verdict_timeout(serve_runs, monkeypatch):
    """The check of x*sin(x) + cos(x) takes tens of milliseconds in a fresh worker; with a limit of 0.1 ms the
    worker is killed at the limit, and the request answers at once with the verdict "timeout"."""
    app = create_app([serve_runs["sym"]], max_batch=4, max_wait_ms=1)
    solver = app.state.runs["sym"].solver

    def predict_nbest(examples, batch_size=None):  # the decoder stands in for a trained one; the verifier is real
        candidates = [[Candidate(tuple("add mul x sin x cos x".split()), -0.1, None)] for _ in examples]
        return solver.verify_candidates(candidates, examples)

    monkeypatch.setattr(solver, "predict_nbest", predict_nbest)
    monkeypatch.setattr(sv, "DEFAULT_TIME_LIMIT", 1e-4)
    try:
        with TestClient(app, raise_server_exceptions=False) as client:
            started = time.monotonic()
            response = client.post("/api/solve", json={"text": "x*cos(x)"})  # one run served: no name needed
            seconds = time.monotonic() - started
    finally:
        sv.close_pools()
    assert response.status_code == 200, response.text
    result = response.json()
    assert (result["answer_text"], result["verdict"], result["verdict_detail"], result["verified"]) == (
        "x*sin(x) + cos(x)", "not verified", "timeout", False)
    assert seconds < 60  # worker start-up included; the check itself was cut at its limit


def test_symbolic_verdicts_name_what_the_verifier_found(serve_runs, monkeypatch):
    """Without a tight limit the same answer is verified (proven: "correct"), and a wrong one not verified ("wrong"):
    the verdict in the words of neuromath check, and the verifier's own beside it."""
    app = create_app([serve_runs["sym"]], max_batch=4, max_wait_ms=1)
    solver = app.state.runs["sym"].solver

    def predict_nbest(examples, batch_size=None):
        hypotheses = ["mul x sin x", "add mul x sin x cos x"]
        candidates = [[Candidate(tuple(h.split()), -0.1 * rank, None) for rank, h in enumerate(hypotheses)]
                      for _ in examples]
        return solver.verify_candidates(candidates, examples)

    monkeypatch.setattr(solver, "predict_nbest", predict_nbest)  # copied into the beam-2 variant with the rest
    with TestClient(app) as client:
        result = client.post("/api/solve", json={"text": "x*cos(x)", "beam": 2, "nbest": 2}).json()
    assert (result["answer_text"], result["verdict"], result["verdict_detail"]) == ("x*sin(x) + cos(x)", "verified",
                                                                                     "correct")
    assert [(c["answer_text"], c["verdict"], c["verdict_detail"]) for c in result["nbest"]] == [
        ("x*sin(x)", "not verified", "wrong"), ("x*sin(x) + cos(x)", "verified", "correct")]


def test_the_serve_command_binds_to_this_machine_by_default_and_refuses_two_runs_of_one_name(serve_runs, tmp_path,
                                                                                              capsys):
    import shutil

    from neuromath.cli import build_parser

    args = build_parser().parse_args(["serve", str(serve_runs["wp"])])
    assert (args.host, args.port, args.max_batch, args.max_wait_ms, args.no_batching) == (
        "127.0.0.1", 8000, 32, 5.0, False)
    copy = shutil.copytree(serve_runs["wp"], tmp_path / "elsewhere" / "wp")
    assert main(["serve", str(serve_runs["wp"]), str(copy)]) == 1
    assert "two runs are named 'wp'" in capsys.readouterr().err


def test_the_serve_command_answers_over_http(serve_runs):
    """``neuromath serve`` in a subprocess on a free port of 127.0.0.1: the page, the runs and a solved problem."""
    import httpx

    from neuromath.serve.launch import serving

    with serving([serve_runs["wp"]]) as url:
        assert [run["name"] for run in httpx.get(f"{url}/api/runs").json()] == ["wp"]
        assert 'id="solve"' in httpx.get(url).text
        response = httpx.post(f"{url}/api/solve", json={"run": "wp", "text": PROBLEM, "beam": 2, "nbest": 2})
        assert response.status_code == 200 and len(response.json()["nbest"]) == 2
        assert httpx.post(f"{url}/api/solve", json={"run": "wp"}).status_code == 422


def test_a_body_too_deep_and_a_body_too_large_each_say_which(client):
    headers = {"content-type": "application/json"}
    deep = b'{"run": "wp", "text": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"  # 10,000 levels, within the size limit
    message = error_of(client.post("/api/solve", content=deep, headers=headers), 400)
    assert "too deeply nested" in message and "too large" not in message
    chunks = iter([deep[:5000], deep[5000:]])  # in chunks, without a Content-Length: the same
    assert "too deeply nested" in error_of(client.post("/api/solve", content=chunks, headers=headers), 400)
    brackets_in_text = {"run": "wp", "text": "Tom has 5 apples " + "[" * 1000 + " and 3 more. How many?"}
    assert client.post("/api/solve", json=brackets_in_text).status_code == 200  # inside a string: only text
    large = b'{"run": "wp", "text": "' + b"1" * 100_000 + b'"}'
    message = error_of(client.post("/api/solve", content=large, headers=headers), 413)
    assert "too large" in message and "nested" not in message
    shallow = b'{"run": "wp", "text": ' + b"[" * 20 + b"]" * 20 + b"}"  # nested, within the depth limit: read
    assert "text" in error_of(client.post("/api/solve", content=shallow, headers=headers), 422)
