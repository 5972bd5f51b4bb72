"""Run calls that can hang (SymPy's ``simplify``, ``integrate``, ``solve``) in worker processes with a wall-clock
limit per call.

``TimeLimitedPool(function, workers, time_limit)`` keeps ``workers`` processes; each job ``function(*args)`` is sent
to an idle worker, and a worker still busy when its job's limit passes is killed and replaced. The limit works off
the main thread (no SIGALRM) and counts from the moment the job reaches a worker that is ready, so the seconds a
fresh worker spends importing SymPy are never charged to a job; nor are those of ``warm_up()``, which a worker runs
before it says it is ready (SymPy loads parts of itself at its first ``simplify``: a second or more on a loaded
machine). ``function`` and ``warm_up`` must be importable by name (module-level functions), because workers are
started with ``spawn``: forking a process that runs torch threads can deadlock.
"""

from __future__ import annotations

import multiprocessing
import time
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Callable, Iterable, Sequence

from neuromath.errors import NeuromathError


@dataclass(frozen=True)
class Outcome:
    status: str  # "ok", "timeout" (killed at the limit) or "error" (the function raised; ``value`` is the message)
    value: Any = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _worker_loop(function: Callable, connection, warm_up: Callable | None = None) -> None:
    if warm_up is not None:
        try:
            warm_up()
        except Exception:  # a failed warm-up only costs the first job its time; the job reports its own errors
            pass
    connection.send(("ready", None))
    while True:
        try:
            job = connection.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        index, args = job
        started = time.perf_counter()
        try:
            result = ("ok", function(*args))
        except Exception as error:  # reported to the caller as an outcome, never a dead worker
            result = ("error", f"{type(error).__name__}: {error}")
        connection.send((index, result, time.perf_counter() - started))


class _Worker:
    def __init__(self, context, function: Callable, warm_up: Callable | None = None):
        parent_end, child_end = context.Pipe()
        self.process = context.Process(target=_worker_loop, args=(function, child_end, warm_up), daemon=True)
        self.process.start()
        self.started = time.monotonic()
        child_end.close()
        self.connection = parent_end
        self.ready = False
        self.job: int | None = None  # index of the job it is running
        self.deadline = 0.0
        self.sent_at = 0.0

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.connection.close()


class TimeLimitedPool:
    """Worker processes that run ``function(*args)`` with at most ``time_limit`` seconds per call; each runs
    ``warm_up()`` once, uncharged, before its first job."""

    def __init__(self, function: Callable, workers: int = 1, time_limit: float = 5.0, startup_timeout: float = 120.0,
                 start_method: str = "spawn", warm_up: Callable | None = None):
        if workers < 1:
            raise NeuromathError(f"workers must be at least 1, not {workers}")
        if time_limit <= 0:
            raise NeuromathError(f"the time limit must be positive, not {time_limit}")
        self.function = function
        self.warm_up = warm_up
        self.n_workers = workers
        self.time_limit = time_limit
        self.startup_timeout = startup_timeout
        self.context = multiprocessing.get_context(start_method)
        self.workers: list[_Worker] = []
        self.timeouts = 0  # workers killed at their limit over the pool's life

    def start(self) -> None:
        """Start the worker processes now rather than at the first call (they do not wait for them to be ready)."""
        self._start_missing()

    def _start_missing(self) -> None:
        self.workers = [w for w in self.workers if w.process.is_alive() or w.job is not None]
        while len(self.workers) < self.n_workers:
            self.workers.append(_Worker(self.context, self.function, self.warm_up))

    def map(self, jobs: Iterable[Sequence], on_result: Callable[[int, Outcome], None] | None = None) -> list[Outcome]:
        """The outcome of ``function(*args)`` for every ``args`` in ``jobs``, in order. ``on_result(index, outcome)``
        is called as each one finishes (for progress bars and running counts)."""
        jobs = list(jobs)
        outcomes: list[Outcome | None] = [None] * len(jobs)
        pending = list(range(len(jobs) - 1, -1, -1))  # popped from the end: job 0 first
        remaining = len(jobs)
        if not jobs:
            return []
        self._start_missing()

        def finish(index: int, outcome: Outcome) -> None:
            nonlocal remaining
            outcomes[index] = outcome
            remaining -= 1
            if on_result is not None:
                on_result(index, outcome)

        while remaining:
            for worker in self.workers:  # hand jobs to ready, idle workers
                if worker.ready and worker.job is None and pending:
                    index = pending.pop()
                    worker.sent_at = time.monotonic()
                    worker.deadline = worker.sent_at + self.time_limit
                    worker.job = index
                    worker.connection.send((index, tuple(jobs[index])))
            busy = [w for w in self.workers if w.job is not None]
            now = time.monotonic()
            if busy:
                timeout = max(0.0, min(w.deadline for w in busy) - now)
            else:  # waiting for workers to start (at first, or one replacing a worker killed at its limit), each
                # given startup_timeout from its own start, not from the start of the map
                starting = [w.started for w in self.workers if not w.ready]
                startup_deadline = max(starting, default=now) + self.startup_timeout
                if now > startup_deadline:
                    self.close()
                    raise NeuromathError(f"worker processes did not start within {self.startup_timeout:.0f} s")
                timeout = startup_deadline - now
            ready = wait([w.connection for w in self.workers], timeout=timeout)
            now = time.monotonic()
            for worker in list(self.workers):
                if worker.connection in ready:
                    try:
                        message = worker.connection.recv()
                    except (EOFError, OSError):  # the worker died (out of memory, a crash in C code)
                        if worker.job is not None:
                            finish(worker.job, Outcome("error", "the worker process died", now - worker.sent_at))
                        self._replace(worker)
                        continue
                    if message[0] == "ready":
                        worker.ready = True
                        continue
                    index, (status, value), seconds = message
                    worker.job = None
                    finish(index, Outcome(status, value, seconds))
                elif worker.job is not None and now >= worker.deadline:
                    self.timeouts += 1
                    finish(worker.job, Outcome("timeout", None, now - worker.sent_at))
                    self._replace(worker)
        return outcomes  # type: ignore[return-value]

    def run(self, *args) -> Outcome:
        """One call, with the pool's limit."""
        return self.map([args])[0]

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        self.workers[self.workers.index(worker)] = _Worker(self.context, self.function, self.warm_up)

    def close(self) -> None:
        for worker in self.workers:
            if worker.process.is_alive() and worker.job is None:
                try:
                    worker.connection.send(None)
                    worker.process.join(1.0)
                except (OSError, BrokenPipeError):
                    pass
            worker.kill()
        self.workers = []

    def __enter__(self) -> TimeLimitedPool:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __del__(self):  # a pool dropped without close() must not leave processes behind
        try:
            self.close()
        except Exception:
            pass
