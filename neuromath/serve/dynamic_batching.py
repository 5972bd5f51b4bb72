"""Dynamic batching for ``neuromath serve``: requests that share a key (a run and its decoding settings) and arrive
within ``max_wait_ms`` of the first are decoded together, up to ``max_batch`` at a time.

One asyncio queue per key collects the requests; a collector task per key takes the first request waiting, then
whatever else arrives before ``max_wait_ms`` has passed or the batch is full, and runs ``solve_batch(key, items)``
in a worker thread, so the event loop keeps accepting requests while a batch decodes. Requests that arrive while a
batch decodes wait in the queue and make up the next batch. One batch at a time runs per model (``model_of(key)``:
the keys of one run share its model, and so its lock), whatever the number of keys.

``solve_batch`` returns one result per item, in order; an item's result may be an exception, which is raised to
that item's request alone. When ``solve_batch`` itself raises on a batch of several items, each item is run again
alone, so that one bad request never fails the others. With ``batching=False`` every request is a batch of one:
one-at-a-time decoding, the baseline of ``benchmarks/serve.py``.

A request given up on (its future cancelled: the app cancels it when the client disconnects) is dropped, never
decoded: when its batch is collected, and again once the batch holds its model's lock, since a batch may wait there
behind another one for a while.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Hashable, Sequence

from neuromath.errors import NeuromathError


class Batcher:
    def __init__(self, solve_batch: Callable[[Hashable, list], Sequence[Any]], max_batch: int = 32,
                 max_wait_ms: float = 5.0, batching: bool = True,
                 model_of: Callable[[Hashable], Hashable] = lambda key: key, workers: int = 2):
        if max_batch < 1:
            raise NeuromathError(f"max_batch must be at least 1, not {max_batch}")
        if not max_wait_ms >= 0:
            raise NeuromathError(f"max_wait_ms must be 0 or more, not {max_wait_ms}")
        self.solve_batch = solve_batch
        self.max_batch = max_batch if batching else 1
        self.max_wait = max_wait_ms / 1000.0 if batching else 0.0
        self.batching = batching
        self.model_of = model_of
        self.executor = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="neuromath-decode")
        self.batch_sizes: Counter[int] = Counter()  # how many batches of each size ran (GET /api/health)
        self.dropped = 0  # requests given up on before their decode (clients that disconnected)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.queues: dict[Hashable, asyncio.Queue] = {}
        self.collectors: dict[Hashable, asyncio.Task] = {}
        self.model_locks: dict[Hashable, asyncio.Lock] = {}

    async def submit(self, key: Hashable, item: Any) -> Any:
        """The result of ``item`` once its batch has run (raises the item's exception)."""
        self._bind_to_running_loop()
        if key not in self.queues:
            self.queues[key] = asyncio.Queue()
            self.collectors[key] = asyncio.get_running_loop().create_task(self._collect(key, self.queues[key]))
        future = asyncio.get_running_loop().create_future()
        await self.queues[key].put((item, future))
        return await future

    def _bind_to_running_loop(self) -> None:
        """Queues, tasks and locks belong to one event loop; a new loop (a test client started again) starts them
        afresh."""
        loop = asyncio.get_running_loop()
        if self.loop is not loop:
            self.loop = loop
            self.queues, self.collectors, self.model_locks = {}, {}, {}

    async def _collect(self, key: Hashable, queue: asyncio.Queue) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = [await queue.get()]
            deadline = loop.time() + self.max_wait
            while len(batch) < self.max_batch:
                if not queue.empty():
                    batch.append(queue.get_nowait())
                    continue
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter}, timeout=remaining)
                if getter not in done:
                    getter.cancel()  # not done: it has taken nothing from the queue
                    break
                batch.append(getter.result())
            batch = self._waiting(batch)
            if batch:
                try:
                    await self._run(key, batch)
                except Exception as error:  # noqa: BLE001 - never leave a request waiting on a dead collector
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(error)

    async def _run(self, key: Hashable, batch: list) -> None:
        model = self.model_of(key)
        lock = self.model_locks.setdefault(model, asyncio.Lock())
        async with lock:  # one decode at a time per model
            batch = self._waiting(batch)  # clients may have gone while another batch held the lock
            if not batch:
                return
            items = [item for item, _ in batch]
            self.batch_sizes[len(items)] += 1
            try:
                results = await asyncio.get_running_loop().run_in_executor(self.executor, self._solve, key, items)
            except Exception as error:  # noqa: BLE001 - handed to every request of the batch
                results = [error] * len(items)
        for (_, future), result in zip(batch, results):
            if future.done():
                continue
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)

    def _waiting(self, batch: list) -> list:
        """The requests of ``batch`` still waiting for their result; those given up on are counted as dropped."""
        waiting = [(item, future) for item, future in batch if not future.done()]
        self.dropped += len(batch) - len(waiting)
        return waiting

    def _solve(self, key: Hashable, items: list) -> list:
        """In the worker thread: ``solve_batch`` on the whole batch, or, when that raises, on each item alone."""
        try:
            results = list(self.solve_batch(key, items))
            if len(results) != len(items):
                raise RuntimeError(f"solve_batch gave {len(results)} results for {len(items)} items")
            return results
        except Exception as error:
            if len(items) == 1:
                return [error]
        results = []
        for item in items:
            try:
                results.extend(self.solve_batch(key, [item]))
            except Exception as error:
                results.append(error)
        return results

    def close(self) -> None:
        for task in self.collectors.values():
            task.cancel()
        self.collectors, self.queues = {}, {}
        self.executor.shutdown(wait=False, cancel_futures=True)
