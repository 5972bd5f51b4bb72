"""Dynamic batching (``neuromath.serve.dynamic_batching``): requests that arrive together with the same key are run as
one batch, up to ``max_batch``; requests with different keys (runs, decoding settings) never share a batch; requests
that arrive while a batch runs make up the next one; one batch at a time per model; a failing item fails only its own
request; every result goes back to the request it belongs to. Then the same through the app, counting the calls of
``Solver.solve_many`` on a real tiny run."""

import asyncio
import threading
import time

import httpx
import pytest

from neuromath.api import Solver
from neuromath.errors import NeuromathError
from neuromath.serve.app import create_app
from neuromath.serve.dynamic_batching import Batcher


class Recorder:
    """A ``solve_batch`` that records each batch (key, items) and answers ``f"{key}:{item}"`` for every item, or
    the exception an item asks for."""

    def __init__(self, seconds: float = 0.0, raise_batch_when=None):
        self.batches: list[tuple] = []
        self.seconds = seconds
        self.raise_batch_when = raise_batch_when
        self.running = 0
        self.most_running = 0
        self.lock = threading.Lock()

    def __call__(self, key, items):
        with self.lock:
            self.batches.append((key, list(items)))
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        try:
            time.sleep(self.seconds)
            if self.raise_batch_when is not None and self.raise_batch_when in items:
                raise RuntimeError("the whole batch failed")
            return [NeuromathError(f"cannot read {item}") if str(item).startswith("bad") else f"{key}:{item}"
                    for item in items]
        finally:
            with self.lock:
                self.running -= 1


async def submit_all(batcher, requests):
    """Submit (key, item) requests at once; each one's result, or its exception."""
    return await asyncio.gather(*(batcher.submit(key, item) for key, item in requests), return_exceptions=True)


def run_batcher(recorder, requests, **settings):
    batcher = Batcher(recorder, **settings)
    try:
        return asyncio.run(submit_all(batcher, requests))
    finally:
        batcher.close()


def test_requests_arriving_together_are_one_batch_and_each_gets_its_own_result():
    recorder = Recorder()
    requests = [("wp", f"t{i}") for i in range(10)]
    results = run_batcher(recorder, requests, max_batch=32, max_wait_ms=50)
    assert recorder.batches == [("wp", [f"t{i}" for i in range(10)])]
    assert results == [f"wp:t{i}" for i in range(10)]


