import os
import time

import pytest

from neuromath import timelimit
from neuromath.errors import NeuromathError
from neuromath.timelimit import TimeLimitedPool


def nap(seconds: float, value):
    time.sleep(seconds)
    return value


def fail(message: str):
    raise ValueError(message)


def process_id(_):
    return os.getpid()


def test_results_in_order_and_a_slow_job_is_killed_at_its_limit():
    with TimeLimitedPool(nap, workers=2, time_limit=1.0) as pool:
        seen = []
        started = time.monotonic()
        outcomes = pool.map(
            [(0.0, "a"), (30.0, "slow"), (0.05, "b"), (0.0, "c")], on_result=lambda i, o: seen.append(i)
        )
        elapsed = time.monotonic() - started
    assert [o.status for o in outcomes] == ["ok", "timeout", "ok", "ok"]
    assert [o.value for o in outcomes] == ["a", None, "b", "c"]
    assert sorted(seen) == [0, 1, 2, 3]
    assert 0.9 <= outcomes[1].seconds < 5
    assert elapsed < 25  # the 30 s job did not run to its end
    assert pool.timeouts == 1


def test_a_killed_worker_is_replaced_and_errors_are_outcomes():
    with TimeLimitedPool(nap, workers=1, time_limit=0.5) as pool:
        first = pool.run(10.0, "never")
        second = pool.run(0.0, "after")
    assert first.status == "timeout" and second.ok and second.value == "after"
    with TimeLimitedPool(fail, workers=1, time_limit=5) as pool:
        outcome = pool.run("broken input")
    assert outcome.status == "error" and "ValueError: broken input" in outcome.value


def test_jobs_run_off_the_main_process():
    with TimeLimitedPool(process_id, workers=2, time_limit=5) as pool:
        ids = {o.value for o in pool.map([(i,) for i in range(6)])}
    assert os.getpid() not in ids and 1 <= len(ids) <= 2


def test_bad_settings():
    with pytest.raises(NeuromathError, match="workers"):
        TimeLimitedPool(nap, workers=0)
    with pytest.raises(NeuromathError, match="time limit"):
        TimeLimitedPool(nap, time_limit=0)
    assert TimeLimitedPool(nap).map([]) == []


def slow_warm_up():
    time.sleep(2.0)
    os.environ["NEUROMATH_TEST_WARMED"] = "yes"


def warmed(_):
    return os.environ.get("NEUROMATH_TEST_WARMED")


def test_the_warm_up_runs_before_the_first_job_and_is_not_charged_to_it():
    with TimeLimitedPool(nap, workers=1, time_limit=1.0, warm_up=slow_warm_up) as pool:
        first = pool.run(0.1, "first")
        assert first.ok and first.value == "first" and first.seconds < 1.0  # the 2 s warm-up is not in its time
        assert pool.run(30.0, "slow").status == "timeout"
        assert pool.run(0.1, "after").ok  # the replacement warms up again, uncharged
    assert pool.timeouts == 1
    with TimeLimitedPool(warmed, workers=1, time_limit=1.0, warm_up=slow_warm_up) as pool:
        assert pool.run(None).value == "yes"  # it ran in the worker, before the job


def test_a_worker_replaced_late_in_a_long_map_gets_its_own_startup_time(monkeypatch):
    """A map that runs longer than startup_timeout, then loses a worker at its limit, waits for the replacement:
    before, the startup deadline counted from the start of the map, so the replacement was refused at once ("worker
    processes did not start within 120 s" after a 30-minute training's beam-50 verification). The clock jumps 1,000
    s after the first result, as if many jobs had run."""
    offset = [0.0]
    clock = type("Clock", (), {"monotonic": staticmethod(lambda: time.monotonic() + offset[0]),
                               "perf_counter": staticmethod(time.perf_counter)})
    monkeypatch.setattr(timelimit, "time", clock)

    def jump(index, outcome):
        if index == 0:
            offset[0] += 1000.0

    with TimeLimitedPool(nap, workers=1, time_limit=0.5, startup_timeout=60) as pool:
        outcomes = pool.map([(0.0, "a"), (30.0, "slow"), (0.0, "after")], on_result=jump)
    assert [o.status for o in outcomes] == ["ok", "timeout", "ok"]
    assert outcomes[2].value == "after"
