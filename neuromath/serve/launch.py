"""``neuromath serve`` started as a user starts it, in a subprocess on 127.0.0.1, for the benchmark and the tests that
talk to a real server: ``start_server`` returns once ``GET /api/health`` answers, ``serving`` is the same as a
``with`` block that stops the server afterwards. Standard library only (no HTTP client needed)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from neuromath.errors import NeuromathError


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_server(runs: Sequence[str | Path], options: Sequence[str] = (), timeout_s: float = 120.0,
                 capture: bool = False) -> tuple[subprocess.Popen, str]:
    """Start ``python -m neuromath serve RUNS --host 127.0.0.1 --port P OPTIONS`` on a free port and wait until it
    answers; returns the process and its URL. A server that exits or does not answer within ``timeout_s`` is stopped
    and is a NeuromathError naming the command (and, with ``capture``, what it printed)."""
    port = free_port()
    command = [sys.executable, "-m", "neuromath", "serve", *map(str, runs), "--host", "127.0.0.1", "--port", str(port),
               *options]
    output = subprocess.PIPE if capture else subprocess.DEVNULL
    process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT if capture else None, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while not answers(url):
        if process.poll() is not None or time.monotonic() > deadline:
            stop_server(process)
            printed = f": {process.stdout.read()}" if capture else ""
            raise NeuromathError(f"the server did not start ({' '.join(command)}){printed}")
        time.sleep(0.1)
    return process, url


def stop_server(process: subprocess.Popen, timeout_s: float = 30.0) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def serving(runs: Sequence[str | Path], options: Sequence[str] = (), timeout_s: float = 120.0) -> Iterator[str]:
    """``start_server`` for a ``with`` block: yields the URL and stops the server when the block ends."""
    process, url = start_server(runs, options, timeout_s, capture=True)
    try:
        yield url
    finally:
        stop_server(process)