def test_max_batch_splits_and_order_is_kept():
    recorder = Recorder()
    results = run_batcher(recorder, [("wp", i) for i in range(10)], max_batch=4, max_wait_ms=50)
    assert [items for _, items in recorder.batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert results == [f"wp:{i}" for i in range(10)]


def test_different_keys_never_share_a_batch():
    recorder = Recorder()
    keys = [("wp", ()), ("wp", (("beam", 3), ("nbest", 1))), ("sym", ())]
    requests = [(keys[i % 3], i) for i in range(12)]
    results = run_batcher(recorder, requests, max_batch=32, max_wait_ms=50)
    assert sorted((key, items) for key, items in recorder.batches) == sorted(
        (key, [i for i in range(12) if keys[i % 3] == key]) for key in keys)
    assert results == [f"{keys[i % 3]}:{i}" for i in range(12)]


def test_a_failing_item_fails_only_its_own_request():
    recorder = Recorder()
    results = run_batcher(recorder, [("wp", "a"), ("wp", "bad one"), ("wp", "c")], max_batch=8, max_wait_ms=50)
    assert len(recorder.batches) == 1
    assert results[0] == "wp:a" and results[2] == "wp:c"
    assert isinstance(results[1], NeuromathError) and str(results[1]) == "cannot read bad one"


def test_a_batch_that_raises_is_run_again_item_by_item_so_only_the_culprit_fails():
    recorder = Recorder(raise_batch_when="poison")
    results = run_batcher(recorder, [("wp", "a"), ("wp", "poison"), ("wp", "c")], max_batch=8, max_wait_ms=50)
    assert [items for _, items in recorder.batches] == [["a", "poison", "c"], ["a"], ["poison"], ["c"]]
    assert results[0] == "wp:a" and results[2] == "wp:c"
    assert isinstance(results[1], RuntimeError)


def test_without_batching_every_request_runs_alone():
    recorder = Recorder()
    results = run_batcher(recorder, [("wp", i) for i in range(5)], max_batch=32, max_wait_ms=50, batching=False)
    assert [items for _, items in recorder.batches] == [[0], [1], [2], [3], [4]]
    assert results == [f"wp:{i}" for i in range(5)]


def test_requests_arriving_while_a_batch_runs_make_up_the_next_batch():
    recorder = Recorder(seconds=0.3)

    async def scenario(batcher):
        first = asyncio.ensure_future(batcher.submit("wp", "first"))
        await asyncio.sleep(0.1)  # the first batch is running now
        later = [asyncio.ensure_future(batcher.submit("wp", f"later{i}")) for i in range(5)]
        return await asyncio.gather(first, *later)

    batcher = Batcher(recorder, max_batch=32, max_wait_ms=1)
    try:
        results = asyncio.run(scenario(batcher))
    finally:
        batcher.close()
    assert [items for _, items in recorder.batches] == [["first"], [f"later{i}" for i in range(5)]]
    assert results == ["wp:first", *[f"wp:later{i}" for i in range(5)]]


def test_the_wait_for_more_requests_is_bounded_by_max_wait_ms():
    async def scenario(batcher, gap):
        first = asyncio.ensure_future(batcher.submit("wp", "first"))
        await asyncio.sleep(gap)
        return await asyncio.gather(first, batcher.submit("wp", "second"))

    for max_wait_ms, gap, expected in ((1000, 0.05, [["first", "second"]]), (10, 0.5, [["first"], ["second"]])):
        recorder = Recorder()
        batcher = Batcher(recorder, max_batch=32, max_wait_ms=max_wait_ms)
        try:
            assert asyncio.run(scenario(batcher, gap)) == ["wp:first", "wp:second"]
        finally:
            batcher.close()
        assert [items for _, items in recorder.batches] == expected


def test_one_batch_at_a_time_per_model_across_its_keys():
    recorder = Recorder(seconds=0.05)
    requests = [(("wp", beam), i) for i in range(6) for beam in (1, 2, 3)]
    batcher = Batcher(recorder, max_batch=2, max_wait_ms=1, model_of=lambda key: key[0], workers=4)
    try:
        asyncio.run(submit_all(batcher, requests))
    finally:
        batcher.close()
    assert len(recorder.batches) == 9 and recorder.most_running == 1


def test_bad_settings_are_refused():
    with pytest.raises(NeuromathError, match="max_batch"):
        Batcher(Recorder(), max_batch=0)
    with pytest.raises(NeuromathError, match="max_wait_ms"):
        Batcher(Recorder(), max_wait_ms=-1)


# ------------------------------------------------------------------------------------------------- through the app

PROBLEMS = [f"Tom has {a} apples. He buys {b} more. How many apples does he have?" for a, b in
            ((5, 3), (12, 7), (1, 1), (40, 2), (3, 9), (8, 8), (100, 1), (6, 4))]


@pytest.fixture
def solve_many_calls(monkeypatch):
    """Every call of Solver.solve_many: (decode settings, texts)."""
    calls = []
    original = Solver.solve_many

    def counting(self, texts, attention=False):
        calls.append(((self.decode.beam, self.decode.nbest), list(texts)))
        return original(self, texts, attention)

    monkeypatch.setattr(Solver, "solve_many", counting)
    return calls


async def post_all(app, bodies):
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await asyncio.gather(*(client.post("/api/solve", json=body) for body in bodies))
    finally:
        app.state.batcher.close()  # the transport runs no lifespan, which would close it


def test_concurrent_requests_are_decoded_in_one_call_with_the_answers_of_single_solves(serve_runs,
                                                                                        solve_many_calls):
    app = create_app([serve_runs["wp"]], max_batch=32, max_wait_ms=200)
    alone = {text: app.state.runs["wp"].solver.solve(text).to_json() for text in PROBLEMS}
    solve_many_calls.clear()
    responses = asyncio.run(post_all(app, [{"run": "wp", "text": text} for text in PROBLEMS]))
    assert solve_many_calls == [((1, 1), PROBLEMS)]  # one decode of all eight
    for text, response in zip(PROBLEMS, responses):
        assert response.status_code == 200
        assert response.json()["text"] == text
        assert response.json()["masked_equation"] == alone[text]["masked_equation"]
        assert response.json()["equation"] == alone[text]["equation"]


def test_decoding_settings_split_batches_and_max_batch_bounds_them(serve_runs, solve_many_calls):
    app = create_app([serve_runs["wp"]], max_batch=3, max_wait_ms=200)
    bodies = [{"run": "wp", "text": text, **({"beam": 2} if i % 2 else {})} for i, text in enumerate(PROBLEMS)]
    responses = asyncio.run(post_all(app, bodies))
    assert all(response.status_code == 200 for response in responses)
    greedy = [texts for settings, texts in solve_many_calls if settings == (1, 1)]
    beam = [texts for settings, texts in solve_many_calls if settings == (2, 1)]
    assert len(greedy) + len(beam) == len(solve_many_calls) and all(len(texts) <= 3 for texts in greedy + beam)
    assert sorted(t for texts in greedy for t in texts) == sorted(PROBLEMS[0::2])
    assert sorted(t for texts in beam for t in texts) == sorted(PROBLEMS[1::2])
    assert [len(texts) for texts in greedy] == [3, 1] and [len(texts) for texts in beam] == [3, 1]


@pytest.mark.parametrize("bad,message", [
    ("How many apples does he have?", "no numbers"),  # the task cannot read it
    ("Tom has 5 apples. " + "he " * 600 + "?", "the model reads at most 512"),  # the model cannot: decoded alone
])
def test_a_problem_that_cannot_be_solved_fails_alone_in_its_batch(serve_runs, solve_many_calls, bad, message):
    app = create_app([serve_runs["wp"]], max_batch=32, max_wait_ms=200)
    texts = [PROBLEMS[0], bad, PROBLEMS[1]]
    alone = [app.state.runs["wp"].solver.solve(text).to_json() for text in (PROBLEMS[0], PROBLEMS[1])]
    solve_many_calls.clear()
    responses = asyncio.run(post_all(app, [{"run": "wp", "text": text} for text in texts]))
    assert solve_many_calls == [((1, 1), texts)]
    assert [response.status_code for response in responses] == [200, 422, 200]
    assert message in responses[1].json()["error"]
    assert [responses[0].json(), responses[2].json()] == alone


def test_without_batching_each_request_is_decoded_alone(serve_runs, solve_many_calls):
    app = create_app([serve_runs["wp"]], max_batch=32, max_wait_ms=200, batching=False)
    responses = asyncio.run(post_all(app, [{"run": "wp", "text": text} for text in PROBLEMS[:4]]))
    assert all(response.status_code == 200 for response in responses)
    assert sorted(texts for _, texts in solve_many_calls) == sorted([text] for text in PROBLEMS[:4])
