"""The bodies of ``neuromath serve``'s requests and answers as pydantic models, for ``/openapi.json`` and ``/docs``.

``SolveRequest`` is what ``POST /api/solve`` reads and checks. The answer models describe what the endpoints send and
are not applied to it: the answers are the objects ``Solution.to_json()`` and ``Verdict.to_json()`` build (the
output of ``neuromath solve --json``), sent as they are, so a field added there must be added here too
(``tests/serve/test_openapi.py`` compares the two).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_BEAM = 20  # beam and nbest of one request


class SolveRequest(BaseModel):
    """The body of ``POST /api/solve``; types are strict (``"5"`` is not a beam width) and unknown keys refused."""

    model_config = ConfigDict(strict=True, extra="forbid")

    run: str | None = Field(default=None, description="a served run's name (its folder's); may be left out when "
                                                      "one run is served")
    text: str = Field(description="the problem, as neuromath solve RUN TEXT takes it")
    beam: int | None = Field(default=None, ge=1, le=MAX_BEAM,
                             description="beam width for this request; left out: the run's own decoding")
    nbest: int | None = Field(default=None, ge=1, le=MAX_BEAM,
                              description="hypotheses listed; alone, it decodes with a beam of its width")
    attention: bool = Field(default=False, description="add every attention layer's weights to the answer")


class CandidateAnswer(BaseModel):
    """One entry of a solution's n-best list, best first (``Candidate.to_json``)."""

    tokens: list[str] = Field(description="the model's output tokens (prefix notation over n0, n1, ...)")
    equation: str | None = Field(description="the equation over the problem's numbers; null when the tokens are "
                                             "not a well-formed equation or the task's answers are not equations")
    well_formed: bool | None = Field(description="whether the tokens form an equation (word problems); null where "
                                                 "the answers are not equations")
    answer_text: str = Field(description="its value, or the answer in ordinary notation; empty when there is none")
    score: float | None = Field(description="length-normalised log-probability (null when not finite)")
    verified: bool | None = Field(description="the task's verifier on this candidate; null: no verifier")
    verdict: str | None = Field(description="verified, not verified or unknown, where the task names its verdicts")
    verdict_detail: str | None = Field(description="the verifier's own verdict: correct, wrong, timeout, ...")


class AttentionMapAnswer(BaseModel):
    """The weights of one attention layer for the solved problem (``AttentionMap.to_json``)."""

    title: str
    place: str = Field(description="encoder, decoder or cross")
    heads: list[str]
    queries: list[str]
    keys: list[str]
    weights: list[list[list[float | None]]] = Field(description="heads x queries x keys")


class SolutionAnswer(BaseModel):
    """The answer of a sequence run (word problems, the Mathematics Dataset, symbolic): ``Solution.to_json``."""

    text: str
    equation: str = Field(description="the chosen equation over the problem's numbers; empty when there is none")
    answer: float | None = Field(description="its value; null when there is none or it is beyond a float")
    answer_text: str = Field(description="the exact answer (116, (7/3), x*sin(x) + cos(x)); empty when there is none")
    masked_equation: list[str] = Field(description="the chosen candidate's tokens")
    reason: str = Field(description="why there is no answer; empty otherwise")
    verified: bool | None = Field(description="the verifier's verdict on the answer shown (the chosen candidate's); "
                                              "null when the task has no verifier")
    verdict: str | None
    verdict_detail: str | None
    unknown_tokens: list[str] = Field(description="input tokens the run's vocabulary does not hold")
    nbest: list[CandidateAnswer] = Field(description="the n-best list when nbest > 1, else empty")
    attention: list[AttentionMapAnswer] | None = Field(default=None, description="only with attention: true")


class VerdictAnswer(BaseModel):
    """The answer of an equation-classifier run (identities): ``Verdict.to_json``."""

    text: str
    equation: str = Field(description="the equation as read")
    identity: bool = Field(description="the model's verdict: probability > 0.5")
    probability: float | None
    numeric_check: bool | None = Field(description="the numeric check beside it; null when it cannot tell")
    unknown_tokens: list[str]


class DecodeSettings(BaseModel):
    beam: int
    nbest: int


class RunAnswer(BaseModel):
    """One served run, as ``GET /api/runs`` lists it."""

    name: str
    task: str
    model: str
    parameters: int
    accuracy: float | None = Field(description="from the run's summary.json")
    accuracy_of: str | None = Field(description="test, validation or null")
    protocol: str = Field(description="clean, or literature: the kept epoch was chosen on the test split, so the "
                                      "accuracy is optimistic")
    decode: DecodeSettings | None = Field(description="null for an equation classifier")
    attention: bool = Field(description="whether a solution can carry attention maps")
    verifier: str | None = Field(description="answer (the verifier checks the answer), form (that the equation is "
                                             "well-formed) or null (no verifier)")


class HealthAnswer(BaseModel):
    """``GET /api/health``: that the service is up, its limits, and the batches decoded so far."""

    status: str
    runs: int
    batching: bool
    max_batch: int
    max_wait_ms: float
    max_text_characters: int
    max_beam: int
    batches: dict[str, int] = Field(description="batch size -> how many batches of that size ran")
    dropped: int = Field(description="requests dropped because their client had gone")


class ErrorAnswer(BaseModel):
    """Every refusal and failure: a 4xx or 500 status with one message."""

    error: str


ERRORS = {
    400: {"model": ErrorAnswer, "description": "a Host this server does not answer, a body nested too deeply or "
                                               "not readable as JSON text"},
    404: {"model": ErrorAnswer, "description": "an unknown run"},
    413: {"model": ErrorAnswer, "description": "a text or body too large"},
    422: {"model": ErrorAnswer, "description": "a body of the wrong fields or types, or text the run cannot read"},
    500: {"model": ErrorAnswer, "description": "internal error (logged, never sent)"},
}
