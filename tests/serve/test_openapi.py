"""``/openapi.json`` and ``/docs`` of ``neuromath serve``: the schema types every request and answer (the models of
``neuromath.serve.schemas``), the models name exactly the fields the answers carry, and the host allow-list and CORS
apply to the documentation as to every other path."""

import pytest
from fastapi.testclient import TestClient

from neuromath.serve.app import create_app
from neuromath.serve.schemas import (
    AttentionMapAnswer,
    CandidateAnswer,
    ErrorAnswer,
    HealthAnswer,
    RunAnswer,
    SolutionAnswer,
    SolveRequest,
    VerdictAnswer,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # starlette's TestClient on httpx

PROBLEM = "Tom has 5 apples. He buys 3 more. How many apples does he have?"


@pytest.fixture(scope="module")
def schema(client):
    response = client.get("/openapi.json")
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/json")
    return response.json()


def resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def answer_schemas(schema: dict, path: str, method: str, status: str = "200") -> list[dict]:
    """The object schemas an endpoint's answer of ``status`` may be (one, or each of an anyOf)."""
    node = schema["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]
    node = resolve(schema, node)
    if node.get("type") == "array":
        node = resolve(schema, node["items"])
    return [resolve(schema, option) for option in node.get("anyOf", [node])]


def test_openapi_lists_solve_with_its_request_body_and_answer(schema):
    solve = schema["paths"]["/api/solve"]["post"]
    body = resolve(schema, solve["requestBody"]["content"]["application/json"]["schema"])
    assert set(body["properties"]) == {"run", "text", "beam", "nbest", "attention"}
    assert body["required"] == ["text"] and body["additionalProperties"] is False
    beam = next(option for option in body["properties"]["beam"]["anyOf"] if option.get("type") == "integer")
    assert (beam["minimum"], beam["maximum"]) == (1, 20)
    solution, verdict = answer_schemas(schema, "/api/solve", "post")
    assert {"text", "equation", "answer", "answer_text", "reason", "verified", "nbest"} <= set(solution["properties"])
    candidate = resolve(schema, solution["properties"]["nbest"]["items"])
    assert {"tokens", "equation", "well_formed", "answer_text", "score", "verified"} <= set(candidate["properties"])
    assert {"identity", "probability", "numeric_check"} <= set(verdict["properties"])
    for status in ("400", "404", "413", "422", "500"):  # errors are {"error": message}, not FastAPI's detail list
        assert [set(error["properties"]) for error in answer_schemas(schema, "/api/solve", "post", status)] == [
            {"error"}]


def test_openapi_types_runs_and_health(schema):
    assert set(schema["paths"]) == {"/api/solve", "/api/runs", "/api/health"}  # the page is not an API
    assert schema["paths"]["/api/runs"]["get"]["responses"]["200"]["content"]["application/json"]["schema"][
        "type"] == "array"
    (run,) = answer_schemas(schema, "/api/runs", "get")
    assert set(run["properties"]) == set(RunAnswer.model_fields)
    (health,) = answer_schemas(schema, "/api/health", "get")
    assert set(health["properties"]) == set(HealthAnswer.model_fields)


def test_docs_answers_html(client):
    response = client.get("/docs")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert "/openapi.json" in response.text and "swagger" in response.text.lower()


def fields_of(answer: dict, model) -> None:
    """``answer`` has exactly the fields of ``model`` (one left out only where it is optional) and validates."""
    optional = {name for name, field in model.model_fields.items() if not field.is_required()}
    assert set(model.model_fields) - optional <= set(answer) <= set(model.model_fields), (model.__name__, answer)
    model.model_validate(answer)


@pytest.mark.parametrize("body", [
    {"run": "wp", "text": PROBLEM},
    {"run": "wp", "text": PROBLEM, "beam": 3, "nbest": 3, "attention": True},
    {"run": "sym", "text": "x*cos(x)", "beam": 2, "nbest": 2},
])
def test_the_models_name_exactly_the_fields_of_the_answers(client, body):
    answer = client.post("/api/solve", json=body).json()
    fields_of(answer, SolutionAnswer)
    for candidate in answer["nbest"]:
        fields_of(candidate, CandidateAnswer)
    for attention in answer.get("attention", []):
        fields_of(attention, AttentionMapAnswer)
    if body.get("nbest"):
        assert len(answer["nbest"]) == body["nbest"]


def test_the_models_name_exactly_the_fields_of_the_other_answers(client):
    fields_of(client.post("/api/solve", json={"run": "ids", "text": "sin(x)^2 + cos(x)^2 = 1"}).json(), VerdictAnswer)
    for run in client.get("/api/runs").json():
        fields_of(run, RunAnswer)
    fields_of(client.get("/api/health").json(), HealthAnswer)
    fields_of(client.post("/api/solve", json={"run": "nope", "text": PROBLEM}).json(), ErrorAnswer)


def test_the_request_model_is_the_one_the_endpoint_checks():
    assert SolveRequest.model_validate({"text": "x", "beam": 3}).beam == 3
    with pytest.raises(ValueError):
        SolveRequest.model_validate({"text": "x", "beam": "3"})  # strict: a string is not a beam width


def test_hosts_and_cors_apply_to_the_documentation(serve_runs):
    origin = "https://app.example"
    app = create_app([serve_runs["wp"]], max_batch=4, max_wait_ms=1, allowed_hosts=["127.0.0.1"],
                     cors_origins=[origin])
    for path in ("/docs", "/openapi.json"):
        refused = TestClient(app, base_url="http://evil.example").get(path)
        assert refused.status_code == 400 and "--allowed-host" in refused.json()["error"]
        shared = TestClient(app, base_url="http://127.0.0.1").get(path, headers={"Origin": origin})
        assert shared.status_code == 200 and shared.headers["access-control-allow-origin"] == origin
        other = TestClient(app, base_url="http://127.0.0.1").get(path, headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
